//! `reasons proxy --url` in front of the MCP reference server (`@modelcontextprotocol/server-everything`)
//! in its Streamable HTTP mode, with a byte relay between them that keeps what the server was
//! sent: its tools listed with the reason, `echo` answered with the reason stripped, its long
//! operation's progress, its sampling and elicitation requests answered by this test's client, a
//! header forwarded from the environment.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{json, Value};

use crate::util::mcp_session::{McpSession, WAIT};
use crate::util::real_parts::{part, MCP_SERVER_EVERYTHING};
use crate::util::{arg, read_reasons_log, reasons};

/// server-everything listening on a loopback port of its own; ended when dropped.
pub(super) struct Everything {
    child: Child,
    pub(super) port: u16,
}

impl Everything {
    pub(super) fn start() -> Everything {
        // The server takes its port from PORT and says it only as given: a free one is found
        // first.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let mut command = Command::new("node");
        crate::util::environment::clear(&mut command);
        let mut child = command
            .arg(part(MCP_SERVER_EVERYTHING))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs server-everything");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (ready, listening) = std::sync::mpsc::channel();
        thread::spawn(move || {
            let mut said = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !said && line.contains("listening on port") {
                    said = true;
                    let _ = ready.send(());
                }
            }
        });
        listening
            .recv_timeout(WAIT)
            .expect("server-everything listens in time");
        Everything { child, port }
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Relays TCP connections from a loopback port to `port`, keeping every byte sent towards it.
pub(super) fn recording_relay(port: u16) -> (u16, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let relay_port = listener.local_addr().expect("its address").port();
    let sent = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&sent);
    thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let Ok(server) = TcpStream::connect(("127.0.0.1", port)) else {
                continue;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (mut from_client, mut to_server) = (
                client.try_clone().expect("a handle"),
                server.try_clone().expect("a handle"),
            );
            let kept = Arc::clone(&kept);
            thread::spawn(move || {
                let mut buffer = [0; 16384];
                while let Ok(read) = from_client.read(&mut buffer) {
                    if read == 0 || to_server.write_all(&buffer[..read]).is_err() {
                        break;
                    }
                    kept.lock().unwrap().extend_from_slice(&buffer[..read]);
                }
                let _ = to_server.shutdown(std::net::Shutdown::Write);
            });
            let (mut from_server, mut to_client) = (server, client);
            thread::spawn(move || {
                let _ = std::io::copy(&mut from_server, &mut to_client);
                let _ = to_client.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    (relay_port, sent)
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|part| part["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_proxy_remote_in_front_of_server_everything_over_streamable_http() {
    let everything = Everything::start();
    let (relay, sent) = recording_relay(everything.port);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("reasons.jsonl");
    let mut command = reasons();
    command
        .args(["proxy", "--url", &format!("http://127.0.0.1:{relay}/mcp")])
        .args(["--reasons-log", arg(&log)])
        .args(["--header", "X-Probe: from ${PROBE_VALUE}"])
        .env("PROBE_VALUE", "the-environment");
    let mut session = McpSession::start(command);

    let initialized = session.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18",
            "capabilities": {"sampling": {}, "elicitation": {}},
            "clientInfo": {"name": "reasons-test", "version": "1"}}}));
    assert!(
        initialized["result"]["protocolVersion"].is_string(),
        "{initialized}"
    );
    session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    // The server registers its sampling and elicitation tools once it knows the client's
    // capabilities, after initialization: listed until they are there, as a client that
    // follows `notifications/tools/list_changed` would see them.
    let deadline = std::time::Instant::now() + WAIT;
    let mut id = 100;
    let listing = loop {
        id += 1;
        let listing = session.request(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        let listed = |name: &str| {
            listing["result"]["tools"]
                .as_array()
                .is_some_and(|tools| tools.iter().any(|tool| tool["name"] == name))
        };
        if listed("trigger-sampling-request") && listed("trigger-elicitation-request") {
            break listing;
        }
        assert!(std::time::Instant::now() < deadline, "{listing}");
        thread::sleep(std::time::Duration::from_millis(20));
    };
    let tools = listing["result"]["tools"].as_array().expect("tools");
    let echo = tools
        .iter()
        .find(|tool| tool["name"] == "echo")
        .expect("echo is listed");
    assert!(
        echo["inputSchema"]["properties"]["reason"]["description"]
            .as_str()
            .is_some_and(|text| text.starts_with("One short sentence")),
        "{echo}"
    );

    let answer = session.request(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo",
            "arguments": {"message": "hello through the proxy", "reason": "to check the relay"}}}));
    assert_eq!(
        text_of(&answer),
        "Echo: hello through the proxy",
        "{answer}"
    );

    // The long operation: its progress notifications come before its answer.
    session.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "trigger-long-running-operation",
            "arguments": {"duration": 1, "steps": 3, "reason": "to see progress"},
            "_meta": {"progressToken": "long-1"}}}));
    let mut notifications = Vec::new();
    let answer = session.recv_skipping_notifications(&mut notifications);
    assert_eq!(answer["id"], 4, "{answer}");
    let progress: Vec<&Value> = notifications
        .iter()
        .filter(|message| {
            message["method"] == "notifications/progress"
                && message["params"]["progressToken"] == "long-1"
        })
        .collect();
    assert_eq!(progress.len(), 3, "{notifications:?}");

    // Sampling: the server asks the client for a completion while the call is open.
    session.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "trigger-sampling-request",
            "arguments": {"prompt": "say hi", "reason": "to test sampling"}}}));
    let asked = session.recv_skipping_notifications(&mut Vec::new());
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    session.send(&json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"role": "assistant", "model": "test-model",
            "content": {"type": "text", "text": "sampled by the test client"}}}));
    let answer = session.recv_skipping_notifications(&mut Vec::new());
    assert_eq!(answer["id"], 5, "{answer}");
    assert!(
        text_of(&answer).contains("sampled by the test client"),
        "{answer}"
    );

    // Elicitation: the server asks the person (the client) for details.
    session.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "trigger-elicitation-request", "arguments": {}}}));
    let asked = session.recv_skipping_notifications(&mut Vec::new());
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    session.send(&json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"name": "Ada Lovelace"}}}));
    let answer = session.recv_skipping_notifications(&mut Vec::new());
    assert_eq!(answer["id"], 6, "{answer}");
    assert!(text_of(&answer).contains("Ada Lovelace"), "{answer}");

    let ended = session.close();
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    assert!(
        !ended.stderr.contains("reasons: proxy:"),
        "{}",
        ended.stderr
    );

    let sent = String::from_utf8_lossy(&sent.lock().unwrap()).into_owned();
    assert!(
        sent.contains("hello through the proxy"),
        "the call went through the relay"
    );
    for reason in ["to check the relay", "to see progress", "to test sampling"] {
        assert!(
            !sent.contains(reason),
            "the server was sent the reason {reason:?}"
        );
    }
    assert!(
        sent.to_ascii_lowercase()
            .contains("x-probe: from the-environment"),
        "the header went with the requests"
    );
    assert!(sent.contains("DELETE /mcp"), "the session was ended");
    let logged: Vec<String> = read_reasons_log(&log)
        .iter()
        .map(|record| {
            format!(
                "{}: {}",
                record["tool"].as_str().unwrap_or_default(),
                record["reason"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        logged,
        [
            "echo: to check the relay",
            "trigger-long-running-operation: to see progress",
            "trigger-sampling-request: to test sampling"
        ]
    );
}
