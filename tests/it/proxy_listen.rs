//! `reasons proxy --listen`: the layer behind an HTTP face (MCP's Streamable HTTP), for clients
//! configured with a URL, in front of a stdio server (`examples/mcp_fixture.rs`, one process a
//! session) and in front of a remote server (`--url`, the scripted one of `proxy_remote.rs`).
//! The real reference server, driven by the Python SDK's client, is in `real_proxy_listen.rs`.

use std::path::Path;

use serde_json::{json, Value};

use crate::proxy_remote::{has_layers_reason, json_answer, method, scripted_server, VERSION};
use crate::util::listening_proxy::{ListeningProxy, ENDPOINT};
use crate::util::upstream::{request, Answer, Received, Upstream};
use crate::util::{arg, eventually, mcp_fixture, read_reasons_log};

fn tools_call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

/// The arguments a server says it received, from its answer to a `tools/call`.
fn echoed(answer: &Value) -> Value {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text answer: {answer}"));
    serde_json::from_str(text).expect("the arguments as JSON")
}

fn tools(listing: &Value) -> &Vec<Value> {
    listing["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a listing: {listing}"))
}

/// The reasons log, once it holds `count` records.
fn logged(log: &Path, count: usize) -> Vec<Value> {
    eventually("the reasons are logged", || {
        log.exists()
            .then(|| read_reasons_log(log))
            .filter(|records| records.len() >= count)
    })
}

/// A request a web page elsewhere sends, and one through a name that is not the proxy's
/// (DNS rebinding): both refused with 403 before anything reaches the server.
fn assert_foreign_pages_are_refused(proxy: &ListeningProxy, session: &str) {
    let listing = json!({"jsonrpc": "2.0", "id": 90, "method": "tools/list"});
    let from_a_page = proxy.post(
        Some(session),
        &listing,
        &[("origin", "https://evil.example")],
    );
    assert_eq!(from_a_page.status, 403, "{from_a_page:?}");
    let why = from_a_page.json();
    assert!(
        why["error"]["message"]
            .as_str()
            .is_some_and(|text| text.contains("Origin")),
        "{why}"
    );
    let rebound = proxy.post(
        Some(session),
        &listing,
        &[("host", &format!("evil.example:{}", proxy.address.port()))],
    );
    assert_eq!(rebound.status, 403, "{rebound:?}");
    proxy.stderr_once("refused a request");
    // A page of this machine's is not foreign.
    let local_page = proxy.post(
        Some(session),
        &listing,
        &[("origin", "http://localhost:6274")],
    );
    assert_eq!(local_page.status, 200, "{local_page:?}");
}

#[test]
fn proxy_listen_in_front_of_a_stdio_server_adds_strips_and_logs_over_streamable_http() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("reasons.jsonl");
    let record = dir.path().join("received.jsonl");
    let fixture = mcp_fixture();
    let proxy = ListeningProxy::start(&[
        "--reasons-log",
        arg(&log),
        "--",
        arg(&fixture),
        "--record",
        arg(&record),
    ]);
    assert!(proxy.url().ends_with(ENDPOINT), "{}", proxy.url());

    let (session, initialized) = proxy.initialize("2025-06-18");
    assert_eq!(
        initialized["result"]["serverInfo"]["name"], "mcp_fixture",
        "{initialized}"
    );

    let listing = proxy.request(
        &session,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let tools = tools(&listing);
    assert_eq!(tools.len(), 3, "{listing}");
    for tool in tools {
        assert!(
            tool["inputSchema"]["properties"]["reason"].is_object(),
            "every tool takes a reason: {tool}"
        );
    }
    for name in ["echo", "clock"] {
        let tool = tools.iter().find(|tool| tool["name"] == name).expect(name);
        assert!(has_layers_reason(tool), "{tool}");
    }

    let answer = proxy.request(
        &session,
        &tools_call(2, "echo", json!({"text": "hi", "reason": "Check the echo"})),
    );
    assert_eq!(
        echoed(&answer),
        json!({"text": "hi"}),
        "the server never sees the reason"
    );
    let records = logged(&log, 1);
    assert_eq!(
        records,
        [
            json!({"via": "proxy", "tool": "echo", "call_id": null, "reason": "Check the echo",
            "touched": "text=hi", "request_id": "2"})
        ]
    );
    let received = std::fs::read_to_string(&record).expect("the fixture records");
    let call = received
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("JSON lines"))
        .find(|message| message["method"] == "tools/call")
        .expect("the call reached the server");
    assert_eq!(call["params"]["arguments"], json!({"text": "hi"}));

    assert_foreign_pages_are_refused(&proxy, &session);

    // A second client gets a session (and a server process) of its own.
    let (other, _) = proxy.initialize("2025-06-18");
    assert_ne!(other, session);

    // Ended by the client, the session is gone: its id is no longer taken.
    let ended = request(
        proxy.address,
        "DELETE",
        ENDPOINT,
        &[("mcp-session-id", &session)],
        b"",
    );
    assert!(
        (200..300).contains(&ended.status),
        "the session ends: {ended:?}"
    );
    let after = proxy.post(
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        &[],
    );
    assert_eq!(after.status, 404, "{after:?}");
}

#[test]
fn proxy_listen_in_front_of_a_url_adds_strips_and_logs_over_streamable_http() {
    let server = Upstream::start(scripted_server);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("reasons.jsonl");
    let proxy = ListeningProxy::start(&[
        "--url",
        &format!("{}/mcp", server.url()),
        "--header",
        "X-Team: blue",
        "--reasons-log",
        arg(&log),
    ]);

    let (session, initialized) = proxy.initialize(VERSION);
    assert_eq!(
        initialized["result"]["protocolVersion"], VERSION,
        "{initialized}"
    );

    let listing = proxy.request(
        &session,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let tools = tools(&listing);
    assert!(!tools.is_empty(), "{listing}");
    for tool in tools {
        assert!(has_layers_reason(tool), "{tool}");
    }

    let answer = proxy.request(
        &session,
        &tools_call(2, "echo", json!({"message": "hi", "reason": "to greet"})),
    );
    assert_eq!(
        echoed(&answer),
        json!({"message": "hi"}),
        "the server never sees the reason"
    );
    let records = logged(&log, 1);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["via"], "proxy");
    assert_eq!(records[0]["tool"], "echo");
    assert_eq!(records[0]["reason"], "to greet");

    let received = server.received();
    let call = received
        .iter()
        .find(|request| method(request).as_deref() == Some("tools/call"))
        .expect("the call reached the server");
    assert_eq!(call.json()["params"]["arguments"], json!({"message": "hi"}));
    for request in &received {
        assert_eq!(request.header("x-team"), Some("blue"), "{request:?}");
    }

    let before = server.received().len();
    assert_foreign_pages_are_refused(&proxy, &session);
    let posts_after = server
        .received()
        .iter()
        .skip(before)
        .filter(|request| method(request).as_deref() == Some("tools/list"))
        .count();
    assert_eq!(
        posts_after, 1,
        "only the local page's listing reached the server"
    );
}

/// The token [`asks_for_a_token`] takes.
const CLIENTS_OWN: &str = "Bearer the-clients-own";

/// A server that asks for OAuth: a request without the one token it takes gets 401 with a
/// Bearer challenge; one with it, the scripted server's answer. It publishes no metadata, so a
/// sign-in fails at once, before any browser.
fn asks_for_a_token(request: &Received) -> Answer {
    if request.header("authorization") == Some(CLIENTS_OWN) {
        return scripted_server(request);
    }
    json_answer(
        "401 Unauthorized",
        "www-authenticate: Bearer error=\"invalid_token\"\r\n",
        &json!({"error": "invalid_token"}),
    )
}

#[test]
fn proxy_listen_keeps_a_clients_own_authorization_and_says_why_a_sign_in_for_the_others_failed() {
    let server = Upstream::start(asks_for_a_token);
    let proxy = ListeningProxy::start(&["--url", &format!("{}/mcp", server.url())]);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}});

    // A client's own token goes to the server as it came, and the answers to it come back so.
    let taken = proxy.post(None, &initialize, &[("authorization", CLIENTS_OWN)]);
    assert_eq!(taken.status, 200, "{taken:?}");
    let refused = proxy.post(None, &initialize, &[("authorization", "Bearer another")]);
    assert_eq!(refused.status, 401, "{refused:?}");
    assert_eq!(
        refused.header("www-authenticate"),
        Some("Bearer error=\"invalid_token\""),
        "{refused:?}"
    );
    let sent: Vec<Option<String>> = server
        .received()
        .iter()
        .map(|request| request.header("authorization").map(str::to_owned))
        .collect();
    assert_eq!(
        sent,
        [
            Some(CLIENTS_OWN.to_owned()),
            Some("Bearer another".to_owned())
        ]
    );

    // A client without one has the proxy sign in; here that fails, and the request's own
    // JSON-RPC error says what the server asked for, why the sign-in failed, and the other way.
    let failed = proxy.post(None, &initialize, &[]);
    assert_eq!(failed.status, 200, "{failed:?}");
    let answer = failed.json();
    assert_eq!(answer["id"], 1, "{answer}");
    let message = answer["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("an error: {answer}"));
    for said in [
        "401 Unauthorized (WWW-Authenticate: Bearer error=\"invalid_token\")",
        "the sign-in failed: its authorization server",
        "publishes no metadata",
        "--header 'Authorization: Bearer",
    ] {
        assert!(message.contains(said), "{said:?} in {message}");
    }
    let stderr = proxy.stderr_once("the sign-in failed");
    assert!(!stderr.contains("opening your browser"), "{stderr}");
}
