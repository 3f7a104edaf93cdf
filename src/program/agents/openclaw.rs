//! OpenClaw: each of its agents' store, `~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite`
//! (table `transcript_events`, a Pi session entry a row), and the session files it wrote before
//! it kept them there, `~/.openclaw/agents/<agent>/sessions/<id>.jsonl`, in Pi's format;
//! `$OPENCLAW_STATE_DIR` is its state folder itself.
//!
//! `reasons run openclaw` points it at the gateway with a copy of the person's `openclaw.json`
//! (`$OPENCLAW_CONFIG_PATH`, else `openclaw.json` in its state folder) named by
//! `$OPENCLAW_CONFIG_PATH` for the run: each provider of `models.providers` whose `baseUrl` goes
//! upstream gets the gateway's, its key and models kept (OpenClaw 2026.9.6 reads that variable
//! in every mode, `agent exec` included). A provider without a `baseUrl` of its own is one of
//! OpenClaw's built-ins, which the run cannot move. OpenClaw shows a person no hook's text (its
//! plugins' `requireApproval` opens an approval of its own, which the person would not have been
//! asked), so the run wires none: `reasons watch` shows the reasons.

use std::path::PathBuf;

use anyhow::{bail, Context};
use reasons::record::Format;
use serde_json::{json, Value};

use super::{pi, Agent, Base, Home, Run};
use crate::program::json_settings::read_json_with_comments;
use crate::program::wiring::{env, GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "OpenClaw",
    format: Format::Openclaw,
    home: Home {
        variables: &["OPENCLAW_STATE_DIR"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".openclaw",
    },
    logs: &["agents/*/agent/openclaw-agent.sqlite", "agents/*/sessions"],
    hook: None,
    run: Some(Run {
        command: "openclaw",
        pointed: "`OPENCLAW_CONFIG_PATH` naming a copy of your `openclaw.json` whose providers' `baseUrl` is the gateway's (keys and models kept); it keeps the reason in the call, and its Control UI (`-- gateway run`) shows it in the call's card; its terminal view shows no hook's text, so there `reasons watch` (or `--watch`) shows the reasons.",
        strips: false,
        confirms: false,
        given,
        wire,
    }),
};

/// The variable that names OpenClaw's config file.
const CONFIG_PATH: &str = "OPENCLAW_CONFIG_PATH";

/// The person's config file: the one they name, else the one in OpenClaw's state folder.
fn config_file() -> Option<PathBuf> {
    env(CONFIG_PATH)
        .map(PathBuf::from)
        .or_else(|| Some(AGENT.home.folder()?.join("openclaw.json")))
}

/// The person's config, when there is one; an error names a file OpenClaw could not read
/// either (it writes JSON5, whose comments are read here too).
fn config() -> anyhow::Result<Option<(PathBuf, Value)>> {
    let Some(file) = config_file() else {
        return Ok(None);
    };
    match read_json_with_comments(&file) {
        Ok(config) => Ok(config.map(|config| (file, config))),
        Err(()) => bail!(
            "{}: not a JSON object this run can read (JSON with comments; write it without \
             JSON5's other forms, or run OpenClaw without `reasons run`)",
            file.display()
        ),
    }
}

/// The providers of `models.providers` that set a base URL in an API the gateway speaks: their
/// name, API and URL.
fn providers(config: &Value) -> Vec<(String, &'static str, String)> {
    let providers = config["models"]["providers"].as_object();
    providers
        .into_iter()
        .flatten()
        .filter_map(|(name, provider)| {
            let url = provider["baseUrl"].as_str()?;
            let api = provider["api"]
                .as_str()
                .or_else(|| provider["models"][0]["api"].as_str())
                .and_then(pi::api_of)?;
            Some((name.clone(), api, url.to_owned()))
        })
        .collect()
}

fn given(_args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    let Some((file, config)) = config()? else {
        return Ok(Vec::new());
    };
    Ok(providers(&config)
        .into_iter()
        .map(|(name, api, url)| {
            let from = format!("{} models.providers.{name}.baseUrl", file.display());
            GivenBaseUrl::new(api, url, from)
        })
        .collect())
}

/// The config with each provider whose API goes upstream through the gateway (one whose API
/// has another upstream keeps its own URL); whether any was.
fn through_gateway(mut config: Value, to: &Pointing) -> (Value, bool) {
    let mut moved = false;
    for (name, api, url) in providers(&config.clone()) {
        if let Some(through) = to.instead_of(api, &url) {
            config["models"]["providers"][&name]["baseUrl"] = json!(through);
            moved = true;
        }
    }
    (config, moved)
}

fn wire(wiring: &mut Wiring, to: &Pointing, _args: &mut [String]) -> anyhow::Result<()> {
    let shown = config_file().map_or_else(
        || format!("{}/openclaw.json", AGENT.home.shown()),
        |file| file.display().to_string(),
    );
    let Some((_, config)) = config()? else {
        bail!(
            "OpenClaw has no config ({shown}): the run points the providers of its \
             `models.providers` at the gateway, and there are none (doc/agents.md shows one)"
        );
    };
    let (config, moved) = through_gateway(config, to);
    if !moved {
        bail!(
            "no provider in {shown} sets a `baseUrl` in an API the gateway speaks: OpenClaw's \
             built-in providers cannot be moved for one run (doc/agents.md shows one that can)"
        );
    }
    let file = wiring
        .private_file(
            "openclaw.json",
            serde_json::to_string_pretty(&config)?.as_bytes(),
        )
        .context("cannot write the run's config for OpenClaw")?;
    wiring
        .env
        .push((CONFIG_PATH.into(), file.to_string_lossy().into_owned()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::wiring::given as parse_given;

    #[test]
    fn each_provider_with_a_base_url_goes_through_the_gateway_its_key_kept() {
        let config = json!({
            "models": {"providers": {
                "mine": {"baseUrl": "http://m.example/v1", "apiKey": "k",
                    "api": "openai-completions", "models": [{"id": "m"}]},
                "claude": {"baseUrl": "http://c.example", "api": "anthropic-messages"},
                "other": {"baseUrl": "http://o.example/v1", "api": "openai-responses"},
                "bedrock": {"baseUrl": "http://b.example", "api": "bedrock-converse-stream"},
            }},
            "agents": {"defaults": {"model": {"primary": "mine/m"}}},
        });
        let given = parse_given(vec![
            GivenBaseUrl::new("openai", "http://m.example/v1", "openclaw.json"),
            GivenBaseUrl::new("anthropic", "http://c.example", "openclaw.json"),
            GivenBaseUrl::new("openai", "http://o.example/v1", "openclaw.json"),
        ])
        .unwrap();
        let to = Pointing {
            gateway: "http://127.0.0.1:9",
            given: &given,
            hook_command: None,
            confirm: false,
        };
        let (through, moved) = through_gateway(config.clone(), &to);
        assert!(moved);
        let providers = &through["models"]["providers"];
        assert_eq!(providers["mine"]["baseUrl"], "http://127.0.0.1:9/v1");
        assert_eq!(providers["mine"]["apiKey"], "k");
        assert_eq!(providers["claude"]["baseUrl"], "http://127.0.0.1:9");
        // Its API's upstream is another provider's: it keeps its own.
        assert_eq!(providers["other"]["baseUrl"], "http://o.example/v1");
        assert_eq!(providers["bedrock"]["baseUrl"], "http://b.example");
        assert_eq!(through["agents"], config["agents"]);
    }
}
