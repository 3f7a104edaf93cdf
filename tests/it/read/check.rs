//! `reasons check` through the real binary.

use serde_json::json;

use crate::util::{arg, claude_call, log_file, records, run};

fn session() -> Vec<String> {
    vec![
        claude_call(
            "s",
            "t1",
            "Bash",
            json!({"command": "cargo test", "reason": "See which tests fail"}),
        ),
        claude_call("s", "t2", "Read", json!({"file_path": "a", "reason": ""})),
        claude_call(
            "s",
            "t3",
            "Edit",
            json!({"file_path": "a", "reason": ["x"]}),
        ),
        claude_call("s", "t4", "Bash", json!({"command": "ls"})),
    ]
}

#[test]
fn flags_calls_without_a_usable_reason_like_a_compiler() {
    let (_dir, path) = log_file("s.jsonl", &session());
    let run = run(&["check", arg(&path)]);
    assert_eq!(run.code, 1);
    let p = arg(&path);
    assert_eq!(
        run.stdout,
        format!(
            "{p}:2: Read t2: blank reason\n{p}:3: Edit t3: reason is not a string\n{p}:4: Bash t4: missing reason\n"
        )
    );
    assert!(
        run.stderr
            .contains("reasons: 3 of 4 calls have no usable reason in 1 file"),
        "{}",
        run.stderr
    );
}

#[test]
fn exits_0_when_every_call_has_a_reason() {
    let (_dir, path) = log_file("s.jsonl", &session()[..1]);
    let run = run(&["check", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
}

#[test]
fn allowed_tools_are_never_flagged() {
    let (_dir, path) = log_file("s.jsonl", &session());
    let run = run(&["check", "--allow", "Re*", "--allow", "Edit", arg(&path)]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout.lines().count(), 1);
    assert!(run.stdout.contains("Bash t4"));
}

#[test]
fn github_annotations_escape_paths_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd, name: 100%.jsonl");
    std::fs::write(
        &path,
        claude_call("s", "t4", "Bash", json!({"command": "ls"})) + "\n",
    )
    .unwrap();
    let run = run(&["check", "--format", "github", arg(&path)]);
    assert_eq!(run.code, 1);
    let escaped = arg(&path)
        .replace('%', "%25")
        .replace(':', "%3A")
        .replace(',', "%2C");
    assert_eq!(
        run.stdout,
        format!("::warning file={escaped},line=1,title=reasons%3A missing reason::Bash t4: missing reason\n")
    );
}

#[test]
fn jsonl_writes_the_flagged_records() {
    let (_dir, path) = log_file("s.jsonl", &session());
    let run = run(&["check", "--format", "jsonl", arg(&path)]);
    let records = records(&run.stdout);
    assert_eq!(records.len(), 3);
    assert_eq!(records[2]["status"], "missing");
    assert_eq!(records[2]["finding"], "missing reason");
}

#[test]
fn lint_flags_reasons_that_do_not_help() {
    let long = "x".repeat(30);
    let mut lines = vec![
        claude_call("s", "a1", "Bash", json!({"command": "ls", "reason": "n/a"})),
        claude_call(
            "s",
            "a2",
            "Bash",
            json!({"command": "ls", "reason": "Run bash"}),
        ),
        claude_call(
            "s",
            "a3",
            "Bash",
            json!({"command": "ls", "reason": "Look. Then read."}),
        ),
        claude_call("s", "a4", "Bash", json!({"command": "ls", "reason": long})),
        claude_call(
            "s",
            "a5",
            "Bash",
            json!({"command": "ls", "reason": "Look around the repository"}),
        ),
    ];
    for n in 0..3 {
        lines.push(claude_call(
            "s",
            &format!("r{n}"),
            "Read",
            json!({"file_path": "f", "reason": "Same thing"}),
        ));
    }
    let (_dir, path) = log_file("s.jsonl", &lines);
    let run = run(&[
        "check",
        "--lint",
        "--max-len",
        "26",
        "--repeat",
        "2",
        arg(&path),
    ]);
    assert_eq!(run.code, 1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].ends_with("Bash a1: reason is a placeholder: \"n/a\""),
        "{}",
        run.stdout
    );
    assert!(lines[1].ends_with("Bash a2: reason only restates the tool name: \"Run bash\""));
    assert!(lines[2].ends_with("Bash a3: reason is longer than one sentence"));
    assert!(lines[3].ends_with("Bash a4: reason is 30 characters long (--max-len 26)"));
    assert!(
        lines[4].ends_with("Read r0: the same reason is on 3 calls of this session (--repeat 2)")
    );
    assert_eq!(lines.len(), 7, "{}", run.stdout);
    assert!(
        run.stderr.contains("; 7 reasons flagged by --lint"),
        "{}",
        run.stderr
    );
    let quiet = crate::util::run(&["check", arg(&path)]);
    assert_eq!(quiet.code, 0, "without --lint these reasons pass");
}

/// What Qwen2.5-Coder-0.5B-Instruct wrote as reasons behind the gateway (`tests/lint/`, its own
/// words): the call again, a description of the call, and the parameter's own description.
#[test]
fn lint_flags_what_a_real_model_wrote_instead_of_a_reason() {
    let run = run(&["check", "--lint", "tests/lint/qwen2.5-coder-0.5b.jsonl"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let said = |id: &str| -> Vec<&str> {
        run.stdout
            .lines()
            .filter(|line| line.contains(&format!(" {id}: ")))
            .map(|line| line.split_once(&format!(" {id}: ")).unwrap().1)
            .collect()
    };
    assert_eq!(
        said("call_1"),
        ["reason only restates the call: \"Run the tests with cargo test.\""]
    );
    for id in ["call_3", "call_8"] {
        assert!(
            said(id)[0]
                .starts_with("reason repeats the parameter's description instead of giving one"),
            "{}",
            run.stdout
        );
    }
    for id in ["call_4", "call_5", "call_6", "call_7"] {
        assert!(
            said(id)[0].starts_with("reason describes the call instead of explaining it: "),
            "{id}: {}",
            run.stdout
        );
    }
    assert_eq!(said("call_2"), ["reason is longer than one sentence"]);
    // A reason that says what the call is for passes, though it names the file it reads.
    assert!(said("call_9").is_empty(), "{}", run.stdout);
    // The findings show the call as `check` always has, without its arguments.
    let jsonl = crate::util::run(&[
        "check",
        "--lint",
        "--format",
        "jsonl",
        "tests/lint/qwen2.5-coder-0.5b.jsonl",
    ]);
    assert!(records(&jsonl.stdout)
        .iter()
        .all(|record| record.get("arguments").is_none()));
}

/// `reasons check bad.jsonl 2>/dev/full` panicked (exit 101): `eprintln!` panics when stderr
/// cannot be written. Every message now goes through one function that drops what it cannot write.
#[cfg(unix)]
#[test]
fn a_stderr_that_cannot_be_written_is_no_panic() {
    use std::process::Stdio;

    let (_dir, path) = log_file(
        "bad.jsonl",
        &["{\"a\": oops}".to_owned(), "not json".to_owned()],
    );
    // A full device: every write fails with ENOSPC.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full is there on every unix this runs on");
    let output = crate::util::reasons()
        .args(["check", arg(&path)])
        .stderr(full)
        .output()
        .expect("reasons runs");
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    // A pipe whose reader is gone: every write fails with EPIPE.
    let mut child = crate::util::reasons()
        .args(["check", "--strict", arg(&path)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reasons runs");
    drop(child.stderr.take());
    let status = child.wait().expect("reasons ends");
    assert_eq!(status.code(), Some(2));
}

/// `--strict` let `{"a": oops}` pass, because the prefilter skipped the line unparsed.
#[test]
fn strict_reports_a_malformed_line_the_prefilter_skips() {
    let (_dir, path) = log_file(
        "bad.jsonl",
        &["{\"type\":\"user\"}".to_owned(), "{\"a\": oops}".to_owned()],
    );
    let plain = run(&["check", arg(&path)]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let strict = run(&["check", "--strict", arg(&path)]);
    assert_eq!(strict.code, 2);
    assert!(
        strict
            .stderr
            .contains(&format!("reasons: {}:2: invalid JSON: ", arg(&path))),
        "{}",
        strict.stderr
    );
}
