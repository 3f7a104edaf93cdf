//! Gemini CLI: `~/.gemini` (`$GEMINI_CLI_HOME/.gemini`), its session records in `tmp/`, its
//! `BeforeTool` hook in `settings.json`, pointed at the gateway by `GOOGLE_GEMINI_BASE_URL`.

use reasons::record::Format;
use serde_json::{json, Value};

use super::{Agent, Base, FindBy, Home, Hook, HookCall, Installs, Placement, Run};
use crate::program::wiring::{env, GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "Gemini CLI",
    format: Format::GeminiCli,
    home: Home {
        variables: &["GEMINI_CLI_HOME"],
        inside_variable: ".gemini",
        base: Base::Home,
        in_base: ".gemini",
    },
    logs: &["tmp"],
    hook: Some(Hook {
        event: "BeforeTool",
        user_settings: "settings.json",
        one_file_of_a_folder: false,
        file_version: None,
        entry,
        what_is_shown,
        after_install: None,
        call,
        lookup: FindBy::Touched,
        message_beside: true,
        installs: Installs::Settings,
        ask: None,
    }),
    run: Some(Run {
        command: "gemini",
        pointed: "`GOOGLE_GEMINI_BASE_URL`; it takes its hook only from settings files (`reasons hook install gemini`).",
        strips: false,
        confirms: false,
        given,
        wire,
    }),
};

/// The group that holds the hook: Gemini CLI reads the matcher as a regular expression, where
/// no matcher matches every tool; a handler has a name.
fn entry(command: &str) -> Value {
    json!({"hooks": [{"type": "command", "command": command, "name": "reasons"}]})
}

fn what_is_shown(_: Placement) -> &'static str {
    "Gemini CLI shows the model's reason on the line right above its confirmation box, while \
     it asks."
}

/// A `BeforeTool` event: `tool_name` and `tool_input`, and no call id.
fn call(event: &Value) -> Option<HookCall<'_>> {
    if event.get("hook_event_name").and_then(Value::as_str) != Some("BeforeTool") {
        return None;
    }
    Some(HookCall {
        tool: event.get("tool_name")?.as_str()?,
        arguments: event.get("tool_input").cloned().unwrap_or(Value::Null),
        call_id: None,
    })
}

fn given(_args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    Ok(env("GOOGLE_GEMINI_BASE_URL")
        .map(|url| GivenBaseUrl::new("gemini", url, "GOOGLE_GEMINI_BASE_URL"))
        .into_iter()
        .collect())
}

fn wire(wiring: &mut Wiring, to: &Pointing, _args: &mut [String]) -> anyhow::Result<()> {
    wiring
        .env
        .push(("GOOGLE_GEMINI_BASE_URL".into(), to.through("gemini", "")));
    // Its only settings file above the user's that an environment variable names, the system
    // settings (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`), is read only when root owns it and every
    // folder above it (Gemini CLI 0.61): no hook for one run.
    wiring.hook = Err(
        "Gemini CLI takes no hook for one run (`reasons hook install gemini-cli` installs it)"
            .into(),
    );
    Ok(())
}
