//! Hostile input through the real binary: huge and endless input, nesting past any stack, bytes
//! that are not text, files that change, vanish or are no files while they are read, and readers
//! that stop reading. Nothing panics, nothing hangs, and bad input never changes what is
//! reported about the good input around it.
//!
//! The very large cases are `#[ignore]`d: `.ci/run` runs them in a release build.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::util::{
    arg, claude_call, log_file, output_with_stdin, reasons, records, run, run_with_stdin,
};

/// A call line, as a transcript writes it.
fn call(id: &str) -> String {
    claude_call("s", id, "Bash", json!({"command": "ls", "reason": "look"}))
}

fn ids(stdout: &str) -> Vec<String> {
    records(stdout)
        .iter()
        .map(|record| record["call_id"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Runs `reasons filter` on `input` and returns its stdout, asserting a quiet success.
#[track_caller]
fn filter_bytes(input: &[u8]) -> Vec<u8> {
    let output = output_with_stdin(&["filter"], input);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// `depth` arrays, one inside the other, in a call's input: past serde_json's recursion limit.
fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn deeply_nested_json_is_a_clear_error_naming_the_line_not_a_stack_overflow() {
    let deep = format!(
        r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"deep","name":"Bash","input":{}}}]}}}}"#,
        nested(100_000)
    );
    let (_dir, path) = log_file("deep.jsonl", &[call("t1"), deep.clone(), call("t3")]);
    let run = run(&["extract", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(ids(&run.stdout), ["t1", "t3"]);
    let warning = format!(
        "reasons: {}:2: invalid JSON: recursion limit exceeded",
        arg(&path)
    );
    assert!(run.stderr.starts_with(&warning), "{}", run.stderr);
    let strict = crate::util::run(&["extract", "--strict", arg(&path)]);
    assert_eq!(strict.code, 2);
    assert!(
        strict.stderr.contains(":2: invalid JSON: recursion limit"),
        "{}",
        strict.stderr
    );

    // A whole document, pretty-printed: the error names the line the parser gave up on.
    let document = format!("{{\n  \"history\":\n    {}\n}}\n", nested(100_000));
    let (_dir, path) = log_file("deep.json", &[document]);
    let run = crate::util::run(&["extract", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let warning = format!(
        "reasons: {}:3: invalid JSON: recursion limit exceeded",
        arg(&path)
    );
    assert!(run.stderr.starts_with(&warning), "{}", run.stderr);

    // The filter passes it on as it came.
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":{}}}}}"#,
        nested(100_000)
    );
    let input = format!("{line}\n{line}");
    assert_eq!(filter_bytes(input.as_bytes()), input.as_bytes());
}

#[test]
fn nul_bytes_are_malformed_lines_and_the_log_goes_on() {
    let mut log = Vec::new();
    log.extend_from_slice(call("t1").as_bytes());
    log.extend_from_slice(b"\n\0\0\0\n");
    log.extend_from_slice(call("t3").replace("ls", "l\0s").as_bytes());
    log.push(b'\n');
    log.extend_from_slice(call("t4").as_bytes());
    log.push(b'\n');
    let run = run_with_stdin(&["extract"], &log);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(ids(&run.stdout), ["t1", "t4"]);
    assert!(
        run.stderr.contains("reasons: -:2: invalid JSON"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("reasons: -:3: invalid JSON"),
        "{}",
        run.stderr
    );
    assert_eq!(filter_bytes(&log), log);
}

#[test]
fn invalid_utf8_or_a_cut_in_a_single_document_names_its_line() {
    let document =
        "{\n  \"history\": [\n    {\"role\": \"assistant\", \"content\": \"caf\u{e9}\"}\n  ]\n}\n";
    let mut broken = document.as_bytes().to_vec();
    let at = broken.iter().position(|&byte| byte == 0xC3).expect("é");
    broken[at] = 0xFF;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("broken.json");
    std::fs::write(&path, &broken).expect("written");
    let run = run(&["extract", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The document holds no call: after the line, the run says no agent log was found.
    assert!(
        run.stderr
            .starts_with(&format!("reasons: {}:3: invalid UTF-8\n", arg(&path))),
        "{}",
        run.stderr
    );

    let cut = &document[..document.find("assistant").expect("a role")];
    std::fs::write(&path, cut).expect("written");
    let run = crate::util::run(&["extract", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with(&format!("reasons: {}:3: invalid JSON: EOF", arg(&path))),
        "{}",
        run.stderr
    );
}

#[test]
fn a_line_written_in_two_halves_while_followed_is_read_whole() {
    let (_dir, path) = log_file("growing.jsonl", &[call("t1")]);
    let mut child = reasons()
        .args(["extract", "--follow", arg(&path)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reasons starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut record = String::new();
    stdout.read_line(&mut record).expect("a record");
    assert!(record.contains("\"t1\""));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("opened");
    let line = call("t2");
    let (first, second) = line.split_at(line.len() / 2);
    file.write_all(first.as_bytes()).expect("written");
    file.flush().expect("written");
    // The rest is written once the follower has read the half line at the end of the file.
    #[cfg(target_os = "linux")]
    crate::util::wait_until_read(child.id(), &path);
    #[cfg(not(target_os = "linux"))]
    std::thread::sleep(std::time::Duration::from_millis(600));
    writeln!(file, "{second}").expect("written");
    record.clear();
    stdout.read_line(&mut record).expect("a record");
    assert!(record.contains("\"t2\""), "{record}");

    // Deleted while followed: what its writer still appends is read.
    std::fs::remove_file(&path).expect("removed");
    writeln!(file, "{}", call("t3")).expect("written");
    record.clear();
    stdout.read_line(&mut record).expect("a record");
    assert!(record.contains("\"t3\""), "{record}");
    child.kill().expect("killed");
    let output = child.wait_with_output().expect("ended");
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_directory_where_a_log_was_expected_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for command in ["extract", "check", "stats"] {
        let output = reasons()
            .args([command, "-"])
            .stdin(std::fs::File::open(dir.path()).expect("a directory opens"))
            .output()
            .expect("reasons runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(
            stderr.starts_with("reasons: -: cannot read"),
            "{command}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        // With no PATH, a directory is nothing to read from: a PATH is asked for.
        let output = reasons()
            .arg(command)
            .stdin(std::fs::File::open(dir.path()).expect("a directory opens"))
            .output()
            .expect("reasons runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(stderr.starts_with("reasons: no PATH given"), "{stderr}");
    }
    let output = reasons()
        .arg("filter")
        .stdin(std::fs::File::open(dir.path()).expect("a directory opens"))
        .output()
        .expect("reasons runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("reasons: cannot read standard input"),
        "{stderr}"
    );
}

/// Makes a FIFO, or fails the test: without one it would check nothing.
#[cfg(unix)]
#[track_caller]
fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status();
    assert!(
        made.as_ref().is_ok_and(|status| status.success()),
        "mkfifo {}: {made:?}",
        path.display()
    );
}

/// A FIFO named on the command line is read (that is how `<(command)` reaches the tool), up to
/// a writer that dies mid-line; one that a walk or a pattern meets is left out instead of
/// blocking the run until something writes to it.
#[cfg(unix)]
#[test]
fn fifos_are_read_when_named_and_skipped_when_met_on_a_walk() {
    let (dir, _) = log_file("a.jsonl", &[call("t1")]);
    let fifo = dir.path().join("pipe.jsonl");
    mkfifo(&fifo);
    let walked = run(&["extract", arg(dir.path())]);
    assert_eq!(walked.code, 0, "{}", walked.stderr);
    assert_eq!(ids(&walked.stdout), ["t1"]);
    let pattern = format!("{}/*.jsonl", dir.path().display());
    let globbed = crate::util::run(&["extract", &pattern]);
    assert_eq!(ids(&globbed.stdout), ["t1"]);

    let child = reasons()
        .args(["extract", arg(&fifo)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reasons starts");
    let mut writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("opened");
    let cut = call("t3");
    write!(writer, "{}\n{}", call("t2"), &cut[..cut.len() / 2]).expect("written");
    drop(writer);
    let output = child.wait_with_output().expect("ended");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(ids(&String::from_utf8_lossy(&output.stdout)), ["t2"]);
    assert_eq!(
        stderr,
        format!("reasons: {}:2: truncated last line\n", arg(&fifo))
    );
}

#[cfg(unix)]
#[test]
fn directory_symlink_loops_neither_hang_nor_count_a_call_twice() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir_all(dir.path().join("a/b")).expect("made");
    std::fs::write(dir.path().join("top.jsonl"), call("t1") + "\n").expect("written");
    std::fs::write(dir.path().join("a/b/deep.jsonl"), call("t2") + "\n").expect("written");
    for link in ["a/up", "a/b/up", "a/b/again"] {
        std::os::unix::fs::symlink(dir.path(), dir.path().join(link)).expect("linked");
    }
    let root = arg(dir.path()).to_owned();
    for path in [
        root.clone(),
        format!("{root}/**/*.jsonl"),
        format!("{root}/**"),
    ] {
        let run = run(&["extract", &path]);
        assert_eq!(run.code, 0, "{path}: {}", run.stderr);
        assert_eq!(ids(&run.stdout), ["t2", "t1"], "{path}");
    }
}

#[test]
fn a_glob_matching_nothing_is_a_clear_message_and_exit_2_for_every_command() {
    for command in ["extract", "check", "stats"] {
        let run = run(&[command, "logs/none/**/*.jsonl"]);
        assert_eq!(run.code, 2, "{command}");
        assert_eq!(
            run.stderr.lines().next(),
            Some("reasons: logs/none/**/*.jsonl: no files match this pattern"),
            "{command}: {}",
            run.stderr
        );
    }
}

/// `head -1` on every path that writes: one file streamed, stdin streamed, many files in
/// parallel, and the other commands.
#[test]
fn a_closed_stdout_ends_every_command_quietly_with_status_0() {
    let lines: Vec<String> = (0..20_000).map(|n| call(&format!("t{n}"))).collect();
    let (dir, path) = log_file("big.jsonl", &lines);
    std::fs::copy(&path, dir.path().join("big2.jsonl")).expect("copied");
    let one = arg(&path).to_owned();
    let all = arg(dir.path()).to_owned();
    // Calls without a reason, so that `check` has a line to write for each.
    let unexplained: Vec<String> = (0..20_000)
        .map(|n| claude_call("s", &format!("m{n}"), "Bash", json!({"command": "ls"})))
        .collect();
    let (_other, unexplained) = log_file("unexplained.jsonl", &unexplained);
    let cases: [(&[&str], bool); 5] = [
        (&["extract", &one], false),
        (&["extract", &all], false),
        (&["extract", "--format", "table", &one], false),
        (&["extract", "-"], true),
        (&["check", arg(&unexplained)], false),
    ];
    for (args, from_stdin) in cases {
        let mut command = reasons();
        command
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if from_stdin {
            command.stdin(std::fs::File::open(&path).expect("opened"));
        }
        let mut child = command.spawn().expect("reasons starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("a line");
        drop(stdout);
        let output = child.wait_with_output().expect("ended");
        let stderr = String::from_utf8_lossy(&output.stderr);
        // `check` finds calls with reasons here, so it has nothing to say but the summary.
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            output.status.code() == Some(0)
                || (args[0] == "check" && output.status.code() == Some(1)),
            "{args:?}: {:?} {stderr}",
            output.status
        );
        if args[0] == "extract" {
            assert_eq!(stderr, "", "{args:?}");
        }
    }
}

/// 200 MB on one line: read whole between the calls around it, and passed by `filter` byte
/// for byte.
#[test]
#[ignore = "large: run by .ci/run in a release build"]
fn a_200_mb_single_line_is_read_and_filtered_whole() {
    let content = "x".repeat(200 << 20);
    let huge = json!({"type": "user", "message": {"content": [{"type": "tool_result", "content": content}]}})
        .to_string();
    let (_dir, path) = log_file("huge.jsonl", &[call("t1"), huge.clone(), call("t3")]);
    let run = run(&["extract", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(ids(&run.stdout), ["t1", "t3"]);
    assert_eq!(records(&run.stdout)[1]["line"], 3);

    let huge_listing = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"{}","inputSchema":{{"type":"object"}}}}]}}}}"#,
        "t".repeat(200 << 20)
    );
    for line in [huge, huge_listing] {
        let input = format!("{line}\n{{}}\n");
        let output = filter_bytes(input.as_bytes());
        assert_eq!(output.split(|&byte| byte == b'\n').count(), 3);
        if line.contains("tool_result") {
            assert!(output == input.as_bytes());
        }
    }
}

/// Ten million tiny lines: every one counted, the call after them on its right line, and as
/// many lines out of `filter` as went in.
#[test]
#[ignore = "large: run by .ci/run in a release build"]
fn ten_million_tiny_lines_keep_their_count() {
    const LINES: usize = 10_000_000;
    let mut log = "{}\n".repeat(LINES);
    log.push_str(&call("last"));
    log.push('\n');
    let run = run_with_stdin(&["extract"], log.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records = records(&run.stdout);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["line"], LINES as u64 + 1);

    let mut stream = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n".repeat(LINES);
    stream.push_str("\n\n");
    let output = filter_bytes(stream.as_bytes());
    assert!(output == stream.as_bytes());

    let mut child = reasons()
        .arg("filter")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("reasons starts");
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        let chunk = "{}\n".repeat(100_000);
        for _ in 0..LINES / 100_000 {
            stdin.write_all(chunk.as_bytes()).expect("the filter reads");
        }
    });
    let mut count = 0;
    let mut out = child.stdout.take().expect("piped");
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = out.read(&mut buffer).expect("read");
        if read == 0 {
            break;
        }
        count += buffer[..read].iter().filter(|&&byte| byte == b'\n').count();
    }
    writer.join().expect("written");
    assert!(child.wait().expect("ended").success());
    assert_eq!(count, LINES);
}
