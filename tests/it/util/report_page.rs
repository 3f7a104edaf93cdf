//! Reading the page `reasons report` writes: the calls it shows, and a log built to break it.
//! The report's tests read the page's text; the browser's tests open the same page in chromium.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::real_parts::chromium;

use crate::util::claude_call;

/// One call as the page shows it: the markup of its `<li>`, and what its attributes say.
#[derive(Debug)]
pub struct Shown {
    pub markup: String,
    pub status: String,
    pub tool: String,
    pub location: String,
}

/// What `text` holds between the first `start` and the next `end`.
pub fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let to = text[from..].find(end)? + from;
    Some(&text[from..to])
}

/// Every call on a page, in page order.
pub fn shown_calls(page: &str) -> Vec<Shown> {
    page.split("<li class=\"call ")
        .skip(1)
        .map(|chunk| {
            let markup = chunk[..chunk.find("</li>").expect("each call is closed")].to_owned();
            Shown {
                status: between(&markup, "data-status=\"", "\"").unwrap().to_owned(),
                tool: between(&markup, "data-tool=\"", "\"").unwrap().to_owned(),
                location: between(&markup, "<span class=\"loc\">", "</span>")
                    .unwrap()
                    .to_owned(),
                markup,
            }
        })
        .collect()
}

/// Markup and script in every field a log controls.
pub const HOSTILE: [&str; 5] = [
    "<script>alert(1)</script>",
    "\"><img src=x onerror=alert(2)>",
    "</summary></details></ol><b>bold</b><!--",
    "&lt;entity&gt; ]]> <![CDATA[ x",
    "<svg onload=alert(3)><style>*{display:none}</style>",
];

/// A log in a hostile file name whose every field holds markup; returns its folder, the path
/// and the number of calls in it.
pub fn hostile_log() -> (tempfile::TempDir, std::path::PathBuf, usize) {
    let mut lines = Vec::new();
    for (at, text) in HOSTILE.iter().enumerate() {
        let mut input = serde_json::Map::new();
        input.insert("command".into(), json!(text));
        input.insert((*text).to_owned(), json!({ *text: [text, at] }));
        input.insert("reason".into(), json!(text));
        let mut line: Value =
            serde_json::from_str(&claude_call(text, text, text, Value::Object(input))).unwrap();
        line["timestamp"] = json!(text);
        lines.push(line.to_string());
        // The same with the reason missing, blank and not a string, and as an edit.
        let edit = json!({"file_path": text, "old_string": text, "new_string": format!("{text}\n{text}"), "reason": [text]});
        lines.push(claude_call(text, &format!("{text}e"), text, edit));
        lines.push(claude_call(
            text,
            &format!("{text}b"),
            text,
            json!({"path": text, "reason": " "}),
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("\"><img src=x onerror=alert(9)>.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let calls = lines.len();
    (dir, path, calls)
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

/// One packed run of a page of many calls: the code of each call's status and tool, and its
/// rows' markup, inflated.
pub struct PackedRun {
    pub first: usize,
    pub codes: Vec<usize>,
    pub rows: String,
}

/// Every packed run of a page, in page order.
pub fn packed_runs(page: &str) -> Vec<PackedRun> {
    page.split("<li class=\"packed\" ")
        .skip(1)
        .map(|run| {
            let first = between(run, "data-first=\"", "\"")
                .unwrap()
                .parse()
                .unwrap();
            let codes = between(run, "data-calls=\"", "\"")
                .unwrap()
                .split(',')
                .map(|code| code.parse().unwrap())
                .collect();
            let packed = between(
                run,
                "<script type=\"application/x-reasons-rows\">",
                "</script>",
            )
            .expect("a run's rows");
            let deflated = from_base64(packed);
            let rows = miniz_oxide::inflate::decompress_to_vec(&deflated).expect("deflated rows");
            PackedRun {
                first,
                codes,
                rows: String::from_utf8(rows).expect("UTF-8 rows"),
            }
        })
        .collect()
}

fn from_base64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bytes = Vec::with_capacity(text.len() / 4 * 3);
    let (mut word, mut bits) = (0u32, 0);
    for byte in text.bytes().filter(|byte| *byte != b'=') {
        let value = ALPHABET
            .iter()
            .position(|letter| *letter == byte)
            .unwrap_or_else(|| panic!("{:?} is not base64", byte as char));
        word = word << 6 | value as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((word >> bits) as u8);
        }
    }
    bytes
}

/// What the browser wrote.
pub struct Opened {
    pub stdout: Vec<u8>,
    /// Console messages of the page: any at all is a failure, the page logs nothing.
    pub console: Vec<String>,
}

/// Opens `url` in headless Chromium with `extra` arguments (a `--dump-dom` or `--screenshot`).
pub fn open_headless(url: &str, extra: &[&str]) -> Opened {
    let chromium = chromium();
    let profile = tempfile::tempdir().unwrap();
    let output = crate::util::environment::clear(&mut Command::new("timeout"))
        .arg("600")
        .arg(chromium)
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
pub fn dom(url: &str) -> String {
    let opened = open_headless(url, &["--dump-dom"]);
    assert!(opened.console.is_empty(), "console: {:#?}", opened.console);
    let dom = String::from_utf8(opened.stdout).expect("the DOM is UTF-8");
    let root_tag = &dom[dom.find("<html").expect("an html element")..];
    let root_tag = &root_tag[..root_tag.find('>').unwrap()];
    assert!(!root_tag.contains("data-problems"), "{root_tag}");
    dom
}
