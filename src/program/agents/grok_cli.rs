//! Grok CLI (xAI's Grok Build): each session's folder in `~/.grok/sessions/<cwd>/<session>/`,
//! whose `updates.jsonl` holds its calls (the `chat_history.jsonl` beside it holds none that a
//! shape reads, so no call counts twice); `$GROK_HOME` is its home itself.
//!
//! `reasons run grok` points it at the gateway with `$GROK_MODELS_BASE_URL`, which Grok reads
//! before its `config.toml`'s `[endpoints] models_base_url` and sends its models' requests to
//! (Chat Completions; Grok 0.2.111), with the person's key (`$XAI_API_KEY`) as it was. A model
//! of `config.toml` with a `base_url` of its own keeps it: Grok has no way to move it for one
//! run, so the run says so rather than edit the file. Its hooks can only allow or deny and it
//! shows none of their text (a call shows `[hooks: N]`), so the run wires none: `reasons watch`
//! shows the reasons.

use reasons::record::Format;

use super::{Agent, Base, Home, Run};
use crate::program::messages::message;
use crate::program::wiring::{env, GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "Grok CLI",
    format: Format::GrokCli,
    home: Home {
        variables: &["GROK_HOME"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".grok",
    },
    logs: &["sessions"],
    hook: None,
    run: Some(Run {
        command: "grok",
        pointed: "`GROK_MODELS_BASE_URL`, your key (`XAI_API_KEY`) kept; its hooks show no text, so `reasons watch` (or `--watch`) shows the reasons.",
        strips: false,
        confirms: false,
        given,
        wire,
    }),
};

/// The variable that sends Grok's model requests elsewhere.
const BASE_URL: &str = "GROK_MODELS_BASE_URL";

/// Where Grok sends them when nothing else is set.
const XAI: &str = "https://api.x.ai/v1";

/// Its `config.toml`, parsed, with the file's name (nothing when it is missing or not TOML:
/// Grok says so itself).
fn config() -> Option<(String, toml_edit::DocumentMut)> {
    let file = AGENT.home.folder()?.join("config.toml");
    let text = std::fs::read_to_string(&file).ok()?;
    Some((file.display().to_string(), text.parse().ok()?))
}

fn given(_args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    if let Some(url) = env(BASE_URL) {
        return Ok(vec![GivenBaseUrl::new("openai", url, BASE_URL)]);
    }
    let configured = config().and_then(|(file, config)| {
        let url = config
            .get("endpoints")?
            .get("models_base_url")?
            .as_str()?
            .to_owned();
        Some(GivenBaseUrl::new(
            "openai",
            url,
            format!("{file} endpoints.models_base_url"),
        ))
    });
    Ok(vec![configured.unwrap_or_else(|| {
        GivenBaseUrl::new("openai", XAI, "Grok's own endpoint")
    })])
}

/// The models of `config.toml` that name a `base_url` of their own.
fn models_with_their_own_url(config: &toml_edit::DocumentMut) -> Vec<String> {
    let Some(models) = config
        .get("model")
        .and_then(|models| models.as_table_like())
    else {
        return Vec::new();
    };
    models
        .iter()
        .filter(|(_, model)| model.get("base_url").is_some())
        .map(|(name, _)| name.to_owned())
        .collect()
}

fn wire(wiring: &mut Wiring, to: &Pointing, _args: &mut [String]) -> anyhow::Result<()> {
    wiring
        .env
        .push((BASE_URL.into(), to.through("openai", "/v1")));
    if let Some((file, config)) = config() {
        let own = models_with_their_own_url(&config);
        if !own.is_empty() {
            message!(
                "Grok's model{} {} keep{} the base_url of {file}: Grok has no way to move it \
                 for one run, so their calls do not go through the gateway",
                if own.len() == 1 { "" } else { "s" },
                own.join(", "),
                if own.len() == 1 { "s" } else { "" },
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_with_a_base_url_of_its_own_is_named() {
        let config: toml_edit::DocumentMut = r#"
[endpoints]
models_base_url = "https://corp.example/v1"

[model.local]
model = "qwen"
base_url = "http://localhost:8080/v1"

[model.grok-build]
api_key = "k"
"#
        .parse()
        .unwrap();
        assert_eq!(models_with_their_own_url(&config), ["local"]);
        let empty: toml_edit::DocumentMut = "".parse().unwrap();
        assert!(models_with_their_own_url(&empty).is_empty());
    }
}
