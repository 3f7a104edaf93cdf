//! A real Claude Code run against a gateway, and the scripted Messages model it talks to: the
//! real-agent tests of Claude Code, and the test where every agent shares one gateway, drive it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::util::bounded::run_bounded;
use crate::util::gateway::Gateway;
use crate::util::real_parts::{part, CLAUDE_CODE};
use crate::util::sandbox::Sandbox;
use crate::util::upstream::declares_tools;
use crate::util::{arg, extract_records, install_hook, installed_binary};

/// The `tool_result` a request's history holds for the call `id`.
pub fn tool_result(request: &Value, id: &str) -> Option<Value> {
    request["messages"]
        .as_array()?
        .iter()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == id)
        .cloned()
}

/// The text a `tool_result` holds, whether its content is a string or blocks.
pub fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect(),
        other => other.to_string(),
    }
}

/// What the scripted model answers once every call has its result, and what a run must end with.
pub const FINAL: &str = "Done.";

/// A model that makes these calls one turn at a time, each once its history holds the result of
/// the one before, then answers in text. A request without tools (a side request) gets text.
pub fn scripted(calls: Vec<Value>) -> impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static {
    move |request| {
        let has_tools = declares_tools(request);
        let next = calls
            .iter()
            .find(|call| tool_result(request, call["id"].as_str().unwrap()).is_none());
        match next {
            Some(call) if has_tools => vec![call.clone()],
            _ => vec![json!({"type": "text", "text": FINAL})],
        }
    }
}

/// One `tool_use` block of an answer.
pub fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// A Claude Code run: its own HOME and working folder (a [`Sandbox`]), the hook installed, the gateway as its
/// API.
pub struct ClaudeCode {
    /// Its HOME and working folder, kept until the run is dropped.
    sandbox: Sandbox,
    /// What `--output-format json` printed.
    result: Value,
}

impl ClaudeCode {
    /// Runs `claude -p PROMPT --allowedTools ALLOWED --output-format json ARGS` against
    /// `gateway`, with `env` added, and with the PreToolUse hook reading `gateway`'s log.
    pub fn run(
        gateway: &Gateway,
        prompt: &str,
        allowed: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> ClaudeCode {
        ClaudeCode::run_through(gateway.address, &gateway.log, prompt, allowed, args, env)
    }

    /// The same against whatever listens at `address` (a load balancer in front of gateways),
    /// the hook reading `log`.
    pub fn run_through(
        address: std::net::SocketAddr,
        log: &Path,
        prompt: &str,
        allowed: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> ClaudeCode {
        let claude = part(CLAUDE_CODE);
        let sandbox = Sandbox::new();
        let home = sandbox.path("home");
        // The hook as a person installs it: one command, into a HOME with no settings yet.
        install_hook("claude-code", &[("HOME", &home)], log);
        let settings: Value = serde_json::from_slice(
            &std::fs::read(home.join(".claude/settings.json")).expect("settings written"),
        )
        .unwrap();
        assert_eq!(
            settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            format!(
                "{} hook claude-code --reasons-log {}",
                installed_binary().display(),
                log.display()
            )
        );
        let mut command = Command::new(claude);
        command
            .args([
                "-p",
                prompt,
                "--allowedTools",
                allowed,
                "--output-format",
                "json",
            ])
            .args(args)
            .current_dir(sandbox.path("work"));
        // Nothing of this machine's own setup: only what the run is given.
        sandbox.apply(&mut command);
        command
            .env("ANTHROPIC_BASE_URL", format!("http://{address}"))
            .env("ANTHROPIC_API_KEY", API_KEY)
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .envs(env.iter().copied());
        let output = run_bounded(command);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "claude failed: {}\nstdout: {stdout}\nstderr: {stderr}",
            output.status
        );
        let result: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|error| panic!("{error}: {stdout}\nstderr: {stderr}"));
        assert_eq!(result["is_error"], false, "{result}");
        assert_eq!(result["result"], FINAL, "{result}");
        ClaudeCode { sandbox, result }
    }

    pub fn session(&self) -> &str {
        self.result["session_id"].as_str().expect("a session id")
    }

    /// The session's transcript, `$HOME/.claude/projects/<folder>/<session>.jsonl`.
    pub fn transcript(&self) -> PathBuf {
        let name = format!("{}.jsonl", self.session());
        let projects = self.sandbox.path("home").join(".claude/projects");
        std::fs::read_dir(&projects)
            .expect("Claude Code wrote its projects folder")
            .filter_map(Result::ok)
            .map(|folder| folder.path().join(&name))
            .find(|path| path.exists())
            .unwrap_or_else(|| panic!("no transcript {name} under {}", projects.display()))
    }

    /// The transcript's attachments of this type for the call `id`.
    pub fn attachments(&self, kind: &str, id: &str) -> Vec<Value> {
        std::fs::read_to_string(self.transcript())
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
            .filter(|line| line["type"] == "attachment")
            .map(|line| line["attachment"].clone())
            .filter(|attachment| attachment["type"] == kind && attachment["toolUseID"] == id)
            .collect()
    }

    /// What the hook showed the person for the call `id`: its `systemMessage`, as Claude Code
    /// recorded both the hook's output and the message it showed.
    #[track_caller]
    pub fn hook_message(&self, id: &str) -> String {
        let success = self.attachments("hook_success", id);
        assert_eq!(success.len(), 1, "one hook run for {id}: {success:?}");
        let stdout: Value = serde_json::from_str(success[0]["stdout"].as_str().unwrap())
            .expect("the hook printed JSON");
        let shown = self.attachments("hook_system_message", id);
        assert_eq!(shown.len(), 1, "{shown:?}");
        assert_eq!(shown[0]["content"], stdout["systemMessage"]);
        stdout["systemMessage"].as_str().unwrap().to_owned()
    }

    /// The records `reasons extract --reasons-log LOG TRANSCRIPT --format jsonl` finds.
    pub fn extract(&self, log: &Path) -> Vec<Value> {
        let transcript = self.transcript();
        extract_records(&["--reasons-log", arg(log), arg(&transcript)])
    }
}

/// The key Claude Code is given: any string does, against the scripted upstream.
pub const API_KEY: &str = "sk-ant-test-claude-code-key";

/// The Bash call of [`bash_call`], and its reason.
pub const BASH_ID: &str = "toolu_real_bash";
pub const BASH_REASON: &str = "Show the user the greeting they asked for";

/// A Bash call, with a reason, whose output Claude Code shows.
pub fn bash_call() -> Value {
    tool_use(
        BASH_ID,
        "Bash",
        json!({"command": "echo hello-from-stub", "reason": BASH_REASON}),
    )
}
