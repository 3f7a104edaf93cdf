//! `reasons report` through the real binary: the page's structure on every sample (golden
//! files), every call `extract` finds on it with its arguments and reason, charts that carry
//! the counts of `stats`, and hostile logs that stay text.
//!
//! Tests that open the page in a real browser are in `browser.rs`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::util::report_page::{between, big_log, hostile_log, packed_runs, shown_calls, HOSTILE};
use crate::util::{arg, claude_call, corpora, log_file, records, root, run};

/// The page `reasons report ARGS` writes, asserting a clean run.
#[track_caller]
pub fn page(args: &[&str]) -> String {
    let run = run(&[&["report"][..], args].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

/// Text as the page escapes it.
pub fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Asserts that each record `extract --arguments` gives for `paths` is on the page once, with
/// its tool, status, call id, reason and every argument's name.
#[track_caller]
fn every_extracted_call_is_shown(paths: &[&str]) {
    let extracted = run(&[&["extract", "--format", "jsonl", "--arguments"][..], paths].concat());
    assert_eq!(extracted.code, 0, "{}", extracted.stderr);
    let records = records(&extracted.stdout);
    let page = page(paths);
    let mut shown = shown_calls(&page);
    assert_eq!(shown.len(), records.len(), "calls on the page");
    for record in &records {
        let location = escaped(&format!(
            "{}:{}",
            record["source"].as_str().unwrap(),
            record["line"]
        ));
        let tool = escaped(record["tool"].as_str().unwrap());
        let status = record["status"].as_str().unwrap();
        let found = shown.iter().position(|call| {
            call.location == location
                && call.tool == tool
                && call.status == status
                && record["call_id"]
                    .as_str()
                    .is_none_or(|id| call.markup.contains(&format!(" · id {}", escaped(id))))
        });
        let Some(at) = found else {
            panic!("not on the page: {record}");
        };
        let call = shown.remove(at);
        if status == "present" || status == "declared" {
            if let Some(reason) = record["reason"].as_str() {
                let quoted = format!("<blockquote>{}</blockquote>", escaped(reason.trim()));
                assert!(call.markup.contains(&quoted), "{record}\n{}", call.markup);
            }
        }
        let arguments = match &record["arguments"] {
            Value::String(text) => serde_json::from_str(text).unwrap_or(Value::Null),
            other => other.clone(),
        };
        if let Value::Object(map) = arguments {
            for key in map.keys() {
                let key = escaped(&serde_json::to_string(key).unwrap());
                assert!(
                    call.markup
                        .contains(&format!("<span class=\"k\">{key}</span>")),
                    "argument {key} of {record}"
                );
            }
        }
    }
}

/// The counts each chart element carries, by key: `class` is `bar` (per tool) or `day`.
fn chart_counts(page: &str, class: &str) -> BTreeMap<String, BTreeMap<String, u64>> {
    page.split(&format!("<g class=\"{class}\" "))
        .skip(1)
        .map(|chunk| {
            let tag = &chunk[..chunk.find('>').unwrap()];
            let key = between(tag, "data-key=\"", "\"").unwrap().to_owned();
            let counts = tag
                .split(" data-")
                .filter_map(|attribute| {
                    let (name, value) = attribute.split_once("=\"")?;
                    Some((name.to_owned(), value.trim_end_matches('"').parse().ok()?))
                })
                .collect();
            (key, counts)
        })
        .collect()
}

/// Asserts that the charts of the page for `paths` carry the counts of `stats`, per tool (the
/// busiest 20) and per day.
#[track_caller]
fn charts_match_stats(paths: &[&str]) {
    let page = page(paths);
    for (by, class, most) in [("tool", "bar", 20), ("day", "day", usize::MAX)] {
        let stats = run(&[&["stats", "--format", "json", "--by", by][..], paths].concat());
        assert_eq!(stats.code, 0, "{}", stats.stderr);
        let stats: Value = serde_json::from_str(&stats.stdout).unwrap();
        let mut groups: Vec<&Value> = stats["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|group| group["key"] != "(none)")
            .collect();
        groups.truncate(most);
        let drawn = chart_counts(&page, class);
        if by == "day" && groups.len() < 2 {
            assert!(drawn.is_empty(), "a day chart of one day");
            continue;
        }
        assert_eq!(drawn.len(), groups.len(), "{by} groups drawn");
        for group in groups {
            let key = escaped(group["key"].as_str().unwrap());
            let counts = &drawn[&key];
            for count in [
                "calls", "present", "blank", "invalid", "missing", "declared", "freeform",
            ] {
                assert_eq!(
                    counts[count],
                    group[count].as_u64().unwrap(),
                    "{by} {key}: {count}"
                );
            }
        }
        let coverage = match &stats["totals"]["coverage"] {
            Value::Null => "–".to_owned(),
            coverage => format!("{:.1}%", coverage.as_f64().unwrap()),
        };
        assert!(
            page.contains(&format!(
                "<div class=\"coverage\"><dt>coverage</dt><dd>{coverage}</dd>"
            )),
            "total coverage {coverage}"
        );
    }
}

fn samples() -> Vec<String> {
    let mut samples: Vec<String> = std::fs::read_dir(root().join("samples"))
        .expect("samples/")
        .map(|entry| format!("samples/{}", entry.unwrap().file_name().to_str().unwrap()))
        .collect();
    samples.sort();
    samples
}

/// A page with the parts that are the same on every page (style, script, the policy that
/// hashes them, the version) left out: what a golden file compares.
fn structure(page: &str) -> String {
    let mut structure = page.replace(env!("CARGO_PKG_VERSION"), "VERSION");
    for (start, end) in [
        ("<style>", "</style>"),
        ("<script>", "</script>"),
        ("http-equiv=\"Content-Security-Policy\" content=\"", "\""),
    ] {
        if let Some(from) = structure.find(start) {
            let from = from + start.len();
            let to = structure[from..].find(end).unwrap() + from;
            structure.replace_range(from..to, "…");
        }
    }
    structure
}

#[test]
fn every_sample_page_has_its_golden_structure() {
    let bless = std::env::var_os("REASONS_BLESS").is_some();
    let mut differ = Vec::new();
    for sample in samples() {
        let got = structure(&page(&[&sample]));
        let name = Path::new(&sample).file_name().unwrap().to_str().unwrap();
        let golden = root()
            .join("tests/golden")
            .join(format!("{name}.report.html"));
        if bless {
            std::fs::write(&golden, &got).unwrap();
        } else if std::fs::read_to_string(&golden).ok().as_deref() != Some(got.as_str()) {
            differ.push(format!(
                "{sample}: the page differs from {}",
                golden.display()
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{}\nREASONS_BLESS=1 cargo test --test it report rewrites them",
        differ.join("\n")
    );
}

#[test]
fn every_call_extract_finds_in_the_samples_is_on_the_page_with_arguments_and_reason() {
    for sample in samples() {
        every_extracted_call_is_shown(&[&sample]);
    }
    every_extracted_call_is_shown(&["samples"]);
}

#[test]
fn the_charts_of_the_samples_carry_the_counts_of_stats() {
    charts_match_stats(&["samples"]);
    charts_match_stats(&["samples/claude-code.jsonl"]);
}

#[test]
#[ignore = "reads ../shared/corpus, which is not part of the crate: run with --ignored (.ci/run does)"]
fn every_call_of_the_real_corpus_is_on_the_page_and_its_charts_match_stats() {
    for corpus in corpora() {
        every_extracted_call_is_shown(&[arg(&corpus)]);
        charts_match_stats(&[arg(&corpus)]);
    }
}

#[test]
fn the_page_is_self_contained_under_a_policy_that_allows_only_its_own_parts() {
    let page = page(&["samples"]);
    let policy = between(
        &page,
        "http-equiv=\"Content-Security-Policy\" content=\"",
        "\"",
    )
    .unwrap();
    assert!(policy.starts_with("default-src 'none'; "), "{policy}");
    assert_eq!(policy.matches("'sha256-").count(), 2, "{policy}");
    assert!(!policy.contains("unsafe"), "{policy}");
    // The policy comes before anything it governs.
    assert!(page.find("Content-Security-Policy").unwrap() < page.find("<style>").unwrap());
    for fetches in ["src=", "href=\"http", "href=\"//", "url(", "@import"] {
        assert!(
            !page.contains(fetches),
            "the page fetches something: {fetches}"
        );
    }
    assert_eq!(page.matches("<script").count(), 1);
    assert!(
        page.contains("</ol></details>\n</main>\n<footer>"),
        "the sessions close"
    );
    assert!(
        !page.contains("&lt;/"),
        "markup of the page's own shown as text"
    );
    // Before its script runs (or with scripts off), every call is shown, and only the filters,
    // which need the script, are hidden. (Chromium's --dump-dom needs scripts itself.)
    assert_eq!(page.matches(" hidden").count(), 1);
    assert!(page.contains("<form id=\"filters\" hidden>"));
    assert!(
        !page.contains("<details class=\"session\">"),
        "every session is open"
    );
    // Every call has an anchor, and a link to it.
    let calls = shown_calls(&page);
    for (at, call) in calls.iter().enumerate() {
        let id = format!("call-{}", at + 1);
        assert!(
            call.markup.contains(&format!("id=\"{id}\"")),
            "{}",
            call.markup
        );
        assert!(
            call.markup.contains(&format!("href=\"#{id}\"")),
            "{}",
            call.markup
        );
    }
}

#[test]
fn what_a_call_touched_is_shown_as_a_reviewer_reads_it() {
    let lines = [
        claude_call(
            "s",
            "t1",
            "Bash",
            json!({"command": "cargo test -q", "reason": "Run the tests"}),
        ),
        claude_call(
            "s",
            "t2",
            "Edit",
            json!({"file_path": "src/a.rs", "old_string": "let x = 1;\nkeep", "new_string": "let x = 2;\nkeep"}),
        ),
        claude_call(
            "s",
            "t3",
            "Grep",
            json!({"pattern": "fn total", "path": "src"}),
        ),
        claude_call("s", "t4", "Read", json!({"file_path": "/w/README.md"})),
    ];
    let (_dir, path) = log_file("s.jsonl", &lines);
    let calls = shown_calls(&page(&[arg(&path)]));
    assert!(
        calls[0]
            .markup
            .contains("<pre class=\"cmd\">cargo test -q</pre>"),
        "{}",
        calls[0].markup
    );
    assert!(calls[0]
        .markup
        .contains("<span class=\"claim\">the model's claim</span>"));
    assert!(
        calls[1].markup.contains(
            "<pre class=\"diff\"><span class=\"del\">-let x = 1;\n</span><span class=\"add\">+let x = 2;\n</span><span class=\"ctx\"> keep\n</span></pre>"
        ),
        "{}",
        calls[1].markup
    );
    assert!(
        calls[2]
            .markup
            .contains("<code class=\"pattern\">fn total</code> in <code class=\"path\">src</code>"),
        "{}",
        calls[2].markup
    );
    assert!(
        calls[3]
            .markup
            .contains("<code class=\"path\">/w/README.md</code>"),
        "{}",
        calls[3].markup
    );
    for call in &calls[1..] {
        assert_eq!(call.status, "missing");
        assert!(call.markup.contains("no reason given"), "{}", call.markup);
    }
}

#[test]
fn a_reason_joined_from_a_reasons_log_is_shown_and_says_where_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("session.jsonl");
    let lines: Vec<String> = ["t1", "t2"]
        .iter()
        .map(|id| claude_call("s", id, "Bash", json!({"command": "ls"})))
        .collect();
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    let log = dir.path().join("reasons.jsonl");
    let logged = json!({"time": "2026-12-01T08:00:00.000Z", "via": "gateway", "tool": "Bash",
        "call_id": "t1", "reason": "List the project"});
    std::fs::write(&log, format!("{logged}\n")).unwrap();
    let args = ["--reasons-log", arg(&log), arg(&transcript)];
    let calls = shown_calls(&page(&args));
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].status, "present");
    assert!(
        calls[0].markup.contains("from the reasons log"),
        "{}",
        calls[0].markup
    );
    assert!(calls[0]
        .markup
        .contains("<blockquote>List the project</blockquote>"));
    assert_eq!(calls[1].status, "missing");
    assert!(!calls[1].markup.contains("from the reasons log"));
    charts_match_stats(&args);
}

#[test]
fn a_path_that_names_no_log_is_reported_and_the_page_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page.html");
    let run = run(&[
        "report",
        "samples/claude-code.jsonl",
        "no-such.jsonl",
        "-o",
        arg(&out),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("reasons: no-such.jsonl: no such file or directory"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
    let page = std::fs::read_to_string(&out).unwrap();
    assert_eq!(shown_calls(&page).len(), 4);
    assert!(page.ends_with("</body></html>\n"));
}

#[test]
fn an_output_file_that_is_a_log_read_is_refused_and_left_as_it_was() {
    let line = claude_call("s", "t1", "Bash", json!({"command": "ls"}));
    let (dir, path) = log_file("s.jsonl", std::slice::from_ref(&line));
    let run = run(&["report", arg(dir.path()), "-o", arg(&path)]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("is a log this page reads"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), line + "\n");
}

#[test]
fn no_calls_make_a_page_that_says_so() {
    let (_dir, path) = log_file("empty.jsonl", &["{}".to_owned()]);
    let page = page(&[arg(&path)]);
    assert!(page.contains("No tool calls were found in the logs read."));
    assert!(shown_calls(&page).is_empty());
}

#[test]
fn markup_in_every_field_of_a_hostile_log_is_shown_as_text() {
    let (_dir, path, calls) = hostile_log();
    let page = page(&[arg(&path)]);
    assert_eq!(shown_calls(&page).len(), calls);
    assert_eq!(
        page.matches("<script").count(),
        1,
        "one script: the page's own"
    );
    assert_eq!(page.matches("</script>").count(), 1);
    assert_eq!(page.matches("<style").count(), 1);
    for injected in ["<img", "<b>", "<svg onload", "<!--", "<![CDATA["] {
        assert!(
            !page.contains(injected),
            "{injected} got onto the page as markup"
        );
    }
    for text in HOSTILE {
        assert!(page.contains(&escaped(text)), "{text} is not shown as text");
    }
    // The file name, the session id and the tool name are shown as text too.
    assert!(page.contains("&quot;&gt;&lt;img src=x onerror=alert(9)&gt;.jsonl:1"));
    assert!(page.contains("session <code>&lt;script&gt;alert(1)&lt;/script&gt;</code>"));
}

#[test]
fn invalid_utf8_and_nesting_past_any_stack_are_skipped_lines_the_page_counts() {
    let good = claude_call(
        "s",
        "ok",
        "Bash",
        json!({"command": "ls", "reason": "look"}),
    );
    let nesting = "[".repeat(100_000) + &"]".repeat(100_000);
    let deep = format!(
        r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"deep","name":"Bash","input":{nesting}}}]}}}}"#
    );
    // Nested as deep as the readers take: drawn to a depth, then on one line.
    let mut nested = json!("bottom");
    for _ in 0..100 {
        nested = json!({ "down": nested });
    }
    let deep_but_read = claude_call("s", "nested", "Tool", json!({ "tree": nested }));
    // The reason of a call, with a byte that is no UTF-8 in it.
    let invalid_utf8: Vec<u8> = (good.replace("look", "lo#ok").bytes())
        .map(|byte| if byte == b'#' { 0xff } else { byte })
        .collect();
    let mut bytes = Vec::new();
    for line in [
        good.as_bytes(),
        deep.as_bytes(),
        &invalid_utf8,
        deep_but_read.as_bytes(),
    ] {
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
    }
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::ffi::OsStrExt;
    let path = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"bad-\xff-name.jsonl"));
    std::fs::write(&path, bytes).unwrap();
    // The file's name is not UTF-8: it is found by walking its folder.
    let run = run(&["report", arg(dir.path())]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(":2: invalid JSON: recursion limit exceeded"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(":3: "), "{}", run.stderr);
    let calls = shown_calls(&run.stdout);
    assert_eq!(calls.len(), 2);
    assert!(
        calls[0].location.starts_with(&escaped(
            &dir.path()
                .join("bad-\u{fffd}-name.jsonl")
                .display()
                .to_string()
        )),
        "{}",
        calls[0].location
    );
    assert!(run
        .stdout
        .contains("<dt>malformed lines skipped</dt><dd>2</dd>"));
    assert!(
        calls[1].markup.contains("<details class=\"fold\">"),
        "{}",
        calls[1].markup
    );
}

#[test]
#[ignore = "large: run by .ci/run in a release build"]
fn a_50_mb_argument_is_shown_by_its_opening_and_says_how_much_is_left_out() {
    let huge = "x".repeat(50 << 20);
    let line = claude_call(
        "s",
        "big",
        "Bash",
        json!({"command": huge, "reason": "a big one"}),
    );
    let (_dir, path) = log_file("big.jsonl", &[line]);
    let page = page(&[arg(&path)]);
    assert!(page.len() < 1 << 20, "a page of {} bytes", page.len());
    assert!(page.contains(" more characters, not shown here"));
    assert!(page.contains("52,428,800 characters"));
    assert!(page.contains("<blockquote>a big one</blockquote>"));
}

/// From this many calls on, a page holds its calls packed (`report::packed::FROM_CALLS`).
const PACKED_FROM: usize = 5_000;

/// The statuses in the order of the page's status filter, as packed codes count them.
const STATUSES: [&str; 6] = [
    "present", "blank", "invalid", "missing", "declared", "freeform",
];

/// The tools of a page's tool filter, in order: the tool of a packed call's code.
fn filter_tools(page: &str) -> Vec<String> {
    let select = between(page, "<select name=\"tool\">", "</select>").unwrap();
    select
        .split("<option value=\"")
        .skip(2)
        .map(|option| option[..option.find('"').unwrap()].to_owned())
        .collect()
}

#[test]
fn a_page_of_many_calls_holds_every_call_packed_and_each_run_inflates_to_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("many.jsonl");
    big_log(&log, PACKED_FROM + 450);
    let page = page(&[arg(&log)]);
    assert!(shown_calls(&page).is_empty(), "no call drawn in the markup");
    assert!(
        page.contains("<noscript>"),
        "says why nothing shows with scripts off"
    );
    let runs = packed_runs(&page);
    let tools = filter_tools(&page);
    let mut number = 1;
    for run in &runs {
        assert_eq!(run.first, number);
        let calls = shown_calls(&run.rows);
        assert_eq!(calls.len(), run.codes.len());
        for (call, code) in calls.iter().zip(&run.codes) {
            assert!(
                call.markup.contains(&format!("id=\"call-{number}\"")),
                "{}",
                call.markup
            );
            assert!(call.markup.contains(&format!("href=\"#call-{number}\"")));
            assert_eq!(call.status, STATUSES[code % STATUSES.len()]);
            assert_eq!(call.tool, tools[code / STATUSES.len()]);
            number += 1;
        }
    }
    assert_eq!(number - 1, PACKED_FROM + 450, "every call, once, in order");
    // Runs never straddle sessions: each session's list holds its own.
    assert_eq!(
        page.matches("<details class=\"session\"").count(),
        (PACKED_FROM + 450).div_ceil(1000)
    );
    assert!(runs.len() > (PACKED_FROM + 450) / 1000);
}

#[test]
fn a_page_of_fewer_calls_draws_every_one_and_packs_none() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fewer.jsonl");
    big_log(&log, PACKED_FROM - 1);
    let page = page(&[arg(&log)]);
    assert_eq!(shown_calls(&page).len(), PACKED_FROM - 1);
    assert!(!page.contains("class=\"packed\"") && !page.contains("<noscript>"));
}

#[test]
fn markup_in_every_field_of_a_hostile_log_stays_text_in_packed_rows() {
    let (_dir, path, calls) = hostile_log();
    let text = std::fs::read_to_string(&path).unwrap();
    let copies = PACKED_FROM.div_ceil(calls);
    // Copies of the calls, each under ids of its own: a call seen twice is read once.
    let mut lines = Vec::new();
    for copy in 0..copies {
        for line in text.lines() {
            let mut line: Value = serde_json::from_str(line).unwrap();
            let id = &mut line["message"]["content"][0]["id"];
            *id = json!(format!("{}{copy}", id.as_str().unwrap()));
            lines.push(line.to_string());
        }
    }
    let many = path.with_file_name("many.jsonl");
    std::fs::write(&many, lines.join("\n") + "\n").unwrap();
    let page = page(&[arg(&many)]);
    // The page's own script, and one block of packed rows a run: nothing else a browser runs
    // or parses as markup.
    let runs = packed_runs(&page);
    assert_eq!(
        runs.iter().map(|run| run.codes.len()).sum::<usize>(),
        calls * copies
    );
    assert_eq!(page.matches("<script").count(), 1 + runs.len());
    assert_eq!(page.matches("<script>").count(), 1);
    assert_eq!(page.matches("</script>").count(), 1 + runs.len());
    let rows: String = runs.iter().map(|run| run.rows.as_str()).collect();
    let sessions = between(&page, "<main", "</main>")
        .unwrap()
        .replace("<script type=\"application/x-reasons-rows\">", "");
    for markup in [&sessions, &rows] {
        for injected in [
            "<img",
            "<b>",
            "<svg onload",
            "<!--",
            "<![CDATA[",
            "<script",
            "<style",
        ] {
            assert!(
                !markup.contains(injected),
                "{injected} got onto the page as markup"
            );
        }
    }
    for text in HOSTILE {
        assert!(rows.contains(&escaped(text)), "{text} is not shown as text");
    }
    assert_eq!(shown_calls(&rows).len(), calls * copies);
}
