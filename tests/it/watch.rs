//! Watching an agent: `reasons watch --plain`, the hooks as the agents run them,
//! REASONS_LOG, and logs that try to drive the terminal.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{
    append_lines, arg, claude_call, lines_of, log_file, logged_line, reasons, run, run_with_stdin,
};

/// `reasons watch --plain ARGS`, its lines read as they come.
struct Watch {
    child: Child,
    lines: Receiver<String>,
    /// What it said on stderr, read as it comes so that it never blocks on a full pipe.
    messages: Receiver<String>,
}

impl Watch {
    fn start(args: &[&str]) -> Watch {
        let mut child = reasons()
            .args(["watch", "--plain"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("reasons watch starts");
        let lines = lines_of(child.stdout.take().unwrap());
        let messages = lines_of(child.stderr.take().unwrap());
        Watch {
            child,
            lines,
            messages,
        }
    }

    #[track_caller]
    fn next(&self) -> String {
        match self.lines.recv_timeout(Duration::from_secs(10)) {
            Ok(line) => line,
            Err(_) => {
                let said: Vec<String> = self.messages.try_iter().collect();
                panic!("watch wrote no next call; it said {said:?}")
            }
        }
    }

    #[track_caller]
    fn nothing_more(&self) {
        assert_eq!(
            self.lines.recv_timeout(Duration::from_millis(700)).ok(),
            None
        );
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn watch_plain_shows_the_last_calls_then_each_new_one_with_what_it_touched_first() {
    let lines: Vec<String> = (0..30)
        .map(|n| {
            logged_line(
                &format!("t{n}"),
                "Bash",
                &format!("echo {n}"),
                &format!("Say {n}"),
            )
        })
        .collect();
    let (_dir, log) = log_file("reasons.jsonl", &lines);
    let watch = Watch::start(&["--reasons-log", arg(&log)]);
    // The last ten of a long log, not its whole history.
    let first = watch.next();
    assert_eq!(
        first,
        "10:11:12  gateway  Bash  echo 20  — model's reason: Say 20"
    );
    for n in 21..30 {
        assert!(watch.next().contains(&format!("echo {n}")));
    }
    append_lines(
        &log,
        &[logged_line("new", "Edit", "src/a.rs", "Fix the total")],
    );
    assert_eq!(
        watch.next(),
        "10:11:12  gateway  Edit  src/a.rs  — model's reason: Fix the total"
    );
    watch.nothing_more();
}

#[test]
fn watch_plain_joins_the_session_log_and_says_no_reason_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    fs::write(&log, "").unwrap();
    let session = dir.path().join("session.jsonl");
    fs::write(&session, "").unwrap();
    let watch = Watch::start(&["--reasons-log", arg(&log), arg(&session)]);
    // The gateway logs the reason, then the agent records the call without it: one call.
    append_lines(
        &log,
        &[logged_line(
            "toolu_1",
            "Bash",
            "cargo test",
            "Run the tests",
        )],
    );
    assert_eq!(
        watch.next(),
        "10:11:12  gateway  Bash  cargo test  — model's reason: Run the tests"
    );
    append_lines(
        &session,
        &[claude_call(
            "sess-abcdef123",
            "toolu_1",
            "Bash",
            json!({"command": "cargo test"}),
        )],
    );
    // A call the layer never saw: no reason, in words.
    append_lines(
        &session,
        &[claude_call(
            "sess-abcdef123",
            "toolu_2",
            "Read",
            json!({"file_path": "/w/a.rs"}),
        )],
    );
    assert_eq!(
        watch.next(),
        "09:00:00  claude-code sess-abc  Read  /w/a.rs  — no reason"
    );
    watch.nothing_more();
}

#[test]
fn watch_plain_keeps_every_call_of_a_truncated_or_rotated_log_once() {
    let (dir, log) = log_file("reasons.jsonl", &[logged_line("a", "Bash", "one", "First")]);
    let watch = Watch::start(&["--reasons-log", arg(&log)]);
    assert!(watch.next().contains("First"));
    // Truncated in place (copytruncate), then written again past the old end before watch
    // looks again, or after it has.
    fs::write(&log, "").unwrap();
    append_lines(
        &log,
        &[logged_line(
            "b",
            "Bash",
            "two",
            "Second, much longer than the first",
        )],
    );
    assert!(watch.next().contains("Second"));
    fs::write(&log, "").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    append_lines(&log, &[logged_line("b2", "Bash", "two", "Again")]);
    assert!(watch.next().contains("Again"));
    // Renamed away and replaced: the old file's last line, then the new file's.
    append_lines(&log, &[logged_line("c", "Bash", "three", "Third")]);
    fs::rename(&log, dir.path().join("reasons.jsonl.1")).unwrap();
    append_lines(&log, &[logged_line("d", "Bash", "four", "Fourth")]);
    let (third, fourth) = (watch.next(), watch.next());
    assert!(third.contains("Third"), "{third}");
    assert!(fourth.contains("Fourth"), "{fourth}");
    // A line written in two pieces is one call, shown once it is whole.
    let line = logged_line("e", "Bash", "five", "Fifth");
    let (start, end) = line.split_at(20);
    let mut file = OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(start.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    file.write_all(format!("{end}\n").as_bytes()).unwrap();
    assert!(watch.next().contains("Fifth"));
    watch.nothing_more();
}

/// The ids `reasons extract --follow` writes, read as they come.
struct ExtractFollow {
    child: Child,
    records: Receiver<String>,
    messages: Receiver<String>,
}

impl ExtractFollow {
    fn start(path: &Path) -> ExtractFollow {
        let mut child = reasons()
            .args(["extract", "--follow", arg(path)])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("reasons extract starts");
        let records = lines_of(child.stdout.take().unwrap());
        let messages = lines_of(child.stderr.take().unwrap());
        ExtractFollow {
            child,
            records,
            messages,
        }
    }

    #[track_caller]
    fn next_id(&self) -> String {
        match self.records.recv_timeout(Duration::from_secs(10)) {
            Ok(line) => {
                let record: Value = serde_json::from_str(&line).unwrap();
                record["call_id"].as_str().unwrap().to_owned()
            }
            Err(_) => {
                let said: Vec<String> = self.messages.try_iter().collect();
                panic!("extract --follow wrote no next record; it said {said:?}")
            }
        }
    }
}

impl Drop for ExtractFollow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The one follower under both: `watch` reading the reasons log and `extract --follow` reading a
/// session log see every call of a log truncated and written past its old end, renamed away and
/// replaced, or replaced by a file moved over it, once, in order.
#[test]
fn watch_and_extract_follow_see_a_rotated_log_alike() {
    let dir = tempfile::tempdir().unwrap();
    let reasons_log = dir.path().join("reasons.jsonl");
    let session_log = dir.path().join("session.jsonl");
    let logged =
        |id: &str| logged_line(id, "Bash", &format!("echo {id}"), &format!("because {id}"));
    let session = |id: &str| claude_call("s", id, "Bash", json!({"command": format!("echo {id}")}));
    // The line a log holds for a call id.
    type LineOf<'a> = &'a dyn Fn(&str) -> String;
    // Each step is done to both logs, each written with its own lines.
    let both = |step: &dyn Fn(&Path, LineOf)| {
        step(&reasons_log, &logged);
        step(&session_log, &session);
    };
    let lines =
        |line: LineOf, ids: &[&str]| -> String { ids.iter().map(|id| line(id) + "\n").collect() };
    both(&|path, line| fs::write(path, lines(line, &["c1"])).unwrap());
    let watch = Watch::start(&["--reasons-log", arg(&reasons_log)]);
    let extract = ExtractFollow::start(&session_log);
    let mut watched = Vec::new();
    let mut extracted = Vec::new();
    let mut see = |count: usize| {
        for _ in 0..count {
            let line = watch.next();
            let reason = line.rsplit("model's reason: because ").next().unwrap();
            watched.push(reason.to_owned());
            extracted.push(extract.next_id());
        }
    };
    see(1);
    // Truncated in place and written again past the old end, in one write, before either
    // follower looks again (copytruncate, then a writer that does not wait).
    both(&|path, line| {
        let mut file = OpenOptions::new().write(true).open(path).unwrap();
        file.set_len(0).unwrap();
        file.write_all(lines(line, &["c2", "c3"]).as_bytes())
            .unwrap();
    });
    see(2);
    // Renamed away (logrotate's `create`), its writer appending once more, then a new log.
    both(&|path, line| {
        let rotated = path.with_extension("jsonl.1");
        fs::rename(path, &rotated).unwrap();
        append_lines(&rotated, &[line("c4")]);
        fs::write(path, lines(line, &["c5"])).unwrap();
    });
    see(2);
    // Replaced by a file moved over it.
    both(&|path, line| {
        let other = path.with_extension("new");
        fs::write(&other, lines(line, &["c6"])).unwrap();
        fs::rename(&other, path).unwrap();
    });
    see(1);
    both(&|path, line| append_lines(path, &[line("c7")]));
    see(1);
    let expected = ["c1", "c2", "c3", "c4", "c5", "c6", "c7"];
    assert_eq!(watched, expected);
    assert_eq!(extracted, expected);
    watch.nothing_more();
    assert_eq!(
        extract
            .records
            .recv_timeout(Duration::from_millis(700))
            .ok(),
        None
    );
    let said: Vec<String> = extract.messages.try_iter().collect();
    let session_name = arg(&session_log);
    assert_eq!(
        said,
        [
            format!("reasons: {session_name}: truncated; reading it from the start"),
            format!(
                "reasons: {session_name}: replaced by another file; reading that from its start"
            ),
            format!(
                "reasons: {session_name}: replaced by another file; reading that from its start"
            ),
        ]
    );
}

#[test]
fn watch_plain_shows_control_sequences_as_marks() {
    let hostile = logged_line(
        "t1",
        "Bash",
        "rm -rf ~\u{1b}[2J",
        "Looks safe\r\u{1b}]8;;https://evil\u{7}click\u{1b}]8;;\u{7}\u{202e}txt",
    );
    let (_dir, log) = log_file("reasons.jsonl", &[hostile]);
    let watch = Watch::start(&["--reasons-log", arg(&log)]);
    let line = watch.next();
    assert_eq!(
        line,
        "10:11:12  gateway  Bash  rm -rf ~␛[2J  — model's reason: \
         Looks safe␍␛]8;;https://evil␇click␛]8;;␇<U+202E>txt"
    );
}

#[test]
fn reasons_log_names_the_log_watch_and_the_hooks_read() {
    let (_dir, log) = log_file(
        "reasons.jsonl",
        &[logged_line("toolu_9", "Bash", "ls", "Look")],
    );
    let mut child = reasons()
        .args(["watch", "--plain"])
        .env("REASONS_LOG", &log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(child.stdout.take().unwrap());
    let line = lines.recv_timeout(Duration::from_secs(10));
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.unwrap().contains("Look"));

    let input = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "tool_use_id": "toolu_9"})
    .to_string();
    let output = reasons()
        .args(["hook", "codex"])
        .env("REASONS_LOG", &log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(input.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "{\"systemMessage\":\"model's reason for Bash: Look\"}\n"
    );
}

#[test]
fn a_hook_given_garbage_prints_nothing_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.jsonl");
    for agent in ["claude-code", "codex", "gemini-cli", "copilot-cli"] {
        for input in [
            &b""[..],
            b"not json",
            b"\xff\xfe",
            b"[]",
            br#"{"hook_event_name":"SessionStart"}"#,
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"x"}"#,
            br#"{"toolName":"bash","toolArgs":"{\"command\":\"rm -rf b\"}"}"#,
            br#"{"toolName":"bash","toolArgs":"not json"}"#,
        ] {
            let out = run_with_stdin(&["hook", agent, "--reasons-log", arg(&missing)], input);
            assert_eq!(
                (out.code, out.stdout.as_str()),
                (0, ""),
                "{agent} {input:?}"
            );
        }
    }
}

#[test]
fn extract_shows_control_sequences_in_its_table_as_marks() {
    let call = claude_call(
        "s",
        "toolu_1",
        "Bash",
        json!({"command": "echo ok\u{1b}[2J", "reason": "fine\r\u{1b}[31mred\u{202e}"}),
    );
    let (_dir, log) = log_file("session.jsonl", &[call]);
    let out = run(&["extract", "--format", "table", arg(&log)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains('\u{1b}'), "{}", out.stdout);
    assert!(!out.stdout.contains('\r'), "{}", out.stdout);
    assert!(!out.stdout.contains('\u{202e}'), "{}", out.stdout);
    assert!(out.stdout.contains("echo ok␛[2J"), "{}", out.stdout);
    assert!(
        out.stdout.contains("fine␍␛[31mred<U+202E>"),
        "{}",
        out.stdout
    );
}

// ---- the full-screen view in a real terminal ---------------------------------------------------

#[cfg(unix)]
#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (tmux)"]
fn real_terminal_watch_shows_each_gateway_call_with_what_it_touched_and_its_reason() {
    use crate::util::gateway::Gateway;
    use crate::util::tmux::Tmux;
    use crate::util::upstream::{bash_tool, messages_request, Upstream};

    const REASON: &str = "Find the config file the user asked about";
    let upstream = Upstream::messages(|_| {
        vec![
            json!({"type": "tool_use", "id": "toolu_live", "name": "Bash",
            "input": {"command": "find . -name '*.yml'", "reason": REASON}}),
        ]
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session.jsonl");
    fs::write(&session, "").unwrap();
    // The shell keeps watch's exit status: tmux 3.3a now and then never reaps a pane's process
    // (a zombie whose status it does not report), so its `pane_dead_status` cannot be relied on.
    let status = dir.path().join("status");
    let command = format!(
        "NO_COLOR=1 {} watch --reasons-log {} {}; echo $? > {}",
        env!("CARGO_BIN_EXE_reasons"),
        gateway.log.display(),
        session.display(),
        status.display()
    );
    let tmux = Tmux::start(&command, 160, 24);
    tmux.screen_when("the view", |screen| screen.contains("waiting for calls"));
    assert_eq!(
        tmux.run(&["display-message", "-p", "#{alternate_on}"])
            .trim(),
        "1"
    );

    // A call through the gateway: what it touched first, then the model's reason.
    let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], false));
    assert_eq!(reply.status, 200);
    let screen = tmux.screen_when("the gateway's call", |screen| screen.contains(REASON));
    let line = screen.lines().find(|line| line.contains(REASON)).unwrap();
    let touched = line.find("find . -name '*.yml'").expect("what it touched");
    assert!(touched < line.find("model's reason").unwrap(), "{line}");

    // The agent records it (one call, not two), and a call the layer never saw: no reason.
    append_lines(
        &session,
        &[
            claude_call(
                "sess-live",
                "toolu_live",
                "Bash",
                json!({"command": "find . -name '*.yml'"}),
            ),
            claude_call(
                "sess-live",
                "toolu_bare",
                "Read",
                json!({"file_path": "/w/notes.md"}),
            ),
        ],
    );
    let screen = tmux.screen_when("the call without a reason", |screen| {
        screen.contains("/w/notes.md") && screen.contains("NO REASON")
    });
    assert_eq!(screen.matches("find . -name").count(), 1, "{screen}");
    assert!(screen.contains("1 of 2 with a reason"), "{screen}");

    // m: only the calls without a reason.
    tmux.keys(&["m"]);
    tmux.screen_when("only the call without a reason", |screen| {
        screen.contains("/w/notes.md") && !screen.contains(REASON)
    });
    tmux.keys(&["m"]);
    // /: a filter by tool or text.
    tmux.keys(&["/"]);
    tmux.keys(&["-l", "Bash"]);
    tmux.keys(&["Enter"]);
    tmux.screen_when("only Bash calls", |screen| {
        screen.contains(REASON) && !screen.contains("/w/notes.md")
    });
    tmux.keys(&["/", "Escape"]);
    // Up selects a call, Enter shows its arguments.
    tmux.keys(&["Up", "Enter"]);
    tmux.screen_when("the arguments", |screen| {
        screen.contains("arguments") && screen.contains("\"file_path\": \"/w/notes.md\"")
    });
    // A tiny terminal is still drawn, and q gives the terminal back.
    tmux.run(&["resize-window", "-x", "30", "-y", "5"]);
    tmux.screen_when("a redraw at 30x5", |screen| !screen.trim().is_empty());
    tmux.keys(&["q"]);
    // It ends with status 0 and the alternate screen left. (A dead pane's cursor flag says
    // nothing: tmux reports 0 for any command that has ended.)
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let ended = fs::read_to_string(&status).unwrap_or_default();
        let alternate = tmux.run(&["display-message", "-p", "#{alternate_on}"]);
        if ended.ends_with('\n') {
            assert_eq!(ended.trim(), "0", "watch's exit status after q");
            assert_eq!(alternate.trim(), "0", "q leaves the alternate screen");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "q did not end watch: exit status {ended:?}, alternate screen {alternate:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The agents of `corpus-new-agents/` are watched like the others: each call of their logs, with
/// its agent, what it touched and its reason or the lack of one.
#[test]
fn watch_plain_shows_the_calls_of_the_agents_read_since_round_5() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    fs::write(&log, "").unwrap();
    let samples = [
        ("samples/pi.jsonl", "pi", 3),
        ("samples/kiro-cli.jsonl", "kiro-cli", 3),
        ("samples/openclaw.jsonl", "openclaw", 2),
        ("samples/antigravity.jsonl", "antigravity", 2),
        ("samples/grok-cli.updates.jsonl", "grok-cli", 2),
        ("samples/hermes.jsonl", "hermes", 3),
        ("samples/factory-droid.jsonl", "factory-droid", 2),
    ];
    let mut args = vec!["--reasons-log", arg(&log)];
    args.extend(samples.iter().map(|(path, _, _)| *path));
    let watch = Watch::start(&args);
    let total: usize = samples.iter().map(|(_, _, calls)| calls).sum();
    let lines: Vec<String> = (0..total).map(|_| watch.next()).collect();
    for (_, format, calls) in samples {
        let shown = lines
            .iter()
            .filter(|line| {
                line.split("  ").nth(1).is_some_and(|agent| {
                    agent == format || agent.starts_with(&format!("{format} "))
                })
            })
            .count();
        assert_eq!(shown, calls, "{format} in {lines:#?}");
    }
    assert!(lines.contains(
        &"09:00:02  antigravity  run_command  du -sh target  — model's reason: du gives the folder's size in one line."
            .to_owned()
    ));
    assert!(lines.contains(
        &"14:10:35  factory-droid 6f1e2d3c  Read  /home/dev/src/uploader/upload/upload_test.go  — no reason"
            .to_owned()
    ));
    watch.nothing_more();
}

/// A log its agent rewrites rather than appends to — Cline's `messages.json` (one document), an
/// OpenCode store (SQLite) — is read again when it changes: its calls are shown once each, the
/// new ones as they come; a numeric time is shown as a clock.
#[test]
fn watch_plain_follows_a_rewritten_document_and_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    fs::write(&log, "").unwrap();
    let cline = dir.path().join("cline.messages.json");
    fs::copy(
        crate::util::root().join("samples/cline.messages.json"),
        &cline,
    )
    .unwrap();
    let opencode = dir.path().join("opencode.db");
    fs::copy(crate::util::root().join("samples/opencode.db"), &opencode).unwrap();
    let watch = Watch::start(&["--reasons-log", arg(&log), arg(&cline), arg(&opencode)]);
    let mut first: Vec<String> = (0..5).map(|_| watch.next()).collect();
    first.sort();
    assert!(first.contains(
        &"12:00:03  cline 17961264  search_files  TODO  — model's reason: Find every TODO the user asked for."
            .to_owned()
    ), "{first:#?}");
    assert_eq!(
        first
            .iter()
            .filter(|line| line.contains("  opencode "))
            .count(),
        3,
        "{first:#?}"
    );
    watch.nothing_more();

    // Cline writes the whole document again with one more call, through a rename.
    let mut document: Value = serde_json::from_str(&fs::read_to_string(&cline).unwrap()).unwrap();
    document["messages"].as_array_mut().unwrap().push(json!({
        "role": "assistant",
        "ts": 1796126500000_u64,
        "content": [{"type": "tool_use", "id": "toolu_new", "name": "execute_command",
                     "input": {"command": "make test", "reason": "Run the tests after the edit."}}]
    }));
    let written = dir.path().join("cline.messages.json.tmp");
    fs::write(&written, serde_json::to_vec_pretty(&document).unwrap()).unwrap();
    fs::rename(&written, &cline).unwrap();
    let line = watch.next();
    assert!(
        line.ends_with("cline 17961264  execute_command  make test  — model's reason: Run the tests after the edit."),
        "{line}"
    );

    // OpenCode adds a part to its store.
    let store = rusqlite::Connection::open(&opencode).unwrap();
    store
        .execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
             SELECT 'prt_new', message_id, session_id, time_created + 1, time_updated + 1,
                    replace(replace(data, 'call_b1', 'call_new'), 'pytest -q tests/test_cart.py', 'cargo build')
             FROM part WHERE id = 'prt_04'",
            [],
        )
        .unwrap();
    let line = watch.next();
    assert!(
        line.contains("  opencode ses_0a1  bash  cargo build  — no reason"),
        "{line}"
    );
    watch.nothing_more();
}
