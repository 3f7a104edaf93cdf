//! `reasons proxy --listen` in front of the MCP reference server
//! (`@modelcontextprotocol/server-everything`) over stdio, driven by the official Python SDK's
//! Streamable HTTP client as a client configured with a URL: its tools listed with the reason,
//! `echo` answered with the reason stripped before the server (what the server read, recorded),
//! the reason logged.

use serde_json::{json, Value};

use crate::util::listening_proxy::ListeningProxy;
use crate::util::real_parts::{part, python_script, MCP_SERVER_EVERYTHING};
use crate::util::{arg, eventually, read_reasons_log};

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

    let got = python_script(
        "mcp_http_client.py",
        &[
            &proxy.url(),
            "echo",
            r#"{"message": "hello through the proxy", "reason": "to check the HTTP face"}"#,
        ],
    );

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
        got["result"]["content"][0]["text"], "Echo: hello through the proxy",
        "{got}"
    );

    let logged = eventually("the reason is logged", || {
        log.exists()
            .then(|| read_reasons_log(&log))
            .filter(|records| !records.is_empty())
    });
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["via"], "proxy");
    assert_eq!(logged[0]["tool"], "echo");
    assert_eq!(logged[0]["reason"], "to check the HTTP face");

    let read = std::fs::read_to_string(&record).expect("what the server read");
    let call = read
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|message| message["method"] == "tools/call")
        .unwrap_or_else(|| panic!("the call reached the server: {read}"));
    assert_eq!(
        call["params"]["arguments"],
        json!({"message": "hello through the proxy"}),
        "the server never reads the reason"
    );
}
