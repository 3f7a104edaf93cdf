//! `gateway --otlp`: each reason as an OpenTelemetry span, read back from a real Arize Phoenix
//! (`.ci/real-parts` installs it in a venv of its own), and a collector away never stops a
//! request.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::free_port;
use crate::util::gateway::Gateway;
use crate::util::phoenix::Phoenix;
use crate::util::upstream::{bash_tool, Upstream};
use crate::util::{arg, eventually, lines_of, mcp_fixture, reasons, run_with_stdin};

const REASON: &str = "Find what the build left behind";

fn model(request: &Value) -> Vec<Value> {
    let id = request["messages"][0]["content"].as_str().unwrap_or("none");
    vec![json!({"type": "tool_use", "id": id, "name": "Bash",
        "input": {"command": "ls target", "reason": REASON}})]
}

fn turn(gateway: &Gateway, id: &str, stream: bool) {
    let body = json!({"model": "m", "max_tokens": 10, "stream": stream, "tools": [bash_tool()],
        "messages": [{"role": "user", "content": id}]});
    let reply = gateway.post("/v1/messages", body.to_string().as_bytes());
    assert_eq!(reply.status, 200);
    assert!(!String::from_utf8_lossy(&reply.body).contains(REASON));
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn each_reason_arrives_in_phoenix_as_a_span_and_a_collector_away_stops_nothing() {
    let phoenix = Phoenix::start();
    let upstream = Upstream::messages(model);
    let dir = tempfile::tempdir().unwrap();
    let gateway = Gateway::start_logging_to(
        &upstream.url(),
        &dir.path().join("a.jsonl"),
        &["--otlp", &phoenix.url()],
    );
    turn(&gateway, "toolu_otlp_plain", false);
    turn(&gateway, "toolu_otlp_streamed", true);
    let spans = eventually("both spans reach Phoenix", || {
        let spans = phoenix.spans();
        (spans.len() >= 2).then_some(spans)
    });
    let mut ids: Vec<&str> = spans
        .iter()
        .map(|span| span["attributes"]["gen_ai.tool.call.id"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        ["toolu_otlp_plain", "toolu_otlp_streamed"],
        "{spans:?}"
    );
    for span in &spans {
        assert_eq!(span["name"], "execute_tool Bash");
        let attributes = &span["attributes"];
        assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
        assert_eq!(attributes["gen_ai.tool.name"], "Bash");
        assert_eq!(attributes["reasons.reason"], REASON);
        assert_eq!(attributes["reasons.touched"], "ls target");
        assert_eq!(attributes["reasons.via"], "gateway");
    }
    assert_eq!(gateway.stderr_until(|_| true), "");

    // `filter` and `proxy` send theirs too, before they exit.
    let listing = json!({"jsonrpc": "2.0", "id": 1,
        "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}});
    let call = |id: &str| {
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo",
            "arguments": {"text": "t", "reason": REASON}, "_meta": {"claudecode/toolUseId": id}}})
    };
    let filtered = run_with_stdin(
        &[
            "filter",
            "--reasons-log",
            arg(&dir.path().join("f.jsonl")),
            "--otlp",
            &phoenix.url(),
        ],
        format!("{listing}\n{}\n", call("toolu_otlp_filter")).as_bytes(),
    );
    assert_eq!(filtered.code, 0, "{}", filtered.stderr);
    let mut proxy = reasons()
        .args(["proxy", "--otlp", &phoenix.url(), "--reasons-log"])
        .arg(dir.path().join("p.jsonl"))
        .arg("--")
        .arg(mcp_fixture())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let answers = lines_of(proxy.stdout.take().unwrap());
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        call("toolu_otlp_proxy"),
    ] {
        writeln!(stdin, "{message}").unwrap();
        answers
            .recv_timeout(Duration::from_secs(10))
            .expect("an answer");
    }
    drop(stdin);
    assert!(proxy.wait().unwrap().success());
    let via = |spans: &[Value], id: &str| {
        spans
            .iter()
            .find(|span| span["attributes"]["gen_ai.tool.call.id"] == id)
            .map(|span| span["attributes"]["reasons.via"].clone())
    };
    eventually("the filter's span and the proxy's reach Phoenix", || {
        let spans = phoenix.spans();
        let found = (
            via(&spans, "toolu_otlp_filter"),
            via(&spans, "toolu_otlp_proxy"),
        );
        (found == (Some(json!("filter")), Some(json!("proxy")))).then_some(())
    });

    // A recorded log: every call, every status, twice (the same spans again).
    let extracted = crate::util::extract_records(&["samples/claude-code.jsonl"]);
    for _ in 0..2 {
        let exported = crate::util::run(&[
            "export",
            "--otlp",
            &phoenix.url(),
            "samples/claude-code.jsonl",
        ]);
        assert_eq!(exported.code, 0, "{}", exported.stderr);
    }
    let exported = eventually("every exported call reaches Phoenix", || {
        let exported: Vec<Value> = phoenix
            .spans()
            .into_iter()
            .filter(|span| span["attributes"]["reasons.source"].is_string())
            .collect();
        (exported.len() >= extracted.len()).then_some(exported)
    });
    let mut statuses: Vec<(String, String)> = exported
        .iter()
        .map(|span| {
            let attributes = &span["attributes"];
            (
                attributes["gen_ai.tool.call.id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                attributes["reasons.status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    statuses.sort();
    statuses.dedup();
    let mut expected: Vec<(String, String)> = extracted
        .iter()
        .map(|record| {
            (
                record["call_id"].as_str().unwrap().to_owned(),
                record["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(statuses, expected);
    // Each call is one span, however often it was sent.
    let mut span_ids: Vec<&Value> = exported
        .iter()
        .map(|span| &span["context"]["span_id"])
        .collect();
    span_ids.sort_by_key(|id| id.to_string());
    span_ids.dedup();
    assert_eq!(span_ids.len(), extracted.len());

    // The same collector named by OTEL_EXPORTER_OTLP_ENDPOINT; then the collector goes away.
    drop(phoenix);
    let away = format!("http://127.0.0.1:{}", free_port());
    let quiet = named_by_environment(&upstream, &away, &dir.path().join("b.jsonl"));
    for n in 0..20 {
        turn(&quiet, &format!("toolu_away{n}"), n % 2 == 0);
    }
    let said = quiet.stderr_once("spans are dropped");
    assert_eq!(said.matches("spans are dropped").count(), 1, "{said}");
    assert!(said.contains(&format!("{away}/v1/traces")), "{said}");
}

/// A gateway whose collector only the environment names.
fn named_by_environment(upstream: &Upstream, collector: &str, log: &Path) -> Gateway {
    Gateway::start_with_env(
        &["--upstream", &upstream.url()],
        log,
        &[],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", collector)],
    )
}
