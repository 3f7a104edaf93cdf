//! The real Claude Code in auto mode through `reasons gateway`: no classifier reads a reason
//! (SPEC §4.2).
//!
//! Measured with Claude Code 2.1.328: in auto mode it asks the Messages API to classify the tool
//! calls of each answer (`"safeguards": [{"type": "dangerous_tool_use", …}]` and the
//! `dangerous-tool-use-…` beta); the gateway takes that ask off, so the upstream never gets it.
//! With `CLAUDE_CODE_AUTO_MODE_SERVER=0` Claude Code classifies on its own, in side requests (no
//! `tools`, the history as text inside `<transcript>`), built from its own copy of each call:
//! the Bash call the gateway stripped, and the MCP call of a server behind `reasons proxy`, whose
//! `reason` is the layer's and which the gateway strips too. None of them holds a reason.

use std::path::Path;

use serde_json::{json, Value};

use crate::util::claude_code::{
    bash_call, result_text, tool_result, tool_use, ClaudeCode, BASH_ID, BASH_REASON, FINAL,
};
use crate::util::gateway::Gateway;
use crate::util::real_parts::{part, MCP_SERVER_EVERYTHING};
use crate::util::upstream::{declares_tools, Received, Upstream};
use crate::util::{arg, read_reasons_log};

const ECHO_ID: &str = "toolu_auto_echo";
const ECHO_REASON: &str = "Check that the proxied MCP server answers";

/// What Claude Code's classifier prompt wraps the history in.
const TRANSCRIPT: &str = "<transcript>";

/// The beta that turns the provider's classifier on.
const CLASSIFIER_BETA: &str = "dangerous-tool-use-";

fn echo_call() -> Value {
    tool_use(
        ECHO_ID,
        "mcp__everything__echo",
        json!({"message": "hi-from-auto-mode", "reason": ECHO_REASON}),
    )
}

/// A Bash call that writes a file: auto mode lets no write run unchecked.
const WRITE_ID: &str = "toolu_auto_write";
const WRITE_COMMAND: &str = "echo hello-from-stub | tee greeting.txt";

fn write_call() -> Value {
    tool_use(
        WRITE_ID,
        "Bash",
        json!({"command": WRITE_COMMAND, "reason": BASH_REASON}),
    )
}

/// A model that makes `calls` one turn at a time, answers its classifier's side requests "no
/// harm" (both stages: the first stops at `</severity>`, the second may think first), and any
/// other side request in text.
fn model(calls: Vec<Value>) -> impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static {
    move |request| {
        if !declares_tools(request) {
            let classifier = request.to_string().contains(TRANSCRIPT);
            let text = if classifier {
                "<severity>0</severity>"
            } else {
                FINAL
            };
            return vec![json!({"type": "text", "text": text})];
        }
        let next = calls
            .iter()
            .find(|call| tool_result(request, call["id"].as_str().unwrap()).is_none());
        match next {
            Some(call) => vec![call.clone()],
            None => vec![json!({"type": "text", "text": FINAL})],
        }
    }
}

/// The POSTs to the Messages API, in order.
fn messages(upstream: &Upstream) -> Vec<Received> {
    upstream
        .received()
        .into_iter()
        .filter(|request| request.method == "POST" && request.path.starts_with("/v1/messages"))
        .collect()
}

/// Whether a request asks the provider to classify its answer's tool calls, in its body or in
/// its betas.
fn asks_the_provider_to_classify(request: &Received) -> (bool, bool) {
    let body = request.json();
    let safeguard = body["safeguards"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|safeguard| safeguard["type"] == "dangerous_tool_use");
    let beta = request
        .header("anthropic-beta")
        .is_some_and(|betas| betas.contains(CLASSIFIER_BETA));
    (safeguard, beta)
}

/// Claude Code in auto mode (nothing allowed in advance), with the `everything` MCP server
/// behind `reasons proxy` logging to `log`, its API at `api`.
fn auto_mode(api: &str, log: &Path, env: &[(&str, &str)]) -> ClaudeCode {
    let dir = tempfile::tempdir().unwrap();
    let everything = part(MCP_SERVER_EVERYTHING);
    let config = json!({"mcpServers": {"everything": {"type": "stdio",
        "command": env!("CARGO_BIN_EXE_reasons"),
        "args": ["proxy", "--reasons-log", arg(log), "--", "node", arg(&everything), "stdio"]}}});
    let config_path = dir.path().join("mcp.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    // MCP tools declared in the first request, as the model calls them without ToolSearch.
    let mut env = env.to_vec();
    env.push(("ENABLE_TOOL_SEARCH", "false"));
    ClaudeCode::run_at(
        api,
        log,
        "Echo hello-from-stub with Bash, then hi-from-auto-mode with the MCP server",
        "TodoWrite",
        &[
            "--permission-mode",
            "auto",
            "--mcp-config",
            arg(&config_path),
            "--strict-mcp-config",
        ],
        &env,
    )
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_in_auto_mode_asks_the_provider_to_classify_and_the_gateway_takes_it_off() {
    // Straight to the API, Claude Code asks for the provider's classifier.
    let direct = Upstream::messages(model(vec![bash_call()]));
    let dir = tempfile::tempdir().unwrap();
    let _claude = auto_mode(&direct.url(), &dir.path().join("reasons.jsonl"), &[]);
    let asked: Vec<(bool, bool)> = messages(&direct)
        .iter()
        .filter(|request| declares_tools(&request.json()))
        .map(asks_the_provider_to_classify)
        .collect();
    assert!(asked.contains(&(true, true)), "{asked:?}");

    // Through the gateway, the upstream never gets that ask; the other betas go on.
    let upstream = Upstream::messages(model(vec![bash_call()]));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let claude = ClaudeCode::run_at(
        &format!("http://{}", gateway.address),
        &gateway.log,
        "Run the command: echo hello-from-stub",
        "TodoWrite",
        &["--permission-mode", "auto"],
        &[],
    );
    let received = messages(&upstream);
    for request in &received {
        assert_eq!(asks_the_provider_to_classify(request), (false, false));
        if declares_tools(&request.json()) {
            assert!(request.json().get("safeguards").is_none());
            let betas = request.header("anthropic-beta").expect("other betas");
            assert!(betas.contains("claude-code-20250219"), "{betas}");
        }
    }
    // The call ran, and its reason is in the log.
    let bash = received
        .iter()
        .find_map(|request| tool_result(&request.json(), BASH_ID))
        .expect("the Bash call's result");
    assert_eq!(result_text(&bash).trim(), "hello-from-stub", "{bash}");
    assert_eq!(
        read_reasons_log(&gateway.log),
        [
            json!({"via": "gateway", "tool": "Bash", "call_id": BASH_ID, "reason": BASH_REASON,
            "touched": "echo hello-from-stub", "session": claude.session()})
        ]
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_in_auto_mode_classifies_its_own_calls_without_their_reasons() {
    let upstream = Upstream::messages(model(vec![write_call(), echo_call()]));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let claude = auto_mode(
        &format!("http://{}", gateway.address),
        &gateway.log,
        &[("CLAUDE_CODE_AUTO_MODE_SERVER", "0")],
    );
    let received = messages(&upstream);
    let bodies: Vec<Value> = received.iter().map(Received::json).collect();
    let main: Vec<&Value> = bodies.iter().filter(|body| declares_tools(body)).collect();
    assert_eq!(main.len(), 3, "two calls, then the final text");
    for request in &received {
        assert_eq!(asks_the_provider_to_classify(request), (false, false));
    }

    // The MCP tool reached the model with the proxy's `reason` only, and the gateway took it
    // on: the call reached Claude Code without it, and the reason is in the log, once.
    let echo = main[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "mcp__everything__echo")
        .expect("the proxied MCP tool is declared");
    assert_eq!(
        echo["input_schema"]["properties"]["reason"]["description"],
        "One short sentence: why this call. Shown to the human reviewing the session."
    );
    assert_eq!(
        read_reasons_log(&gateway.log),
        [
            json!({"via": "gateway", "tool": "Bash", "call_id": WRITE_ID, "reason": BASH_REASON,
                "touched": WRITE_COMMAND, "session": claude.session()}),
            json!({"via": "gateway", "tool": "mcp__everything__echo", "call_id": ECHO_ID,
                "reason": ECHO_REASON, "touched": "message=hi-from-auto-mode",
                "session": claude.session()}),
        ]
    );
    let transcript = std::fs::read_to_string(claude.transcript()).unwrap();
    for reason in [BASH_REASON, ECHO_REASON] {
        let kept = json!({"reason": reason}).to_string();
        let kept = &kept[1..kept.len() - 1];
        assert!(
            !transcript.contains(kept),
            "Claude Code's copy kept {reason:?}"
        );
    }

    // Both calls ran, decided by auto mode.
    let result = |id: &str| {
        bodies
            .iter()
            .find_map(|body| tool_result(body, id))
            .unwrap_or_else(|| panic!("no result of {id}"))
    };
    let bash = result(WRITE_ID);
    assert_eq!(result_text(&bash).trim(), "hello-from-stub", "{bash}");
    let written = claude.work().join("greeting.txt");
    assert_eq!(
        std::fs::read_to_string(written).unwrap().trim(),
        "hello-from-stub"
    );
    let echoed = result(ECHO_ID);
    assert_eq!(result_text(&echoed), "Echo: hi-from-auto-mode", "{echoed}");

    // Claude Code classified each call on its own, in side requests (no tools), and none of
    // them holds a reason: not the calls' own, not the gateway's given back.
    let side: Vec<&Value> = bodies.iter().filter(|body| !declares_tools(body)).collect();
    for text in side.iter().map(|body| body.to_string()) {
        for reason in [BASH_REASON, ECHO_REASON] {
            assert!(
                !text.contains(reason),
                "a side request holds {reason:?}: {text}"
            );
        }
    }
    let judged: Vec<String> = side.iter().filter_map(|body| judged_action(body)).collect();
    assert!(
        judged.contains(&json!({"Bash": WRITE_COMMAND}).to_string()),
        "the Bash call was not classified: {judged:?}"
    );
    assert!(
        judged.contains(&json!({"mcp__everything__echo": "message=hi-from-auto-mode"}).to_string()),
        "the MCP call was not classified: {judged:?}"
    );
}

/// The action a classifier request judges: the transcript's last entry, as Claude Code writes
/// it (one JSON line a call), when the request is its classifier's.
fn judged_action(request: &Value) -> Option<String> {
    let blocks = request["messages"][0]["content"].as_array()?;
    let end = blocks
        .iter()
        .position(|block| block["text"] == "</transcript>\n")?;
    let before = blocks.get(end.checked_sub(1)?)?["text"].as_str()?;
    Some(before.trim_end().lines().last()?.to_owned())
}
