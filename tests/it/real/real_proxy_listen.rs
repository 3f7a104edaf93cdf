//! `reasons proxy --listen` in front of the MCP reference server
//! (`@modelcontextprotocol/server-everything`), over stdio and over Streamable HTTP (`--url`),
//! driven by the official Python SDK's Streamable HTTP client as a client configured with a URL:
//! its tools listed with the reason, `echo` answered with the reason stripped before the server
//! (what the server read, recorded), its long operation's progress, and its sampling and
//! elicitation requests passed both ways, each reason logged.

use std::path::Path;

use serde_json::{json, Value};

use super::real_proxy_remote::{recording_relay, Everything};
use crate::util::listening_proxy::ListeningProxy;
use crate::util::real_parts::{part, python_script, MCP_SERVER_EVERYTHING};
use crate::util::{arg, eventually, read_reasons_log};

/// What `mcp_http_client.py` got through the proxy: the listing with the reason, each call's
/// answer, and the server's own requests answered by the client.
#[track_caller]
fn assert_the_client_got_everything(got: &Value) {
    assert_eq!(got["server"], "mcp-servers/everything", "{got}");
    let tools = got["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|tool| tool["name"] == "echo"), "{got}");
    for tool in tools {
        assert!(
            tool["inputSchema"]["properties"]["reason"]["description"]
                .as_str()
                .is_some_and(|text| text.starts_with("One short sentence")),
            "every tool takes the layer's reason: {tool}"
        );
    }
    assert_eq!(
        got["echo"]["content"][0]["text"], "Echo: hello through the proxy",
        "{got}"
    );
    // The server's progress notifications reach the client while its call is open.
    assert_eq!(got["progress"], json!([1.0, 2.0, 3.0]), "{got}");
    assert_eq!(got["long"]["isError"], false, "{got}");
    // The server's own requests reach the client, and the client's answers the server.
    assert_eq!(
        got["sampled"],
        json!(["Resource trigger-sampling-request context: say hi"]),
        "{got}"
    );
    let text = |call: &str| -> String {
        got[call]["content"]
            .as_array()
            .unwrap_or_else(|| panic!("{call} answered: {got}"))
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect()
    };
    assert!(
        text("sampling").contains("a sampled answer from the test's client"),
        "{got}"
    );
    assert_eq!(
        got["elicited"],
        json!(["Please provide inputs for the following fields:"]),
        "{got}"
    );
    assert!(
        text("elicitation").contains("- Name: Ada Lovelace"),
        "{got}"
    );
}

/// The reasons the proxy logged, once all four calls' are there.
fn assert_each_reason_logged(log: &Path) {
    let logged = eventually("the reasons are logged", || {
        log.exists()
            .then(|| read_reasons_log(log))
            .filter(|records| records.len() >= 4)
    });
    let reasons: Vec<(&Value, &Value)> = logged
        .iter()
        .map(|record| (&record["tool"], &record["reason"]))
        .collect();
    assert_eq!(
        reasons,
        [
            (&json!("echo"), &json!("to check the HTTP face")),
            (
                &json!("trigger-long-running-operation"),
                &json!("to see progress")
            ),
            (
                &json!("trigger-sampling-request"),
                &json!("to see sampling")
            ),
            (
                &json!("trigger-elicitation-request"),
                &json!("to see elicitation")
            ),
        ],
        "{logged:?}"
    );
    assert!(logged.iter().all(|record| record["via"] == "proxy"));
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_proxy_listen_gives_server_everything_on_stdio_to_the_python_sdks_http_client() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("reasons.jsonl");
    let record = dir.path().join("server-read.jsonl");
    let everything = part(MCP_SERVER_EVERYTHING);
    // `tee` keeps every line the server reads, as it reads it.
    let proxy = ListeningProxy::start(&[
        "--reasons-log",
        arg(&log),
        "--",
        "sh",
        "-c",
        r#"tee -a "$0" | exec node "$1" stdio"#,
        arg(&record),
        arg(&everything),
    ]);

    let got = python_script("mcp_http_client.py", &[&proxy.url()]);

    assert_the_client_got_everything(&got);
    assert_each_reason_logged(&log);
    let read = std::fs::read_to_string(&record).expect("what the server read");
    let calls: Vec<Value> = read
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["method"] == "tools/call")
        .map(|call| call["params"]["arguments"].clone())
        .collect();
    assert_eq!(
        calls,
        [
            json!({"message": "hello through the proxy"}),
            json!({"duration": 1, "steps": 3}),
            json!({"prompt": "say hi"}),
            json!({}),
        ],
        "the server never reads a reason"
    );
    let answered = read
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|message| message["result"]["action"] == "accept")
        .expect("the client's answer to the elicitation reached the server");
    assert_eq!(answered["result"]["content"]["name"], "Ada Lovelace");
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_proxy_listen_gives_server_everything_over_http_to_the_python_sdks_http_client() {
    let everything = Everything::start();
    let (relay, sent) = recording_relay(everything.port);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("reasons.jsonl");
    let proxy = ListeningProxy::start(&[
        "--url",
        &format!("http://127.0.0.1:{relay}/mcp"),
        "--reasons-log",
        arg(&log),
    ]);

    let got = python_script("mcp_http_client.py", &[&proxy.url()]);

    assert_the_client_got_everything(&got);
    assert_each_reason_logged(&log);
    let sent = String::from_utf8_lossy(&sent.lock().unwrap()).into_owned();
    assert!(
        sent.contains("hello through the proxy"),
        "the call went through the relay"
    );
    assert!(
        sent.contains(r#""action":"accept""#) && sent.contains("Ada Lovelace"),
        "the client's answer to the elicitation reached the server"
    );
    for reason in [
        "to check the HTTP face",
        "to see progress",
        "to see sampling",
        "to see elicitation",
    ] {
        assert!(
            !sent.contains(reason),
            "the server was sent the reason {reason:?}"
        );
    }
}
