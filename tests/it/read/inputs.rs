//! What the commands that read logs say about what they were given: a file that is no log, a
//! run that found no agent log at all, and a run with no PATH and no terminal.

use std::process::Stdio;

use serde_json::json;

use crate::util::{arg, claude_call, log_file, reasons, run, run_with_stdin, Run};

/// Runs `reasons ARGS` with standard input from `stdin`.
fn run_with(args: &[&str], stdin: Stdio) -> Run {
    reasons()
        .args(args)
        .stdin(stdin)
        .output()
        .expect("reasons runs")
        .into()
}

#[test]
fn a_binary_file_gets_one_warning_not_one_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("core.bin");
    // Bytes of every value, NULs and invalid UTF-8 among them, over thousands of "lines".
    let bytes: Vec<u8> = (0..200_000u32)
        .map(|at| (at.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(&binary, &bytes).unwrap();
    for command in ["extract", "check", "stats", "report"] {
        let run = run(&[command, arg(&binary)]);
        let warnings: Vec<&str> = run.stderr.lines().collect();
        assert!(
            warnings.len() <= 3,
            "{command}: {} lines on stderr:\n{}",
            warnings.len(),
            run.stderr
        );
        let warning = warnings
            .iter()
            .find(|line| line.contains("not an agent log"))
            .unwrap_or_else(|| panic!("{command}: {}", run.stderr));
        assert!(warning.contains(arg(&binary)), "{warning}");
        assert!(warning.contains("looks binary"), "{warning}");
    }
}

#[test]
fn a_text_file_that_is_not_json_lines_is_named_as_such() {
    let run = run(&["stats", "README.md"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("reasons: README.md: not an agent log: not JSON lines ("),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("README.md:1"),
        "no warning per line: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("reasons: no agent log found in 1 file: README.md"),
        "{}",
        run.stderr
    );
}

#[test]
fn malformed_lines_beyond_the_first_few_are_counted_not_listed() {
    let mut lines = vec![claude_call(
        "s",
        "t1",
        "Bash",
        json!({"command": "ls", "reason": "look"}),
    )];
    lines.extend((0..40).map(|at| format!("{{\"cut\": {at}")));
    let (_dir, path) = log_file("session.jsonl", &lines);
    let run = run(&["extract", "--format", "jsonl", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 4, "{}", run.stderr);
    for (warning, line) in warnings[..3].iter().zip(2..) {
        assert!(
            warning.starts_with(&format!("reasons: {}:{line}: ", arg(&path))),
            "{warning}"
        );
    }
    assert_eq!(
        warnings[3],
        format!(
            "reasons: {}: 37 more malformed lines skipped (40 in all)",
            arg(&path)
        )
    );
    // `stats` still counts every one.
    let stats = crate::util::run(&["stats", "--format", "json", arg(&path)]);
    let report: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(report["malformed_lines"], 40);
}

#[test]
fn a_folder_of_json_without_an_agent_log_says_no_agent_log_was_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.json"),
        r#"{"name": "config", "values": [1, 2]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.jsonl"),
        "{\"event\": \"start\"}\n{\"event\": \"stop\"}\n",
    )
    .unwrap();
    for command in ["extract", "check", "stats", "report"] {
        let run = run(&[command, arg(dir.path())]);
        assert!(
            run.stderr.contains(&format!(
                "reasons: no agent log found in 2 files: {}, {}",
                arg(&dir.path().join("a.json")),
                arg(&dir.path().join("b.jsonl"))
            )),
            "{command}: {}",
            run.stderr
        );
    }
    // A log with calls says nothing of the kind.
    let run = run(&["stats", "samples/mcp.jsonl"]);
    assert!(!run.stderr.contains("no agent log"), "{}", run.stderr);
}

#[test]
fn with_no_path_and_no_terminal_stdin_at_dev_null_is_an_error_asking_for_a_path() {
    for command in ["extract", "check", "stats", "report"] {
        let run = run_with(&[command], Stdio::null());
        assert_eq!(run.code, 2, "{command}: {}", run.stderr);
        assert!(
            run.stderr.starts_with("reasons: no PATH given")
                && run.stderr.contains("give the logs to read as PATHs"),
            "{command}: {}",
            run.stderr
        );
        assert_eq!(run.stdout, "", "{command}: nothing is written");
    }
}

#[test]
fn with_no_path_stdin_from_a_pipe_or_a_file_is_read_and_said_so_once() {
    let log = std::fs::read("samples/mcp.jsonl").unwrap();
    let piped = run_with_stdin(&["stats", "--format", "json"], &log);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert_eq!(piped.stderr, "reasons: reading standard input\n");
    let report: serde_json::Value = serde_json::from_str(&piped.stdout).unwrap();
    assert_eq!(report["totals"]["calls"], 5);
    let file = std::fs::File::open("samples/mcp.jsonl").unwrap();
    let from_file = run_with(&["stats", "--format", "json"], Stdio::from(file));
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    assert_eq!(from_file.stderr, "reasons: reading standard input\n");
    assert_eq!(from_file.stdout, piped.stdout);
    // Named as `-`, stdin is read without a word.
    let named = run_with_stdin(&["stats", "--format", "json", "-"], &log);
    assert_eq!(named.stderr, "");
}

#[test]
fn report_on_a_missing_file_leaves_no_page_and_keeps_the_one_there() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page.html");
    let missing = run(&["report", "no-such.jsonl", "-o", arg(&out)]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert!(!out.exists(), "an empty page was left: {}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains(&format!("{}: not written: no log was read", arg(&out))),
        "{}",
        missing.stderr
    );
    // A page from a good run stays as it was when a later run reads nothing.
    let good = run(&["report", "samples/mcp.jsonl", "-o", arg(&out)]);
    assert_eq!(good.code, 0, "{}", good.stderr);
    let page = std::fs::read(&out).unwrap();
    let missing = run(&["report", "no-such.jsonl", "-o", arg(&out)]);
    assert_eq!(missing.code, 2);
    assert_eq!(std::fs::read(&out).unwrap(), page);
    // No temporary file is left beside it either.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["page.html"]);
}

#[test]
fn report_says_where_it_wrote_the_page_and_how_many_calls_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("review.html");
    let run = run(&[
        "report",
        "samples/mcp.jsonl",
        "samples/claude-code.jsonl",
        "-o",
        arg(&out),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!("reasons: wrote {} (9 calls)\n", arg(&out))
    );
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .ends_with("</body></html>\n"));
}

#[test]
fn a_bidi_override_in_a_reason_is_shown_as_a_mark_on_the_page() {
    // Applied, U+202E would turn "exe." around, so that the reason displays "….exe" backwards.
    let reason = "Read the notes\u{202e}exe.\u{202c} \u{2067}first\u{2069}";
    let line = claude_call(
        "s",
        "t1",
        "Bash",
        json!({"command": "cat notes\u{202e}txt", "reason": reason}),
    );
    let (_dir, path) = log_file("s.jsonl", &[line]);
    let run = run(&["report", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for code in (0x202a..=0x202e).chain(0x2066..=0x2069) {
        let character = char::from_u32(code).unwrap();
        assert!(!run.stdout.contains(character), "U+{code:04X} on the page");
        assert!(!run.stdout.to_lowercase().contains(&format!("&#x{code:x};")));
        assert!(!run.stdout.contains(&format!("&#{code};")));
    }
    assert!(
        run.stdout
            .contains("Read the notes⟦U+202E⟧exe.⟦U+202C⟧ ⟦U+2067⟧first⟦U+2069⟧"),
        "the reason, its marks in place"
    );
    assert!(run.stdout.contains("cat notes⟦U+202E⟧txt"));
}
