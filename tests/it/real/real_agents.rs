//! The real third-party parts through `reasons gateway` and `reasons proxy`: the official
//! `anthropic` Python SDK, and the real Claude Code with MCP servers, each against the scripted
//! Messages API of `util/upstream.rs`.
//!
//! They are installed by `.ci/real-parts target/real-parts`, which `.ci/run` runs before the
//! ignored tests. Each test here is ignored by a plain `cargo test`, and fails (never passes by
//! skipping) when a part is missing.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::claude_code::{
    bash_call, result_text, scripted, tool_result, tool_use, ClaudeCode, API_KEY, BASH_ID,
    BASH_REASON, FINAL,
};
use crate::util::gateway::Gateway;
use crate::util::real_parts::{part, python_script, MCP_SERVER_EVERYTHING};
use crate::util::upstream::{message, message_events, whole_start_events, Answer, Upstream};
use crate::util::{arg, mcp_fixture, read_reasons_log};

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
    // The user's message names the way the SDK asks; the call's id says which it was.
    let answer = |way: &str| {
        vec![
            json!({"type": "text", "text": "Let me look for it."}),
            tool_use(
                &format!("toolu_{way}"),
                "Bash",
                json!({"command": "find . -name '*.yml'", "reason": SDK_REASON}),
            ),
        ]
    };
    let upstream = Upstream::start(move |request| {
        let body = request.json();
        let way = body["messages"][0]["content"].as_str().unwrap_or("?");
        match (way, body["stream"] == true) {
            ("whole", _) => Answer::Events(whole_start_events(&answer(way))),
            (_, true) => Answer::Events(message_events(&answer(way))),
            (_, false) => Answer::Json(200, message(&answer(way))),
        }
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let got = python_script(
        "anthropic_client.py",
        &[&format!("http://{}", gateway.address)],
    );

    for way in ["create", "stream", "raw", "whole"] {
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
    assert_eq!(received.len(), 4);
    let streams = [None, Some(true), Some(true), Some(true)];
    for (request, stream) in received.iter().zip(streams) {
        let body = request.json();
        assert_eq!(body.get("stream").and_then(Value::as_bool), stream);
        let schema = &declared(&body, "Bash")["input_schema"];
        assert_eq!(schema["properties"]["reason"]["type"], "string");
        assert_eq!(schema["required"], json!(["command"]));
    }
    assert_eq!(
        read_reasons_log(&gateway.log),
        ["create", "stream", "raw", "whole"].map(|way| json!({"via": "gateway", "tool": "Bash",
                "call_id": format!("toolu_{way}"), "reason": SDK_REASON,
                "touched": "find . -name '*.yml'"}))
    );
}

/// The model calls Bash with a reason through the gateway; Claude Code runs it.
fn bash_session() -> (Upstream, Gateway, ClaudeCode) {
    let upstream = Upstream::messages(scripted(vec![bash_call()]));
    let gateway = Gateway::start(&upstream.url(), &["-v"]);
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
    let requests = upstream.tool_requests("/v1/messages");
    assert_eq!(requests.len(), 2, "a tool call, then the final text");
    // The model was offered `reason` on Bash, beside Bash's own properties.
    let schema = &declared(&requests[0], "Bash")["input_schema"];
    assert_eq!(schema["properties"]["reason"]["type"], "string");
    assert_eq!(schema["properties"]["command"]["type"], "string");
    assert_eq!(schema["required"], json!(["command"]));
    // ScheduleWakeup declares a `reason` of its own: the gateway left it as Claude Code wrote it.
    let own = &declared(&requests[0], "ScheduleWakeup")["input_schema"]["properties"]["reason"];
    assert!(own["description"].is_string(), "{own}");
    assert_ne!(
        own["description"],
        schema["properties"]["reason"]["description"]
    );
    // The call ran: its output came back, not an InputValidationError.
    let result = result_of(&requests, BASH_ID);
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result_text(&result).trim(), "hello-from-stub");
    // What Claude Code kept of the call has no reason: the gateway gave it back upstream.
    assert!(!std::fs::read_to_string(claude.transcript())
        .unwrap()
        .contains(&format!("\"reason\":\"{BASH_REASON}\"")));
    assert_eq!(history_input(&requests[1], BASH_ID)["reason"], BASH_REASON);
    // The reason is in the log under the call's id, with the session Claude Code names.
    assert_eq!(
        read_reasons_log(&gateway.log),
        [json!({"via": "gateway", "tool": "Bash", "call_id": BASH_ID,
            "reason": BASH_REASON, "touched": "echo hello-from-stub", "session": claude.session()})]
    );
    // The hook found it there, and Claude Code showed it.
    assert_eq!(
        claude.hook_message(BASH_ID),
        format!("model's reason for Bash: {BASH_REASON}")
    );
    let stderr = gateway.stderr_once(BASH_REASON);
    assert!(
        stderr.contains(&format!("Bash: {BASH_REASON}\n")),
        "{stderr}"
    );
    // Claude Code's key went upstream, and nowhere else.
    assert!(upstream
        .received()
        .iter()
        .filter(|request| request.method == "POST")
        .all(|request| request.header("x-api-key") == Some(API_KEY)));
    assert!(!stderr.contains(API_KEY));
    assert!(!std::fs::read_to_string(&gateway.log)
        .unwrap()
        .contains(API_KEY));
    // Both turns offered the same tools, so a prompt cache keeps hitting.
    assert_eq!(requests[0]["tools"], requests[1]["tools"]);
}

/// The input of the `tool_use` block `id` in a request's history.
#[track_caller]
fn history_input(request: &Value, id: &str) -> Value {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .find(|block| block["type"] == "tool_use" && block["id"] == id)
        .unwrap_or_else(|| panic!("no tool_use {id} in the history"))["input"]
        .clone()
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_sees_its_own_reason_in_the_next_turn_which_replays_to_the_same_bytes() {
    let (upstream, gateway, claude) = bash_session();
    let requests = upstream.tool_requests("/v1/messages");
    assert_eq!(requests.len(), 2, "a tool call, then the final text");
    // The second turn's history holds the first call with the reason the model gave it.
    assert_eq!(
        history_input(&requests[1], BASH_ID),
        json!({"command": "echo hello-from-stub", "reason": BASH_REASON})
    );
    // Claude Code's own record of the call has none: the gateway took it off on the way in.
    let transcript = std::fs::read_to_string(claude.transcript()).unwrap();
    assert!(transcript.contains(BASH_ID));
    assert!(!transcript.contains(&format!("\"reason\":\"{BASH_REASON}\"")));
    // Replaying the second request as Claude Code sent it (the layer's additions taken out of
    // what the upstream received) gives the same bytes upstream again, twice.
    let second = upstream
        .received()
        .into_iter()
        .filter(|request| request.method == "POST" && request.path.starts_with("/v1/messages"))
        .rfind(|request| request.body.windows(11).any(|w| w == b"tool_result"))
        .expect("the second turn");
    let sent = String::from_utf8(second.body.clone()).unwrap();
    let property = format!("\"reason\":{}", reasons::layer::reason_property());
    let restored = format!(",\"reason\":{}", json!(BASH_REASON));
    let as_claude_sent = sent
        .replace(&format!(",{property}"), "")
        .replace(&property, "")
        .replace(&restored, "");
    assert!(!as_claude_sent.contains(BASH_REASON));
    for _ in 0..2 {
        let replayed = crate::util::upstream::request(
            gateway.address,
            "POST",
            &second.path,
            &[("content-type", "application/json"), ("x-api-key", API_KEY)],
            as_claude_sent.as_bytes(),
        );
        assert_eq!(replayed.status, 200);
        let again = upstream.received().last().unwrap().body.clone();
        assert!(again == second.body, "the replay went upstream otherwise");
    }
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_runs_parallel_calls_each_with_its_own_logged_reason() {
    let calls = [
        tool_use(
            "toolu_real_one",
            "Bash",
            json!({"command": "echo one", "reason": "First"}),
        ),
        tool_use(
            "toolu_real_two",
            "Bash",
            json!({"command": "echo two", "reason": "Second"}),
        ),
    ];
    let upstream =
        Upstream::messages(
            move |request| match tool_result(request, "toolu_real_one").is_some() {
                true => vec![json!({"type": "text", "text": FINAL})],
                false => calls.to_vec(),
            },
        );
    let gateway = Gateway::start(&upstream.url(), &[]);
    let claude = ClaudeCode::run(&gateway, "Run both", "Bash", &[], &[]);
    let requests = upstream.tool_requests("/v1/messages");
    for (id, output, reason) in [
        ("toolu_real_one", "one", "First"),
        ("toolu_real_two", "two", "Second"),
    ] {
        let result = result_of(&requests, id);
        assert_eq!(result["is_error"], false, "{result}");
        assert_eq!(result_text(&result).trim(), output);
        assert_eq!(
            claude.hook_message(id),
            format!("model's reason for Bash: {reason}")
        );
    }
    assert_eq!(
        read_reasons_log(&gateway.log),
        [
            ("toolu_real_one", "First", "echo one"),
            ("toolu_real_two", "Second", "echo two"),
        ]
        .map(|(id, reason, touched)| {
            json!({"via": "gateway", "tool": "Bash", "call_id": id, "reason": reason,
                "touched": touched, "session": claude.session()})
        })
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_falls_back_to_a_plain_answer_which_the_gateway_strips_too() {
    // An API that refuses streams: Claude Code asks again without one (`"stream": false`).
    let model = scripted(vec![bash_call()]);
    let upstream = Upstream::start(move |request| {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        match (
            request.path.starts_with("/v1/messages"),
            body["stream"] == true,
        ) {
            (true, false) => Answer::Json(200, message(&model(&body))),
            _ => Answer::Json(
                404,
                json!({"type": "error", "error": {"type": "not_found_error",
                    "message": "Not found"}}),
            ),
        }
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let claude = ClaudeCode::run(
        &gateway,
        "Run the command: echo hello-from-stub",
        "Bash",
        &[],
        &[],
    );
    let plain: Vec<Value> = upstream
        .tool_requests("/v1/messages")
        .into_iter()
        .filter(|request| request["stream"] != true)
        .collect();
    assert_eq!(plain.len(), 2, "each turn asked again without a stream");
    let schema = &declared(&plain[0], "Bash")["input_schema"];
    assert_eq!(schema["properties"]["reason"]["type"], "string");
    let result = result_of(&plain, BASH_ID);
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result_text(&result).trim(), "hello-from-stub");
    assert_eq!(
        read_reasons_log(&gateway.log),
        [json!({"via": "gateway", "tool": "Bash", "call_id": BASH_ID,
            "reason": BASH_REASON, "touched": "echo hello-from-stub", "session": claude.session()})]
    );
    assert_eq!(
        claude.hook_message(BASH_ID),
        format!("model's reason for Bash: {BASH_REASON}")
    );
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

// ---- MCP tools, with the gateway in front of the model ------------------------------------------

const ECHO_ID: &str = "toolu_real_echo";
const ECHO_REASON: &str = "Check that the MCP server answers";
const FIXTURE_ID: &str = "toolu_real_fixture";
const FIXTURE_REASON: &str = "See what the server itself receives";

/// How Claude Code starts its MCP servers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Servers {
    /// Each behind `reasons proxy`: the listing Claude Code gets declares the layer's `reason`.
    Proxied,
    /// As they are: only the gateway adds `reason`.
    Direct,
}

/// An `--mcp-config` with two stdio servers, `everything` (the reference MCP server) and
/// `fixture` (which answers with the arguments it received), proxied ones logging to `log`.
fn mcp_config(dir: &Path, log: &Path, servers: Servers) -> PathBuf {
    let everything = part(MCP_SERVER_EVERYTHING);
    let start = |command: Vec<String>| match servers {
        Servers::Direct => json!({"type": "stdio", "command": command[0], "args": command[1..]}),
        Servers::Proxied => {
            let mut args: Vec<String> = ["proxy", "--reasons-log", arg(log), "--"]
                .map(str::to_owned)
                .into();
            args.extend(command);
            json!({"type": "stdio", "command": env!("CARGO_BIN_EXE_reasons"), "args": args})
        }
    };
    let config = json!({"mcpServers": {
        "everything": start(vec!["node".into(), arg(&everything).into(), "stdio".into()]),
        "fixture": start(vec![arg(&mcp_fixture()).into()]),
    }});
    let path = dir.join("mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// A session in which the model calls an MCP tool of each server, with a reason. `before` are
/// calls made first (ToolSearch, when MCP tools are deferred).
fn mcp_session(
    servers: Servers,
    env: &[(&str, &str)],
    before: Vec<Value>,
) -> (Vec<Value>, Gateway, ClaudeCode) {
    let mut calls = before;
    calls.push(tool_use(
        ECHO_ID,
        "mcp__everything__echo",
        json!({"message": "hi-from-stub", "reason": ECHO_REASON}),
    ));
    calls.push(tool_use(
        FIXTURE_ID,
        "mcp__fixture__echo",
        json!({"text": "hi-from-stub", "reason": FIXTURE_REASON}),
    ));
    let upstream = Upstream::messages(scripted(calls));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let config = mcp_config(dir.path(), &gateway.log, servers);
    let claude = ClaudeCode::run(
        &gateway,
        "Echo hi-from-stub with both MCP servers",
        "mcp__everything__echo,mcp__fixture__echo,ToolSearch",
        &["--mcp-config", arg(&config), "--strict-mcp-config"],
        env,
    );
    (upstream.tool_requests("/v1/messages"), gateway, claude)
}

/// What every MCP session shows, however the tools were declared: each call reached its server
/// without the reason, the reason is in the log under Claude Code's tool-use id, and the hook
/// showed it.
fn assert_mcp_calls_reached_their_servers_without_the_reason(
    servers: Servers,
    requests: &[Value],
    gateway: &Gateway,
    claude: &ClaudeCode,
) {
    // The model was offered `reason`: by the proxy's listing, which the gateway left as it was
    // (the layer's own, not a second one), or by the gateway.
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
    // One record per call, by the gateway: behind the proxy too, the declaration's `reason` is
    // the layer's, so the gateway took it off before Claude Code stored the call (and before its
    // auto mode could judge it), and the proxy had none left to take.
    let logged: Vec<Value> = read_reasons_log(&gateway.log)
        .into_iter()
        .filter(|record| record["call_id"] == ECHO_ID || record["call_id"] == FIXTURE_ID)
        .collect();
    let expected = [
        (
            "mcp__everything__echo",
            ECHO_ID,
            ECHO_REASON,
            "message=hi-from-stub",
        ),
        (
            "mcp__fixture__echo",
            FIXTURE_ID,
            FIXTURE_REASON,
            "text=hi-from-stub",
        ),
    ]
    .map(|(tool, id, reason, touched)| {
        json!({"via": "gateway", "tool": tool, "call_id": id,
            "reason": reason, "touched": touched, "session": claude.session()})
    });
    assert_eq!(logged, expected, "{servers:?}");
    // Claude Code stored each call without its reason.
    let transcript = std::fs::read_to_string(claude.transcript()).unwrap();
    for reason in [ECHO_REASON, FIXTURE_REASON] {
        assert!(
            !transcript.contains(&format!("\"reason\":\"{reason}\"")),
            "{servers:?}"
        );
    }
    // The hook showed each reason, from the log.
    assert_eq!(
        claude.hook_message(ECHO_ID),
        format!("model's reason for mcp__everything__echo: {ECHO_REASON}")
    );
    assert_eq!(
        claude.hook_message(FIXTURE_ID),
        format!("model's reason for mcp__fixture__echo: {FIXTURE_REASON}")
    );
}

/// With tool search off, Claude Code declares MCP tools directly.
#[track_caller]
fn assert_declared_directly(requests: &[Value]) {
    declared(&requests[0], "mcp__everything__echo");
    assert!(requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|tool| tool["name"] != "ToolSearch"));
}

/// Claude Code 2.1.328 defers MCP tools behind ToolSearch by default, also with a base URL of
/// its own (2.1.197 declared them directly there).
#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_behind_the_proxy_reaches_servers_without_reason() {
    tool_search_session(Servers::Proxied, &[]);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_behind_the_proxy_without_tool_search_reaches_servers_without_reason() {
    let env = [("ENABLE_TOOL_SEARCH", "false")];
    let (requests, gateway, claude) = mcp_session(Servers::Proxied, &env, Vec::new());
    assert_declared_directly(&requests);
    assert_mcp_calls_reached_their_servers_without_the_reason(
        Servers::Proxied,
        &requests,
        &gateway,
        &claude,
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_with_the_gateway_alone_reaches_servers_without_reason() {
    tool_search_session(Servers::Direct, &[]);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_with_the_gateway_alone_without_tool_search_reaches_servers_without_reason()
{
    let env = [("ENABLE_TOOL_SEARCH", "false")];
    let (requests, gateway, claude) = mcp_session(Servers::Direct, &env, Vec::new());
    assert_declared_directly(&requests);
    assert_mcp_calls_reached_their_servers_without_the_reason(
        Servers::Direct,
        &requests,
        &gateway,
        &claude,
    );
}

const SEARCH_ID: &str = "toolu_real_search";
const SEARCH_REASON: &str = "Load the echo tools before calling them";

/// ToolSearch first, then the MCP tools it loaded, with `env` added.
fn tool_search_session(
    servers: Servers,
    env: &[(&str, &str)],
) -> (Vec<Value>, Gateway, ClaudeCode) {
    let search = tool_use(
        SEARCH_ID,
        "ToolSearch",
        json!({"query": "select:mcp__everything__echo,mcp__fixture__echo", "max_results": 5,
            "reason": SEARCH_REASON}),
    );
    let (requests, gateway, claude) = mcp_session(servers, env, vec![search]);
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
    assert_ne!(loaded["is_error"], true, "{loaded}");
    assert!(loaded.to_string().contains("tool_reference"), "{loaded}");
    assert!(
        read_reasons_log(&gateway.log).contains(&json!({"via": "gateway",
        "tool": "ToolSearch", "call_id": SEARCH_ID, "reason": SEARCH_REASON,
        "touched": "select:mcp__everything__echo,mcp__fixture__echo",
        "session": claude.session()}))
    );
    // Once loaded, the MCP tools are declared in full, with `defer_loading`.
    assert_eq!(
        declared(requests.last().unwrap(), "mcp__everything__echo")["defer_loading"],
        true
    );
    assert_mcp_calls_reached_their_servers_without_the_reason(
        servers, &requests, &gateway, &claude,
    );
    (requests, gateway, claude)
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_behind_the_proxy_and_tool_search_reaches_servers_without_reason() {
    tool_search_session(Servers::Proxied, &[("ENABLE_TOOL_SEARCH", "true")]);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_behind_tool_search_with_the_gateway_alone_reaches_servers_without_reason() {
    tool_search_session(Servers::Direct, &[("ENABLE_TOOL_SEARCH", "true")]);
}

/// Needs `extract --reasons-log` (the audits' join of reasons logs).
#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_mcp_calls_are_audited_as_present_whoever_took_the_reason() {
    // The MCP tools declared in the first request, as the model calls them.
    let env = [("ENABLE_TOOL_SEARCH", "false")];
    for servers in [Servers::Proxied, Servers::Direct] {
        let (_requests, gateway, claude) = mcp_session(servers, &env, Vec::new());
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
        // Claude Code's transcript keeps each MCP call without its reason, behind the proxy
        // too (the gateway took it, the layer's own): the reason is joined from the log.
        assert_eq!(
            audited,
            [
                (json!(ECHO_ID), json!("present"), json!("log")),
                (json!(FIXTURE_ID), json!("present"), json!("log")),
            ],
            "{servers:?}"
        );
    }
}
