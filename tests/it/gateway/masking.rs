//! Nothing secret leaves the machine through a reason (SPEC §4.2.2): fake credentials of every
//! kind, as reasons and in the commands beside them, go through the real gateway (a scripted
//! model behind it) with `--otlp` to a real Arize Phoenix, `--store` to a real Redis and
//! `--serve-reasons`, and into a `reasons report` page; none of them is found there, read back
//! as each keeps it. The local reasons log keeps every one, and `--no-mask` lets them through.

use std::path::Path;

use serde_json::{json, Value};

use crate::util::fake_credentials::{fakes, Fake};
use crate::util::gateway::Gateway;
use crate::util::phoenix::Phoenix;
use crate::util::redis::Redis;
use crate::util::report_page::dom;
use crate::util::upstream::{bash_tool, request, Upstream};
use crate::util::{arg, claude_call, eventually, read_reasons_log, run};

/// The model calls Bash as the id the user's message names (`toolu_LABEL_N`), with the Nth fake
/// credential's sentence as its command and as its reason.
fn model(request: &Value) -> Vec<Value> {
    let id = request["messages"][0]["content"].as_str().unwrap_or("none");
    let n: usize = id.rsplit('_').next().unwrap().parse().unwrap();
    let sentence = &fakes()[n].sentence;
    vec![json!({"type": "tool_use", "id": id, "name": "Bash",
        "input": {"command": sentence, "reason": sentence}})]
}

fn id(label: &str, n: usize) -> String {
    format!("toolu_{label}_{n}")
}

/// Every fake's secret is in `text` (as written), or none is and each kind's mark is (masked).
#[track_caller]
fn holds(where_: &str, text: &str, masked: bool) {
    for fake in fakes() {
        assert_eq!(
            !text.contains(&fake.secret),
            masked,
            "{where_}: the {} {} {}",
            fake.kind,
            fake.secret,
            if masked { "leaked" } else { "is missing" }
        );
        if masked {
            let mark = format!("[masked: {}]", fake.kind);
            assert!(text.contains(&mark), "{where_}: no {mark}");
        }
    }
}

/// The page `reasons report` writes for these calls (a Claude Code transcript without their
/// reasons, joined with the gateway's reasons log), with `extra` options.
fn report_page(dir: &Path, label: &str, log: &Path, extra: &[&str]) -> String {
    let transcript = dir.join(format!("{label}-session.jsonl"));
    let lines: Vec<String> = fakes()
        .iter()
        .enumerate()
        .map(|(n, fake): (usize, &Fake)| {
            claude_call(
                "s",
                &id(label, n),
                "Bash",
                json!({"command": fake.sentence}),
            )
        })
        .collect();
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    let page = dir.join(format!("{label}.html"));
    let written = run(&[
        &["report", "--reasons-log", arg(log), "-o", arg(&page)][..],
        extra,
        &[arg(&transcript)],
    ]
    .concat());
    assert_eq!(written.code, 0, "{}", written.stderr);
    std::fs::read_to_string(page).unwrap()
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn no_credential_reaches_phoenix_redis_the_reasons_route_or_a_report_and_no_mask_lets_them_through()
{
    let phoenix = Phoenix::start();
    let redis = Redis::start();
    let upstream = Upstream::messages(model);
    let dir = tempfile::tempdir().unwrap();
    let count = fakes().len();
    for (label, masked) in [("masked", true), ("raw", false)] {
        let log = dir.path().join(format!("{label}.jsonl"));
        let (collector, store) = (phoenix.url(), redis.url());
        let mut options = vec!["--otlp", &collector, "--store", &store, "--serve-reasons"];
        if !masked {
            options.push("--no-mask");
        }
        let gateway = Gateway::start_logging_to(&upstream.url(), &log, &options);
        for n in 0..count {
            let body = json!({"model": "m", "max_tokens": 10, "stream": n % 2 == 0,
                "tools": [bash_tool()], "messages": [{"role": "user", "content": id(label, n)}]});
            let reply = gateway.post("/v1/messages", body.to_string().as_bytes());
            assert_eq!(reply.status, 200);
        }

        // The person's own log keeps what the model wrote, masked or not elsewhere.
        let logged = read_reasons_log(&log);
        assert_eq!(logged.len(), count);
        holds(
            "the reasons log",
            &serde_json::to_string(&logged).unwrap(),
            false,
        );

        // Phoenix: every span of this gateway, read back whole.
        let spans = eventually("every span in Phoenix", || {
            let spans: Vec<Value> = phoenix
                .spans()
                .into_iter()
                .filter(|span| {
                    span["attributes"]["gen_ai.tool.call.id"]
                        .as_str()
                        .is_some_and(|call| call.starts_with(&format!("toolu_{label}_")))
                })
                .collect();
            (spans.len() == count).then_some(spans)
        });
        holds("Phoenix", &serde_json::to_string(&spans).unwrap(), masked);

        // Redis: every record kept, as stored.
        let pattern = format!("reasons:call:toolu_{label}_*");
        let stored = eventually("every record in Redis", || {
            let stored = redis.values(&pattern);
            (stored.len() == count).then_some(stored)
        });
        holds("Redis", &stored.join("\n"), masked);

        // The reasons route.
        let answers: Vec<String> = (0..count)
            .map(|n| {
                let path = format!("/reasons/v1/calls/{}", id(label, n));
                let reply = request(gateway.address, "GET", &path, &[], b"");
                assert_eq!(reply.status, 200);
                String::from_utf8(reply.body).unwrap()
            })
            .collect();
        holds("the reasons route", &answers.join("\n"), masked);

        // The report page of the same calls, the reasons joined from the gateway's log.
        let no_mask: &[&str] = if masked { &[] } else { &["--no-mask"] };
        let page = report_page(dir.path(), label, &log, no_mask);
        holds("the report page", &page, masked);
        let shown = dom(&format!(
            "file://{}",
            dir.path().join(format!("{label}.html")).display()
        ));
        holds("the page in Chromium", &shown, masked);
    }
}
