//! GitHub Copilot CLI: `~/.copilot` (`$COPILOT_HOME`), its session events in `session-state/`,
//! its `preToolUse` hook a file of its own in its hooks folder (or, for one run, a plugin of the
//! run's own given with `--plugin-dir`), pointed at the gateway only through a model provider of
//! the person's own (`COPILOT_PROVIDER_BASE_URL`).
//!
//! **When it would ask** the person before a `preToolUse` call runs, as read from its own code
//! (1.0.102) and measured in a terminal:
//!
//! Its hook event (`sessionId`, `timestamp`, `cwd`, `toolName`, `toolArgs`) carries no
//! permission mode, so what it would decide is read from its command line, its environment, its
//! approvals file and the session's own events:
//! - **Attended and interactive**: not `-p`/`--prompt` (there an ask is a denial, "unable to
//!   ask user for confirmation"), not in CI, its process on a terminal.
//! - **Nothing approved beforehand**: `--allow-all-tools`, `--allow-all`/`--yolo`,
//!   `--autopilot`, `COPILOT_ALLOW_ALL`, any `--allow-tool` or `--deny-tool` rule (the hook does not
//!   repeat Copilot CLI's rule matching: no ask is the safe side); in the session's
//!   `events.jsonl`, `/allow-all` (`session.permissions_changed`), a mode change, an approval for
//!   the session or the location; in `permissions-config.json`, a location holding the working
//!   folder whose approvals name one of the line's programs, or anything but commands.
//! - **Its tools**: it asks before a shell command that is not read-only (it runs `ls -la`
//!   without asking; the same superset of read-only programs as Claude Code's is used); reads,
//!   edits, URL fetches, MCP tools and its own tools are left to its own dialog.
//! - **No other `preToolUse` hook**: its hooks' decisions are merged, and an ask outranks an
//!   allow; another hook (whatever its matcher) may be there to allow the call, and what it answers
//!   cannot be known. Its hooks are read where it reads them: every `*.json` of its user hooks
//!   folder and of the repository's `.github/hooks/`, the `hooks` of its `config.json` and
//!   `settings.json`, of the repository's `.github/copilot/settings.json`,
//!   `.github/copilot/settings.local.json`, `.claude/settings.json` and
//!   `.claude/settings.local.json`, of the machine's managed settings, and of the plugins:
//!   `--plugin-dir` folders and those installed under its home.
//!
//! Its "Hook permission request" dialog then stands in for its own (Yes or No; it runs the call
//! on Yes without asking again).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::bail;
use reasons::record::Format;
use serde_json::{json, Value};

use super::{
    hook_installed, Agent, Ask, Base, FindBy, Home, Hook, HookCall, Installs, Placement, Run,
};
use crate::program::agents::asks::{runs_program, shell, Surroundings};
use crate::program::agents::hook_settings::{hook_handlers, is_our_hook};
use crate::program::json_settings::{json_files, read_json, read_json_with_comments};
use crate::program::wiring::{env, GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "Copilot CLI",
    format: Format::CopilotCli,
    home: Home {
        variables: &["COPILOT_HOME"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".copilot",
    },
    logs: &["session-state"],
    hook: Some(HOOK),
    run: Some(Run {
        command: "copilot",
        pointed: "its own provider's `COPILOT_PROVIDER_BASE_URL` (set it, with `COPILOT_PROVIDER_TYPE`, as for any provider of yours); its hook in `--plugin-dir`, a plugin of the run's own made in a temporary folder and removed at the end.",
        strips: false,
        confirms: false,
        given,
        wire,
    }),
};

const HOOK: Hook = Hook {
    event: "preToolUse",
    // It reads every file of its hooks folder: ours is a file of its own.
    user_settings: "hooks/reasons.json",
    one_file_of_a_folder: true,
    // It reads a hooks file of this version only.
    file_version: Some(1),
    entry,
    what_is_shown,
    after_install: None,
    call,
    lookup: FindBy::Touched,
    // It shows no message of a hook's beside its calls.
    message_beside: false,
    installs: Installs::Settings,
    ask: Some(Ask {
        is_agent: is_copilot_cli,
        would_ask,
        dialog_lists_arguments: false,
        answer: |text| json!({"permissionDecision": "ask", "permissionDecisionReason": text}),
    }),
};

/// Its handler is an entry of the event's list of its own, run for every tool.
fn entry(command: &str) -> Value {
    json!({"type": "command", "bash": command})
}

fn what_is_shown(placement: Placement) -> &'static str {
    match placement {
        Placement::InPrompt => {
            "Copilot CLI shows the model's reason inside its \"Hook permission request\" \
             dialog wherever it would ask you anyway; that dialog offers Yes or No only, in \
             place of its own \"don't ask again\" choices. Elsewhere it shows nothing of the \
             hook's: `reasons watch` shows every call."
        }
        Placement::After => {
            "Copilot CLI shows a hook's text only inside its dialog: with --after it shows \
             nothing; `reasons watch` shows every call."
        }
    }
}

/// A `preToolUse` event: `toolName` and `toolArgs`, no event name (or its own) and no call id.
fn call(event: &Value) -> Option<HookCall<'_>> {
    let name = event.get("hook_event_name").and_then(Value::as_str);
    if name.is_some_and(|name| name != "preToolUse") {
        return None;
    }
    Some(HookCall {
        tool: event.get("toolName")?.as_str()?,
        arguments: arguments(event)?,
        call_id: None,
    })
}

/// The API its own provider speaks.
fn provider() -> &'static str {
    match env("COPILOT_PROVIDER_TYPE").as_deref() {
        Some("anthropic") => "anthropic",
        _ => "openai",
    }
}

fn given(_args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    let Some(url) = env("COPILOT_PROVIDER_BASE_URL") else {
        bail!(
            "GitHub Copilot CLI goes through the gateway with a model provider of your own: \
             set COPILOT_PROVIDER_BASE_URL (with COPILOT_PROVIDER_TYPE, \
             COPILOT_PROVIDER_API_KEY and COPILOT_MODEL), as Copilot CLI documents"
        );
    };
    Ok(vec![GivenBaseUrl::new(
        provider(),
        url,
        "COPILOT_PROVIDER_BASE_URL",
    )])
}

fn wire(wiring: &mut Wiring, to: &Pointing, _args: &mut [String]) -> anyhow::Result<()> {
    wiring.env.push((
        "COPILOT_PROVIDER_BASE_URL".into(),
        to.through(provider(), "/v1"),
    ));
    if hook_installed(&AGENT) {
        wiring.hook = Err("Copilot CLI's hooks already run the hook".into());
        return Ok(());
    }
    let Some(command) = &to.hook_command else {
        return Ok(());
    };
    // A plugin of this run's, loaded with --plugin-dir (Copilot CLI 1.0.102): its
    // `hooks/hooks.json` holds the hook, in the shape of its hooks files.
    let manifest = json!({"name": "reasons-run", "version": env!("CARGO_PKG_VERSION"),
        "description": "The model's reason in the approval dialog, for this run of reasons run"});
    let hooks = HOOK.settings(command);
    let plugin = wiring.private_folder("copilot-plugin")?;
    wiring.private_file(
        "copilot-plugin/plugin.json",
        manifest.to_string().as_bytes(),
    )?;
    wiring.private_folder("copilot-plugin/hooks")?;
    wiring.private_file(
        "copilot-plugin/hooks/hooks.json",
        hooks.to_string().as_bytes(),
    )?;
    wiring.args = vec!["--plugin-dir".into(), plugin.to_string_lossy().into_owned()];
    wiring.hook = Ok(());
    Ok(())
}

/// Whether Copilot CLI's command line is this one: `copilot`, or node running its package.
pub fn is_copilot_cli(line: &[String]) -> bool {
    runs_program(line, "copilot")
        || line
            .iter()
            .take(2)
            .any(|word| word.contains("@github/copilot/") || word.contains("copilot-cache/"))
}

/// Whether Copilot CLI would show the person its dialog for this `preToolUse` event.
pub fn would_ask(event: &Value, around: &Surroundings) -> bool {
    let Some(command) = shell_command(event) else {
        return false;
    };
    attended(around)
        && nothing_approved_beforehand(around)
        && !shell::only_reads(&command, &[])
        && nothing_approved_in_session(event, around).unwrap_or(false)
        && nothing_approved_for_location(event, &command, around).unwrap_or(false)
        && !another_hook(event, around).unwrap_or(true)
}

fn attended(around: &Surroundings) -> bool {
    around.agent_command_line.is_some()
        && around.agent_on_terminal
        && !around.in_ci()
        && !around.has_flag(&["-p", "--prompt"])
}

fn nothing_approved_beforehand(around: &Surroundings) -> bool {
    around.var("COPILOT_ALLOW_ALL").is_none()
        && !around.has_flag(&[
            "--allow-all-tools",
            "--allow-all",
            "--yolo",
            "--autopilot",
            "--allow-tool",
            "--deny-tool",
        ])
}

/// A `preToolUse` event's tool arguments: an object (1.0.102's command hooks), or the JSON
/// text its documentation describes.
pub fn arguments(event: &Value) -> Option<Value> {
    match event.get("toolArgs")? {
        Value::String(text) => serde_json::from_str(text).ok(),
        arguments => Some(arguments.clone()),
    }
}

/// The command of a shell call; `None` for any other tool.
fn shell_command(event: &Value) -> Option<String> {
    let tool = event.get("toolName")?.as_str()?;
    if !matches!(tool, "bash" | "powershell") {
        return None;
    }
    Some(arguments(event)?.get("command")?.as_str()?.to_owned())
}

/// Its home, as the environment the agent gave the hook says.
fn copilot_home(around: &Surroundings) -> Option<PathBuf> {
    AGENT
        .home
        .folder_with(|name| around.var(name).map(OsString::from))
}

/// How deep under the installed plugins' folder a plugin's `hooks.json` is looked for
/// (`installed-plugins/MARKETPLACE/PLUGIN/hooks/hooks.json`).
const PLUGIN_DEPTH: usize = 4;

/// Whether a `preToolUse` hook other than ours is among Copilot CLI's hooks; `None` when a
/// file that may hold one cannot be read.
fn another_hook(event: &Value, around: &Surroundings) -> Option<bool> {
    let home = copilot_home(around)?;
    let mut files = json_files(&home.join("hooks"));
    for name in ["config.json", "settings.json"] {
        files.push(home.join(name));
    }
    let cwd = Path::new(event.get("cwd")?.as_str()?);
    for root in repository_folders(cwd) {
        files.extend(json_files(&root.join(".github/hooks")));
        for name in [
            ".github/copilot/settings.json",
            ".github/copilot/settings.local.json",
            ".claude/settings.json",
            ".claude/settings.local.json",
        ] {
            files.push(root.join(name));
        }
    }
    if let Some(etc) = &around.etc {
        files.push(etc.join("github-copilot/managed-settings.json"));
    }
    for plugin in around.option_values(&["--plugin-dir"], false) {
        let plugin = cwd.join(plugin);
        files.push(plugin.join("hooks/hooks.json"));
        files.push(plugin.join("hooks.json"));
    }
    plugin_hooks(&home.join("installed-plugins"), PLUGIN_DEPTH, &mut files);
    for file in files {
        // Its `config.json` starts with a comment.
        let Some(settings) = read_json_with_comments(&file).ok()? else {
            continue;
        };
        for event in ["preToolUse", "PreToolUse"] {
            let Some(entries) = settings["hooks"].get(event) else {
                continue;
            };
            let handlers = hook_handlers(entries).ok()?;
            if handlers
                .iter()
                .any(|(_, handler)| !is_our_hook(handler, AGENT.name()))
            {
                return Some(true);
            }
        }
    }
    Some(false)
}

/// The working folder and the folders above it up to its git repository's top, where Copilot
/// CLI reads a repository's hooks and settings.
fn repository_folders(cwd: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for folder in cwd.ancestors() {
        folders.push(folder.to_owned());
        if folder.join(".git").exists() {
            return folders;
        }
    }
    // Not in a repository: the working folder only.
    folders.truncate(1);
    folders
}

/// Every `hooks.json` under an installed plugins' folder, `depth` folders down at most.
fn plugin_hooks(folder: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            if depth > 0 {
                plugin_hooks(&path, depth - 1, files);
            }
        } else if entry.file_name() == "hooks.json" {
            files.push(path);
        }
    }
}

/// What the session's events record that changes which calls are asked for.
const SESSION_APPROVALS: &[&str] = &[
    "\"session.permissions_changed\"",
    "\"session.mode_changed\"",
    "approved-for-session",
    "approved-for-location",
];

/// Whether the session's events record no approval beyond single calls; `None` when they cannot
/// be read.
fn nothing_approved_in_session(event: &Value, around: &Surroundings) -> Option<bool> {
    let session = event.get("sessionId")?.as_str()?;
    // A session id is a name of one folder, never a path.
    if session.is_empty() || session.contains(['/', '\\']) || session.starts_with('.') {
        return None;
    }
    let folder = copilot_home(around)?.join("session-state").join(session);
    let events = read_once_written(&folder.join("events.jsonl"), EVENTS_WRITTEN_WITHIN)?;
    Some(
        !SESSION_APPROVALS
            .iter()
            .any(|marker| memchr::memmem::find(&events, marker.as_bytes()).is_some()),
    )
}

/// How long Copilot CLI may take to write a new session's first events: its session folder is
/// there when the session's first call comes, its `events.jsonl` a moment later (1.0.102).
const EVENTS_WRITTEN_WITHIN: Duration = Duration::from_secs(3);

/// The file at `path`, waiting up to `within` for it to be written while its folder is there;
/// `None` when it is not there by then, or the folder is not.
fn read_once_written(path: &Path, within: Duration) -> Option<Vec<u8>> {
    let deadline = Instant::now() + within;
    loop {
        match std::fs::read(path) {
            Ok(bytes) => return Some(bytes),
            Err(_) if Instant::now() < deadline && path.parent()?.is_dir() => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(_) => return None,
        }
    }
}

/// Whether no approval kept for the working folder's location covers the command; `None` when
/// the approvals cannot be read.
fn nothing_approved_for_location(
    event: &Value,
    command: &str,
    around: &Surroundings,
) -> Option<bool> {
    let cwd = Path::new(event.get("cwd")?.as_str()?);
    let Some(config) = read_json(&copilot_home(around)?.join("permissions-config.json")).ok()?
    else {
        return Some(true);
    };
    let programs: Vec<String> = shell::commands(command)
        .into_iter()
        .filter_map(|words| words.into_iter().next())
        .collect();
    let locations = config["locations"].as_object().into_iter().flatten();
    for (location, approvals) in locations {
        if !cwd.starts_with(location) {
            continue;
        }
        for approval in approvals["tool_approvals"].as_array().into_iter().flatten() {
            if approval["kind"] != "commands" {
                return Some(false);
            }
            let identifiers = approval["commandIdentifiers"]
                .as_array()
                .into_iter()
                .flatten();
            let named = identifiers.filter_map(Value::as_str).any(|identifier| {
                let program = identifier.split_whitespace().next().unwrap_or_default();
                programs.iter().any(|used| used == program)
            });
            if named {
                return Some(false);
            }
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_new_session_s_events_are_waited_for_while_its_folder_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("session/events.jsonl");
        assert_eq!(read_once_written(&events, Duration::from_secs(3)), None);
        std::fs::create_dir(dir.path().join("session")).unwrap();
        let writer = {
            let events = events.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                std::fs::write(events, "{}\n").unwrap();
            })
        };
        assert_eq!(
            read_once_written(&events, Duration::from_secs(10)),
            Some(b"{}\n".to_vec())
        );
        writer.join().unwrap();
    }

    /// A Copilot home with one session's events, kept while the test runs.
    struct Home {
        dir: tempfile::TempDir,
    }

    const SESSION: &str = "6f193913-072a-4f6d-bbf9-d51ef8df0f48";

    impl Home {
        fn new() -> Home {
            let dir = tempfile::tempdir().unwrap();
            let session = dir.path().join(".copilot/session-state").join(SESSION);
            std::fs::create_dir_all(&session).unwrap();
            std::fs::write(
                session.join("events.jsonl"),
                "{\"type\":\"session.start\",\"data\":{}}\n",
            )
            .unwrap();
            Home { dir }
        }

        fn events(&self) -> PathBuf {
            self.dir
                .path()
                .join(".copilot/session-state")
                .join(SESSION)
                .join("events.jsonl")
        }

        fn interactive(&self, line: &[&str]) -> Surroundings {
            let home = self.dir.path().to_string_lossy().into_owned();
            Surroundings {
                env: [("HOME".to_owned(), home)].into_iter().collect(),
                agent_command_line: Some(line.iter().map(|word| word.to_string()).collect()),
                agent_on_terminal: true,
                etc: None,
            }
        }
    }

    fn shell(command: &str) -> Value {
        json!({"sessionId": SESSION, "timestamp": 1, "cwd": "/w/repo", "toolName": "bash",
            "toolArgs": {"command": command, "description": "d"}})
    }

    #[test]
    fn a_shell_command_in_an_interactive_session_is_asked_for() {
        let home = Home::new();
        assert!(would_ask(
            &shell("rm -rf build"),
            &home.interactive(&["copilot"])
        ));
        let mut text_args = shell("x");
        text_args["toolArgs"] = json!(json!({"command": "make"}).to_string());
        assert!(would_ask(&text_args, &home.interactive(&["copilot"])));
    }

    #[test]
    fn a_headless_or_unattended_run_is_never_asked() {
        let home = Home::new();
        let call = shell("rm -rf build");
        let interactive = |line: &[&str]| home.interactive(line);
        assert!(!would_ask(&call, &interactive(&["copilot", "-p", "go"])));
        assert!(!would_ask(&call, &interactive(&["copilot", "--prompt=go"])));
        let mut no_terminal = interactive(&["copilot"]);
        no_terminal.agent_on_terminal = false;
        assert!(!would_ask(&call, &no_terminal));
        let mut ci = interactive(&["copilot"]);
        ci.env.insert("CI".into(), "true".into());
        assert!(!would_ask(&call, &ci));
        assert!(!would_ask(&call, &Surroundings::default()));
    }

    #[test]
    fn what_the_session_approved_beyond_one_call_is_never_asked() {
        let call = shell("rm -rf build");
        for event in [
            r#"{"type":"session.permissions_changed","data":{"allowAllPermissions":true}}"#,
            r#"{"type":"session.mode_changed","data":{}}"#,
            r#"{"type":"permission.completed","data":{"result":{"kind":"approved-for-session"}}}"#,
            r#"{"type":"permission.completed","data":{"result":{"kind":"approved-for-location"}}}"#,
        ] {
            let home = Home::new();
            let around = home.interactive(&["copilot"]);
            assert!(would_ask(&call, &around));
            let mut events = std::fs::read_to_string(home.events()).unwrap();
            events.push_str(event);
            std::fs::write(home.events(), events).unwrap();
            assert!(!would_ask(&call, &around), "{event}");
        }
        // Without the session's events, or its id, there is no telling.
        let home = Home::new();
        std::fs::remove_file(home.events()).unwrap();
        assert!(!would_ask(&call, &home.interactive(&["copilot"])));
        let mut no_session = shell("rm -rf build");
        no_session.as_object_mut().unwrap().remove("sessionId");
        assert!(!would_ask(
            &no_session,
            &Home::new().interactive(&["copilot"])
        ));
        let mut escaping = shell("rm -rf build");
        escaping["sessionId"] = json!("../x");
        assert!(!would_ask(
            &escaping,
            &Home::new().interactive(&["copilot"])
        ));
    }

    #[test]
    fn approvals_kept_for_the_location_are_never_asked() {
        let home = Home::new();
        let around = home.interactive(&["copilot"]);
        let config = home.dir.path().join(".copilot/permissions-config.json");
        let approvals = |location: &str, approval: Value| {
            json!({"locations": {location: {"tool_approvals": [approval]}}}).to_string()
        };
        let commands = json!({"kind": "commands", "commandIdentifiers": ["rm", "mkdir"]});
        std::fs::write(&config, approvals("/w/repo", commands.clone())).unwrap();
        assert!(!would_ask(&shell("rm -rf build"), &around));
        assert!(!would_ask(&shell("make && mkdir b"), &around));
        assert!(would_ask(&shell("make"), &around));
        std::fs::write(&config, approvals("/w", commands.clone())).unwrap();
        assert!(!would_ask(&shell("rm -rf build"), &around));
        std::fs::write(&config, approvals("/elsewhere", commands)).unwrap();
        assert!(would_ask(&shell("rm -rf build"), &around));
        std::fs::write(&config, approvals("/w/repo", json!({"kind": "write"}))).unwrap();
        assert!(!would_ask(&shell("make"), &around));
        std::fs::write(&config, "{ not json").unwrap();
        assert!(!would_ask(&shell("make"), &around));
    }

    #[test]
    fn what_was_approved_beforehand_is_never_asked() {
        let home = Home::new();
        let interactive = |line: &[&str]| home.interactive(line);
        let call = shell("rm -rf build");
        for flag in [
            "--allow-all-tools",
            "--allow-all",
            "--yolo",
            "--autopilot",
            "--allow-tool=shell(rm)",
            "--deny-tool=shell(git push)",
        ] {
            assert!(
                !would_ask(&call, &interactive(&["copilot", flag])),
                "{flag}"
            );
        }
        let mut all = interactive(&["copilot"]);
        all.env.insert("COPILOT_ALLOW_ALL".into(), "true".into());
        assert!(!would_ask(&call, &all));
    }

    #[test]
    fn read_only_commands_and_other_tools_are_left_to_copilot() {
        let home = Home::new();
        let around = home.interactive(&["copilot"]);
        assert!(!would_ask(&shell("ls -la && git status"), &around));
        for tool in [
            "view",
            "edit",
            "create",
            "glob",
            "grep",
            "web_fetch",
            "report_intent",
        ] {
            let call = json!({"toolName": tool, "toolArgs": "{\"path\": \"/w/a\"}"});
            assert!(!would_ask(&call, &around), "{tool}");
        }
        assert!(!would_ask(
            &json!({"toolName": "bash", "toolArgs": "not json"}),
            &around
        ));
    }

    #[test]
    fn another_pre_tool_use_hook_anywhere_copilot_reads_one_means_no_ask() {
        let home = Home::new();
        let work = home.dir.path().join("repo/sub");
        std::fs::create_dir_all(home.dir.path().join("repo/.git")).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let mut call = shell("rm -rf build");
        call["cwd"] = json!(work);
        let plugin = home.dir.path().join("plugin");
        let around = home.interactive(&["copilot", "--plugin-dir", &plugin.to_string_lossy()]);
        let write = |path: &Path, value: Value| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, value.to_string()).unwrap();
        };
        let ours = json!({"type": "command", "bash": "/bin/reasons hook copilot-cli --after"});
        let other = json!({"type": "command", "bash": "./allow.sh"});
        let hooks =
            |event: &str, handler: &Value| json!({"version": 1, "hooks": {event: [handler]}});
        let user_hooks = home.dir.path().join(".copilot/hooks/reasons.json");
        write(&user_hooks, hooks("preToolUse", &ours));
        // Its config.json as Copilot CLI 1.0.102 writes it, a comment on top.
        let config = home.dir.path().join(".copilot/config.json");
        std::fs::write(
            &config,
            "// User settings belong in settings.json.\n// This file is managed automatically.\n\
             {\n  \"firstLaunchAt\": \"2026-12-02T15:23:25.016Z\",\n  \"appTipShown\": true\n}\n",
        )
        .unwrap();
        write(
            &home.dir.path().join(".copilot/hooks/log.json"),
            hooks("postToolUse", &other),
        );
        assert!(would_ask(&call, &around));
        let repo = home.dir.path().join("repo");
        for file in [
            home.dir.path().join(".copilot/hooks/other.json"),
            home.dir.path().join(".copilot/settings.json"),
            repo.join(".github/hooks/policy.json"),
            work.join(".github/hooks/policy.json"),
            repo.join(".github/copilot/settings.json"),
            repo.join(".github/copilot/settings.local.json"),
            repo.join(".claude/settings.json"),
            plugin.join("hooks/hooks.json"),
            home.dir
                .path()
                .join(".copilot/installed-plugins/market/guard/hooks/hooks.json"),
        ] {
            write(&file, hooks("preToolUse", &other));
            assert!(!would_ask(&call, &around), "{}", file.display());
            // Claude Code's shape, which Copilot CLI reads too.
            write(
                &file,
                json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [other]}]}}),
            );
            assert!(!would_ask(&call, &around), "{}", file.display());
            std::fs::remove_file(&file).unwrap();
            assert!(would_ask(&call, &around), "{}", file.display());
        }
        // Hooks in its config.json, comment and all.
        let with_hook = format!(
            "// This file is managed automatically.\n{}",
            hooks("preToolUse", &other)
        );
        std::fs::write(&config, with_hook).unwrap();
        assert!(!would_ask(&call, &around));
        std::fs::remove_file(&config).unwrap();
        // Beside ours in our own file; a hooks file it cannot read.
        write(
            &user_hooks,
            json!({"version": 1, "hooks": {"preToolUse": [ours, other]}}),
        );
        assert!(!would_ask(&call, &around));
        std::fs::write(&user_hooks, "{ not json").unwrap();
        assert!(!would_ask(&call, &around));
    }

    #[test]
    fn copilot_cli_is_recognised_by_its_command_line() {
        let line = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert!(is_copilot_cli(&line(&["/x/.bin/copilot"])));
        assert!(is_copilot_cli(&line(&[
            "node",
            "/x/node_modules/@github/copilot/index.js"
        ])));
        assert!(!is_copilot_cli(&line(&[
            "bash",
            "-c",
            "reasons hook copilot-cli"
        ])));
    }
}
