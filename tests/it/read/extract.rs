//! `reasons extract` through the real binary.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use crate::util::{
    append_lines, arg, claude_call, lines_of, log_file, reasons, reasons_on_a_terminal, records,
    run, run_with_stdin,
};

/// A session with one call of each audited status.
fn mixed_session() -> Vec<String> {
    vec![
        claude_call(
            "s1",
            "t1",
            "Bash",
            json!({"command": "cargo test", "reason": "Run the tests you asked about"}),
        ),
        claude_call(
            "s1",
            "t2",
            "Read",
            json!({"file_path": "src/lib.rs", "reason": "  "}),
        ),
        claude_call(
            "s1",
            "t3",
            "Edit",
            json!({"file_path": "src/lib.rs", "reason": 42}),
        ),
        claude_call("s2", "t4", "Bash", json!({"command": "ls"})),
    ]
}

#[test]
fn every_status_is_recorded_in_order() {
    let (_dir, path) = log_file("session.jsonl", &mixed_session());
    let run = run(&["extract", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records = records(&run.stdout);
    let statuses: Vec<_> = records
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["present", "blank", "invalid", "missing"]);
    assert_eq!(records[0]["reason"], "Run the tests you asked about");
    assert_eq!(records[0]["line"], 1);
    assert_eq!(records[3]["line"], 4);
    assert_eq!(records[0]["source"], arg(&path));
    assert!(records[0].get("arguments").is_none());
}

#[test]
fn filters_by_tool_glob_status_missing_and_session() {
    let (_dir, path) = log_file("session.jsonl", &mixed_session());
    let path = arg(&path);
    let tools = |args: &[&str]| -> Vec<String> {
        let run = run(&[&["extract", path][..], args].concat());
        assert_eq!(run.code, 0, "{}", run.stderr);
        records(&run.stdout)
            .iter()
            .map(|r| r["call_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(tools(&["--tool", "B*"]), ["t1", "t4"]);
    assert_eq!(tools(&["--tool", "Read", "--tool", "Edit"]), ["t2", "t3"]);
    assert_eq!(tools(&["--status", "blank"]), ["t2"]);
    assert_eq!(tools(&["--missing"]), ["t2", "t3", "t4"]);
    assert_eq!(tools(&["--session", "s2"]), ["t4"]);
}

#[test]
fn arguments_are_included_when_asked() {
    let (_dir, path) = log_file("session.jsonl", &mixed_session());
    let run = run(&["extract", "--arguments", arg(&path)]);
    let records = records(&run.stdout);
    assert_eq!(records[3]["arguments"], json!({"command": "ls"}));
}

#[test]
fn the_table_shows_what_each_call_touched_before_its_reason() {
    let (_dir, path) = log_file("session.jsonl", &mixed_session());
    let run = run(&["extract", "--format", "table", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let row = run
        .stdout
        .lines()
        .find(|line| line.contains("cargo test"))
        .unwrap();
    let touched = row.find("cargo test").unwrap();
    let reason = row.find("Run the tests").unwrap();
    assert!(touched < reason, "{row}");
    assert!(run.stdout.contains("(missing)"));
    assert!(run.stdout.starts_with(arg(&path)));
}

#[test]
fn csv_quotes_fields_and_tsv_escapes_them() {
    let lines = [claude_call(
        "s",
        "t1",
        "Bash",
        json!({"command": "a, \"b\"", "reason": "one\ttwo"}),
    )];
    let (_dir, path) = log_file("session.jsonl", &lines);
    let csv = run(&["extract", "--format", "csv", arg(&path)]);
    assert!(csv
        .stdout
        .starts_with("source,line,format,session,timestamp,call_id,tool,status,touched,reason\n"));
    assert!(
        csv.stdout.contains(",\"a, \"\"b\"\"\",one\ttwo\n"),
        "{}",
        csv.stdout
    );
    let tsv = run(&["extract", "--format", "tsv", arg(&path)]);
    assert!(
        tsv.stdout.contains("\ta, \"b\"\tone\\ttwo\n"),
        "{}",
        tsv.stdout
    );
}

#[test]
fn stdin_is_read_when_given_as_dash() {
    let input = mixed_session().join("\n");
    let run = run_with_stdin(&["extract", "-"], input.as_bytes());
    let records = records(&run.stdout);
    assert_eq!(records.len(), 4);
    assert_eq!(records[0]["source"], "-");
}

#[test]
fn stdin_streams_each_call_before_stdin_closes() {
    let mut child = reasons()
        .args(["extract"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for (index, line) in mixed_session().iter().enumerate() {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut record = String::new();
        stdout.read_line(&mut record).unwrap();
        let record: serde_json::Value = serde_json::from_str(&record).unwrap();
        assert_eq!(record["line"], index as u64 + 1);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// `reasons extract --follow` on a file, and the records and messages it writes as they come.
struct Followed {
    child: std::process::Child,
    records: std::sync::mpsc::Receiver<String>,
    messages: std::sync::mpsc::Receiver<String>,
}

impl Followed {
    fn start(path: &std::path::Path) -> Followed {
        let mut child = reasons()
            .args(["extract", "--follow", arg(path)])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let records = lines_of(child.stdout.take().unwrap());
        let messages = lines_of(child.stderr.take().unwrap());
        Followed {
            child,
            records,
            messages,
        }
    }

    /// The next message on stderr, which must come within ten seconds.
    #[track_caller]
    fn message(&self) -> String {
        self.messages
            .recv_timeout(Duration::from_secs(10))
            .expect("a message in time")
    }

    /// The next record, which must come within ten seconds.
    #[track_caller]
    fn next(&self) -> serde_json::Value {
        let line = self
            .records
            .recv_timeout(Duration::from_secs(10))
            .expect("a record in time");
        serde_json::from_str(&line).unwrap()
    }

    /// Ends the follower; returns the messages it wrote on stderr that were not read yet.
    fn stop(mut self) -> String {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.messages.iter().map(|line| line + "\n").collect()
    }
}

#[test]
fn follow_reads_lines_appended_to_a_file() {
    let lines = mixed_session();
    let (_dir, path) = log_file("growing.jsonl", &lines[..1]);
    let followed = Followed::start(&path);
    assert_eq!(followed.next()["call_id"], "t1");
    // Appended once the follower waits at the end of the file, not while it still reads.
    #[cfg(target_os = "linux")]
    crate::util::wait_until_read(followed.child.id(), &path);
    append_lines(&path, &lines[3..4]);
    assert_eq!(followed.next()["call_id"], "t4");
    followed.stop();
}

#[test]
fn follow_reads_a_log_truncated_in_place_again_from_its_start() {
    let lines = mixed_session();
    let (_dir, path) = log_file("rotated.jsonl", &lines[..1]);
    let followed = Followed::start(&path);
    assert_eq!(followed.next()["call_id"], "t1");
    // logrotate's copytruncate: the same file, cut to nothing, then written from the top.
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(0).unwrap();
    // Written only once the follower has seen the file shrink: written sooner, the new line
    // could make the file longer than what was read of it, and nothing would look truncated.
    let message = followed.message();
    assert!(
        message.ends_with("truncated; reading it from the start"),
        "{message}"
    );
    append_lines(&path, &lines[3..4]);
    let record = followed.next();
    assert_eq!(record["call_id"], "t4");
    assert_eq!(record["line"], 1);
    let stderr = followed.stop();
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn a_closed_pipe_ends_quietly_with_status_0() {
    let lines: Vec<String> = (0..20_000)
        .map(|n| claude_call("s", &format!("t{n}"), "Bash", json!({"command": "ls"})))
        .collect();
    let (_dir, path) = log_file("big.jsonl", &lines);
    let mut child = reasons()
        .args(["extract", arg(&path)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn malformed_lines_are_warned_about_and_skipped_or_fatal_with_strict() {
    let mut lines = mixed_session();
    lines.insert(1, "{\"type\": \"assistant\", trunc".to_owned());
    let (_dir, path) = log_file("session.jsonl", &lines);
    let run = run(&["extract", arg(&path)]);
    assert_eq!(run.code, 0);
    assert_eq!(records(&run.stdout).len(), 4);
    assert!(
        run.stderr.contains(&format!("reasons: {}:2: ", arg(&path))),
        "{}",
        run.stderr
    );
    let strict = crate::util::run(&["extract", "--strict", arg(&path)]);
    assert_eq!(strict.code, 2);
    assert!(strict.stderr.contains(":2: "), "{}", strict.stderr);
}

#[test]
fn an_unreadable_path_is_an_error_and_the_others_are_still_read() {
    let (_dir, path) = log_file("session.jsonl", &mixed_session());
    let run = run(&["extract", "no/such.jsonl", arg(&path)]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("reasons: no/such.jsonl: no such file or directory"),
        "{}",
        run.stderr
    );
    assert_eq!(records(&run.stdout).len(), 4);
}

#[test]
fn a_glob_matching_nothing_says_so_and_exits_2() {
    let run = run(&["extract", "no/where/**/*.jsonl"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no files match"), "{}", run.stderr);
}

#[test]
fn directories_and_globs_are_read_in_sorted_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    for (file, id) in [("b.jsonl", "b"), ("a.jsonl", "a"), ("sub/c.jsonl", "c")] {
        let line = claude_call("s", id, "Bash", json!({"command": "ls"}));
        std::fs::write(dir.path().join(file), line + "\n").unwrap();
    }
    let ids = |path: &str| -> Vec<String> {
        let run = run(&["extract", path]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        records(&run.stdout)
            .iter()
            .map(|r| r["call_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(arg(dir.path())), ["a", "b", "c"]);
    assert_eq!(
        ids(&format!("{}/**/*.jsonl", dir.path().display())),
        ["a", "b", "c"]
    );
}

#[test]
fn many_files_keep_their_order_when_read_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for n in 0..40 {
        let lines: Vec<String> = (0..(40 - n) * 50)
            .map(|k| claude_call("s", &format!("f{n}-{k}"), "Bash", json!({"command": "ls"})))
            .collect();
        let path = dir.path().join(format!("{n:02}.jsonl"));
        std::fs::write(&path, lines.join("\n")).unwrap();
        paths.push(path.display().to_string());
    }
    let args: Vec<&str> = std::iter::once("extract")
        .chain(paths.iter().map(String::as_str))
        .collect();
    let run = run(&args);
    let sources: Vec<String> = records(&run.stdout)
        .iter()
        .map(|r| r["source"].as_str().unwrap().to_owned())
        .collect();
    let mut deduped = sources.clone();
    deduped.dedup();
    assert_eq!(deduped, paths);
}

#[test]
fn a_call_recorded_again_by_a_later_event_counts_once_but_repeats_within_an_event_count() {
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}});
    let twice_in_one = json!({"type": "assistant", "message": {"content": [call, call]}});
    let lines = [
        twice_in_one.to_string(),
        claude_call("s", "t1", "Bash", json!({"command": "ls"})),
        claude_call("s", "t1", "Bash", json!({"command": "ls -la"})),
    ];
    let (_dir, path) = log_file("session.jsonl", &lines);
    let run = run(&["extract", arg(&path)]);
    let lines: Vec<u64> = records(&run.stdout)
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(
        lines,
        [1, 1, 3],
        "same id, tool and arguments later is a repeat; other arguments are not"
    );
}

#[test]
fn a_huge_line_is_read_whole() {
    let content = "é\\\"".repeat(4 << 20);
    let huge = json!({"type": "user", "message": {"content": [{"type": "tool_result", "content": content}]}});
    let lines = [
        claude_call("s", "t1", "Bash", json!({"command": "before"})),
        huge.to_string(),
        claude_call(
            "s",
            "t2",
            "Bash",
            json!({"command": "after", "reason": "x".repeat(1 << 20)}),
        ),
    ];
    let (_dir, path) = log_file("huge.jsonl", &lines);
    let run = run(&["extract", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records = records(&run.stdout);
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["line"], 3);
    assert_eq!(records[1]["reason"].as_str().unwrap().len(), 1 << 20);
}

#[test]
fn invalid_utf8_and_a_truncated_last_line_are_warned_about_by_line() {
    let mut log = Vec::new();
    log.extend_from_slice(claude_call("s", "t1", "Bash", json!({"command": "ls"})).as_bytes());
    log.extend_from_slice(b"\n{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"x\",\"name\":\"B\xffash\",\"input\":{}}]}}\n");
    log.extend_from_slice(claude_call("s", "t3", "Bash", json!({"command": "ls"})).as_bytes());
    log.extend_from_slice(
        b"\n{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\"",
    );
    let run = run_with_stdin(&["extract"], &log);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ids: Vec<&str> = run
        .stdout
        .lines()
        .map(|l| if l.contains("\"t1\"") { "t1" } else { "t3" })
        .collect();
    assert_eq!(ids, ["t1", "t3"]);
    assert!(
        run.stderr.contains("reasons: -:2: invalid UTF-8"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("reasons: -:4: truncated last line"),
        "{}",
        run.stderr
    );
}

#[test]
fn with_no_path_and_a_terminal_the_local_agent_logs_are_read_and_announced() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/demo");
    std::fs::create_dir_all(&project).unwrap();
    let line = claude_call("s", "t1", "Bash", json!({"command": "ls"}));
    std::fs::write(project.join("session.jsonl"), line + "\n").unwrap();
    let output = reasons_on_a_terminal(&["extract", "--format", "jsonl"])
        .env("HOME", home.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!(
            "reasons: reading {}",
            home.path().join(".claude/projects").display()
        )),
        "{text}"
    );
    assert!(text.contains("\"call_id\":\"t1\""), "{text}");
}

/// Claude Code keeps its projects in `$CLAUDE_CONFIG_DIR` when that is set: discovery reads
/// them there, where `hook install` puts the hook, and not in `~/.claude`.
#[test]
fn with_no_path_the_claude_logs_are_read_from_claude_config_dir() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("elsewhere");
    for (folder, id) in [
        (config.join("projects/demo"), "moved"),
        (home.path().join(".claude/projects/demo"), "default"),
    ] {
        std::fs::create_dir_all(&folder).unwrap();
        let line = claude_call("s", id, "Bash", json!({"command": "ls"}));
        std::fs::write(folder.join("session.jsonl"), line + "\n").unwrap();
    }
    let output = reasons_on_a_terminal(&["extract", "--format", "jsonl"])
        .env("HOME", home.path())
        .env("CLAUDE_CONFIG_DIR", &config)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let announced = format!("reasons: reading {}", config.join("projects").display());
    assert!(text.contains(&announced), "{text}");
    assert!(text.contains("\"call_id\":\"moved\""), "{text}");
    assert!(!text.contains("\"call_id\":\"default\""), "{text}");
}
