//! `reasons proxy --url`: the layer in front of a remote MCP server over Streamable HTTP, against
//! a scripted server on loopback that records what it received (the real reference server is in
//! `real_proxy_remote.rs`).

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Value};

use crate::util::eventually;
use crate::util::mcp_session::McpSession;
use crate::util::upstream::{sse, Answer, Fault, Received, Upstream};
use crate::util::{arg, read_reasons_log, reasons};

pub(crate) const SESSION: &str = "session-7f3a";
pub(crate) const VERSION: &str = "2025-06-18";

fn proxy(url: &str, extra: &[&str], env: &[(&str, &str)]) -> McpSession {
    let mut command = reasons();
    command.args(["proxy", "--url", url]).args(extra);
    for (name, value) in env {
        command.env(name, value);
    }
    McpSession::start(command)
}

/// A whole answer with a JSON body and these extra header lines, the connection closed after it.
pub(crate) fn json_answer(status: &str, headers: &str, body: &Value) -> Answer {
    let body = body.to_string();
    Answer::Raw(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{headers}connection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

fn empty_answer(status: &str) -> Answer {
    Answer::Raw(
        format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").into_bytes(),
    )
}

pub(crate) fn method(request: &Received) -> Option<String> {
    let body: Value = serde_json::from_slice(&request.body).ok()?;
    body["method"].as_str().map(str::to_owned)
}

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The tool the scripted server lists, and answers by echoing the arguments it received.
fn listing() -> Value {
    json!({"tools": [{"name": "echo", "description": "Echoes its arguments",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}]})
}

/// A scripted MCP server: a session id on `initialize`, `echo` answered on an event stream
/// after a progress notification, no stream of its own (405), sessions ended by `DELETE`.
pub(crate) fn scripted_server(request: &Received) -> Answer {
    match request.method.as_str() {
        "GET" => return empty_answer("405 Method Not Allowed"),
        "DELETE" => return empty_answer("200 OK"),
        _ => {}
    }
    let body: Value = serde_json::from_slice(&request.body).expect("JSON from the proxy");
    let id = &body["id"];
    match method(request).as_deref() {
        Some("initialize") => json_answer(
            "200 OK",
            &format!("mcp-session-id: {SESSION}\r\n"),
            &result(
                id,
                json!({"protocolVersion": VERSION, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"}}),
            ),
        ),
        Some("tools/list") => Answer::Events(vec![sse("message", &result(id, listing()))]),
        Some("tools/call") => {
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1, "total": 2}});
            let text = body["params"]["arguments"].to_string();
            Answer::Events(vec![
                sse("message", &progress),
                sse(
                    "message",
                    &result(id, json!({"content": [{"type": "text", "text": text}]})),
                ),
            ])
        }
        Some("ping") => json_answer("200 OK", "", &result(id, json!({}))),
        // Notifications and the client's answers are taken.
        _ => empty_answer("202 Accepted"),
    }
}

fn initialize(session: &mut McpSession) {
    let answer = session.request(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}));
    assert_eq!(answer["result"]["protocolVersion"], VERSION, "{answer}");
    session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

pub(crate) fn has_layers_reason(declaration: &Value) -> bool {
    declaration["inputSchema"]["properties"]["reason"]["description"]
        .as_str()
        .is_some_and(|text| text.starts_with("One short sentence"))
}

#[test]
fn proxy_remote_lists_with_the_reason_strips_calls_and_keeps_the_session() {
    let server = Upstream::start(scripted_server);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("reasons.jsonl");
    let mut session = proxy(
        &format!("{}/mcp?key=in-the-query", server.url()),
        &[
            "--reasons-log",
            arg(&log),
            "--header",
            "Authorization: Bearer ${MCP_TEST_TOKEN}",
            "--header",
            "X-Team: blue",
        ],
        &[("MCP_TEST_TOKEN", "t0k3n")],
    );
    initialize(&mut session);

    let listing = session.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert!(
        has_layers_reason(&listing["result"]["tools"][0]),
        "{listing}"
    );

    session.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hi", "reason": "to greet"},
            "_meta": {"progressToken": 1}}}));
    let progress = session.recv();
    assert_eq!(
        progress["method"], "notifications/progress",
        "passed before the answer"
    );
    let answer = session.recv();
    assert_eq!(answer["id"], 2);
    let echoed: Value = serde_json::from_str(
        answer["result"]["content"][0]["text"]
            .as_str()
            .expect("text"),
    )
    .expect("the arguments the server received");
    assert_eq!(
        echoed,
        json!({"message": "hi"}),
        "the server never sees the reason"
    );

    // A notification the client sends reaches the server byte for byte.
    let cancelled = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}"#;
    session.send_raw(&[&cancelled[..], b"\n"].concat());
    eventually("the notification reaches the server", || {
        server
            .received()
            .iter()
            .any(|request| request.body == cancelled)
            .then_some(())
    });

    let ended = session.close();
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let logged = read_reasons_log(&log);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["tool"], "echo");
    assert_eq!(logged[0]["reason"], "to greet");
    assert_eq!(logged[0]["via"], "proxy");

    let received = server.received();
    let (first, rest) = received.split_first().expect("requests");
    assert_eq!(method(first).as_deref(), Some("initialize"));
    assert_eq!(
        first.header("mcp-session-id"),
        None,
        "no session before it is given"
    );
    assert!(first.path.ends_with("?key=in-the-query"), "{}", first.path);
    for request in &received {
        assert_eq!(request.header("authorization"), Some("Bearer t0k3n"));
        assert_eq!(request.header("x-team"), Some("blue"));
    }
    for request in rest {
        assert_eq!(
            request.header("mcp-session-id"),
            Some(SESSION),
            "{request:?}"
        );
        assert_eq!(
            request.header("mcp-protocol-version"),
            Some(VERSION),
            "{request:?}"
        );
    }
    let posts: Vec<&Received> = received.iter().filter(|r| r.method == "POST").collect();
    for post in &posts {
        let accept = post.header("accept").expect("an accept header");
        assert!(accept.contains("application/json") && accept.contains("text/event-stream"));
    }
    assert!(
        received.iter().any(|request| request.method == "GET"),
        "the server's own stream was asked for"
    );
    assert_eq!(
        received.last().map(|request| request.method.as_str()),
        Some("DELETE"),
        "the session is ended when the client leaves"
    );
}

#[test]
fn proxy_remote_an_unset_variable_in_a_header_is_an_error_naming_it() {
    let output = reasons()
        .args([
            "proxy",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--header",
            "Authorization: Bearer ${REASONS_TEST_UNSET_TOKEN}",
        ])
        .output()
        .expect("it runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("${REASONS_TEST_UNSET_TOKEN} is not set"),
        "{stderr}"
    );
}

/// A port nothing listens on: bound, then let go.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("its address").port()
}

#[test]
fn proxy_remote_an_unreachable_server_answers_each_request_with_an_error_said_once() {
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    let mut session = proxy(&url, &[], &[]);
    for id in [1, 2] {
        let answer = session.request(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        assert_eq!(answer["id"], id);
        let message = answer["error"]["message"].as_str().expect("an error");
        assert!(
            message.starts_with("reasons: proxy: cannot reach"),
            "{message}"
        );
    }
    let ended = session.close();
    assert_eq!(ended.code, Some(0));
    assert_eq!(
        ended.stderr.matches("reasons: proxy: cannot reach").count(),
        1,
        "{}",
        ended.stderr
    );
}

#[test]
fn proxy_remote_an_http_error_is_the_waiting_requests_error_and_the_proxy_goes_on() {
    let server = Upstream::start(|request| match method(request).as_deref() {
        Some("tools/call") => {
            json_answer("500 Internal Server Error", "", &json!({"error": "boom"}))
        }
        _ => scripted_server(request),
    });
    let mut session = proxy(&format!("{}/mcp", server.url()), &[], &[]);
    let answer = session.request(&json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call",
        "params": {"name": "echo", "arguments": {}}}));
    assert_eq!(answer["id"], "c");
    let message = answer["error"]["message"].as_str().expect("an error");
    assert!(
        message.contains("500") && message.contains("boom"),
        "{message}"
    );
    let answer = session.request(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
    let ended = session.close();
    assert_eq!(
        ended.stderr.matches("reasons: proxy:").count(),
        1,
        "{}",
        ended.stderr
    );
}

#[test]
fn proxy_remote_a_401_says_what_the_server_wants_and_how_to_give_it() {
    let server = Upstream::start(|_| {
        json_answer(
            "401 Unauthorized",
            "www-authenticate: Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\"\r\n",
            &json!({"error": "invalid_token"}),
        )
    });
    let mut session = proxy(&format!("{}/mcp", server.url()), &[], &[]);
    let answer = session.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {}}));
    let message = answer["error"]["message"].as_str().expect("an error");
    assert!(message.contains("401"), "{message}");
    assert!(message.contains("oauth-protected-resource"), "{message}");
    assert!(
        message.contains("--header 'Authorization: Bearer"),
        "{message}"
    );
    session.close();
}

#[test]
fn proxy_remote_a_stream_cut_mid_answer_is_an_error_and_the_proxy_goes_on() {
    let server = Upstream::start(|request| match method(request).as_deref() {
        Some("tools/call") => {
            let answer = sse(
                "message",
                &result(
                    &json!(5),
                    json!({"content": [{"type": "text", "text": "x"}]}),
                ),
            );
            let cut = answer.len() / 2;
            Answer::Faulty(answer, cut, Fault::Close)
        }
        _ => scripted_server(request),
    });
    let mut session = proxy(&format!("{}/mcp", server.url()), &[], &[]);
    let answer = session.request(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}}}));
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    let answer = session.request(&json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}));
    assert_eq!(answer["result"], json!({}));
    session.close();
}

#[test]
fn proxy_remote_a_line_that_is_not_json_gets_a_parse_error_and_the_proxy_goes_on() {
    let server = Upstream::start(scripted_server);
    let mut session = proxy(&format!("{}/mcp", server.url()), &[], &[]);
    session.send_raw(b"this is not json\n");
    let answer = session.recv();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    let answer = session.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    assert_eq!(answer["result"], json!({}));
    session.close();
}

#[test]
fn proxy_remote_a_broken_stream_is_resumed_from_its_last_event_id() {
    let server = Upstream::start(|request| {
        if request.method == "GET" {
            return match request.header("last-event-id") {
                Some("ev-1") => Answer::Events(vec![format!(
                    "id: ev-2\ndata: {}\n\n",
                    result(&json!(8), json!({"content": []}))
                )
                .into_bytes()]),
                _ => empty_answer("405 Method Not Allowed"),
            };
        }
        match method(request).as_deref() {
            Some("tools/call") => Answer::CutAfter(vec![format!(
                "id: ev-1\ndata: {}\n\n",
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": "p", "progress": 1}})
            )
            .into_bytes()]),
            _ => scripted_server(request),
        }
    });
    let mut session = proxy(&format!("{}/mcp", server.url()), &[], &[]);
    session.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}));
    let mut notifications = Vec::new();
    let answer = session.recv_skipping_notifications(&mut notifications);
    assert_eq!(answer, result(&json!(8), json!({"content": []})));
    assert_eq!(notifications.len(), 1, "{notifications:?}");
    assert!(server
        .received()
        .iter()
        .any(|request| request.method == "GET" && request.header("last-event-id") == Some("ev-1")));
    session.close();
}

#[test]
fn proxy_remote_a_servers_own_request_reaches_the_client_and_its_answer_the_server() {
    let asked = AtomicBool::new(false);
    let sampling = json!({"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5}})
    .to_string();
    let request_line = sampling.clone();
    let server = Upstream::start(move |request| {
        if request.method == "GET" {
            // The stream is offered once; asked again, the server has no more to say.
            return if asked.swap(true, Ordering::SeqCst) {
                empty_answer("405 Method Not Allowed")
            } else {
                Answer::Events(vec![format!("data: {request_line}\n\n").into_bytes()])
            };
        }
        scripted_server(request)
    });
    let mut session = proxy(&format!("{}/mcp", server.url()), &[], &[]);
    initialize(&mut session);
    let asked = session.recv_raw();
    assert_eq!(
        asked,
        format!("{sampling}\n").into_bytes(),
        "as the server sent it"
    );
    let answer = br#"{"jsonrpc":"2.0","id":"s-1","result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}"#;
    session.send_raw(&[&answer[..], b"\n"].concat());
    eventually(
        "the client's answer reaches the server as it was sent",
        || {
            server
                .received()
                .iter()
                .any(|request| request.method == "POST" && request.body == answer)
                .then_some(())
        },
    );
    session.close();
}

#[test]
fn proxy_remote_a_server_that_never_answers_initialize_ends_when_the_client_leaves() {
    let server = Upstream::start(|_| {
        Answer::Faulty(
            Vec::new(),
            0,
            Fault::Stall(std::time::Duration::from_secs(60)),
        )
    });
    let mut session = proxy(&format!("{}/mcp", server.url()), &[], &[]);
    session.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}));
    session.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    eventually("the initialize request reaches the server", || {
        (!server.received().is_empty()).then_some(())
    });
    let started = std::time::Instant::now();
    let ended = session.close();
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        server.received().len(),
        1,
        "the ping waited for the session id"
    );
}

#[test]
fn proxy_remote_sign_out_removes_the_kept_tokens_and_says_which_file() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let config = dir.path().join("config");
    let sign_out = || {
        reasons()
            .args([
                "proxy",
                "--url",
                "https://mcp.example/mcp?key=secret",
                "--sign-out",
            ])
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .expect("reasons runs")
    };

    // Nothing kept yet: it says so, and where it looked.
    let nothing = sign_out();
    assert_eq!(nothing.status.code(), Some(0), "{nothing:?}");
    let said = String::from_utf8(nothing.stdout).expect("UTF-8");
    let file = said
        .strip_prefix("No sign-in kept for https://mcp.example/mcp: ")
        .and_then(|rest| rest.strip_suffix(" does not exist\n"))
        .unwrap_or_else(|| panic!("{said:?}"));
    let file = std::path::PathBuf::from(file);
    assert!(file.starts_with(config.join("reasons/mcp-auth")), "{said}");

    std::fs::create_dir_all(file.parent().expect("a folder")).expect("the token folder");
    std::fs::write(&file, r#"{"access_token": "kept"}"#).expect("a token file");
    let removed = sign_out();
    assert_eq!(removed.status.code(), Some(0), "{removed:?}");
    assert_eq!(
        String::from_utf8(removed.stdout).expect("UTF-8"),
        format!(
            "Signed out of https://mcp.example/mcp: removed {}\n",
            file.display()
        )
    );
    assert!(!file.exists(), "the tokens are gone");

    // Signing out is of a --url server, and starts nothing.
    let server = reasons()
        .args(["proxy", "--sign-out", "--", "true"])
        .output()
        .expect("reasons runs");
    assert_eq!(server.status.code(), Some(2), "{server:?}");
    assert!(
        String::from_utf8_lossy(&server.stderr).contains("'--sign-out' cannot be used with"),
        "{server:?}"
    );
    let bad = reasons()
        .args(["proxy", "--url", "mcp.example", "--sign-out"])
        .output()
        .expect("reasons runs");
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("--url mcp.example: expected an http"),
        "{bad:?}"
    );
}

#[test]
fn proxy_a_header_for_a_stdio_server_is_an_error_rather_than_ignored() {
    let ran = reasons()
        .args(["proxy", "--header", "X-Team: blue", "--", "true"])
        .output()
        .expect("reasons runs");
    assert_eq!(ran.status.code(), Some(2), "{ran:?}");
    assert!(
        String::from_utf8_lossy(&ran.stderr).contains("'--header <NAME: VALUE>' cannot be used"),
        "{ran:?}"
    );
}
