//! Claude Code: `~/.claude` (`$CLAUDE_CONFIG_DIR`), its transcripts in `projects/`, its
//! `PreToolUse` hook in `settings.json`, pointed at the gateway by `ANTHROPIC_BASE_URL` and, for
//! one run, `--settings` (which also carries the hook). Whether it would ask the person before a
//! call runs is read off its permission rules (`permissions`).

mod permissions;

use std::path::PathBuf;

use reasons::record::Format;
use serde_json::{json, Value};

use super::{
    hook_installed, hook_settings_file, pre_tool_use_call, Agent, Ask, Base, FindBy, Home, Hook,
    Installs, Placement, Run,
};
use crate::program::agents::asks::runs_program;
use crate::program::json_settings::read_json;
use crate::program::wiring::{env, GivenBaseUrl, Pointing, Wiring};
use permissions::would_ask;

pub const AGENT: Agent = Agent {
    title: "Claude Code",
    format: Format::ClaudeCode,
    home: Home {
        variables: &["CLAUDE_CONFIG_DIR"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".claude",
    },
    logs: &["projects"],
    hook: Some(HOOK),
    run: Some(Run {
        command: "claude",
        pointed: "`ANTHROPIC_BASE_URL`; its hook in `--settings`.",
        strips: true,
        confirms: false,
        given,
        wire,
    }),
};

const HOOK: Hook = Hook {
    event: "PreToolUse",
    user_settings: "settings.json",
    one_file_of_a_folder: false,
    file_version: None,
    entry,
    what_is_shown,
    after_install: None,
    call: pre_tool_use_call,
    lookup: FindBy::CallId,
    message_beside: true,
    installs: Installs::Settings,
    ask: Some(Ask {
        is_agent: is_claude_code,
        would_ask,
        // Only an MCP tool can carry a reason to the hook (its own tools reject an
        // undeclared `reason`), and its dialog lists the tool's arguments.
        dialog_lists_arguments: true,
        answer: |text| {
            json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": text,
            }})
        },
    }),
};

/// The group that holds the hook: every tool's calls (`*`).
fn entry(command: &str) -> Value {
    json!({"matcher": "*", "hooks": [{"type": "command", "command": command}]})
}

fn what_is_shown(placement: Placement) -> &'static str {
    match placement {
        Placement::InPrompt => {
            "Claude Code shows the model's reason inside its permission dialog (\"Why (the \
             model's claim): ...\") wherever it would ask you anyway; for a command that \
             dialog offers Yes or No only, no \"don't ask again\" (add a permissions.allow \
             rule for that). Where it runs a call without asking (auto mode, calls your \
             settings allow, read-only commands, claude -p) the reason is shown beside the \
             call, as with --after."
        }
        Placement::After => {
            "Claude Code shows the model's reason beside the call, once it has run: after \
             you answered its dialog."
        }
    }
}

/// `env.ANTHROPIC_BASE_URL` in its settings files, which it applies over its environment: the
/// local project's, the project's, then the user's, the first that sets it (`--settings`, which
/// the run gives, comes before them all); else `ANTHROPIC_BASE_URL`.
fn given(_args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    let mut files = vec![
        PathBuf::from(".claude/settings.local.json"),
        PathBuf::from(".claude/settings.json"),
    ];
    files.extend(hook_settings_file(&AGENT));
    let in_settings = files.into_iter().find_map(|file| {
        let settings = read_json(&file).ok()??;
        let url = settings["env"]["ANTHROPIC_BASE_URL"]
            .as_str()
            .filter(|url| !url.trim().is_empty())?
            .to_owned();
        let from = format!("{} env.ANTHROPIC_BASE_URL", file.display());
        Some(GivenBaseUrl::new("anthropic", url, from))
    });
    let in_env = || {
        env("ANTHROPIC_BASE_URL")
            .map(|url| GivenBaseUrl::new("anthropic", url, "ANTHROPIC_BASE_URL"))
    };
    Ok(in_settings.or_else(in_env).into_iter().collect())
}

fn wire(wiring: &mut Wiring, to: &Pointing, _args: &mut [String]) -> anyhow::Result<()> {
    let url = to.through("anthropic", "");
    wiring.env.push(("ANTHROPIC_BASE_URL".into(), url.clone()));
    // The gateway takes the API's classifier request off (no policy may read a reason): without
    // this, Claude Code's auto mode waits for a verdict that never comes instead of classifying
    // each call itself, on its own copy, which the gateway stripped.
    wiring
        .env
        .push(("CLAUDE_CODE_AUTO_MODE_SERVER".into(), "0".into()));
    // Settings given on the command line come before the user's: their `env` too.
    let mut settings =
        json!({"env": {"ANTHROPIC_BASE_URL": url, "CLAUDE_CODE_AUTO_MODE_SERVER": "0"}});
    if hook_installed(&AGENT) {
        wiring.hook = Err("Claude Code's settings already run the hook".into());
    } else if let Some(command) = &to.hook_command {
        settings["hooks"] = HOOK.settings(command)["hooks"].take();
        wiring.hook = Ok(());
    }
    wiring.args = vec!["--settings".into(), settings.to_string()];
    Ok(())
}

/// Whether Claude Code's command line is this one.
pub fn is_claude_code(line: &[String]) -> bool {
    runs_program(line, "claude")
        || line
            .iter()
            .take(2)
            .any(|word| word.contains("claude-code/"))
}
