//! The agents that keep their sessions in SQLite (OpenCode, Kilo, Crush, Goose, Hermes Agent,
//! OpenClaw): stores built with `util/stores.rs` (the schemas of the real ones), read while
//! another connection writes them, and damaged in the ways a store can be.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::util::stores::{
    hermes_call, hermes_message, openclaw_event, openclaw_store, opencode_part, opencode_tool,
    store, CRUSH_SCHEMA, GOOSE_SCHEMA, HERMES_SCHEMA, KILO_TABLES, OPENCLAW_NAVIGATION,
    OPENCODE_SCHEMA,
};
use crate::util::{arg, extract_records, records, run};

fn opencode_store(dir: &Path) -> (PathBuf, Connection) {
    let path = dir.join("opencode.db");
    let connection = store(&path, OPENCODE_SCHEMA);
    opencode_part(
        &connection,
        "prt_1",
        "ses_a",
        r#"{"type":"text","text":"list the files"}"#,
    );
    opencode_part(
        &connection,
        "prt_2",
        "ses_a",
        &opencode_tool(
            "call_1",
            json!({"command": "ls", "description": "List", "reason": "See the files."}),
        ),
    );
    opencode_part(
        &connection,
        "prt_3",
        "ses_a",
        r#"{"reason":"tool-calls","type":"step-finish","tokens":{"input":1}}"#,
    );
    (path, connection)
}

fn places(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .map(|record| format!("{}:{}", record["source"].as_str().unwrap(), record["line"]))
        .collect()
}

/// The file's bytes and modification time: what reading must never change.
fn fingerprint(path: &Path) -> (Vec<u8>, std::time::SystemTime) {
    let metadata = std::fs::metadata(path).unwrap();
    (std::fs::read(path).unwrap(), metadata.modified().unwrap())
}

#[test]
fn an_opencode_store_is_read_while_the_agent_writes_it_and_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let (path, agent) = opencode_store(dir.path());
    // The agent goes on: a committed part sits in the `-wal` only, and another is being
    // written in a transaction it has not committed.
    agent
        .pragma_update(None, "wal_autocheckpoint", 0)
        .expect("no checkpoint");
    opencode_part(
        &agent,
        "prt_4",
        "ses_a",
        &opencode_tool("call_2", json!({"command": "pwd"})),
    );
    agent.execute_batch("BEGIN IMMEDIATE").unwrap();
    opencode_part(
        &agent,
        "prt_5",
        "ses_a",
        &opencode_tool("call_3", json!({"command": "uncommitted"})),
    );
    let before = fingerprint(&path);
    let run = run(&["extract", "--format", "jsonl", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let found = records(&run.stdout);
    let name = arg(&path);
    assert_eq!(
        places(&found),
        [format!("{name}:part:2"), format!("{name}:part:4")]
    );
    let first = &found[0];
    assert_eq!(first["format"], "opencode");
    assert_eq!(first["session"], "ses_a");
    assert_eq!(first["call_id"], "call_1");
    assert_eq!(first["status"], "present");
    assert_eq!(first["reason"], "See the files.");
    assert_eq!(first["timestamp"], "1785878930703");
    assert_eq!(found[1]["status"], "missing");
    assert_eq!(fingerprint(&path), before, "the store was written");
    // The reader held no lock the agent notices: it commits, and writes on.
    agent.execute_batch("COMMIT").expect("the agent commits");
    opencode_part(
        &agent,
        "prt_6",
        "ses_a",
        &opencode_tool("call_4", json!({})),
    );
    let again = extract_records(&[arg(&path)]);
    assert_eq!(again.len(), 4);
}

#[test]
fn a_store_with_kilos_tables_is_kilo() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.db");
    let connection = store(&path, &format!("{OPENCODE_SCHEMA}{KILO_TABLES}"));
    opencode_part(
        &connection,
        "prt_1",
        "ses_k",
        &opencode_tool("call_k", json!({"command": "ls"})),
    );
    let found = extract_records(&[arg(&path)]);
    assert_eq!(found[0]["format"], "kilo");
    assert_eq!(found[0]["call_id"], "call_k");
}

#[test]
fn crush_and_goose_stores_are_told_apart_by_their_columns() {
    let dir = tempfile::tempdir().unwrap();
    let crush = dir.path().join("crush.db");
    let connection = store(&crush, CRUSH_SCHEMA);
    let parts = json!([
        {"type": "tool_call", "data": {"id": "call_c", "name": "bash",
            "input": "{\"command\": \"ls\", \"reason\": \"Look.\"}", "type": "function", "finished": true}},
        {"type": "finish", "data": {"reason": "tool_use", "time": 1754315350}}
    ]);
    connection
        .execute(
            "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) \
             VALUES ('m1', 's_crush', 'assistant', ?1, 1754315346, 1754315350)",
            [parts.to_string()],
        )
        .unwrap();
    let goose = dir.path().join("sessions.db");
    let connection = store(&goose, GOOSE_SCHEMA);
    let content = json!([
        {"type": "toolRequest", "id": "tr_g", "toolCall": {"status": "success",
            "value": {"name": "shell", "arguments": {"command": "ls", "reason": ""}}}}
    ]);
    connection
        .execute(
            "INSERT INTO sessions (id, working_dir) VALUES ('20260805_1', '/w')",
            (),
        )
        .unwrap();
    connection
        .execute(
            "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) \
             VALUES ('chatcmpl-1', '20260805_1', 'assistant', ?1, 1785964864)",
            [content.to_string()],
        )
        .unwrap();
    let found = extract_records(&[arg(&crush), arg(&goose)]);
    let seen: Vec<_> = found
        .iter()
        .map(|record| {
            (
                record["format"].as_str().unwrap(),
                record["session"].as_str().unwrap(),
                record["call_id"].as_str().unwrap(),
                record["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("crush", "s_crush", "call_c", "present"),
            ("goose", "20260805_1", "tr_g", "blank")
        ]
    );
    assert_eq!(
        places(&found),
        [
            format!("{}:messages:1", arg(&crush)),
            format!("{}:messages:1", arg(&goose))
        ]
    );
}

/// A call as [`calls`] shows it: its place, session, id, status and reason.
type Shown = (String, String, String, String, String);

fn call(place: String, session: &str, id: &str, status: &str, reason: &str) -> Shown {
    let text = str::to_owned;
    (place, text(session), text(id), text(status), text(reason))
}

/// The place (`source:line`), session, call id, status and reason of each record.
fn calls(records: &[Value]) -> Vec<Shown> {
    records
        .iter()
        .map(|record| {
            // A reason that is not text, as JSON.
            let text = |key: &str| match &record[key] {
                Value::String(text) => text.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (
                format!("{}:{}", text("source"), record["line"]),
                text("session"),
                text("call_id"),
                text("status"),
                text("reason"),
            )
        })
        .collect()
}

/// Hermes Agent keeps every session in `state.db`, a message a row of `messages`: an assistant
/// row's `tool_calls` (JSON text) are its calls, and the rows without calls are not read. Read
/// while Hermes writes on, never written.
#[test]
fn a_hermes_state_db_is_read_row_by_row_while_hermes_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let hermes = store(&path, HERMES_SCHEMA);
    hermes
        .pragma_update(None, "wal_autocheckpoint", 0)
        .expect("no checkpoint");
    let (first, second) = ("20260806_091500_4f2a1c", "20260806_093000_77b0d2");
    for session in [first, second] {
        hermes
            .execute(
                "INSERT INTO sessions (id, source, started_at) VALUES (?1, 'cli', 1786005300.0)",
                [session],
            )
            .unwrap();
    }
    hermes_message(&hermes, first, "user", None, None, 1786005300.25);
    let both = json!([
        hermes_call(
            "call_h1",
            "terminal",
            json!({"command": "df -h", "reason": "See which disk is full."})
        ),
        hermes_call("call_h2", "read_file", json!({"path": "/var/log/syslog"})),
    ]);
    hermes_message(&hermes, first, "assistant", Some(&both), None, 1786005303.5);
    hermes_message(&hermes, first, "tool", None, Some("call_h1"), 1786005304.0);
    let blank = json!([hermes_call(
        "call_h3",
        "terminal",
        json!({"command": "ls", "reason": " "})
    )]);
    hermes_message(
        &hermes,
        second,
        "assistant",
        Some(&blank),
        None,
        1786005400.0,
    );
    // Compacted in place: Hermes archives the live rows and writes them again, calls and all.
    hermes
        .execute(
            "UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ?1",
            [first],
        )
        .unwrap();
    hermes_message(&hermes, first, "assistant", Some(&both), None, 1786005303.5);
    // A row Hermes has not committed yet.
    hermes.execute_batch("BEGIN IMMEDIATE").unwrap();
    let pending = json!([hermes_call("call_h9", "terminal", json!({}))]);
    hermes_message(
        &hermes,
        second,
        "assistant",
        Some(&pending),
        None,
        1786005500.0,
    );
    let before = fingerprint(&path);
    let run = run(&["extract", "--format", "jsonl", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let found = records(&run.stdout);
    let place = |rowid: u32| format!("{}:messages:{rowid}", arg(&path));
    let expected = [
        call(
            place(2),
            first,
            "call_h1",
            "present",
            "See which disk is full.",
        ),
        call(place(2), first, "call_h2", "missing", ""),
        call(place(4), second, "call_h3", "blank", " "),
    ];
    assert_eq!(calls(&found), expected);
    assert!(found.iter().all(|record| record["format"] == "hermes"));
    assert_eq!(found[0]["timestamp"], "1786005303.5");
    assert_eq!(fingerprint(&path), before, "the store was written");
    hermes.execute_batch("COMMIT").expect("Hermes commits");
    assert_eq!(extract_records(&[arg(&path)]).len(), 4);
}

/// OpenClaw keeps each agent's sessions in `openclaw-agent.sqlite`, one Pi session entry a row
/// of `transcript_events`, the rows of its sessions interleaved, and an event of 1 KiB or more
/// zstd-compressed (`event_zstd`, `event_json` null). On the OpenAI Responses API a call's id
/// is `<call id>|<item id>`, kept as recorded.
#[test]
fn an_openclaw_store_is_read_with_its_compressed_events_and_each_rows_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("openclaw-agent.sqlite");
    let openclaw = openclaw_store(&path);
    let (first, second) = (
        "5d0c7a91-2b44-4f0e-8e61-9a7b3c2d1e0f",
        "8e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b",
    );
    let header = |session: &str| {
        json!({"type": "session", "version": 4, "id": session,
            "timestamp": "2026-12-03T07:00:00.000Z", "cwd": "/home/dev/.openclaw/workspace"})
    };
    let assistant = |id: &str, at: &str, blocks: Value| {
        json!({"type": "message", "id": id, "parentId": "p", "timestamp": at,
            "message": {"role": "assistant", "content": blocks, "api": "openai-responses",
                "stopReason": "toolUse", "timestamp": 1796281203000u64}})
    };
    let tool_call = |id: &str, name: &str, arguments: Value| json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments});
    openclaw_event(&openclaw, first, 0, &header(first), false);
    openclaw_event(&openclaw, second, 0, &header(second), false);
    let exec = tool_call(
        "call_a1|fc_a1",
        "exec",
        json!({"command": "git log -1", "reason": "The last commit answers it."}),
    );
    openclaw_event(
        &openclaw,
        first,
        1,
        &assistant("m1", "2026-12-03T07:00:05.500Z", json!([exec])),
        false,
    );
    let long = "x".repeat(2000);
    let write = tool_call(
        "call_b1|fc_b1",
        "write",
        json!({"path": "NOTES.md", "content": long}),
    );
    openclaw_event(
        &openclaw,
        second,
        1,
        &assistant("m2", "2026-12-03T07:00:09.000Z", json!([write])),
        true,
    );
    let result = json!({"type": "message", "id": "r1", "parentId": "m1",
        "timestamp": "2026-12-03T07:00:06.000Z", "message": {"role": "toolResult",
            "toolCallId": "call_a1|fc_a1", "toolName": "exec",
            "content": [{"type": "text", "text": "ok"}], "isError": false}});
    openclaw_event(&openclaw, first, 2, &result, false);
    // A frame that is not one: said of its column, and the rows after it are read.
    openclaw
        .execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, \
             event_utf8_bytes, navigation_json) VALUES (?1, 3, NULL, 1, x'00010203', 40, ?2)",
            (first, OPENCLAW_NAVIGATION),
        )
        .unwrap();
    let read = tool_call("call_a2", "read", json!({"path": "a", "reason": 7}));
    openclaw_event(
        &openclaw,
        first,
        4,
        &assistant("m3", "2026-12-03T07:00:12.000Z", json!([read])),
        false,
    );
    let before = fingerprint(&path);
    let run = run(&["extract", "--format", "jsonl", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let name = arg(&path);
    let place = |rowid: u32| format!("{name}:transcript_events:{rowid}");
    let found = records(&run.stdout);
    let expected = [
        call(
            place(3),
            first,
            "call_a1|fc_a1",
            "present",
            "The last commit answers it.",
        ),
        call(place(4), second, "call_b1|fc_b1", "missing", ""),
        call(place(7), first, "call_a2", "invalid", "7"),
    ];
    assert_eq!(calls(&found), expected);
    assert!(found.iter().all(|record| record["format"] == "openclaw"));
    assert_eq!(found[1]["timestamp"], "2026-12-03T07:00:09.000Z");
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(
        warnings[0].starts_with(&format!(
            "reasons: {}: `event_zstd` is not a zstd frame of 40 bytes",
            place(6)
        )),
        "{}",
        run.stderr
    );
    assert_eq!(fingerprint(&path), before, "the store was written");
}

/// OpenClaw's store before it compressed events has no `event_zstd` and `event_utf8_bytes`:
/// read all the same.
#[test]
fn an_openclaw_store_from_before_compression_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("openclaw-agent.sqlite");
    let openclaw = store(
        &path,
        "CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, \
         event_json TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq)) STRICT;",
    );
    let event = json!({"type": "message", "id": "m1", "parentId": "p", "timestamp": "t",
        "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "c1",
            "name": "exec", "arguments": {"command": "ls"}}]}});
    openclaw
        .execute(
            "INSERT INTO transcript_events VALUES ('s1', 0, ?1, 1)",
            [event.to_string()],
        )
        .unwrap();
    let found = extract_records(&[arg(&path)]);
    assert_eq!(calls(&found)[0].1, "s1");
    assert_eq!(found[0]["format"], "openclaw");
    assert_eq!(found[0]["status"], "missing");
}

#[test]
fn a_json_column_that_is_not_json_is_named_and_the_other_rows_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let (path, connection) = opencode_store(dir.path());
    opencode_part(
        &connection,
        "prt_4",
        "ses_a",
        r#"{"type":"tool","tool":"bash","callID":"cut","state":{"input":{"comm"#,
    );
    opencode_part(&connection, "prt_5", "ses_a", r#"["tool"]"#);
    opencode_part(
        &connection,
        "prt_6",
        "ses_a",
        &opencode_tool("call_6", json!({"command": "ls"})),
    );
    connection
        .execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) \
             VALUES ('prt_7', 'm', 'ses_a', 1, 1, x'7b7d')",
            (),
        )
        .unwrap();
    let run = run(&["extract", "--format", "jsonl", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let name = arg(&path);
    assert_eq!(
        places(&records(&run.stdout)),
        [format!("{name}:part:2"), format!("{name}:part:6")]
    );
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 3, "{}", run.stderr);
    assert!(
        warnings[0].starts_with(&format!("reasons: {name}:part:4: `data` is not JSON: EOF")),
        "{}",
        run.stderr
    );
    assert_eq!(
        warnings[1],
        format!("reasons: {name}:part:5: `data` holds JSON, but not an object")
    );
    assert_eq!(
        warnings[2],
        format!("reasons: {name}:part:7: `data` is not text but a blob")
    );
    // `--strict` makes the first an error.
    let strict = crate::util::run(&["extract", "--strict", "--format", "jsonl", arg(&path)]);
    assert_eq!(strict.code, 2);
    assert!(strict.stderr.contains(":part:4:"), "{}", strict.stderr);
}

#[test]
fn a_sqlite_file_of_something_else_is_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("photos.db");
    let connection = store(
        &path,
        "CREATE TABLE photo (id INTEGER PRIMARY KEY, data TEXT);",
    );
    for id in 0..500 {
        connection
            .execute(
                "INSERT INTO photo (id, data) VALUES (?1, '{\"type\":\"tool\"}')",
                [id],
            )
            .unwrap();
    }
    let run = run(&["stats", "--format", "json", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "reasons: {}: a SQLite database, but not the store of an agent reasons reads \
             (OpenCode, Kilo, Crush, Goose, Hermes Agent, OpenClaw): skipped\n\
             reasons: no agent log found in 1 file: {}\n",
            arg(&path),
            arg(&path)
        )
    );
    let stats: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(stats["totals"]["calls"], 0);
}

#[test]
fn a_truncated_store_is_a_clear_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (path, connection) = opencode_store(dir.path());
    for n in 0..300 {
        opencode_part(
            &connection,
            &format!("prt_x{n}"),
            "ses_a",
            &opencode_tool(&format!("c{n}"), json!({"command": "x".repeat(300)})),
        );
    }
    connection
        .pragma_update(None, "wal_checkpoint", "TRUNCATE")
        .unwrap();
    drop(connection);
    let whole = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.db");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let run = run(&["extract", "--format", "jsonl", arg(&cut)]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with(&format!("reasons: {}", arg(&cut))),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("malformed") || run.stderr.contains("not a database"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    // Less than a header's page: SQLite's word, not a flood of lines.
    let stub = dir.path().join("stub.db");
    std::fs::write(&stub, &whole[..40]).unwrap();
    let run = crate::util::run(&["extract", "--format", "jsonl", arg(&stub)]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[test]
fn a_store_locked_by_a_writer_in_rollback_mode_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode.db");
    let connection = Connection::open(&path).unwrap();
    connection.execute_batch(OPENCODE_SCHEMA).unwrap();
    opencode_part(
        &connection,
        "prt_1",
        "ses_a",
        &opencode_tool("call_1", json!({})),
    );
    connection.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let run = run(&["extract", "--format", "jsonl", arg(&path)]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "reasons: {}: cannot read this SQLite database: database is locked\n",
            arg(&path)
        )
    );
    connection.execute_batch("COMMIT").unwrap();
}
