//! The real third-party parts through `reasons gateway` and `reasons proxy`: the official
//! `anthropic` Python SDK, and the real Claude Code with MCP servers, each against the scripted
//! Messages API of `upstream.rs`.
//!
//! They are installed by `.ci/real-parts target/real-parts`, which `.ci/run` runs before the
//! ignored tests. Each test here is ignored by a plain `cargo test`, and fails (never passes by
//! skipping) when a part is missing.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::gateway::Gateway;
use crate::upstream::{Received, Upstream};
use crate::util::{arg, mcp_fixture, read_reasons_log, reasons, records, root};

/// Where `.ci/real-parts` put the parts.
fn real_parts() -> PathBuf {
    root().join("target").join("real-parts")
}

/// One installed part, which must be there.
#[track_caller]
fn part(path: &str) -> PathBuf {
    let path = real_parts().join(path);
    assert!(
        path.exists(),
        "{} is missing: install the real parts with `.ci/real-parts target/real-parts`",
        path.display()
    );
    path
}

/// How long any one real part may run before the test kills it and fails.
const LIMIT: Duration = Duration::from_secs(120);

/// Runs `command` to its end with nothing on stdin, killing it and everything it started when it
/// runs past `LIMIT`.
#[track_caller]
fn run_bounded(mut command: Command) -> Output {
    // Its own process group, so that a timeout ends what it started too (MCP servers, the proxy).
    command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|error| panic!("{command:?} does not start: {error}"));
    let read_all = |mut pipe: Box<dyn Read + Send>| {
        let (done, result) = mpsc::channel();
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = done.send(bytes);
        });
        result
    };
    let stdout = read_all(Box::new(child.stdout.take().expect("stdout")));
    let stderr = read_all(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    // What is left of the pipes once the child is gone; a grandchild holding them open is not
    // waited for past the deadline.
    let rest = |pipe: mpsc::Receiver<Vec<u8>>| {
        let wait = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(5);
        String::from_utf8_lossy(&pipe.recv_timeout(wait).unwrap_or_default()).into_owned()
    };
    let Some(status) = status else {
        // The group is still there: its leader is not reaped yet.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .status();
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "{command:?} ran past {LIMIT:?}\nstdout: {}\nstderr: {}",
            rest(stdout),
            rest(stderr)
        );
    };
    Output {
        status,
        stdout: rest(stdout).into_bytes(),
        stderr: rest(stderr).into_bytes(),
    }
}

// ---- a scripted model -------------------------------------------------------------------------

/// The `tool_result` a request's history holds for the call `id`.
fn tool_result(request: &Value, id: &str) -> Option<Value> {
    request["messages"]
        .as_array()?
        .iter()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == id)
        .cloned()
}

/// The text a `tool_result` holds, whether its content is a string or blocks.
fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect(),
        other => other.to_string(),
    }
}

const FINAL: &str = "Done.";

/// A model that makes these calls one turn at a time, each once its history holds the result of
/// the one before, then answers in text. A request without tools (a side request) gets text.
fn scripted(calls: Vec<Value>) -> impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static {
    move |request| {
        let has_tools = request["tools"].as_array().is_some_and(|t| !t.is_empty());
        let next = calls
            .iter()
            .find(|call| tool_result(request, call["id"].as_str().unwrap()).is_none());
        match next {
            Some(call) if has_tools => vec![call.clone()],
            _ => vec![json!({"type": "text", "text": FINAL})],
        }
    }
}

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// The main loop's requests: `POST /v1/messages` with tools.
fn main_requests(upstream: &Upstream) -> Vec<Value> {
    upstream
        .received()
        .iter()
        .filter(|request| request.method == "POST" && request.path.starts_with("/v1/messages"))
        .map(Received::json)
        .filter(|body| body["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect()
}

/// The declaration of `name` in a request.
#[track_caller]
fn declared<'a>(request: &'a Value, name: &str) -> &'a Value {
    request["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["name"] == name))
        .unwrap_or_else(|| panic!("{name} is not declared"))
}

/// The first request whose history holds the result of `id`.
#[track_caller]
fn result_of(requests: &[Value], id: &str) -> Value {
    requests
        .iter()
        .find_map(|request| tool_result(request, id))
        .unwrap_or_else(|| panic!("no request carries the result of {id}"))
}

// ---- the anthropic SDK ------------------------------------------------------------------------

const SDK_REASON: &str = "Find the config file the user asked about";

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_anthropic_sdk_gets_calls_without_the_reason_plain_and_streamed() {
    let python = part("venv/bin/python");
    // The user's message names the way the SDK asks; the call's id says which it was.
    let upstream = Upstream::messages(|request| {
        let way = request["messages"][0]["content"].as_str().unwrap_or("?");
        vec![
            json!({"type": "text", "text": "Let me look for it."}),
            call(
                &format!("toolu_{way}"),
                "Bash",
                json!({"command": "find . -name '*.yml'", "reason": SDK_REASON}),
            ),
        ]
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let mut command = Command::new(python);
    command
        .arg(root().join("tests/it/python/anthropic_client.py"))
        .arg(format!("http://{}", gateway.address))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL");
    let output = run_bounded(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let got: Value = serde_json::from_slice(&output.stdout).expect("the script prints JSON");

    for way in ["create", "stream", "raw"] {
        assert_eq!(
            got[way],
            json!([
                {"type": "text", "text": "Let me look for it."},
                {"type": "tool_use", "id": format!("toolu_{way}"), "name": "Bash",
                    "input": {"command": "find . -name '*.yml'"}},
            ]),
            "{way}"
        );
    }
    let received = upstream.received();
    assert_eq!(received.len(), 3);
    for (request, stream) in received.iter().zip([None, Some(true), Some(true)]) {
        let body = request.json();
        assert_eq!(body.get("stream").and_then(Value::as_bool), stream);
        let schema = &declared(&body, "Bash")["input_schema"];
        assert_eq!(schema["properties"]["reason"]["type"], "string");
        assert_eq!(schema["required"], json!(["command"]));
    }
    assert_eq!(
        read_reasons_log(&gateway.log),
        ["create", "stream", "raw"].map(|way| json!({"via": "gateway", "tool": "Bash",
                "call_id": format!("toolu_{way}"), "reason": SDK_REASON}))
    );
}

// ---- the real Claude Code ---------------------------------------------------------------------

/// A Claude Code run: its own HOME and working folder, the hook installed, the gateway as its
/// API.
struct ClaudeCode {
    home: tempfile::TempDir,
    cwd: tempfile::TempDir,
    /// What `--output-format json` printed.
    result: Value,
}

impl ClaudeCode {
    /// Runs `claude -p PROMPT --allowedTools ALLOWED --output-format json ARGS` against
    /// `gateway`, with `env` added, and with the PreToolUse hook reading `gateway`'s log.
    fn run(
        gateway: &Gateway,
        prompt: &str,
        allowed: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> ClaudeCode {
        let claude = part("npm/node_modules/.bin/claude");
        let home = tempfile::tempdir().expect("a HOME");
        let cwd = tempfile::tempdir().expect("a working folder");
        let hook = format!(
            "'{}' hook claude-code --reasons-log '{}'",
            env!("CARGO_BIN_EXE_reasons"),
            arg(&gateway.log)
        );
        let settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "*", "hooks": [{"type": "command", "command": hook}]}]}});
        std::fs::create_dir(home.path().join(".claude")).unwrap();
        std::fs::write(
            home.path().join(".claude/settings.json"),
            settings.to_string(),
        )
        .unwrap();
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
            .current_dir(cwd.path())
            // Nothing of this machine's own setup: only what the run is given.
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("SHELL", "/bin/bash")
            .env("ANTHROPIC_BASE_URL", format!("http://{}", gateway.address))
            .env("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
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
        ClaudeCode { home, cwd, result }
    }

    fn session(&self) -> &str {
        self.result["session_id"].as_str().expect("a session id")
    }

    /// The session's transcript, `$HOME/.claude/projects/<folder>/<session>.jsonl`.
    fn transcript(&self) -> PathBuf {
        let name = format!("{}.jsonl", self.session());
        let projects = self.home.path().join(".claude/projects");
        std::fs::read_dir(&projects)
            .expect("Claude Code wrote its projects folder")
            .filter_map(Result::ok)
            .map(|folder| folder.path().join(&name))
            .find(|path| path.exists())
            .unwrap_or_else(|| panic!("no transcript {name} under {}", projects.display()))
    }

    /// The transcript's attachments of this type for the call `id`.
    fn attachments(&self, kind: &str, id: &str) -> Vec<Value> {
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
    fn hook_message(&self, id: &str) -> String {
        let success = self.attachments("hook_success", id);
        assert_eq!(success.len(), 1, "one hook run for {id}: {success:?}");
        let stdout: Value = serde_json::from_str(success[0]["stdout"].as_str().unwrap())
            .expect("the hook printed JSON");
        let shown = self.attachments("hook_system_message", id);
        assert_eq!(shown.len(), 1, "{shown:?}");
        assert_eq!(shown[0]["content"], stdout["systemMessage"]);
        stdout["systemMessage"].as_str().unwrap().to_owned()
    }

    /// `reasons extract --reasons-log LOG TRANSCRIPT --format jsonl`.
    fn extract(&self, log: &Path) -> Vec<Value> {
        let output = reasons()
            .args(["extract", "--reasons-log", arg(log)])
            .arg(self.transcript())
            .args(["--format", "jsonl"])
            .output()
            .expect("reasons extract runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        records(&String::from_utf8_lossy(&output.stdout))
    }
}

const BASH_ID: &str = "toolu_real_bash";
const BASH_REASON: &str = "Show the user the greeting they asked for";

fn bash_call() -> Value {
    call(
        BASH_ID,
        "Bash",
        json!({"command": "echo hello-from-stub", "reason": BASH_REASON}),
    )
}

/// The model calls Bash with a reason through the gateway; Claude Code runs it.
fn bash_session() -> (Upstream, Gateway, ClaudeCode) {
    let upstream = Upstream::messages(scripted(vec![bash_call()]));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let claude = ClaudeCode::run(
        &gateway,
        "Run the command: echo hello-from-stub",
        "Bash",
        &[],
        &[],
    );
    (upstream, gateway, claude)
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_runs_a_bash_call_whose_reason_the_gateway_took_to_the_log_and_the_hook() {
    let (upstream, gateway, claude) = bash_session();
    let requests = main_requests(&upstream);
    assert_eq!(requests.len(), 2, "a tool call, then the final text");
    // The model was offered `reason` on Bash, beside Bash's own properties.
    let schema = &declared(&requests[0], "Bash")["input_schema"];
    assert_eq!(schema["properties"]["reason"]["type"], "string");
    assert_eq!(schema["properties"]["command"]["type"], "string");
    assert_eq!(schema["required"], json!(["command"]));
    // The call ran: its output came back, not an InputValidationError.
    let result = result_of(&requests, BASH_ID);
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result_text(&result).trim(), "hello-from-stub");
    // What Claude Code kept of the call, and sent back upstream, has no reason.
    assert!(!requests[1].to_string().contains(BASH_REASON));
    // The reason is in the log under the call's id, with the session Claude Code names.
    assert_eq!(
        read_reasons_log(&gateway.log),
        [json!({"via": "gateway", "tool": "Bash", "call_id": BASH_ID,
            "reason": BASH_REASON, "session": claude.session()})]
    );
    // The hook found it there, and Claude Code showed it.
    assert_eq!(
        claude.hook_message(BASH_ID),
        format!("model's reason for Bash: {BASH_REASON}")
    );
    assert!(gateway
        .stderr_once(BASH_REASON)
        .contains(&format!("Bash: {BASH_REASON}\n")));
    drop(claude.cwd);
}

/// Needs `extract --reasons-log` (the audits' join of reasons logs).
#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_transcript_and_the_gateways_log_audit_the_bash_call_as_present() {
    let (_upstream, gateway, claude) = bash_session();
    let calls: Vec<Value> = claude
        .extract(&gateway.log)
        .into_iter()
        .filter(|record| record["call_id"] == BASH_ID)
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["tool"], "Bash");
    assert_eq!(calls[0]["status"], "present");
    assert_eq!(calls[0]["reason"], BASH_REASON);
    assert_eq!(calls[0]["reason_from"], "log");
}

// ---- MCP tools behind `reasons proxy`, with the gateway in front of the model ------------------

const ECHO_ID: &str = "toolu_real_echo";
const ECHO_REASON: &str = "Check that the MCP server answers";
const FIXTURE_ID: &str = "toolu_real_fixture";
const FIXTURE_REASON: &str = "See what the server itself receives";

/// An `--mcp-config` with two stdio servers, each behind `reasons proxy` logging to `log`:
/// `everything` (the reference MCP server) and `fixture` (which answers with the arguments it
/// received).
fn mcp_config(dir: &Path, log: &Path) -> PathBuf {
    let server = part("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let proxied = |server: Vec<String>| {
        let mut args: Vec<String> = ["proxy", "--reasons-log", arg(log), "--"]
            .map(str::to_owned)
            .into();
        args.extend(server);
        json!({"type": "stdio", "command": env!("CARGO_BIN_EXE_reasons"), "args": args})
    };
    let config = json!({"mcpServers": {
        "everything": proxied(vec!["node".into(), arg(&server).into(), "stdio".into()]),
        "fixture": proxied(vec![arg(&mcp_fixture()).into()]),
    }});
    let path = dir.join("mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// A session in which the model calls an MCP tool of each server, with a reason, and what each
/// part made of it. `before` are calls made first (ToolSearch, when MCP tools are deferred).
fn mcp_session(env: &[(&str, &str)], before: Vec<Value>) -> (Vec<Value>, Gateway, ClaudeCode) {
    let mut calls = before;
    calls.push(call(
        ECHO_ID,
        "mcp__everything__echo",
        json!({"message": "hi-from-stub", "reason": ECHO_REASON}),
    ));
    calls.push(call(
        FIXTURE_ID,
        "mcp__fixture__echo",
        json!({"text": "hi-from-stub", "reason": FIXTURE_REASON}),
    ));
    let upstream = Upstream::messages(scripted(calls));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let config = mcp_config(dir.path(), &gateway.log);
    let claude = ClaudeCode::run(
        &gateway,
        "Echo hi-from-stub with both MCP servers",
        "mcp__everything__echo,mcp__fixture__echo,ToolSearch",
        &["--mcp-config", arg(&config), "--strict-mcp-config"],
        env,
    );
    (main_requests(&upstream), gateway, claude)
}

/// What every MCP session shows, however the tools were declared.
fn assert_mcp_calls_reached_their_servers_without_the_reason(
    requests: &[Value],
    gateway: &Gateway,
    claude: &ClaudeCode,
) {
    // The listing the proxy made declares the layer's own `reason`; the gateway left it so.
    let last = requests.last().unwrap();
    for tool in ["mcp__everything__echo", "mcp__fixture__echo"] {
        let schema = &declared(last, tool)["input_schema"];
        assert_eq!(schema["properties"]["reason"]["type"], "string", "{tool}");
    }
    // The servers answered, and neither saw the reason: the fixture says what it received.
    let echoed = result_of(requests, ECHO_ID);
    assert_eq!(result_text(&echoed), "Echo: hi-from-stub", "{echoed}");
    let fixture = result_of(requests, FIXTURE_ID);
    assert_ne!(fixture["is_error"], true, "{fixture}");
    let received: Value = serde_json::from_str(&result_text(&fixture)).expect("JSON arguments");
    assert_eq!(received, json!({"text": "hi-from-stub"}));
    // The proxy logged each reason under Claude Code's tool-use id; the gateway took none of
    // them (they are the layer's own, so the calls reached Claude Code with their reasons).
    let logged: Vec<Value> = read_reasons_log(&gateway.log)
        .into_iter()
        .filter(|record| record["call_id"] == ECHO_ID || record["call_id"] == FIXTURE_ID)
        .map(|mut record| {
            record.as_object_mut().unwrap().remove("request_id");
            record
        })
        .collect();
    assert_eq!(
        logged,
        [
            json!({"via": "proxy", "tool": "echo", "call_id": ECHO_ID, "reason": ECHO_REASON}),
            json!({"via": "proxy", "tool": "echo", "call_id": FIXTURE_ID,
                "reason": FIXTURE_REASON}),
        ]
    );
    // The hook showed each reason, from the call's own input.
    assert_eq!(
        claude.hook_message(ECHO_ID),
        format!("model's reason for mcp__everything__echo: {ECHO_REASON}")
    );
    assert_eq!(
        claude.hook_message(FIXTURE_ID),
        format!("model's reason for mcp__fixture__echo: {FIXTURE_REASON}")
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_tools_declared_directly_reach_their_servers_without_the_reason() {
    let (requests, gateway, claude) = mcp_session(&[], Vec::new());
    // With a base URL of its own Claude Code declares MCP tools directly.
    assert!(requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|tool| tool["name"] != "ToolSearch"));
    assert_mcp_calls_reached_their_servers_without_the_reason(&requests, &gateway, &claude);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_tools_without_tool_search_reach_their_servers_without_the_reason() {
    let (requests, gateway, claude) = mcp_session(&[("ENABLE_TOOL_SEARCH", "false")], Vec::new());
    declared(&requests[0], "mcp__everything__echo");
    assert_mcp_calls_reached_their_servers_without_the_reason(&requests, &gateway, &claude);
}

const SEARCH_ID: &str = "toolu_real_search";
const SEARCH_REASON: &str = "Load the echo tools before calling them";

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_tools_behind_tool_search_reach_their_servers_without_the_reason() {
    let search = call(
        SEARCH_ID,
        "ToolSearch",
        json!({"query": "select:mcp__everything__echo,mcp__fixture__echo", "max_results": 5,
            "reason": SEARCH_REASON}),
    );
    let (requests, gateway, claude) = mcp_session(&[("ENABLE_TOOL_SEARCH", "true")], vec![search]);
    // The first request defers the MCP tools behind ToolSearch, which the gateway augmented
    // like any built-in tool; ToolSearch ran with the reason taken off.
    assert!(requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|tool| !tool["name"].as_str().unwrap().starts_with("mcp__")));
    let schema = &declared(&requests[0], "ToolSearch")["input_schema"];
    assert_eq!(schema["properties"]["reason"]["type"], "string");
    let loaded = result_of(&requests, SEARCH_ID);
    assert_eq!(loaded["is_error"], Value::Null, "{loaded}");
    assert!(loaded.to_string().contains("tool_reference"), "{loaded}");
    assert!(
        read_reasons_log(&gateway.log).contains(&json!({"via": "gateway",
        "tool": "ToolSearch", "call_id": SEARCH_ID, "reason": SEARCH_REASON,
        "session": claude.session()}))
    );
    // Once loaded, the MCP tools are declared with `defer_loading`, as the proxy listed them.
    assert_eq!(
        declared(requests.last().unwrap(), "mcp__everything__echo")["defer_loading"],
        true
    );
    assert_mcp_calls_reached_their_servers_without_the_reason(&requests, &gateway, &claude);
}

/// Needs `extract --reasons-log` (the audits' join of reasons logs).
#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_calls_are_audited_as_present_with_the_reason_they_carried() {
    let (_requests, gateway, claude) = mcp_session(&[], Vec::new());
    let audited: Vec<(Value, Value, Value)> = claude
        .extract(&gateway.log)
        .into_iter()
        .filter(|record| record["call_id"] == ECHO_ID || record["call_id"] == FIXTURE_ID)
        .map(|record| {
            (
                record["call_id"].clone(),
                record["status"].clone(),
                record["reason_from"].clone(),
            )
        })
        .collect();
    // Claude Code's transcript keeps an MCP call as the model made it, reason included.
    assert_eq!(
        audited,
        [
            (json!(ECHO_ID), json!("present"), json!("call")),
            (json!(FIXTURE_ID), json!("present"), json!("call")),
        ]
    );
}
