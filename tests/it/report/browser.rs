//! The page `reasons report` writes, opened in a real browser: Debian's `chromium`, headless.
//! What the page shows after its script ran is read back with `--dump-dom`; the script marks the
//! root element with `data-ready` (calls found), `data-shown` (calls left by the filters) and
//! `data-problems` (any error or policy violation it saw), and Chromium's console log is read
//! from its stderr.
//!
//! What a person *sees* is measured too (`mod seen`): playwright drives the same chromium and
//! reads each call's box and computed style after the script ran, at a desktop's width and a
//! phone's — an element can lack nothing in the DOM and still be on screen.
//!
//! These need chromium (and playwright, in `target/real-parts/browser-venv`), so a plain
//! `cargo test` leaves them out; `.ci/run` installs both and runs them, where a missing part fails
//! them loudly.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

use crate::util::real_parts::browser_script;
use crate::util::report_page::{
    big_log, dom, hostile_log, open_headless, shown_calls, Shown, HOSTILE,
};
use crate::util::{arg, corpora, root, run};

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
    let expect = |keep: &dyn Fn(&Shown) -> bool| calls.iter().filter(|c| keep(c)).count();
    let cases: [(&str, usize); 4] = [
        ("?status=missing", expect(&|c| c.status == "missing")),
        (
            "?status=present,blank&tool=read_file",
            expect(&|c| (c.status == "present" || c.status == "blank") && c.tool == "read_file"),
        ),
        // The page's search ignores case.
        (
            "?q=CHANGELOG",
            expect(&|c| c.markup.to_lowercase().contains("changelog")),
        ),
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
    let dom = self::dom(&url(&page, &format!("?tool={tool}")));
    assert_eq!(root_attribute(&dom, "data-shown"), Some("3".to_owned()));
}

#[test]
#[ignore = "needs chromium: .ci/run installs it"]
fn the_page_of_the_real_corpus_opens_with_every_call_and_no_console_message() {
    let corpora = corpora();
    let paths: Vec<&str> = corpora.iter().map(|corpus| arg(corpus)).collect();
    let extracted = run(&[&["extract", "--format", "jsonl"][..], &paths].concat());
    assert_eq!(extracted.code, 0, "{}", extracted.stderr);
    let calls = extracted.stdout.lines().count();
    assert!(calls > 0);
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path(), &paths);
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
    let opened = open_headless(
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

/// The page of 100,000 calls, opened as a person opens it (`tests/it/python/packed_page.py`):
/// under 300 bytes a call, at its load event within 10 s (it took 129–143 s when every call was
/// drawn), drawing only the calls near the screen; a call deep in it comes on screen by its link
/// and by scrolling to it, the last one by scrolling to the end; the filters narrow the list,
/// from the address and by hand; and it makes no request but for its own file.
#[cfg(unix)]
#[test]
#[ignore = "needs chromium and playwright: .ci/run installs them"]
fn a_page_of_100000_calls_opens_in_seconds_with_every_call_reachable() {
    const CALLS: usize = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.jsonl");
    big_log(&log, CALLS);
    let started = Instant::now();
    let page = write_page(dir.path(), &[arg(&log)]);
    let built = started.elapsed();
    let size = std::fs::metadata(&page).unwrap().len() as usize;
    eprintln!(
        "{CALLS} calls: a page of {:.1} MB, {} bytes a call, built in {built:.2?}",
        size as f64 / 1e6,
        size / CALLS
    );
    assert!(size / CALLS < 300, "{} bytes a call", size / CALLS);
    let shots = [
        root().join("target/report-100000.png"),
        root().join("target/report-100000-deep.png"),
    ];
    let deep = "call-73458";
    let opened = browser_script(
        "packed_page.py",
        &json!({
            "page": format!("file://{}", page.display()),
            "deep": deep,
            "tool": "Bash",
            "filtered": "?status=missing&tool=Bash",
            "screenshot": shots[0],
            "deep_screenshot": shots[1],
        }),
    );
    eprintln!("{opened:#}");
    assert_eq!(opened["console"], json!([]), "the page logged something");
    assert_eq!(opened["requests"], json!([]), "requests left the page");
    assert!(opened["problems"].is_null(), "{}", opened["problems"]);
    let load = opened["load_seconds"].as_f64().unwrap();
    assert!(load < 10.0, "the load event came after {load:.1} s");
    assert_eq!(opened["ready"], CALLS.to_string());
    assert_eq!(opened["shown"], CALLS.to_string());
    // Only the calls near the screen are drawn: a few runs of them, never the page's 100,000.
    let most_drawn = opened["most_drawn"].as_u64().unwrap();
    assert!(
        most_drawn > 0 && most_drawn <= 2_000,
        "{most_drawn} rows drawn at once"
    );
    assert_eq!(
        opened["wheel_blank_steps"],
        json!([]),
        "a screen without a call"
    );
    for (how, place) in [
        ("by scrolling", &opened["scrolled_to"]),
        ("by its link", &opened["linked"]),
        ("at the end", &opened["end"]),
    ] {
        assert!(place.is_object(), "{how}: not drawn");
        let (top, bottom) = (
            place["top"].as_f64().unwrap(),
            place["bottom"].as_f64().unwrap(),
        );
        let viewport = place["viewport"].as_f64().unwrap();
        assert!(top < viewport && bottom > 0.0, "{how}: off screen: {place}");
        assert!(place["height"].as_f64().unwrap() > 20.0, "{how}: {place}");
    }
    let linked = &opened["linked"];
    assert!(
        linked["top"].as_f64().unwrap() >= linked["filters_bottom"].as_f64().unwrap() - 1.0,
        "the linked call is under the filter bar: {linked}"
    );
    assert_eq!(opened["linked_hash"], format!("#{deep}"));
    // A third of the calls have no reason (every third), a fifth are Bash calls (every fifth):
    // every 15th is both.
    let missing = CALLS.div_ceil(3);
    assert_eq!(opened["without_present"], missing.to_string());
    assert_eq!(
        opened["without_present_tool"],
        CALLS.div_ceil(15).to_string()
    );
    assert_eq!(opened["filtered"], CALLS.div_ceil(15).to_string());
    for drawn in [&opened["after_filter"], &opened["filtered_drawn"]] {
        assert!(
            !drawn["on_screen"].as_array().unwrap().is_empty(),
            "{drawn}"
        );
    }
    for shot in &shots {
        let png = std::fs::read(shot).expect("a screenshot");
        assert!(png.len() > 20_000, "{} is nearly blank", shot.display());
        eprintln!("screenshot: {}", shot.display());
    }
}

/// What a person sees: each view of a page opened by playwright in chromium, measured after the
/// page's script ran (`tests/it/python/visible_calls.py`).
#[cfg(unix)]
mod seen {
    use std::path::Path;

    use serde_json::{json, Value};

    use super::write_page;
    use crate::util::real_parts::browser_script;
    use crate::util::report_page::shown_calls;

    /// A desktop's viewport and a phone's, where the call's two columns become one.
    pub const SCREENS: [(&str, u32, u32); 2] = [("desktop", 1400, 900), ("phone", 420, 900)];

    /// One call on the page as its markup says, to work out what each view must show.
    pub struct Call {
        pub id: String,
        pub status: String,
        pub tool: String,
        /// Its text, lower-cased, as the search box searches it.
        pub text: String,
        /// The session it is listed under.
        pub session: usize,
    }

    /// Every call of a page, in page order.
    pub fn calls(html: &str) -> Vec<Call> {
        let mut calls = Vec::new();
        for (session, chunk) in html.split("<details class=\"session\"").skip(1).enumerate() {
            for shown in shown_calls(chunk) {
                let id = shown.markup[shown.markup.find("id=\"").unwrap() + 4..]
                    .split('"')
                    .next()
                    .unwrap()
                    .to_owned();
                calls.push(Call {
                    id,
                    status: shown.status,
                    tool: shown.tool,
                    text: text_of(&shown.markup).to_lowercase(),
                    session,
                });
            }
        }
        calls
    }

    /// The text of some markup: its tags dropped, the entities this page writes read back.
    fn text_of(markup: &str) -> String {
        let mut text = String::new();
        let mut in_tag = false;
        for character in markup.chars() {
            match character {
                '<' => in_tag = true,
                '>' if in_tag => in_tag = false,
                _ if !in_tag => text.push(character),
                _ => {}
            }
        }
        text.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
    }

    /// Opens every view of `page` in `plan`, returning what each one showed.
    pub fn measure(page: &Path, views: Vec<Value>) -> Vec<Value> {
        let plan = json!({"page": format!("file://{}", page.display()), "views": views});
        let result = browser_script("visible_calls.py", &plan);
        assert_eq!(result["console"], json!([]), "the page logged something");
        result["views"].as_array().unwrap().clone()
    }

    pub fn page_of_samples(dir: &Path) -> (std::path::PathBuf, Vec<Call>) {
        let page = write_page(dir, &["samples"]);
        let calls = calls(&std::fs::read_to_string(&page).unwrap());
        assert!(
            calls.len() > 20,
            "the samples' page has {} calls",
            calls.len()
        );
        (page, calls)
    }
}

/// Every filter, the search box and the status boxes, at a desktop's width and a phone's: the
/// calls on screen are exactly those the filters keep, the sessions left empty are gone too, and
/// the counter says as much (a `display: grid` on `li.call` must not outrank the `hidden`
/// attribute).
#[cfg(unix)]
#[test]
#[ignore = "needs chromium and playwright: .ci/run installs them"]
fn report_filters_hide_the_calls_they_leave_out_at_desktop_and_phone_widths() {
    use seen::Call;
    let dir = tempfile::tempdir().unwrap();
    let (page, calls) = seen::page_of_samples(dir.path());
    type Keep = Box<dyn Fn(&Call) -> bool>;
    let mut cases: Vec<(String, Vec<serde_json::Value>, Keep)> = vec![
        ("everything".into(), vec![], Box::new(|_: &Call| true)),
        (
            "?status=missing&tool=Bash".into(),
            vec![],
            Box::new(|c: &Call| c.status == "missing" && c.tool == "Bash"),
        ),
        (
            "?status=present,blank&tool=read_file".into(),
            vec![],
            Box::new(|c: &Call| {
                (c.status == "present" || c.status == "blank") && c.tool == "read_file"
            }),
        ),
        (
            "?q=CHANGELOG".into(),
            vec![],
            Box::new(|c: &Call| c.text.contains("changelog")),
        ),
        (
            "untick present, pick Bash".into(),
            vec![json!(["uncheck", "present"]), json!(["select", "Bash"])],
            Box::new(|c: &Call| c.status != "present" && c.tool == "Bash"),
        ),
        (
            "type in the search box".into(),
            vec![json!(["type", "invoice"])],
            Box::new(|c: &Call| c.text.contains("invoice")),
        ),
    ];
    for status in [
        "present", "blank", "invalid", "missing", "declared", "freeform",
    ] {
        cases.push((
            format!("?status={status}"),
            vec![],
            Box::new(move |c: &Call| c.status == status),
        ));
        // The same by hand: every other box unticked.
        let actions = [
            "present", "blank", "invalid", "missing", "declared", "freeform",
        ]
        .into_iter()
        .filter(|other| *other != status)
        .map(|other| serde_json::json!(["uncheck", other]))
        .collect();
        cases.push((
            format!("only {status} ticked"),
            actions,
            Box::new(move |c: &Call| c.status == status),
        ));
    }
    for tool in ["Bash", "shell", "search_tickets", "read_file"] {
        cases.push((
            format!("?tool={tool}"),
            vec![],
            Box::new(move |c: &Call| c.tool == tool),
        ));
    }
    let mut views = Vec::new();
    for (screen, width, height) in seen::SCREENS {
        for (name, actions, _) in &cases {
            let address = if name.starts_with('?') {
                name.clone()
            } else {
                String::new()
            };
            views.push(serde_json::json!({
                "name": format!("{screen}: {name}"), "width": width, "height": height,
                "address": address, "actions": actions,
            }));
        }
    }
    let measured = seen::measure(&page, views);
    assert_eq!(measured.len(), cases.len() * seen::SCREENS.len());
    for (view, (_, _, keep)) in measured.iter().zip(cases.iter().cycle()) {
        let name = view["name"].as_str().unwrap();
        let kept: Vec<&Call> = calls.iter().filter(|call| keep(call)).collect();
        assert!(
            !kept.is_empty(),
            "{name} keeps nothing: a case that cannot fail"
        );
        let want: Vec<&str> = kept.iter().map(|call| call.id.as_str()).collect();
        let visible: Vec<&str> = view["visible"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_str().unwrap())
            .collect();
        assert_eq!(visible, want, "{name}: the calls on screen");
        assert_eq!(view["hidden_but_shown"], serde_json::json!([]), "{name}");
        let mut sessions: Vec<usize> = kept.iter().map(|call| call.session).collect();
        sessions.dedup();
        assert_eq!(
            view["sessions"],
            sessions.len(),
            "{name}: sessions on screen"
        );
        assert_eq!(
            view["shown"],
            format!("{} of {} calls", kept.len(), calls.len()),
            "{name}"
        );
        assert!(view["problems"].is_null(), "{name}: {}", view["problems"]);
    }
}

/// A link to a call (`#call-N`), opened as an address or followed on the page, at a desktop's
/// width and a phone's: the call is on screen, below the sticky filter bar rather than under it,
/// also in a filtered view.
#[cfg(unix)]
#[test]
#[ignore = "needs chromium and playwright: .ci/run installs them"]
fn a_link_to_a_call_brings_it_on_screen_below_the_filters() {
    let dir = tempfile::tempdir().unwrap();
    let (page, calls) = seen::page_of_samples(dir.path());
    let late = &calls[calls.len() - 3];
    let missing = calls
        .iter()
        .rev()
        .find(|call| call.status == "missing")
        .unwrap();
    let middle = &calls[calls.len() / 2];
    let mut views = Vec::new();
    for (screen, width, height) in seen::SCREENS {
        views.push(serde_json::json!({
            "name": format!("{screen}: #{}", late.id), "width": width, "height": height,
            "address": format!("#{}", late.id), "target": late.id,
        }));
        views.push(serde_json::json!({
            "name": format!("{screen}: ?status=missing#{}", missing.id), "width": width,
            "height": height, "address": format!("?status=missing#{}", missing.id),
            "target": missing.id,
        }));
        views.push(serde_json::json!({
            "name": format!("{screen}: following the link of {}", middle.id), "width": width,
            "height": height, "actions": [["follow", middle.id]], "target": middle.id,
        }));
    }
    for view in seen::measure(&page, views) {
        let name = view["name"].as_str().unwrap();
        let target = &view["target"];
        let viewport = view["viewport"][1].as_f64().unwrap();
        let (top, bottom) = (
            target["top"].as_f64().unwrap(),
            target["bottom"].as_f64().unwrap(),
        );
        assert_eq!(target["seen"], true, "{name}: {view}");
        assert!(top < viewport && bottom > 0.0, "{name}: off screen: {view}");
        let under = view["filters_bottom"].as_f64().unwrap();
        assert!(
            top >= under - 1.0,
            "{name}: the call's top ({top}) is under the filter bar (to {under}): {view}"
        );
        assert_eq!(view["hash"], format!("#{}", target["id"].as_str().unwrap()));
    }
}

/// A filtered view, as a person sees it at a desktop's width and a phone's: screenshots left in
/// `target/` beside the page's (`report-filtered.png`, `report-filtered-phone.png`), for CI's
/// artifacts and a person to look at.
#[cfg(unix)]
#[test]
#[ignore = "needs chromium and playwright: .ci/run installs them"]
fn a_screenshot_of_a_filtered_view() {
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(
        dir.path(),
        &[
            "samples/claude-code.jsonl",
            "samples/codex.jsonl",
            "samples/anthropic.json",
        ],
    );
    let shots = [
        root().join("target/report-filtered.png"),
        root().join("target/report-filtered-phone.png"),
    ];
    let views = seen::SCREENS
        .iter()
        .zip(&shots)
        .map(|((screen, width, height), shot)| {
            let _ = std::fs::remove_file(shot);
            serde_json::json!({
                "name": screen, "width": width, "height": height,
                "address": "?status=missing,blank,invalid#filters", "screenshot": shot,
            })
        })
        .collect();
    for view in seen::measure(&page, views) {
        assert_eq!(view["hidden_but_shown"], serde_json::json!([]));
    }
    for shot in &shots {
        let png = std::fs::read(shot).expect("a screenshot");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(png.len() > 20_000, "{} is nearly blank", shot.display());
        eprintln!("screenshot: {}", shot.display());
    }
}
