//! Pi: its sessions in `~/.pi/agent/sessions/--<cwd>--/`; `$PI_CODING_AGENT_DIR` is its agent
//! folder itself.
//!
//! `reasons run pi` loads an extension of the run's own (`-e FILE`, Pi 0.73's way to load one
//! for a run), which does two things:
//! - points Pi's providers at the gateway with `pi.registerProvider(name, {baseUrl})`, which
//!   keeps each provider's models and key and changes only where they are sent: every provider
//!   of the person's `models.json` whose base URL goes upstream, and the built-in Anthropic,
//!   OpenAI and Google ones. Nothing of the person's is written, and Pi's sessions stay where
//!   they are;
//! - on Pi's `tool_call` event, runs `reasons hook pi` with the event on stdin, which finds the
//!   reason (in the call's input, since Pi accepts an undeclared `reason`, else in the reasons
//!   log by the call's id) and answers as for every agent; the extension shows it beside the
//!   call (`ctx.ui.notify`). Pi asks nothing by default; with `reasons run pi --confirm` the
//!   person chose to be asked, and the extension asks Pi's own `ctx.ui.confirm` before each
//!   call with the reason in its text. Headless (`pi -p`, no UI) it shows and asks nothing.

use std::path::PathBuf;

use anyhow::Context;
use reasons::record::Format;
use serde_json::{json, Map, Value};

use super::{Agent, Ask, Base, FindBy, Home, Hook, HookCall, Installs, Placement, Run};
use crate::program::json_settings::read_json;
use crate::program::wiring::{GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "Pi",
    format: Format::Pi,
    home: Home {
        variables: &["PI_CODING_AGENT_DIR"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".pi/agent",
    },
    logs: &["sessions"],
    hook: Some(Hook {
        event: "tool_call",
        user_settings: "",
        one_file_of_a_folder: false,
        file_version: None,
        entry: |_| Value::Null,
        what_is_shown,
        after_install: None,
        call,
        lookup: FindBy::CallId,
        message_beside: true,
        ask: Some(Ask {
            is_agent: |_| false,
            // Pi asks only where the person chose it: the run's extension says so in the event
            // it sends (`reasons run pi --confirm`).
            would_ask: |event, _| event["confirm"] == json!(true),
            dialog_lists_arguments: false,
            answer: |text| json!({ "ask": text }),
        }),
        installs: Installs::RunOnly,
    }),
    run: Some(Run {
        command: "pi",
        pointed: "an extension of the run's own (`-e`) that points its providers at the gateway (`pi.registerProvider`, the models and keys of your `models.json` kept) and shows each call's reason beside it as it starts; with `--confirm`, asks before each call with the reason in the question.",
        strips: false,
        confirms: true,
        given,
        wire,
    }),
};

fn what_is_shown(_: Placement) -> &'static str {
    "Pi shows the model's reason beside each call as it starts."
}

/// The call of the event the run's extension sends: Pi's `tool_call` event's `toolName`,
/// `toolCallId` and `input`.
fn call(event: &Value) -> Option<HookCall<'_>> {
    Some(HookCall {
        tool: event.get("toolName")?.as_str()?,
        arguments: event.get("input").cloned().unwrap_or(Value::Null),
        call_id: event.get("toolCallId").and_then(Value::as_str),
    })
}

/// The API of a Pi `api` value, as the gateway names it (OpenClaw, which runs on Pi's agent
/// runtime, names its providers' APIs the same way).
pub fn api_of(api: &str) -> Option<&'static str> {
    match api {
        "anthropic-messages" => Some("anthropic"),
        "openai-completions" | "openai-responses" => Some("openai"),
        "google-generative-ai" => Some("gemini"),
        _ => None,
    }
}

/// Pi's built-in providers the run points at the gateway: their name, their API, and the path of
/// their base URL (Pi 0.73's `https://api.anthropic.com`, `https://api.openai.com/v1`,
/// `https://generativelanguage.googleapis.com/v1beta`).
const BUILT_IN: [(&str, &str, &str); 3] = [
    ("anthropic", "anthropic", ""),
    ("openai", "openai", "/v1"),
    ("google", "gemini", "/v1beta"),
];

/// Its `models.json`, in its agent folder.
fn models_file() -> Option<PathBuf> {
    Some(AGENT.home.folder()?.join("models.json"))
}

/// A provider of `models.json` that sets a base URL: its name, its API and the URL.
struct Provider {
    name: String,
    api: &'static str,
    url: String,
}

/// The providers of `models.json` that set a base URL in an API the gateway speaks: the
/// provider's `api`, else its first model's, else a built-in provider's of the same name.
fn providers(models: &Value) -> Vec<Provider> {
    let mut found = Vec::new();
    for (name, provider) in models["providers"].as_object().into_iter().flatten() {
        let Some(url) = provider["baseUrl"].as_str() else {
            continue;
        };
        let api = provider["api"]
            .as_str()
            .or_else(|| provider["models"][0]["api"].as_str())
            .and_then(api_of)
            .or_else(|| {
                BUILT_IN
                    .iter()
                    .find(|(built_in, _, _)| built_in == name)
                    .map(|(_, api, _)| *api)
            });
        if let Some(api) = api {
            found.push(Provider {
                name: name.clone(),
                api,
                url: url.to_owned(),
            });
        }
    }
    found
}

/// The person's `models.json`, when there is one Pi can read (Pi says itself what is wrong with
/// one it cannot).
fn models() -> Option<(PathBuf, Value)> {
    let file = models_file()?;
    let models = read_json(&file).ok().flatten()?;
    Some((file, models))
}

fn given(_args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    let Some((file, models)) = models() else {
        return Ok(Vec::new());
    };
    Ok(providers(&models)
        .into_iter()
        .map(|provider| {
            let from = format!("{} providers.{}.baseUrl", file.display(), provider.name);
            GivenBaseUrl::new(provider.api, provider.url, from)
        })
        .collect())
}

/// Each provider's base URL for this run: the built-in ones through the gateway, and each of the
/// person's whose URL goes upstream (one whose API has another upstream keeps its own).
fn base_urls(models: &Value, to: &Pointing) -> Map<String, Value> {
    let mut urls = Map::new();
    for (name, api, usual) in BUILT_IN {
        urls.insert(name.to_owned(), json!(to.through(api, usual)));
    }
    for provider in providers(models) {
        match to.instead_of(provider.api, &provider.url) {
            Some(url) => urls.insert(provider.name, json!(url)),
            None => urls.remove(&provider.name),
        };
    }
    urls
}

fn wire(wiring: &mut Wiring, to: &Pointing, _args: &mut [String]) -> anyhow::Result<()> {
    let models = models().map_or(Value::Null, |(_, models)| models);
    let settings = json!({
        "baseUrls": base_urls(&models, to),
        "hook": to.hook_command,
        "confirm": to.confirm,
    });
    let extension = EXTENSION.replace("SETTINGS", &settings.to_string());
    let file = wiring
        .private_file("reasons-pi-extension.ts", extension.as_bytes())
        .context("cannot write the run's extension for Pi")?;
    wiring.args = vec!["-e".into(), file.to_string_lossy().into_owned()];
    wiring.hook = Ok(());
    Ok(())
}

/// The run's extension; `SETTINGS` becomes the run's settings, a JSON object.
const EXTENSION: &str = r#"// Loaded by `reasons run pi` for this run only.
import { execFileSync } from "node:child_process";

const settings = SETTINGS;

export default function (pi) {
  for (const [name, baseUrl] of Object.entries(settings.baseUrls)) {
    pi.registerProvider(name, { baseUrl });
  }
  pi.on("tool_call", async (event, ctx) => {
    if (!ctx.hasUI || !settings.hook) return;
    const asked = {
      toolName: event.toolName,
      toolCallId: event.toolCallId,
      input: event.input,
      confirm: settings.confirm,
    };
    let answer = {};
    try {
      // The hook finds the reason (and never fails the call: it prints nothing when it has none).
      const out = execFileSync("/bin/sh", ["-c", settings.hook], {
        input: JSON.stringify(asked),
        timeout: 5000,
        stdio: ["pipe", "pipe", "ignore"],
      });
      answer = JSON.parse(out.toString() || "{}");
    } catch {
      answer = {};
    }
    if (settings.confirm) {
      const why = answer.ask ?? answer.systemMessage ?? "The model gave no reason.";
      const ok = await ctx.ui.confirm(`Run ${event.toolName}?`, why);
      if (!ok) return { block: true, reason: "The person declined the call." };
    } else if (answer.systemMessage) {
      ctx.ui.notify(answer.systemMessage, "info");
    }
  });
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::wiring::{given as parse_given, BaseUrl, Given};

    fn pointing<'a>(given: &'a [Given]) -> Pointing<'a> {
        Pointing {
            gateway: "http://127.0.0.1:9",
            given,
            hook_command: None,
            confirm: false,
        }
    }

    #[test]
    fn a_provider_s_api_is_its_own_else_its_first_model_s_else_a_built_in_s() {
        let models = json!({"providers": {
            "mine": {"baseUrl": "http://m.example/v1", "api": "openai-completions"},
            "by-model": {"baseUrl": "http://b.example", "models": [{"id": "x", "api": "anthropic-messages"}]},
            "google": {"baseUrl": "https://corp.example/google"},
            "bedrock-ish": {"baseUrl": "http://o.example", "api": "bedrock-converse-stream"},
            "no-url": {"api": "openai-completions", "models": [{"id": "y"}]},
        }});
        let found: Vec<(String, &str)> = providers(&models)
            .into_iter()
            .map(|provider| (provider.name, provider.api))
            .collect();
        assert_eq!(
            found,
            [
                ("mine".to_owned(), "openai"),
                ("by-model".to_owned(), "anthropic"),
                ("google".to_owned(), "gemini"),
            ]
        );
    }

    #[test]
    fn the_person_s_provider_goes_through_the_gateway_with_its_path_and_the_built_ins_too() {
        let models = json!({"providers": {
            "mine": {"baseUrl": "http://m.example:8080/v1", "api": "openai-completions"},
            "other": {"baseUrl": "http://other.example/v1", "api": "openai-completions"},
        }});
        let given = parse_given(vec![
            GivenBaseUrl::new("openai", "http://m.example:8080/v1", "models.json"),
            GivenBaseUrl::new("openai", "http://other.example/v1", "models.json"),
        ])
        .unwrap();
        assert_eq!(
            given[0].url,
            BaseUrl::parse("http://m.example:8080/v1").unwrap()
        );
        let urls = base_urls(&models, &pointing(&given));
        assert_eq!(urls["mine"], "http://127.0.0.1:9/v1");
        // Its API's upstream is another's: it keeps its own URL (no override).
        assert!(!urls.contains_key("other"));
        assert_eq!(urls["anthropic"], "http://127.0.0.1:9");
        assert_eq!(urls["openai"], "http://127.0.0.1:9/v1");
        assert_eq!(urls["google"], "http://127.0.0.1:9/v1beta");
    }

    #[test]
    fn the_hook_reads_pi_s_tool_call_event() {
        let event = json!({"toolName": "bash", "toolCallId": "toolu_1",
            "input": {"command": "ls", "reason": "look"}});
        let call = call(&event).unwrap();
        assert_eq!(call.tool, "bash");
        assert_eq!(call.call_id, Some("toolu_1"));
        assert_eq!(call.arguments["reason"], "look");
        assert!(super::call(&json!({"tool_name": "bash"})).is_none());
    }
}
