//! `reasons gateway` between a client and a scripted Messages API on loopback.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::gateway::{Gateway, SECRET};
use crate::util::read_reasons_log;
use crate::util::upstream::{
    bash_tool, message_events, messages_request, request, sse, whole_start_events, Answer, Upstream,
};

const REASON: &str = "Find the config file the user asked about";

/// A model that calls Bash with a reason, then answers in text once it sees the result.
fn bash_model(request: &Value) -> Vec<Value> {
    let has_result = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|message| message.to_string().contains("tool_result"));
    if has_result {
        vec![json!({"type": "text", "text": "It is in config/app.yml."})]
    } else {
        vec![
            json!({"type": "text", "text": "Let me look for it."}),
            json!({"type": "tool_use", "id": "toolu_01", "name": "Bash",
                "input": {"command": "find . -name '*.yml'", "reason": REASON}}),
        ]
    }
}

fn assert_declares_reason(received: &Value) {
    let tool = &received["tools"][0];
    assert_eq!(
        tool["input_schema"]["properties"]["reason"]["type"],
        "string"
    );
    assert_eq!(tool["input_schema"]["required"], json!(["command"]));
}

/// The log holds one record: the Bash call's reason, beside the command it touched.
fn assert_logged(gateway: &Gateway, call_id: &str, touched: &str) {
    assert_eq!(
        read_reasons_log(&gateway.log),
        [
            json!({"via": "gateway", "tool": "Bash", "call_id": call_id, "reason": REASON,
            "touched": touched})
        ]
    );
}

#[test]
fn a_plain_answer_loses_the_reason_that_goes_to_the_log() {
    let upstream = Upstream::messages(bash_model);
    let gateway = Gateway::start(&upstream.url(), &["-v"]);
    let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], false));
    assert_eq!(reply.status, 200);
    let answer = reply.json();
    assert_eq!(
        answer["content"][1]["input"],
        json!({"command": "find . -name '*.yml'"})
    );
    assert_eq!(answer["content"][0]["text"], "Let me look for it.");
    assert_declares_reason(&upstream.received()[0].json());
    assert_logged(&gateway, "toolu_01", "find . -name '*.yml'");
    assert!(gateway
        .stderr_once(REASON)
        .contains(&format!("Bash: {REASON}\n")));
}

/// With no log named, the gateway keeps reasons in its default log under `$HOME/.local/state`:
/// the HOME of its own every command a test starts has, never the developer's (nor the log a
/// developer's `REASONS_LOG` or `XDG_STATE_HOME` names; `tests/it/isolation.rs` runs this test
/// with those set).
#[test]
fn a_gateway_with_no_log_named_keeps_reasons_in_its_own_homes_state_folder() {
    let upstream = Upstream::messages(bash_model);
    let gateway = Gateway::start_with_default_log(&upstream.url());
    assert!(
        gateway.log.starts_with(crate::util::environment::homes())
            && gateway.log.ends_with(".local/state/reasons/reasons.jsonl"),
        "{}",
        gateway.startup
    );
    let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], false));
    assert_eq!(reply.status, 200);
    assert_logged(&gateway, "toolu_01", "find . -name '*.yml'");
}

#[test]
fn without_v_the_gateway_writes_nothing_after_its_startup_line() {
    let upstream = Upstream::messages(bash_model);
    let gateway = Gateway::start(&upstream.url(), &[]);
    for stream in [false, true] {
        let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], stream));
        assert_eq!(reply.status, 200);
    }
    // A body the layer cannot read is forwarded without a word too.
    gateway.post("/v1/messages", b"{\"tools\":{\"a\":1}}");
    assert_eq!(read_reasons_log(&gateway.log).len(), 2);
    // Whatever the gateway says about a request is written before its answer is sent.
    thread::sleep(Duration::from_millis(300));
    assert_eq!(gateway.stderr_until(|_| true), "");
}

#[test]
fn the_log_names_the_session_the_agent_names() {
    let upstream = Upstream::messages(bash_model);
    let gateway = Gateway::start(&upstream.url(), &[]);
    let mut body: Value = serde_json::from_slice(&messages_request(&[bash_tool()], true)).unwrap();
    body["metadata"] = json!({"user_id": json!({"device_id": "d", "session_id": "from-body"})
        .to_string()});
    gateway.post("/v1/messages", body.to_string().as_bytes());
    request(
        gateway.address,
        "POST",
        "/v1/messages",
        &[("X-Claude-Code-Session-Id", "from-header")],
        body.to_string().as_bytes(),
    );
    let sessions: Vec<Value> = read_reasons_log(&gateway.log)
        .into_iter()
        .map(|record| record["session"].clone())
        .collect();
    assert_eq!(sessions, [json!("from-body"), json!("from-header")]);
}

#[test]
fn a_streamed_answer_holds_back_only_the_calls_fragments() {
    let upstream = Upstream::messages(bash_model);
    let gateway = Gateway::start(&upstream.url(), &[]);
    let reply = gateway.post(
        "/v1/messages?beta=true",
        &messages_request(&[bash_tool()], true),
    );
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("content-type")
        .is_some_and(|kind| kind.starts_with("text/event-stream")));
    let events = reply.events();
    let expected = message_events(&[
        json!({"type": "text", "text": "Let me look for it."}),
        json!({"type": "tool_use", "id": "toolu_01", "name": "Bash",
            "input": {"command": "find . -name '*.yml'"}}),
    ]);
    let fragments: Vec<&Value> = events
        .iter()
        .filter(|event| event["delta"]["type"] == "input_json_delta")
        .collect();
    assert_eq!(fragments.len(), 1, "one fragment holds the whole input");
    assert_eq!(
        fragments[0]["delta"]["partial_json"],
        json!({"command": "find . -name '*.yml'"}).to_string()
    );
    // Every other event is the upstream's, in its order.
    let others: Vec<&Value> = events
        .iter()
        .filter(|event| event["delta"]["type"] != "input_json_delta")
        .collect();
    let expected: Vec<Value> = expected
        .iter()
        .map(|event| {
            let text = String::from_utf8_lossy(event);
            serde_json::from_str(text.lines().nth(1).unwrap().strip_prefix("data: ").unwrap())
                .unwrap()
        })
        .filter(|event: &Value| event["delta"]["type"] != "input_json_delta")
        .collect();
    assert_eq!(others, expected.iter().collect::<Vec<_>>());
    assert_declares_reason(&upstream.received()[0].json());
    assert_logged(&gateway, "toolu_01", "find . -name '*.yml'");
}

#[test]
fn no_strip_leaves_the_call_and_still_logs_the_reason() {
    let upstream = Upstream::messages(bash_model);
    let gateway = Gateway::start(&upstream.url(), &["--no-strip"]);
    for stream in [false, true] {
        let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], stream));
        let text = String::from_utf8_lossy(&reply.body).into_owned();
        assert!(text.contains("reason"), "{text}");
    }
    assert_eq!(read_reasons_log(&gateway.log).len(), 2);
}

#[test]
fn count_tokens_sees_the_same_augmented_tools() {
    let upstream = Upstream::messages(bash_model);
    let gateway = Gateway::start(&upstream.url(), &[]);
    let body = messages_request(&[bash_tool()], false);
    gateway.post("/v1/messages", &body);
    let reply = gateway.post("/v1/messages/count_tokens?beta=true", &body);
    assert_eq!(reply.json(), json!({"input_tokens": 42}));
    let received = upstream.received();
    assert_eq!(received[1].path, "/v1/messages/count_tokens?beta=true");
    assert_eq!(received[0].json()["tools"], received[1].json()["tools"]);
}

#[test]
fn the_same_request_is_augmented_to_the_same_bytes() {
    let upstream = Upstream::messages(|_| vec![json!({"type": "text", "text": "ok"})]);
    let gateway = Gateway::start(&upstream.url(), &[]);
    let body = messages_request(
        &[
            bash_tool(),
            json!({"name": "Read", "input_schema":
        {"type": "object", "properties": {"file_path": {"type": "string"}}},
        "cache_control": {"type": "ephemeral"}}),
        ],
        false,
    );
    for _ in 0..3 {
        gateway.post("/v1/messages", &body);
    }
    let received = upstream.received();
    assert_ne!(received[0].body, body);
    assert!(received
        .iter()
        .all(|request| request.body == received[0].body));
}

#[test]
fn tools_with_their_own_reason_and_server_tools_are_left_alone() {
    let own = json!({"name": "Explain", "input_schema": {"type": "object",
        "properties": {"reason": {"type": "string", "description": "the tool's own"}}}});
    let server = json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 3});
    let upstream = Upstream::messages(|_| {
        vec![
            json!({"type": "tool_use", "id": "toolu_9", "name": "Explain",
            "input": {"reason": "kept: it is the tool's own"}}),
        ]
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let body = messages_request(&[own, server], false);
    let reply = gateway.post("/v1/messages", &body);
    assert_eq!(
        upstream.received()[0].body,
        body,
        "the request went on as it came"
    );
    assert_eq!(
        reply.json()["content"][0]["input"]["reason"],
        "kept: it is the tool's own"
    );
    assert!(!gateway.log.exists() || read_reasons_log(&gateway.log).is_empty());
}

#[test]
fn other_requests_and_their_headers_pass_untouched() {
    let upstream = Upstream::start(|request| {
        Answer::Json(200, json!({"path": request.path, "method": request.method}))
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let reply = request(
        gateway.address,
        "GET",
        "/v1/models?limit=5",
        &[("x-api-key", SECRET), ("anthropic-version", "2023-06-01")],
        b"",
    );
    assert_eq!(
        reply.json(),
        json!({"path": "/v1/models?limit=5", "method": "GET"})
    );
    let body = b"{\"model\":\"m\",\"messages\":[]}";
    gateway.post("/v1/messages", body);
    let received = upstream.received();
    assert_eq!(received[0].header("x-api-key"), Some(SECRET));
    assert_eq!(received[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(received[1].body, body);
    assert_eq!(received[1].header("x-api-key"), Some(SECRET));
}

/// The request handler decides a request's API once, from its path: a path of no API's (here
/// Anthropic's legacy Text Completions) is forwarded as it came, tools and all, and so is its
/// answer, whatever it holds; it is neither refused nor read.
#[test]
fn a_post_on_a_path_of_no_api_goes_as_it_came_and_so_does_its_answer() {
    let answer = json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": "ls", "reason": REASON}}]});
    let sent = answer.clone();
    let upstream = Upstream::start(move |_| Answer::Json(200, sent.clone()));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let body = messages_request(&[bash_tool()], false);
    let reply = gateway.post("/v1/complete", &body);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json(), answer);
    let received = upstream.received();
    assert_eq!(received[0].path, "/v1/complete");
    assert_eq!(received[0].body, body);
    assert!(!gateway.log.exists() || read_reasons_log(&gateway.log).is_empty());
}

#[test]
fn bodies_that_are_not_json_or_hold_no_tool_array_go_on_as_they_came() {
    let upstream = Upstream::start(|_| {
        Answer::Json(
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "bad body"}}),
        )
    });
    let gateway = Gateway::start(&upstream.url(), &["-v"]);
    for body in [&b"{not json"[..], b"{\"tools\":{\"a\":1}}", b"[]", b""] {
        let reply = gateway.post("/v1/messages", body);
        assert_eq!(reply.status, 400);
        assert_eq!(reply.json()["error"]["message"], "bad body");
    }
    let received = upstream.received();
    assert_eq!(received[0].body, b"{not json");
    assert_eq!(received[1].body, b"{\"tools\":{\"a\":1}}");
    assert!(gateway
        .stderr_once("not an array")
        .contains("/v1/messages: the request's `tools` is not an array; forwarded as it came"));
}

#[test]
fn error_answers_pass_through_untouched() {
    let error = json!({"type": "error", "error": {"type": "overloaded_error",
        "message": "Overloaded"}});
    let answer = error.clone();
    let upstream = Upstream::start(move |_| Answer::Json(529, answer.clone()));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], true));
    assert_eq!(reply.status, 529);
    assert_eq!(reply.json(), error);
}

#[test]
fn an_unreachable_upstream_is_a_502_in_anthropics_envelope_and_the_gateway_keeps_serving() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let gateway = Gateway::start(&format!("http://{closed}"), &[]);
    for _ in 0..2 {
        let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], false));
        assert_eq!(reply.status, 502);
        let error = reply.json();
        assert_eq!(error["type"], "error");
        assert_eq!(error["error"]["type"], "api_error");
        assert!(error["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("reasons gateway: cannot reach the upstream"));
    }
    let stderr = gateway.stderr_once("cannot reach");
    assert!(
        stderr.contains("reasons: /v1/messages: cannot reach the upstream"),
        "{stderr}"
    );
    assert!(!stderr.contains(SECRET));
}

#[test]
fn a_stream_cut_midway_sends_nothing_held_and_the_gateway_keeps_serving() {
    let content = [
        json!({"type": "tool_use", "id": "toolu_cut", "name": "Bash",
        "input": {"command": "make", "reason": REASON}}),
    ];
    let mut events = message_events(&content);
    // Cut in the middle of the call's input.
    events.truncate(5);
    let partial = events.clone();
    let upstream = Upstream::start(move |request| {
        if request.json()["stream"] == true {
            Answer::CutAfter(partial.clone())
        } else {
            Answer::Json(200, json!({"content": []}))
        }
    });
    let gateway = Gateway::start(&upstream.url(), &["-v"]);
    let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], true));
    // What came before the call's input went on; the held fragments never did, and the agent
    // sees the stream break off, as it would have without the gateway.
    let before_the_input: Vec<u8> = events
        .iter()
        .filter(|event| !String::from_utf8_lossy(event).contains("input_json_delta"))
        .flatten()
        .copied()
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&reply.body),
        String::from_utf8_lossy(&before_the_input)
    );
    assert!(!reply.complete);
    let stderr = gateway.stderr_once("was cut");
    assert!(
        stderr.contains("the call to Bash (toolu_cut) was cut: nothing of it sent or logged"),
        "{stderr}"
    );
    assert!(!gateway.log.exists() || read_reasons_log(&gateway.log).is_empty());
    let next = gateway.post("/v1/messages", &messages_request(&[bash_tool()], false));
    assert_eq!(next.status, 200);
}

#[test]
fn a_client_that_goes_away_mid_stream_leaves_the_gateway_serving() {
    let slow: Vec<Vec<u8>> = (0..200)
        .map(|n| sse("ping", &json!({"type": "ping", "n": n})))
        .collect();
    let upstream = Upstream::start(move |request| {
        if request.json()["stream"] == true {
            Answer::Events(slow.clone())
        } else {
            Answer::Json(200, json!({"content": []}))
        }
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    for _ in 0..5 {
        let mut stream = TcpStream::connect(gateway.address).unwrap();
        let body = messages_request(&[bash_tool()], true);
        write!(
            stream,
            "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        stream.write_all(&body).unwrap();
        let mut first = [0; 64];
        let _ = stream.read(&mut first);
        drop(stream);
    }
    let next = gateway.post("/v1/messages", &messages_request(&[bash_tool()], false));
    assert_eq!(next.status, 200);
}

#[test]
fn an_unwritable_reasons_log_warns_once_and_calls_still_go_through() {
    let upstream = Upstream::messages(bash_model);
    let dir = tempfile::tempdir().unwrap();
    let not_a_folder = dir.path().join("file");
    std::fs::write(&not_a_folder, "").unwrap();
    let gateway =
        Gateway::start_logging_to(&upstream.url(), &not_a_folder.join("r.jsonl"), &["-v"]);
    for _ in 0..3 {
        let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], false));
        assert_eq!(
            reply.json()["content"][1]["input"],
            json!({"command": "find . -name '*.yml'"})
        );
    }
    let line = format!("Bash: {REASON}");
    let stderr = gateway.stderr_until(|text| text.matches(&line).count() == 3);
    assert_eq!(stderr.matches("reasons log").count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("reasons: cannot open the reasons log "),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches(&format!("Bash: {REASON}")).count(),
        3,
        "{stderr}"
    );
}

#[test]
fn sixty_four_concurrent_streams_each_get_their_own_answer() {
    let upstream = Upstream::messages(|request| {
        let n = request["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        vec![
            json!({"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash",
            "input": {"command": format!("echo {n}"), "reason": format!("Because {n}")}}),
        ]
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let address = gateway.address;
    let threads: Vec<_> = (0..64)
        .map(|n| {
            thread::spawn(move || {
                let body = json!({"model": "m", "stream": true, "max_tokens": 10,
                    "messages": [{"role": "user", "content": n.to_string()}],
                    "tools": [bash_tool()]});
                let reply = request(
                    address,
                    "POST",
                    "/v1/messages",
                    &[],
                    body.to_string().as_bytes(),
                );
                let input: String = reply
                    .events()
                    .iter()
                    .filter_map(|event| event["delta"]["partial_json"].as_str().map(str::to_owned))
                    .collect();
                assert_eq!(input, json!({"command": format!("echo {n}")}).to_string());
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("every stream is answered");
    }
    let mut logged: Vec<(String, String)> = read_reasons_log(&gateway.log)
        .into_iter()
        .map(|record| {
            (
                record["call_id"].as_str().unwrap().to_owned(),
                record["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    logged.sort();
    let mut expected: Vec<(String, String)> = (0..64)
        .map(|n| (format!("toolu_{n}"), format!("Because {n}")))
        .collect();
    expected.sort();
    assert_eq!(logged, expected);
}

#[test]
fn credentials_never_reach_the_log_or_stderr() {
    let upstream = Upstream::messages(bash_model);
    let gateway = Gateway::start(&upstream.url(), &["-v"]);
    gateway.post("/v1/messages", &messages_request(&[bash_tool()], true));
    request(
        gateway.address,
        "POST",
        "/v1/messages",
        &[("authorization", &format!("Bearer {SECRET}"))],
        &messages_request(&[bash_tool()], false),
    );
    let stderr = gateway.stderr_once(REASON);
    assert!(!stderr.contains(SECRET));
    assert!(!std::fs::read_to_string(&gateway.log)
        .unwrap()
        .contains(SECRET));
    assert_eq!(
        upstream.received()[1].header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
}

#[test]
fn an_upstream_that_answers_no_http_is_a_502() {
    let upstream = Upstream::start(|_| Answer::Raw(b"SSH-2.0-OpenSSH\r\n".to_vec()));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], false));
    assert_eq!(reply.status, 502);
    assert_eq!(reply.json()["type"], "error");
}

#[test]
fn malformed_events_outside_a_call_pass_as_they_came() {
    let mut events = message_events(&[json!({"type": "tool_use", "id": "toolu_m",
        "name": "Bash", "input": {"command": "ls", "reason": REASON}})]);
    // Before the call starts: nothing is held that they could be a piece of (inside a call, the
    // stream breaks there: see `faults.rs`).
    events.insert(1, b"event: content_block_delta\ndata: {oops\n\n".to_vec());
    events.insert(2, b"data: \xff\xfe\n\n".to_vec());
    let sent = events.clone();
    let upstream = Upstream::start(move |_| Answer::Events(sent.clone()));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], true));
    assert!(reply.complete);
    let passed = b"data: {oops\n\ndata: \xff\xfe";
    assert!(reply.body.windows(passed.len()).any(|w| w == passed));
    assert_logged(&gateway, "toolu_m", "ls");
}

#[test]
fn events_go_on_as_they_arrive_while_the_upstream_is_still_streaming() {
    let events = message_events(&[
        json!({"type": "text", "text": "Thinking it over"}),
        json!({"type": "tool_use", "id": "toolu_g", "name": "Bash",
            "input": {"command": "ls", "reason": REASON}}),
    ]);
    let (release, gate) = std::sync::mpsc::channel();
    let gate = Mutex::new(Some(gate));
    // The text block is sent; the call waits until the client has seen the text.
    let (first, rest) = (events[..5].to_vec(), events[5..].to_vec());
    let upstream = Upstream::start(move |_| {
        let gate = gate.lock().unwrap().take().expect("one request");
        Answer::Gated(first.clone(), gate, rest.clone())
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let mut stream = TcpStream::connect(gateway.address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let body = messages_request(&[bash_tool()], true);
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(&body).unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0; 4096];
    // The text's last delta, the last event before the gate.
    while !String::from_utf8_lossy(&seen).contains("\"text\":\"over\"") {
        let read = stream
            .read(&mut buffer)
            .expect("the text arrives before the call is sent");
        assert!(
            read > 0,
            "the answer ended early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buffer[..read]);
    }
    release.send(()).unwrap();
    stream.read_to_end(&mut seen).unwrap();
    let text = String::from_utf8_lossy(&seen);
    assert!(text.contains("message_stop"), "{text}");
    assert!(!text.contains(REASON), "{text}");
}

#[test]
fn tls_to_the_upstream_is_verified() {
    // A TLS server on loopback whose certificate no authority signed: the gateway must refuse it.
    let dir = tempfile::tempdir().unwrap();
    let (key, cert) = (dir.path().join("key.pem"), dir.path().join("cert.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
        ])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl makes a self-signed certificate");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut server = std::process::Command::new("openssl")
        .args([
            "s_server",
            "-quiet",
            "-www",
            "-accept",
            &port.to_string(),
            "-cert",
        ])
        .arg(&cert)
        .arg("-key")
        .arg(&key)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("openssl s_server starts");
    // The server is up once it accepts a connection.
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "openssl s_server did not start");
        thread::sleep(Duration::from_millis(20));
    }
    let gateway = Gateway::start(&format!("https://127.0.0.1:{port}"), &[]);
    let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], false));
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(reply.status, 502);
    let message = reply.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("certificate"), "{message}");
}

#[test]
fn a_calls_input_whole_in_its_block_start_loses_the_reason_there() {
    let content = [json!({"type": "tool_use", "id": "toolu_w", "name": "Bash",
        "input": {"command": "ls", "reason": REASON}})];
    let events = whole_start_events(&content);
    let upstream = Upstream::start(move |_| Answer::Events(events.clone()));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], true));
    let started: Vec<Value> = reply
        .events()
        .into_iter()
        .filter(|event| event["type"] == "content_block_start")
        .map(|event| event["content_block"]["input"].clone())
        .collect();
    assert_eq!(started, [json!({"command": "ls"})]);
    assert_logged(&gateway, "toolu_w", "ls");
}

/// A Messages request as Claude Code's auto mode sends it: the tools, and the ask to classify
/// their calls, in the body and in a beta.
fn asking_to_classify(tools: &[Value]) -> Vec<u8> {
    let mut body: Value = serde_json::from_slice(&messages_request(tools, false)).unwrap();
    body["safeguards"] = json!([{"type": "dangerous_tool_use",
        "classifier_context": {"rules": ["no force pushes"]}}]);
    body.to_string().into_bytes()
}

#[test]
fn no_classifier_is_asked_to_judge_calls_that_carry_a_reason() {
    let upstream = Upstream::messages(bash_model);
    let gateway = Gateway::start(&upstream.url(), &[]);
    let own_reason = json!({"name": "Explain", "input_schema": {"type": "object",
        "properties": {"reason": {"type": "string", "description": "Why the user asked"}}}});
    let betas = "claude-code-20250219, dangerous-tool-use-2026-09-03,effort-2025-11-24";
    for (tools, beta, expected) in [
        // Augmented: the ask goes, the other betas stay.
        (
            vec![bash_tool()],
            betas,
            Some("claude-code-20250219,effort-2025-11-24"),
        ),
        (vec![bash_tool()], "dangerous-tool-use-2026-09-03", None),
        // Nothing augmented: the request goes on as it came.
        (vec![own_reason], betas, Some(betas)),
    ] {
        let body = asking_to_classify(&tools);
        let reply = request(
            gateway.address,
            "POST",
            "/v1/messages",
            &[
                ("content-type", "application/json"),
                ("x-api-key", SECRET),
                ("anthropic-beta", beta),
            ],
            &body,
        );
        assert_eq!(reply.status, 200);
        let received = upstream.received().pop().unwrap();
        assert_eq!(received.header("anthropic-beta"), expected);
        let augmented = tools[0]["name"] == "Bash";
        assert_eq!(received.json().get("safeguards").is_none(), augmented);
        if !augmented {
            assert_eq!(received.body, body);
        }
    }
}
