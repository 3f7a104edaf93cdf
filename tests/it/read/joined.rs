//! The audit commands joined with reasons logs: calls recorded without their reason (the
//! gateway took it off before the agent saw the call) take the reason logged under their id.

use serde_json::json;

use crate::util::{
    arg, claude_call, logged_line, reasons_on_a_terminal, records, run, run_with_stdin,
};

/// A transcript of four calls, none carrying a reason, and a reasons log for three of them.
fn session() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("session.jsonl");
    let lines: Vec<String> = ["t1", "t2", "t3", "t4"]
        .iter()
        .map(|id| claude_call("s", id, "Bash", json!({"command": "ls"})))
        .collect();
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    let log = dir.path().join("reasons.jsonl");
    let logged = [
        json!({"time": "2026-12-01T08:00:00.000Z", "via": "gateway", "tool": "Bash",
            "call_id": "t1", "reason": "List the project"}),
        json!({"time": "2026-12-01T08:00:01.000Z", "via": "gateway", "tool": "Bash",
            "call_id": "t2", "reason": "   "}),
        json!({"time": "2026-12-01T08:00:02.000Z", "via": "gateway", "tool": "Bash",
            "call_id": "t3", "reason": {"why": "not text"}}),
    ];
    let text: String = logged.iter().map(|record| format!("{record}\n")).collect();
    std::fs::write(&log, text + "{\"torn\":").unwrap();
    (dir, arg(&transcript).to_owned(), arg(&log).to_owned())
}

#[test]
fn an_id_logged_twice_gives_the_same_reason_to_extract_and_to_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("session.jsonl");
    let call = claude_call("s", "toolu_twice", "Bash", json!({"command": "ls"}));
    std::fs::write(&transcript, call + "\n").unwrap();
    let log = dir.path().join("reasons.jsonl");
    let lines = [
        logged_line("toolu_twice", "Bash", "ls", "The first reason"),
        logged_line("toolu_other", "Bash", "pwd", "Another call"),
        logged_line("toolu_twice", "Bash", "ls", "A replay"),
    ];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();

    let extracted = run(&[
        "extract",
        "--format",
        "jsonl",
        "--reasons-log",
        arg(&log),
        arg(&transcript),
    ]);
    assert_eq!(extracted.code, 0, "{}", extracted.stderr);
    assert_eq!(records(&extracted.stdout)[0]["reason"], "The first reason");

    let input = json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "tool_use_id": "toolu_twice"});
    let hooked = run_with_stdin(
        &["hook", "claude-code", "--reasons-log", arg(&log)],
        input.to_string().as_bytes(),
    );
    assert_eq!(hooked.code, 0, "{}", hooked.stderr);
    assert!(
        hooked.stdout.contains("The first reason") && !hooked.stdout.contains("A replay"),
        "{}",
        hooked.stdout
    );
}

#[test]
fn extract_takes_each_calls_reason_from_the_log_and_says_so() {
    let (_dir, transcript, log) = session();
    let run = run(&[
        "extract",
        "--format",
        "jsonl",
        "--reasons-log",
        &log,
        &transcript,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got: Vec<_> = records(&run.stdout)
        .iter()
        .map(|record| {
            (
                record["call_id"].clone(),
                record["status"].clone(),
                record["reason"].clone(),
                record["reason_from"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                json!("t1"),
                json!("present"),
                json!("List the project"),
                json!("log")
            ),
            (json!("t2"), json!("blank"), json!("   "), json!("log")),
            (
                json!("t3"),
                json!("invalid"),
                json!({"why": "not text"}),
                json!("log"),
            ),
            (json!("t4"), json!("missing"), json!(null), json!("call")),
        ]
    );
    assert!(
        run.stderr
            .contains(": 1 lines are not reasons-log records, skipped"),
        "{}",
        run.stderr
    );
}

#[test]
fn stats_and_check_count_the_joined_reasons() {
    let (_dir, transcript, log) = session();
    let stats = run(&[
        "stats",
        "--format",
        "json",
        "--reasons-log",
        &log,
        &transcript,
    ]);
    let totals = &serde_json::from_str::<serde_json::Value>(&stats.stdout).unwrap()["totals"];
    assert_eq!(
        (totals["present"].clone(), totals["missing"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(totals["coverage"], json!(25.0));
    let check = run(&["check", "--reasons-log", &log, &transcript]);
    assert_eq!(check.code, 1);
    assert!(!check.stdout.contains("t1"), "{}", check.stdout);
    for flagged in [
        "t2: blank reason",
        "t3: reason is not a string",
        "t4: missing reason",
    ] {
        assert!(check.stdout.contains(flagged), "{}", check.stdout);
    }
}

#[test]
fn a_reasons_log_is_never_read_as_a_session_log() {
    let (dir, _transcript, log) = session();
    let folder = arg(dir.path()).to_owned();
    let run = run(&[
        "extract",
        "--format",
        "jsonl",
        "--reasons-log",
        &log,
        &folder,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records = records(&run.stdout);
    assert_eq!(records.len(), 4);
    assert!(records.iter().all(|record| record["source"]
        .as_str()
        .unwrap()
        .ends_with("session.jsonl")));
}

#[test]
fn a_reasons_log_that_cannot_be_read_is_an_error() {
    let (dir, transcript, _log) = session();
    let missing = dir.path().join("none.jsonl");
    let run = run(&["stats", "--reasons-log", arg(&missing), &transcript]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .starts_with("reasons: cannot open the reasons log "),
        "{}",
        run.stderr
    );
}

#[test]
fn reading_the_local_folders_joins_the_default_reasons_log() {
    // `script` gives the command a terminal for stdin, as a person typing it would.
    let (dir, transcript, log) = session();
    let home = dir.path().join("home");
    let project = home.join(".claude/projects/demo");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(&transcript, project.join("session.jsonl")).unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(state.join("reasons")).unwrap();
    std::fs::copy(&log, state.join("reasons/reasons.jsonl")).unwrap();
    let output = reasons_on_a_terminal(&["extract", "--format", "jsonl"])
        .env("HOME", &home)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!(
            "reasons: joining {}",
            state.join("reasons/reasons.jsonl").display()
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "\"reason\":\"List the project\",\"status\":\"present\",\"reason_from\":\"log\""
        ),
        "{text}"
    );
}

/// A call id logged twice (a history replayed through a layer, a log appended twice) has one
/// reason wherever it is looked up: the first, in the audit's join and in the gateway's
/// restoration of a history alike.
#[test]
fn an_id_logged_twice_gives_the_same_reason_to_extract_and_to_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("session.jsonl");
    let line = claude_call("s", "t1", "Bash", json!({"command": "ls"}));
    std::fs::write(&transcript, line + "\n").unwrap();
    let log = dir.path().join("reasons.jsonl");
    let logged: String = ["List the project", "Replayed later"]
        .iter()
        .map(|reason| {
            let record = json!({"time": "2026-12-01T08:00:00.000Z", "via": "gateway",
                "tool": "Bash", "call_id": "t1", "reason": reason});
            format!("{record}\n")
        })
        .collect();
    std::fs::write(&log, logged).unwrap();

    let run = run(&[
        "extract",
        "--format",
        "jsonl",
        "--reasons-log",
        arg(&log),
        arg(&transcript),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let extracted = records(&run.stdout)[0]["reason"].clone();

    let mut recall = reasons::gateway::Recall::default();
    reasons::reasons_log::read_end(&log, reasons::gateway::RECALL_TAIL, &mut |logged| {
        recall.note_logged(logged)
    })
    .unwrap();
    let restored = recall.get("t1").unwrap().logged.reason.clone();

    assert_eq!(extracted, json!("List the project"));
    assert_eq!(restored, extracted);
}
