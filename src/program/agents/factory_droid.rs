//! Factory Droid: its sessions, `~/.factory/sessions/<cwd>/<session>.jsonl`, its hooks in
//! `~/.factory/settings.json` (Claude Code's schema).
//!
//! Droid reaches a model of its own through Factory's servers, which no gateway can stand in
//! front of; the models a person brings (`customModels[]{model, displayName, baseUrl, apiKey,
//! provider}` in `settings.json`) go straight to their `baseUrl`. `reasons run droid` points
//! those at the gateway with a settings file of the run's own, which Droid merges over the
//! person's for that process only (`$FACTORY_RUNTIME_SETTINGS_PATH`, what `droid --settings`
//! sets; Droid 0.215): the same models, names and keys, the gateway as their `baseUrl`.
//!
//! Its hooks can only allow or deny. The text of a `PreToolUse` hook goes only to Droid's debug
//! log (or, on exit 1, into the tool's result, which the model reads); what it shows the person
//! is a `PostToolUse` hook's `systemMessage`, as `Hook warning: …` under the call once it ran
//! (read in Droid 0.215's code; its screen needs a Factory login). So the hook answers
//! `PostToolUse`, and the event carries no call id: the reason is the call's own (Droid accepts
//! an undeclared `reason`), else the one logged for what the call touched.

use anyhow::{bail, Context};
use reasons::record::Format;
use serde_json::{json, Value};

use super::{hook_installed, Agent, Base, FindBy, Home, Hook, HookCall, Installs, Placement, Run};
use crate::program::json_settings::read_json;
use crate::program::wiring::{env, merge, GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "Factory Droid",
    format: Format::FactoryDroid,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Home,
        in_base: ".factory",
    },
    logs: &["sessions"],
    hook: Some(Hook {
        event: "PostToolUse",
        user_settings: "settings.json",
        one_file_of_a_folder: false,
        file_version: None,
        entry,
        what_is_shown,
        after_install: None,
        call,
        lookup: FindBy::Touched,
        message_beside: true,
        ask: None,
        installs: Installs::Settings,
    }),
    run: Some(Run {
        command: "droid",
        pointed: "a settings file of the run's own (`$FACTORY_RUNTIME_SETTINGS_PATH`) that sends your `customModels` to the gateway (their keys kept) and shows each call's reason under it; Droid's own models go through Factory's servers, which the gateway cannot stand in front of.",
        strips: false,
        confirms: false,
        given,
        wire,
    }),
};

/// The variable that names Droid's settings for one process (`droid --settings FILE`).
const RUNTIME_SETTINGS: &str = "FACTORY_RUNTIME_SETTINGS_PATH";

/// The group that holds the hook: every tool's calls.
fn entry(command: &str) -> Value {
    json!({"matcher": "*", "hooks": [{"type": "command", "command": command}]})
}

fn what_is_shown(_: Placement) -> &'static str {
    "Droid shows the model's reason under each call once it ran, as `Hook warning: model's \
     reason for TOOL: …` (its hooks cannot put text in its prompt)."
}

/// A `PostToolUse` event: `tool_name` and `tool_input`, and no call id.
fn call(event: &Value) -> Option<HookCall<'_>> {
    if event.get("hook_event_name").and_then(Value::as_str) != Some("PostToolUse") {
        return None;
    }
    Some(HookCall {
        tool: event.get("tool_name")?.as_str()?,
        arguments: event.get("tool_input").cloned().unwrap_or(Value::Null),
        call_id: None,
    })
}

/// The API of a custom model's `provider`, as the gateway names it.
fn api_of(provider: &str) -> Option<&'static str> {
    match provider {
        "anthropic" => Some("anthropic"),
        // `openai` speaks the Responses API, `generic-chat-completion-api` Chat Completions:
        // the gateway tells them apart by the path.
        "openai" | "generic-chat-completion-api" => Some("openai"),
        _ => None,
    }
}

/// The person's settings, and the runtime settings they named for this process, each with the
/// file it came from.
fn settings_files() -> Vec<(String, Value)> {
    let user = AGENT.home.folder().map(|home| home.join("settings.json"));
    let runtime = env(RUNTIME_SETTINGS).map(std::path::PathBuf::from);
    [user, runtime]
        .into_iter()
        .flatten()
        .filter_map(|file| {
            let settings = read_json(&file).ok().flatten()?;
            Some((file.display().to_string(), settings))
        })
        .collect()
}

/// The custom models in force: the runtime settings' list where they set one (it replaces the
/// person's, as Droid merges them), else the person's.
fn custom_models() -> (String, Vec<Value>) {
    let mut found = (String::new(), Vec::new());
    for (file, settings) in settings_files() {
        if let Some(models) = settings["customModels"].as_array() {
            found = (file, models.clone());
        }
    }
    found
}

fn given(_args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    let (file, models) = custom_models();
    Ok(models
        .iter()
        .enumerate()
        .filter_map(|(at, model)| {
            let api = api_of(model["provider"].as_str()?)?;
            let url = model["baseUrl"].as_str()?;
            let from = format!("{file} customModels[{at}].baseUrl");
            Some(GivenBaseUrl::new(api, url, from))
        })
        .collect())
}

/// The custom models with the gateway as their base URL, where their API's upstream is theirs
/// (one whose API goes elsewhere keeps its own).
fn through_gateway(models: &[Value], to: &Pointing) -> Vec<Value> {
    models
        .iter()
        .map(|model| {
            let mut model = model.clone();
            let api = model["provider"].as_str().and_then(api_of);
            let url = model["baseUrl"].as_str();
            if let Some(url) = api.zip(url).and_then(|(api, url)| to.instead_of(api, url)) {
                model["baseUrl"] = json!(url);
            }
            model
        })
        .collect()
}

fn wire(wiring: &mut Wiring, to: &Pointing, _args: &mut [String]) -> anyhow::Result<()> {
    let (_, models) = custom_models();
    if models.is_empty() {
        bail!(
            "Droid has no custom model (`customModels` in {}/settings.json): its own models go \
             through Factory's servers, which the gateway cannot stand in front of; add the \
             model you use there (doc/agents.md shows one)",
            AGENT.home.shown()
        );
    }
    // What the person named for this process stays, ours merged over it.
    let mut runtime = env(RUNTIME_SETTINGS)
        .and_then(|file| read_json(std::path::Path::new(&file)).ok().flatten())
        .unwrap_or_else(|| json!({}));
    let mut ours = json!({"customModels": through_gateway(&models, to)});
    match (&to.hook_command, hook_installed(&AGENT)) {
        (Some(command), false) => {
            let hook = AGENT.hook.as_ref().expect("Droid has a hook");
            merge(&mut ours, hook.settings(command));
            wiring.hook = Ok(());
        }
        (_, true) => wiring.hook = Ok(()),
        (None, false) => {}
    }
    merge(&mut runtime, ours);
    let file = wiring
        .private_file(
            "droid-settings.json",
            serde_json::to_string_pretty(&runtime)?.as_bytes(),
        )
        .context("cannot write the run's settings for Droid")?;
    wiring
        .env
        .push((RUNTIME_SETTINGS.into(), file.to_string_lossy().into_owned()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::wiring::given as parse_given;

    #[test]
    fn the_hook_reads_droid_s_post_tool_use_event() {
        let event = json!({"hook_event_name": "PostToolUse", "tool_name": "Execute",
            "tool_input": {"command": "ls", "reason": "look"}, "tool_response": "ok"});
        let call = call(&event).unwrap();
        assert_eq!(call.tool, "Execute");
        assert_eq!(call.call_id, None);
        assert_eq!(call.arguments["reason"], "look");
        let before = json!({"hook_event_name": "PreToolUse", "tool_name": "Execute"});
        assert!(super::call(&before).is_none());
    }

    #[test]
    fn each_custom_model_goes_through_the_gateway_with_its_path_where_its_api_goes_upstream() {
        let models = [
            json!({"model": "m", "displayName": "Mine", "baseUrl": "http://m.example/v1",
                "apiKey": "k", "provider": "generic-chat-completion-api"}),
            json!({"model": "c", "baseUrl": "http://c.example", "provider": "anthropic"}),
            json!({"model": "o", "baseUrl": "http://o.example/v1", "provider": "openai"}),
            json!({"model": "b", "baseUrl": "http://b.example", "provider": "bedrock"}),
        ];
        let given = parse_given(vec![
            GivenBaseUrl::new("openai", "http://m.example/v1", "settings.json"),
            GivenBaseUrl::new("anthropic", "http://c.example", "settings.json"),
            GivenBaseUrl::new("openai", "http://o.example/v1", "settings.json"),
        ])
        .unwrap();
        let to = Pointing {
            gateway: "http://127.0.0.1:9",
            given: &given,
            hook_command: None,
            confirm: false,
        };
        let through = through_gateway(&models, &to);
        assert_eq!(through[0]["baseUrl"], "http://127.0.0.1:9/v1");
        assert_eq!(through[0]["apiKey"], "k");
        assert_eq!(through[0]["displayName"], "Mine");
        assert_eq!(through[1]["baseUrl"], "http://127.0.0.1:9");
        // Its API's upstream is another model's: it keeps its own URL.
        assert_eq!(through[2]["baseUrl"], "http://o.example/v1");
        assert_eq!(through[3]["baseUrl"], "http://b.example");
    }
}
