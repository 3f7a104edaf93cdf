//! The page `reasons report` writes, opened in a real browser: Debian's `chromium`, headless.
//! What the page shows after its script ran is read back with `--dump-dom`; the script marks the
//! root element with `data-ready` (calls found), `data-shown` (calls left by the filters) and
//! `data-problems` (any error or policy violation it saw), and Chromium's console log is read
//! from its stderr.
//!
//! These need chromium, so a plain `cargo test` leaves them out; `.ci/run` installs chromium and
//! runs them, where a missing browser fails them loudly.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::json;

use crate::report::{hostile_log, shown_calls, HOSTILE};
use crate::util::{arg, claude_call, root, run};

const CHROMIUM: &str = "/usr/bin/chromium";

/// What the browser wrote.
struct Opened {
    stdout: Vec<u8>,
    /// Console messages of the page: any at all is a failure, the page logs nothing.
    console: Vec<String>,
}

/// Opens `url` in headless Chromium with `extra` arguments (a `--dump-dom` or `--screenshot`).
fn chromium(url: &str, extra: &[&str]) -> Opened {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: `apt-get install -y chromium` (.ci/run installs it)"
    );
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new("timeout")
        .arg("600")
        .arg(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "chromium failed: {stderr}");
    Opened {
        stdout: output.stdout,
        console: stderr
            .lines()
            .filter(|line| line.contains(":CONSOLE"))
            .map(str::to_owned)
            .collect(),
    }
}

/// The DOM of `url` after its script ran, asserting that the page logged nothing and its
/// script saw no error.
#[track_caller]
fn dom(url: &str) -> String {
    let opened = chromium(url, &["--dump-dom"]);
    assert!(opened.console.is_empty(), "console: {:#?}", opened.console);
    let dom = String::from_utf8(opened.stdout).expect("the DOM is UTF-8");
    let root_tag = &dom[dom.find("<html").expect("an html element")..];
    let root_tag = &root_tag[..root_tag.find('>').unwrap()];
    assert!(!root_tag.contains("data-problems"), "{root_tag}");
    dom
}

/// The value of one attribute of the root element.
fn root_attribute(dom: &str, name: &str) -> Option<String> {
    let tag = &dom[dom.find("<html").unwrap()..];
    let tag = &tag[..tag.find('>').unwrap()];
    let from = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[from..from + tag[from..].find('"')?].to_owned())
}

/// Writes the page for `paths` into `dir`, returning its file.
fn write_page(dir: &Path, paths: &[&str]) -> PathBuf {
    let out = dir.join("page.html");
    let run = run(&[&["report", "-o", arg(&out)][..], paths].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    out
}

fn url(page: &Path, query: &str) -> String {
    format!("file://{}{query}", page.display())
}

#[test]
#[ignore = "needs chromium: .ci/run installs it"]
fn a_sample_page_runs_its_script_without_a_console_message_and_shows_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path(), &["samples"]);
    let calls = shown_calls(&std::fs::read_to_string(&page).unwrap()).len();
    let dom = dom(&url(&page, ""));
    assert_eq!(root_attribute(&dom, "data-ready"), Some(calls.to_string()));
    assert_eq!(root_attribute(&dom, "data-shown"), Some(calls.to_string()));
    assert!(
        dom.contains("<form id=\"filters\">"),
        "the filters are shown"
    );
    assert_eq!(dom.matches("<li class=\"call ").count(), calls);
    assert_eq!(dom.matches(" hidden=\"\"").count(), 0);
}

#[test]
#[ignore = "needs chromium: .ci/run installs it"]
fn filters_read_from_the_address_leave_only_the_calls_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path(), &["samples"]);
    let html = std::fs::read_to_string(&page).unwrap();
    let calls = shown_calls(&html);
    let expect =
        |keep: &dyn Fn(&crate::report::Shown) -> bool| calls.iter().filter(|c| keep(c)).count();
    let cases: [(&str, usize); 4] = [
        ("?status=missing", expect(&|c| c.status == "missing")),
        (
            "?status=present,blank&tool=read_file",
            expect(&|c| (c.status == "present" || c.status == "blank") && c.tool == "read_file"),
        ),
        ("?q=CHANGELOG", expect(&|c| c.markup.contains("CHANGELOG"))),
        ("?tool=no-such-tool", calls.len()),
    ];
    for (query, want) in cases {
        assert!(want > 0, "{query} keeps nothing: a test that cannot fail");
        let dom = dom(&url(&page, query));
        assert_eq!(
            root_attribute(&dom, "data-shown"),
            Some(want.to_string()),
            "{query}"
        );
        let shown = dom
            .split("<li class=\"call ")
            .skip(1)
            .filter(|call| !call[..call.find('>').unwrap()].contains(" hidden=\"\""))
            .count();
        assert_eq!(shown, want, "{query}: calls not hidden");
    }
    // Hidden calls are still on the page: filters hide, they never take anything away.
    let dom = dom(&url(&page, "?status=missing"));
    assert_eq!(dom.matches("<li class=\"call ").count(), calls.len());
}

#[test]
#[ignore = "needs chromium: .ci/run installs it"]
fn a_hostile_log_adds_no_element_and_runs_no_script_in_the_browser() {
    let (_logs, log, calls) = hostile_log();
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path(), &[arg(&log)]);
    let dom = dom(&url(&page, ""));
    assert_eq!(root_attribute(&dom, "data-ready"), Some(calls.to_string()));
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "one script: the page's own"
    );
    assert_eq!(dom.matches("<style").count(), 1);
    for injected in ["<img", "<b>", "<svg onload", "<!--"] {
        assert!(!dom.contains(injected), "{injected} became an element");
    }
    // The filter by a hostile tool name finds that tool's calls, as text.
    let tool: String = HOSTILE[0]
        .bytes()
        .map(|byte| format!("%{byte:02X}"))
        .collect();
    let dom = crate::browser::dom(&url(&page, &format!("?tool={tool}")));
    assert_eq!(root_attribute(&dom, "data-shown"), Some("3".to_owned()));
}

#[test]
#[ignore = "needs chromium: .ci/run installs it"]
fn the_page_of_the_real_corpus_opens_with_every_call_and_no_console_message() {
    let corpus = crate::report::corpus();
    let extracted = run(&["extract", "--format", "jsonl", &corpus]);
    assert_eq!(extracted.code, 0, "{}", extracted.stderr);
    let calls = extracted.stdout.lines().count();
    assert!(calls > 0);
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path(), &[&corpus]);
    let dom = dom(&url(&page, ""));
    assert_eq!(root_attribute(&dom, "data-ready"), Some(calls.to_string()));
    assert_eq!(dom.matches("<li class=\"call ").count(), calls);
}

#[test]
#[ignore = "needs chromium: .ci/run installs it"]
fn a_screenshot_of_a_sample_page() {
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(
        dir.path(),
        &[
            "samples/claude-code.jsonl",
            "samples/codex.jsonl",
            "samples/anthropic.json",
        ],
    );
    let shot = root().join("target/report-samples.png");
    let opened = chromium(
        &url(&page, ""),
        &[
            "--window-size=1200,1500",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(opened.console.is_empty(), "console: {:#?}", opened.console);
    let png = std::fs::read(&shot).expect("a screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        png.len() > 20_000,
        "a screenshot of {} bytes is nearly blank",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
}

/// A Claude-Code-style log of `calls` calls in sessions of 1,000, over three days, with the
/// tools and arguments an agent uses and about a third of the reasons missing.
pub fn big_log(path: &Path, calls: usize) {
    let mut text = String::new();
    for at in 0..calls {
        let session = format!("session-{:04}", at / 1000);
        let id = format!("toolu_{at:08}");
        let reason = (at % 3 != 0).then(|| format!("Step {at}: see what the change needs next."));
        let (tool, mut input) = match at % 5 {
            0 => (
                "Bash",
                json!({"command": format!("cargo test -q --test it case_{at}"), "description": "Run one test"}),
            ),
            1 => (
                "Read",
                json!({"file_path": format!("/home/dev/project/src/module_{}.rs", at % 97)}),
            ),
            2 => (
                "Edit",
                json!({"file_path": format!("/home/dev/project/src/module_{}.rs", at % 97), "old_string": format!("let limit = {at};"), "new_string": format!("let limit = {};", at + 1)}),
            ),
            3 => (
                "Grep",
                json!({"pattern": format!("fn case_{at}"), "path": "src"}),
            ),
            _ => (
                "TodoWrite",
                json!({"todos": [{"content": "Check the limits", "status": "in_progress"}]}),
            ),
        };
        if let Some(reason) = reason {
            input["reason"] = json!(reason);
        }
        let mut line: serde_json::Value =
            serde_json::from_str(&claude_call(&session, &id, tool, input)).unwrap();
        line["timestamp"] = json!(format!(
            "2026-11-{:02}T09:{:02}:{:02}.000Z",
            28 + at * 3 / calls,
            (at / 60) % 60,
            at % 60
        ));
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

#[test]
#[ignore = "needs chromium: .ci/run installs it"]
fn a_page_of_100000_calls_opens_and_renders_in_the_browser() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.jsonl");
    big_log(&log, 100_000);
    let started = Instant::now();
    let page = write_page(dir.path(), &[arg(&log)]);
    let built = started.elapsed();
    let size = std::fs::metadata(&page).unwrap().len();
    eprintln!(
        "100,000 calls: a page of {:.1} MB, {} bytes a call, built in {built:.2?}",
        size as f64 / 1e6,
        size / 100_000
    );
    let dom = dom(&url(&page, "?status=missing&tool=Bash"));
    assert_eq!(
        root_attribute(&dom, "data-ready").as_deref(),
        Some("100000")
    );
    // Every 15th call is a Bash call without a reason.
    assert_eq!(root_attribute(&dom, "data-shown").as_deref(), Some("6667"));
    let shot = dir.path().join("big.png");
    chromium(
        &url(&page, ""),
        &[
            "--window-size=1200,1500",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(std::fs::metadata(&shot).unwrap().len() > 20_000);
}
