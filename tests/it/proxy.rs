//! `reasons proxy`: the layer in front of a real MCP stdio server (`examples/mcp_fixture.rs`),
//! end to end through the real binary.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::mcp_session::McpSession;
use crate::util::{arg, mcp_fixture, read_reasons_log, reasons};

/// The fixture behind `reasons [PROXY_ARGS] proxy -- mcp_fixture FIXTURE_ARGS`.
fn proxied(proxy_args: &[&str], fixture_args: &[&str]) -> McpSession {
    let mut command = reasons();
    command
        .arg("proxy")
        .args(proxy_args)
        .arg("--")
        .arg(mcp_fixture())
        .args(fixture_args);
    McpSession::start(command)
}

/// The fixture on its own, for comparison.
fn direct(fixture_args: &[&str]) -> McpSession {
    let mut command = Command::new(mcp_fixture());
    crate::util::environment::clear(&mut command).args(fixture_args);
    McpSession::start(command)
}

fn record_file(dir: &Path, name: &str) -> String {
    arg(&dir.join(name)).to_owned()
}

/// The lines a fixture received, as received.
fn received(path: &str) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).expect("the fixture records");
    bytes
        .split_inclusive(|byte| *byte == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn tools_call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

/// The arguments the fixture says it received, from its answer to a `tools/call`.
fn echoed(answer: &Value) -> Value {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .expect("a text answer");
    serde_json::from_str(text).expect("the arguments as JSON")
}

fn declared(listing: &Value, tool: &str) -> Value {
    listing["result"]["tools"]
        .as_array()
        .expect("a listing")
        .iter()
        .find(|declaration| declaration["name"] == tool)
        .cloned()
        .unwrap_or_else(|| panic!("{tool} is listed"))
}

fn has_layers_reason(declaration: &Value) -> bool {
    declaration["inputSchema"]["properties"]["reason"]["description"]
        .as_str()
        .is_some_and(|text| text.starts_with("One short sentence"))
}

/// One 2025-generation session, the same for the proxy and for the fixture on its own; returns
/// the raw answers, the listing, and the answers to calls to each tool.
struct Exchange {
    untouched: Vec<Vec<u8>>,
    listing: Value,
    calls: Vec<Value>,
}

fn exchange_2025(session: &mut McpSession) -> Exchange {
    let mut untouched = Vec::new();
    untouched.push(
        session.request_raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
            "clientInfo": {"name": "test", "version": "1"}}})),
    );
    // The server speaks first now: a notification and a request of its own.
    session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    untouched.push(session.recv_raw());
    untouched.push(session.recv_raw());
    session.send(&json!({"jsonrpc": "2.0", "id": "fixture-roots-1",
        "result": {"roots": [{"uri": "file:///work", "name": "work"}]}}));
    let listing = session.request(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let calls = [
        ("echo", json!({"text": "hi", "reason": "Check the echo"})),
        ("note", json!({"body": "b", "reason": "Its own reason"})),
        ("clock", json!({"reason": "Know the time"})),
    ]
    .into_iter()
    .enumerate()
    .map(|(n, (tool, arguments))| session.request(&tools_call(3 + n as u64, tool, arguments)))
    .collect();
    session.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 5, "reason": "The user pressed stop"}}),
    );
    untouched.push(session.request_raw(&json!({"jsonrpc": "2.0", "id": 9, "method": "ping"})));
    Exchange {
        untouched,
        listing,
        calls,
    }
}

#[test]
fn the_client_sees_reasons_and_the_server_never_receives_them() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (direct_record, proxied_record) = (
        record_file(dir.path(), "direct"),
        record_file(dir.path(), "proxied"),
    );
    let mut direct = direct(&["--record", &direct_record]);
    let direct_exchange = exchange_2025(&mut direct);
    let mut proxied = proxied(&[], &["--record", &proxied_record]);
    let proxied_exchange = exchange_2025(&mut proxied);

    // Everything but the listing crosses byte for byte, both ways.
    assert_eq!(proxied_exchange.untouched, direct_exchange.untouched);
    for tool in ["echo", "clock"] {
        assert!(has_layers_reason(&declared(
            &proxied_exchange.listing,
            tool
        )));
        assert!(!has_layers_reason(&declared(
            &direct_exchange.listing,
            tool
        )));
    }
    assert_eq!(
        declared(&proxied_exchange.listing, "note"),
        declared(&direct_exchange.listing, "note")
    );

    // The server receives no reason for the tools the layer augmented, and its own for `note`.
    let echoes: Vec<Value> = proxied_exchange.calls.iter().map(echoed).collect();
    assert_eq!(
        echoes,
        [
            json!({"text": "hi"}),
            json!({"body": "b", "reason": "Its own reason"}),
            json!({})
        ]
    );

    // What the server received differs from the direct session only in the stripped calls.
    let (direct_lines, proxied_lines) = (received(&direct_record), received(&proxied_record));
    assert_eq!(direct_lines.len(), proxied_lines.len());
    for (direct_line, proxied_line) in direct_lines.iter().zip(&proxied_lines) {
        let text = String::from_utf8_lossy(direct_line);
        let stripped = text.contains("\"tools/call\"") && !text.contains("\"note\"");
        assert_eq!(direct_line != proxied_line, stripped, "{text}");
    }

    let direct_end = direct.close();
    let ended = proxied.close();
    assert_eq!(ended.code, Some(0));
    assert_eq!(direct_end.code, Some(0));
    assert!(
        ended.stderr.contains("mcp_fixture: ready"),
        "{}",
        ended.stderr
    );
    assert!(ended.stderr.contains("echo: Check the echo\n"));
    assert!(ended.stderr.contains("clock: Know the time\n"));
    assert!(!ended.stderr.contains("Its own reason"));
}

#[test]
fn a_listing_over_two_pages_is_matched_by_id() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let record = record_file(dir.path(), "record");
    let mut session = proxied(&[], &["--pages", "--record", &record]);
    let first = session.request(&json!({"jsonrpc": "2.0", "id": "a", "method": "tools/list"}));
    assert_eq!(first["result"]["nextCursor"], "page-2");
    assert!(has_layers_reason(&declared(&first, "echo")));
    let second = session.request(&json!({"jsonrpc": "2.0", "id": "b", "method": "tools/list",
        "params": {"cursor": "page-2"}}));
    assert!(has_layers_reason(&declared(&second, "clock")));
    for (id, tool) in [(1, "echo"), (2, "clock")] {
        let answer = session.request(&tools_call(
            id,
            tool,
            json!({"text": "x", "reason": "From either page"}),
        ));
        assert_eq!(echoed(&answer), json!({"text": "x"}));
    }
    assert_eq!(session.close().code, Some(0));
    let received = received(&record);
    assert!(received
        .iter()
        .all(|line| !String::from_utf8_lossy(line).contains("From either page")));
}

#[test]
fn the_2026_generation_passes_and_a_retried_call_is_stripped_too() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let record = record_file(dir.path(), "record");
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let discover = json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover",
        "params": {"_meta": meta}});
    let mut direct = direct(&["--input-required"]);
    let direct_discovery = direct.request_raw(&discover);
    direct.close();

    let mut session = proxied(&[], &["--input-required", "--record", &record]);
    assert_eq!(session.request_raw(&discover), direct_discovery);
    let listing = session.request(&json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list",
        "params": {"_meta": meta}}));
    assert!(has_layers_reason(&declared(&listing, "echo")));

    let arguments = json!({"text": "go", "reason": "Ship the fix"});
    let first = session.request(&tools_call(1, "echo", arguments.clone()));
    assert_eq!(first["result"]["resultType"], "input_required");
    let mut retry = tools_call(2, "echo", arguments);
    retry["params"]["inputResponses"] =
        json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    retry["params"]["requestState"] = first["result"]["requestState"].clone();
    let answer = session.request(&retry);
    assert_eq!(echoed(&answer), json!({"text": "go"}));

    let ended = session.close();
    assert_eq!(ended.code, Some(0));
    assert_eq!(ended.stderr.matches("echo: Ship the fix").count(), 2);
    let calls: Vec<Value> = received(&record)
        .iter()
        .map(|line| serde_json::from_slice(line).expect("JSON"))
        .filter(|message: &Value| message["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2);
    for call in &calls {
        assert_eq!(call["params"]["arguments"], json!({"text": "go"}));
    }
    assert_eq!(calls[1]["params"]["requestState"], "fixture-state-1");
}

#[test]
fn a_call_before_any_listing_reaches_the_server_as_sent() {
    let mut session = proxied(&[], &[]);
    let answer = session.request(&tools_call(
        1,
        "echo",
        json!({"text": "t", "reason": "Early"}),
    ));
    assert_eq!(echoed(&answer), json!({"text": "t", "reason": "Early"}));
    assert_eq!(session.close().code, Some(0));
}

#[test]
fn malformed_and_blank_lines_cross_untouched() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let record = record_file(dir.path(), "record");
    let mut session = proxied(&[], &["--record", &record]);
    let sent: &[u8] = b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/li\xff\n";
    session.send_raw(sent);
    let answer = session.recv();
    assert_eq!(answer["error"]["code"], -32700);
    assert_eq!(session.close().code, Some(0));
    assert_eq!(received(&record).concat(), sent);
}

#[test]
fn the_server_exit_status_is_the_proxy_exit_status() {
    let session = proxied(&[], &["--exit-code", "3"]);
    let ended = session.close();
    assert_eq!(ended.code, Some(3));
}

#[test]
fn a_server_that_dies_mid_session_ends_the_proxy_after_its_last_words() {
    let mut session = proxied(&[], &[]);
    // The client keeps its end open: the server goes by itself.
    let answer = session.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "fixture/exit",
        "params": {"code": 5}}));
    assert_eq!(answer["result"], json!({}));
    let last = session.recv();
    assert_eq!(last["params"]["data"], "exiting");
    let ended = session.finish();
    assert_eq!(ended.code, Some(5));
    assert!(ended.unread.is_empty());
    assert!(ended.stderr.contains("mcp_fixture: exiting with 5"));
}

#[cfg(unix)]
#[test]
fn a_server_that_ignores_its_closed_stdin_is_ended_after_a_grace_period() {
    let session = proxied(&[], &["--linger"]);
    let ended = session.close();
    // Killed (signal 9) after the grace period, which the proxy says: 128 + 9.
    assert_eq!(ended.code, Some(137));
    assert!(
        ended
            .stderr
            .contains("still running 2s after its client left; ending it"),
        "{}",
        ended.stderr
    );
}

#[test]
fn a_server_that_cannot_start_is_an_error() {
    let output = reasons()
        .args(["proxy", "--", "/nonexistent/mcp-server", "--flag"])
        .stdin(Stdio::null())
        .output()
        .expect("reasons runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("reasons: cannot start /nonexistent/mcp-server: "),
        "{stderr}"
    );
}

#[test]
fn reasons_log_takes_the_reasons_instead_of_stderr() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("reasons.jsonl");
    let mut session = proxied(&["--reasons-log", arg(&log)], &[]);
    session.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    session.request(&tools_call(
        2,
        "echo",
        json!({"text": "t", "reason": "Logged"}),
    ));
    let mut from_claude_code = tools_call(3, "echo", json!({"text": "t", "reason": "Joined"}));
    from_claude_code["params"]["_meta"] = json!({"claudecode/toolUseId": "toolu_01"});
    session.request(&from_claude_code);
    let ended = session.close();
    assert_eq!(ended.code, Some(0));
    assert!(!ended.stderr.contains("Logged"));
    assert_eq!(
        read_reasons_log(&log),
        [
            json!({"via": "proxy", "tool": "echo", "call_id": null, "reason": "Logged",
                "touched": "text=t", "request_id": "2"}),
            json!({"via": "proxy", "tool": "echo", "call_id": "toolu_01", "reason": "Joined",
                "touched": "text=t", "request_id": "3"}),
        ]
    );
}

// Hostile servers: the proxy never hangs, and never loses what did arrive.

#[test]
fn a_server_flooding_stderr_still_answers_every_request() {
    let mut session = proxied(&[], &["--flood-stderr", "1000000"]);
    for id in 0..20 {
        let answer = session.request(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        assert_eq!(answer["id"], id);
    }
    let ended = session.close();
    assert_eq!(ended.code, Some(0));
    assert!(ended.stderr.len() >= 20_000_000, "{}", ended.stderr.len());
}

#[test]
fn a_server_that_dies_mid_response_ends_the_proxy_with_its_status() {
    let mut session = proxied(&[], &[]);
    session.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "fixture/half"}));
    // Whatever arrived is passed on as it came, though it is no whole line.
    let half = session.recv_raw();
    assert!(
        half.starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":1,"),
        "{half:?}"
    );
    assert!(!half.ends_with(b"\n"));
    let ended = session.finish();
    assert_eq!(ended.code, Some(3));
    assert!(ended.unread.is_empty());
}

#[test]
fn a_server_that_never_answers_ends_when_the_client_leaves() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let record = record_file(dir.path(), "record");
    let mut session = proxied(&[], &["--mute", "--record", &record]);
    session.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    session.send(&tools_call(2, "echo", json!({"reason": "r"})));
    assert!(session
        .lines
        .recv_timeout(Duration::from_millis(300))
        .is_err());
    let ended = session.close();
    assert_eq!(ended.code, Some(0));
    assert_eq!(received(&record).len(), 2);
}

#[cfg(unix)]
#[test]
fn a_server_that_never_reads_is_ended_once_the_client_leaves() {
    let mut session = proxied(&[], &["--deaf"]);
    // Far more than the pipes to a server that never reads can hold.
    let mut stdin = session.stdin.take().expect("stdin is open");
    let writer = thread::spawn(move || {
        let line = serde_json::to_vec(&tools_call(1, "echo", json!({"text": "x".repeat(1000)})))
            .expect("JSON");
        for _ in 0..4_000 {
            stdin.write_all(&line).expect("the proxy keeps reading");
            stdin.write_all(b"\n").expect("the proxy keeps reading");
        }
        // Dropping stdin: the client leaves.
    });
    writer.join().expect("the client wrote everything");
    let ended = session.finish();
    assert_eq!(ended.code, Some(137), "{}", ended.stderr);
    assert!(ended.stderr.contains("ending it"), "{}", ended.stderr);
}

/// The proxy read everything a client sent to a server that never reads, and kept it: 348 MiB
/// resident after 12 s of 60 KB `tools/call` lines. Now the client is held back once a bounded
/// queue is full, and the proxy's memory stays flat.
#[cfg(target_os = "linux")]
#[test]
fn a_server_that_never_reads_holds_the_client_back_instead_of_filling_memory() {
    const SENT_AT_MOST: u64 = 96 << 20;
    let mut session = proxied(&[], &["--deaf"]);
    let proxy = session.child.id();
    let mut stdin = session.stdin.take().expect("stdin is open");
    let (progress, written) = mpsc::channel::<u64>();
    let writer = thread::spawn(move || {
        let mut line =
            serde_json::to_vec(&tools_call(1, "echo", json!({"text": "x".repeat(60_000)})))
                .expect("JSON");
        line.push(b'\n');
        let mut sent = 0;
        while sent < SENT_AT_MOST && stdin.write_all(&line).is_ok() {
            sent += line.len() as u64;
            if progress.send(sent).is_err() {
                break;
            }
        }
    });
    // The writer reports each line the proxy took; when none comes for a while, it is held back
    // (or it sent everything, which the assertion below catches).
    let mut sent = 0;
    while let Ok(now) = written.recv_timeout(Duration::from_secs(2)) {
        sent = now;
    }
    let status = std::fs::read_to_string(format!("/proc/{proxy}/status")).expect("the proxy runs");
    let resident_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status");
    let _ = session.child.kill();
    drop(written);
    writer
        .join()
        .expect("the writer ends once the proxy is gone");
    assert!(
        sent < 32 << 20,
        "the proxy took {sent} bytes from the client"
    );
    assert!(
        resident_kib < 48 << 10,
        "the proxy holds {resident_kib} KiB"
    );
}

/// Pushes 10,000 requests through the proxy, pipelined, with notifications both ways between
/// them: every message arrives exactly once, in order per direction, stripped exactly where the
/// rules say.
#[test]
fn ten_thousand_requests_with_notifications_both_ways_arrive_once_in_order() {
    const REQUESTS: u64 = 10_000;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let record = record_file(dir.path(), "record");
    let mut session = proxied(
        &["--reasons-log", arg(&dir.path().join("reasons.jsonl"))],
        &["--chatty", "--record", &record],
    );
    let listing = session.request(&json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}));
    assert!(has_layers_reason(&declared(&listing, "echo")));

    // What the client sends, and what the server must receive for each line.
    let mut sent = Vec::new();
    let mut expected = Vec::new();
    for n in 0..REQUESTS {
        let (message, forwarded) = match n % 4 {
            // Stripped: a tracked tool, with a reason.
            0 => (
                tools_call(n, "echo", json!({"text": n, "reason": format!("why {n}")})),
                tools_call(n, "echo", json!({"text": n})),
            ),
            // Its own reason: left alone.
            1 => {
                let call = tools_call(n, "note", json!({"body": n, "reason": format!("own {n}")}));
                (call.clone(), call)
            }
            // No reason: left alone.
            2 => {
                let call = tools_call(n, "clock", json!({}));
                (call.clone(), call)
            }
            _ => {
                let call = json!({"jsonrpc": "2.0", "id": n, "method": "ping"});
                (call.clone(), call)
            }
        };
        sent.push(message);
        expected.push(forwarded);
        if n % 3 == 0 {
            let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": format!("gone-{n}"), "reason": format!("stop {n}")}});
            sent.push(cancelled.clone());
            expected.push(cancelled);
        }
    }
    let mut stdin = session.stdin.take().expect("stdin is open");
    let lines: Vec<Vec<u8>> = sent
        .iter()
        .map(|message| {
            let mut line = serde_json::to_vec(message).expect("JSON");
            line.push(b'\n');
            line
        })
        .collect();
    let writer = thread::spawn(move || {
        for line in lines {
            stdin.write_all(&line).expect("the proxy reads");
        }
        stdin
    });

    // Server→client: per request a progress notification for calls, then the answer; per client
    // notification, the server's echo of it; all in the order the server wrote them.
    let mut notifications = 0;
    for message in &sent {
        let id = &message["id"];
        if id.is_null() {
            let echo = session.recv();
            assert_eq!(echo["method"], "notifications/message");
            assert_eq!(echo["params"]["data"], message["params"]);
            notifications += 1;
            continue;
        }
        if message["method"] == "tools/call" {
            let progress = session.recv();
            assert_eq!(progress["method"], "notifications/progress");
            assert_eq!(&progress["params"]["progressToken"], id);
        }
        let answer = session.recv();
        assert_eq!(&answer["id"], id, "{answer}");
        if message["method"] == "tools/call" {
            let tool = message["params"]["name"].as_str().expect("a name");
            let mut arguments = message["params"]["arguments"].clone();
            if tool == "echo" {
                arguments
                    .as_object_mut()
                    .expect("an object")
                    .remove("reason");
            }
            assert_eq!(echoed(&answer), arguments);
        }
    }
    assert!(notifications > 3000);
    let stdin = writer.join().expect("the client wrote everything");
    session.stdin = Some(stdin);
    let ended = session.close();
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    assert!(ended.unread.is_empty());

    // Client→server: exactly the lines sent, once each, in order, stripped where the rules say.
    let received: Vec<Value> = received(&record)
        .iter()
        .map(|line| serde_json::from_slice(line).expect("JSON"))
        .collect();
    assert_eq!(received.len(), expected.len() + 1);
    assert_eq!(received[0]["id"], "list");
    for (got, want) in received[1..].iter().zip(&expected) {
        assert_eq!(got, want);
    }
    let reasons = std::fs::read_to_string(dir.path().join("reasons.jsonl")).expect("the log");
    assert_eq!(reasons.lines().count() as u64, REQUESTS / 4);
}

/// The `params` of each `tools/call` the fixture received.
fn received_call_params(path: &str) -> Vec<Value> {
    received(path)
        .iter()
        .map(|line| serde_json::from_slice::<Value>(line).expect("a JSON line"))
        .filter(|message| message["method"] == "tools/call")
        .map(|message| message["params"].clone())
        .collect()
}

#[test]
fn meta_forwards_the_reason_to_the_server_in_meta_and_keeps_the_other_entries() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("reasons.jsonl");
    let calls = |proxy_args: &[&str], record: &str| -> Vec<Value> {
        let mut session = proxied(proxy_args, &["--record", record]);
        session.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        let mut from_claude_code =
            tools_call(2, "echo", json!({"text": "t", "reason": "Check the echo"}));
        from_claude_code["params"]["_meta"] =
            json!({"claudecode/toolUseId": "toolu_01", "progressToken": 7});
        let answer = session.request(&from_claude_code);
        // The tool's arguments never hold the reason, with or without `--meta`.
        assert_eq!(echoed(&answer), json!({"text": "t"}));
        session.request(&tools_call(3, "clock", json!({"reason": "Know the time"})));
        // A tool with a reason of its own keeps it in its arguments, and gets nothing in `_meta`.
        session.request(&tools_call(
            4,
            "note",
            json!({"body": "b", "reason": "Its own"}),
        ));
        session.request(&tools_call(5, "echo", json!({"text": "no reason"})));
        assert_eq!(session.close().code, Some(0));
        received_call_params(record)
    };
    let with_meta = calls(
        &["--meta", "--reasons-log", arg(&log)],
        &record_file(dir.path(), "with"),
    );
    assert_eq!(
        with_meta,
        [
            json!({"name": "echo", "arguments": {"text": "t"}, "_meta": {
                "claudecode/toolUseId": "toolu_01", "progressToken": 7,
                "io.modelcontextprotocol/aiInvocation": {"invocationReason": {"text": "Check the echo"}}}}),
            json!({"name": "clock", "arguments": {}, "_meta": {
                "io.modelcontextprotocol/aiInvocation": {"invocationReason": {"text": "Know the time"}}}}),
            json!({"name": "note", "arguments": {"body": "b", "reason": "Its own"}}),
            json!({"name": "echo", "arguments": {"text": "no reason"}}),
        ]
    );
    // The reasons are logged all the same, under the client's tool-use id.
    let logged: Vec<Value> = read_reasons_log(&log)
        .into_iter()
        .map(|record| record["call_id"].clone())
        .collect();
    assert_eq!(logged, [json!("toolu_01"), Value::Null]);

    // Without `--meta` the server sees no reason anywhere, and its `_meta` as the client sent it.
    let without = calls(&[], &record_file(dir.path(), "without"));
    assert_eq!(
        without[..2],
        [
            json!({"name": "echo", "arguments": {"text": "t"}, "_meta": {
                "claudecode/toolUseId": "toolu_01", "progressToken": 7}}),
            json!({"name": "clock", "arguments": {}}),
        ]
    );
    assert!(!received(&record_file(dir.path(), "without"))
        .iter()
        .any(|line| String::from_utf8_lossy(line).contains("aiInvocation")));
}
