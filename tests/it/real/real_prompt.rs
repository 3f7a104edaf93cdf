//! The model's reason inside the agents' own approval prompts, as a person at a terminal sees it:
//! the real agents in tmux, a scripted model on loopback behind `reasons gateway`, the hook
//! installed by `reasons hook install AGENT` as a person would. Each screen the tests read is kept
//! under `target/screens/`.
//!
//! The rule under test: the hook answers with the agent's "ask" only where the agent would have
//! asked anyway, so the reason is inside the dialog the person answers, and no call that ran
//! without a dialog gets one; a headless run behaves as without the hook.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::bounded::run_bounded_within;
use crate::util::chat_model::{answered, one_call_model};
use crate::util::claude_code::{scripted, tool_use, ClaudeCode, API_KEY, FINAL};
use crate::util::gateway::Gateway;
use crate::util::gemini_model::one_shell_call_model;
use crate::util::real_parts::{
    part, CLAUDE_CODE, COPILOT, COPILOT_CACHE, GEMINI_CLI, MCP_SERVER_EVERYTHING,
};
use crate::util::sandbox::Sandbox;
use crate::util::tmux::{keep_screen, Tmux};
use crate::util::upstream::Upstream;
use crate::util::{arg, install_hook, quoted};

/// How long an agent may take to start and reach its dialog on a loaded machine.
const STARTUP: Duration = Duration::from_secs(90);

/// What Claude Code's dialog says when a hook asks, and when it asks of its own.
const HOOK_ASKS: &str = "requires confirmation";
const PROCEED: &str = "Do you want to proceed?";

/// An interactive Claude Code session in tmux, started with `prompt` and `args`.
struct ClaudeCodeInTmux {
    sandbox: Sandbox,
    tmux: Tmux,
}

impl ClaudeCodeInTmux {
    /// Claude Code in a fresh HOME that has seen its first-run dialogs (onboarding, the API key,
    /// the folder's trust), with the hook installed by `reasons hook install claude-code` and
    /// `project` as the project's `.claude/settings.json`, and `files` in its working folder.
    fn start(
        gateway: &Gateway,
        args: &[&str],
        prompt: &str,
        project: Option<Value>,
        files: &[(&str, &str)],
    ) -> Self {
        let sandbox = Sandbox::new();
        let home = sandbox.path("home");
        let work = std::fs::canonicalize(sandbox.path("work")).unwrap();
        let key_end = &API_KEY[API_KEY.len() - 20..];
        let config = json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [key_end], "rejected": []},
            "projects": {work.to_string_lossy(): {"hasTrustDialogAccepted": true}},
        });
        std::fs::write(home.join(".claude.json"), config.to_string()).unwrap();
        install_hook("claude-code", &[("HOME", &home)], &gateway.log);
        for (name, text) in files {
            std::fs::write(work.join(name), text).unwrap();
        }
        if let Some(project) = project {
            std::fs::create_dir_all(work.join(".claude")).unwrap();
            std::fs::write(work.join(".claude/settings.json"), project.to_string()).unwrap();
        }
        let env = [
            ("ANTHROPIC_BASE_URL", format!("http://{}", gateway.address)),
            ("ANTHROPIC_API_KEY", API_KEY.to_owned()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ];
        let mut all_args = args.to_vec();
        all_args.push(prompt);
        let script = sandbox.script(&env, &part(CLAUDE_CODE), &all_args);
        let tmux = Tmux::start(&format!("bash {}", quoted(script)), 110, 36);
        ClaudeCodeInTmux { sandbox, tmux }
    }

    fn work(&self) -> PathBuf {
        self.sandbox.path("work")
    }

    /// The screen once it shows `text`.
    #[track_caller]
    fn screen_showing(&self, what: &str, text: &str) -> String {
        self.tmux
            .screen_within(what, STARTUP, |screen| screen.contains(text))
    }

    /// The screen once the session answered its last turn: the scripted model's final text.
    #[track_caller]
    fn finished(&self) -> String {
        self.tmux
            .screen_within("the last answer", STARTUP, |screen| {
                screen
                    .lines()
                    .any(|line| line.trim_start_matches(['●', ' ']) == FINAL)
            })
    }

    /// What the hook printed for each call, as Claude Code's transcript recorded it.
    fn hook_answers(&self) -> Vec<Value> {
        let projects = self.sandbox.path("home").join(".claude/projects");
        let mut answers = Vec::new();
        for folder in std::fs::read_dir(projects).unwrap().flatten() {
            for file in std::fs::read_dir(folder.path()).unwrap().flatten() {
                let text = std::fs::read_to_string(file.path()).unwrap_or_default();
                for line in text.lines() {
                    let line: Value = serde_json::from_str(line).unwrap_or_default();
                    let attachment = &line["attachment"];
                    if attachment["type"] == "hook_success" {
                        let stdout = attachment["stdout"].as_str().unwrap_or_default();
                        answers.push(serde_json::from_str(stdout).unwrap_or_default());
                    }
                }
            }
        }
        answers
    }
}

/// A gateway in front of a model that makes these calls one turn at a time.
fn scripted_gateway(calls: Vec<Value>) -> (Upstream, Gateway) {
    let upstream = Upstream::messages(scripted(calls));
    let gateway = Gateway::start(&upstream.url(), &[]);
    (upstream, gateway)
}

const CLEAN_REASON: &str = "Start from an empty build folder before the release build";

fn clean_build() -> Value {
    tool_use(
        "toolu_clean",
        "Bash",
        json!({"command": "rm -rf build && mkdir build", "reason": CLEAN_REASON}),
    )
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Claude Code, tmux)"]
fn real_claude_code_in_default_mode_shows_the_reason_inside_its_dialog() {
    let (_upstream, gateway) = scripted_gateway(vec![clean_build()]);
    let claude = ClaudeCodeInTmux::start(
        &gateway,
        &["--permission-mode", "default"],
        "Clean the build folder",
        None,
        &[],
    );
    let dialog = claude.screen_showing("Claude Code's dialog", PROCEED);
    keep_screen("claude-code-default-bash", &dialog);
    std::fs::write(
        crate::util::tmux::screens().join("claude-code-default-bash.ansi"),
        claude.tmux.screen_with_escapes(),
    )
    .unwrap();
    // Inside the dialog, after its own rendering of the call: the command, then the reason.
    let command_at = dialog.find("rm -rf build && mkdir build").expect(&dialog);
    let reason = format!("Why (the model's claim): {CLEAN_REASON}");
    let reason_at = dialog.find(&reason).unwrap_or_else(|| panic!("{dialog}"));
    assert!(dialog.contains(HOOK_ASKS), "{dialog}");
    let proceed_at = dialog.find(PROCEED).unwrap();
    assert!(
        command_at < proceed_at && reason_at < proceed_at,
        "{dialog}"
    );
    // The person says yes; the call runs.
    claude.tmux.keys(&["Enter"]);
    claude.finished();
    assert!(claude.work().join("build").is_dir());
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Claude Code, tmux)"]
fn real_claude_code_runs_a_read_in_its_folder_and_an_allowed_command_without_a_dialog() {
    let read = tool_use(
        "toolu_read",
        "Read",
        json!({"file_path": "NOTES.md", "reason": "Read the notes the user pointed at"}),
    );
    let allowed = tool_use(
        "toolu_allowed",
        "Bash",
        json!({"command": "mkdir -p out", "reason": "Make the output folder"}),
    );
    let (_upstream, gateway) = scripted_gateway(vec![read, allowed]);
    let claude = ClaudeCodeInTmux::start(
        &gateway,
        &["--permission-mode", "default"],
        "Read the notes, then make the output folder",
        Some(json!({"permissions": {"allow": ["Bash(mkdir:*)"]}})),
        &[("NOTES.md", "notes\n")],
    );
    let screen = claude.finished();
    keep_screen("claude-code-default-read-and-allowed", &screen);
    assert!(!screen.contains(PROCEED), "{screen}");
    assert!(claude.work().join("out").is_dir());
    // The hook ran for both and showed the reason beside each call, without asking.
    let answers = claude.hook_answers();
    assert_eq!(answers.len(), 2, "{answers:?}");
    for answer in &answers {
        assert!(answer["hookSpecificOutput"].is_null(), "{answer}");
        assert!(answer["systemMessage"].is_string(), "{answer}");
    }
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Claude Code, tmux)"]
fn real_claude_code_in_accept_edits_mode_writes_without_a_dialog() {
    let write = tool_use(
        "toolu_write",
        "Write",
        json!({"file_path": "CHANGES.md", "content": "- cleaned\n",
            "reason": "Record what changed for the reviewer"}),
    );
    let (_upstream, gateway) = scripted_gateway(vec![write]);
    let claude = ClaudeCodeInTmux::start(
        &gateway,
        &["--permission-mode", "acceptEdits"],
        "Write the changes file",
        None,
        &[],
    );
    let screen = claude.finished();
    keep_screen("claude-code-accept-edits-write", &screen);
    assert!(!screen.contains(PROCEED), "{screen}");
    assert_eq!(
        std::fs::read_to_string(claude.work().join("CHANGES.md")).unwrap(),
        "- cleaned\n"
    );
    let answers = claude.hook_answers();
    assert!(
        answers
            .iter()
            .all(|answer| answer["hookSpecificOutput"].is_null()),
        "{answers:?}"
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Claude Code, tmux)"]
fn real_claude_code_in_auto_mode_shows_no_dialog() {
    let (_upstream, gateway) = scripted_gateway(vec![tool_use(
        "toolu_auto",
        "Bash",
        json!({"command": "mkdir build", "reason": "Make the build folder"}),
    )]);
    let claude = ClaudeCodeInTmux::start(
        &gateway,
        &["--permission-mode", "auto"],
        "Make the build folder",
        None,
        &[],
    );
    let screen = claude.finished();
    keep_screen("claude-code-auto", &screen);
    assert!(!screen.contains(PROCEED), "{screen}");
    assert!(!screen.contains(HOOK_ASKS), "{screen}");
    let answers = claude.hook_answers();
    assert!(
        answers
            .iter()
            .all(|answer| answer["hookSpecificOutput"].is_null()),
        "{answers:?}"
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Claude Code, tmux, MCP)"]
fn real_claude_code_mcp_dialog_shows_the_reason_of_a_tool_behind_the_proxy() {
    const ECHO_REASON: &str = "Echo the greeting back to check the server answers";
    let (_upstream, gateway) = scripted_gateway(vec![tool_use(
        "toolu_mcp",
        "mcp__everything__echo",
        json!({"message": "hi-from-stub", "reason": ECHO_REASON}),
    )]);
    let dir = tempfile::tempdir().unwrap();
    let everything = part(MCP_SERVER_EVERYTHING);
    let config = json!({"mcpServers": {"everything": {"type": "stdio",
        "command": env!("CARGO_BIN_EXE_reasons"),
        "args": ["proxy", "--reasons-log", arg(&gateway.log), "--", "node", arg(&everything),
            "stdio"]}}});
    let config_path = dir.path().join("mcp.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let claude = ClaudeCodeInTmux::start(
        &gateway,
        &[
            "--permission-mode",
            "default",
            "--mcp-config",
            arg(&config_path),
            "--strict-mcp-config",
        ],
        "Echo hi-from-stub",
        None,
        &[],
    );
    let dialog = claude.screen_showing("Claude Code's MCP dialog", PROCEED);
    keep_screen("claude-code-default-mcp", &dialog);
    // The call still carries its reason: Claude Code's own dialog lists it among the
    // arguments, once; the hook does not ask to show it a second time.
    assert!(
        dialog.contains(&format!("reason: \"{ECHO_REASON}\"")),
        "{dialog}"
    );
    assert_eq!(dialog.matches(ECHO_REASON).count(), 1, "{dialog}");
    assert!(!dialog.contains(HOOK_ASKS), "{dialog}");
    claude.tmux.keys(&["Enter"]);
    claude.finished();
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Claude Code)"]
fn real_claude_code_headless_with_the_hook_runs_the_call_and_denies_nothing() {
    let (_upstream, gateway) = scripted_gateway(vec![clean_build()]);
    let claude = ClaudeCode::run(&gateway, "Clean the build folder", "Bash", &[], &[]);
    let output = claude.output();
    assert_eq!(output["permission_denials"], json!([]), "{output}");
    assert_eq!(
        claude.hook_message("toolu_clean"),
        format!("model's reason for Bash: {CLEAN_REASON}")
    );
}

// ---- Copilot CLI ------------------------------------------------------------------------------

const COPILOT_CALL: &str = "call_clean";
const COPILOT_FINAL: &str = "Cleaned the build folder.";

/// The title of Copilot CLI's dialog for a hook's ask, and the question it ends with.
const HOOK_DIALOG: &str = "Hook permission request";
const HOOK_DIALOG_QUESTION: &str = "Do you want to allow this tool call?";

/// Copilot CLI's environment against `gateway` (an OpenAI provider, offline, no update).
fn copilot_env(gateway: &Gateway) -> Vec<(&'static str, String)> {
    vec![
        ("COPILOT_OFFLINE", "true".to_owned()),
        ("COPILOT_PROVIDER_TYPE", "openai".to_owned()),
        (
            "COPILOT_PROVIDER_BASE_URL",
            format!("http://{}/v1", gateway.address),
        ),
        ("COPILOT_PROVIDER_API_KEY", "sk-test-not-a-key".to_owned()),
        ("COPILOT_MODEL", "gpt-4.1".to_owned()),
        ("COPILOT_AUTO_UPDATE", "false".to_owned()),
        // Its 235 MB unpacked once by .ci/real-parts, not into the sandbox each run.
        (
            "COPILOT_PKG_CACHE_HOME",
            part(COPILOT_CACHE).to_string_lossy().into_owned(),
        ),
    ]
}

/// A sandbox for Copilot CLI: its working folder a git repository, the hook installed by
/// `reasons hook install copilot-cli`; and the gateway in front of a model that cleans the build
/// folder with a reason.
fn copilot_setup() -> (Sandbox, Upstream, Gateway) {
    let upstream = Upstream::start(one_call_model(
        COPILOT_CALL,
        "bash",
        json!({"command": "rm -rf build && mkdir build", "description": "Clean the build folder",
            "reason": CLEAN_REASON}),
        COPILOT_FINAL,
    ));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let sandbox = Sandbox::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(sandbox.path("work"))
        .status()
        .expect("git runs");
    assert!(git.success());
    install_hook(
        "copilot-cli",
        &[("HOME", &sandbox.path("home"))],
        &gateway.log,
    );
    (sandbox, upstream, gateway)
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Copilot CLI, tmux)"]
fn real_copilot_cli_shows_the_reason_inside_its_dialog() {
    let (sandbox, _upstream, gateway) = copilot_setup();
    let script = sandbox.script(
        &copilot_env(&gateway),
        &part(COPILOT),
        &["-i", "Clean the build folder"],
    );
    let tmux = Tmux::start(&format!("bash {}", quoted(script)), 140, 45);
    // Its own first question: whether to trust the folder.
    tmux.screen_within("the folder trust dialog", STARTUP, |screen| {
        screen.contains("Do you trust the files in this folder?")
    });
    tmux.keys(&["Enter"]);
    // The whole box, drawn down to its question.
    let screen = tmux.screen_within("the hook's dialog", STARTUP, |screen| {
        screen
            .split_once(HOOK_DIALOG)
            .is_some_and(|(_, dialog)| dialog.contains(HOOK_DIALOG_QUESTION))
    });
    keep_screen("copilot-cli-dialog", &screen);
    // Copilot CLI may already list the pending call above its dialog (when the hook took a
    // moment to answer): what is asserted is the dialog's own text, from its title on.
    let (_, dialog) = screen.split_once(HOOK_DIALOG).unwrap();
    let reason_at = dialog
        .find(&format!("Why (the model's claim): {CLEAN_REASON}"))
        .unwrap_or_else(|| panic!("{screen}"));
    let command_at = dialog.find("rm -rf build && mkdir build").expect(&screen);
    let question_at = dialog.find(HOOK_DIALOG_QUESTION).unwrap();
    assert!(
        reason_at < command_at && command_at < question_at,
        "the reason, then the call, then the question: {screen}"
    );
    assert!(
        !sandbox.path("work/build").exists(),
        "the call waits for the answer: {screen}"
    );
    tmux.keys(&["Enter"]);
    let screen = tmux.screen_within("the last answer", STARTUP, |screen| {
        screen.contains(COPILOT_FINAL)
    });
    keep_screen("copilot-cli-after", &screen);
    assert!(sandbox.path("work/build").is_dir());
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Copilot CLI)"]
fn real_copilot_cli_headless_with_the_hook_runs_the_call_and_denies_nothing() {
    let (sandbox, upstream, gateway) = copilot_setup();
    let mut command = std::process::Command::new(part(COPILOT));
    command.args([
        "-p",
        "Clean the build folder",
        "--allow-all-tools",
        "--no-auto-update",
    ]);
    sandbox.apply(&mut command);
    command
        .envs(copilot_env(&gateway))
        .current_dir(sandbox.path("work"));
    let output = run_bounded_within(command, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains(COPILOT_FINAL), "{stdout}\n{stderr}");
    assert!(!stdout.to_lowercase().contains("denied"), "{stdout}");
    assert!(sandbox.path("work/build").is_dir(), "{stdout}\n{stderr}");
    // The call's result, not a refusal, went back to the model.
    let answered = upstream
        .received()
        .iter()
        .any(|request| answered(&request.json(), COPILOT_CALL));
    assert!(answered);
}

// ---- Gemini CLI -------------------------------------------------------------------------------

const GEMINI_REASON: &str = "Make the build folder the release script writes into";
const GEMINI_FINAL: &str = "Made the build folder.";

/// Gemini CLI in tmux, interactive, started with a prompt and `args`, the hook installed by
/// `reasons hook install gemini-cli`, against a model that makes one shell call with a reason.
fn gemini_in_tmux(args: &[&str]) -> (Sandbox, Tmux, Upstream, Gateway) {
    let upstream = Upstream::start(one_shell_call_model(
        "mkdir build",
        "Make the build folder",
        GEMINI_REASON,
        Some("gc_build"),
        GEMINI_FINAL,
    ));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let sandbox = Sandbox::new();
    let home = sandbox.path("home");
    std::fs::create_dir(home.join(".gemini")).unwrap();
    // The API key's auth (the base URL alone implies another), no folder trust to answer.
    std::fs::write(
        home.join(".gemini/settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"},
            "folderTrust": {"enabled": false}}})
        .to_string(),
    )
    .unwrap();
    install_hook("gemini-cli", &[("HOME", &home)], &gateway.log);
    let env = [
        (
            "GOOGLE_GEMINI_BASE_URL",
            format!("http://{}", gateway.address),
        ),
        ("GEMINI_API_KEY", "test-not-a-key".to_owned()),
        ("GEMINI_CLI_NO_RELAUNCH", "true".to_owned()),
    ];
    // A named model: the default "Auto" first asks a routing model the script does not play.
    let mut all_args = vec!["-m", "gemini-2.5-flash"];
    all_args.extend_from_slice(args);
    all_args.extend(["-i", "Make the build folder"]);
    let script = sandbox.script(&env, &part(GEMINI_CLI), &all_args);
    let tmux = Tmux::start(&format!("bash {}", quoted(script)), 120, 40);
    (sandbox, tmux, upstream, gateway)
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Gemini CLI, tmux)"]
fn real_gemini_cli_shows_the_reason_right_above_its_dialog_while_it_asks() {
    let (sandbox, tmux, _upstream, _gateway) = gemini_in_tmux(&[]);
    let message = format!("model's reason for run_shell_command: {GEMINI_REASON}");
    let dialog = tmux.screen_within("Gemini CLI's dialog with the reason", STARTUP, |screen| {
        screen.contains(&message) && screen.contains("Allow execution")
    });
    keep_screen("gemini-cli-dialog", &dialog);
    assert!(
        dialog.find(&message) < dialog.find("Allow execution"),
        "{dialog}"
    );
    tmux.keys(&["Enter"]);
    let screen = tmux.screen_within("the last answer", STARTUP, |screen| {
        screen.contains(GEMINI_FINAL)
    });
    keep_screen("gemini-cli-after", &screen);
    assert!(sandbox.path("work/build").is_dir());
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (Gemini CLI, tmux)"]
fn real_gemini_cli_with_yolo_asks_nothing() {
    let (sandbox, tmux, _upstream, _gateway) = gemini_in_tmux(&["--yolo"]);
    let screen = tmux.screen_within("the last answer", STARTUP, |screen| {
        screen.contains(GEMINI_FINAL)
    });
    keep_screen("gemini-cli-yolo", &screen);
    assert!(!screen.contains("Allow execution"), "{screen}");
    assert!(sandbox.path("work/build").is_dir());
}
