//! The agents that keep their sessions in SQLite (OpenCode, Kilo, Crush, Goose): stores built
//! with `util/stores.rs` (the schemas of the real ones in `../shared/corpus`), read while another
//! connection writes them, and damaged in the ways a store can be.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::util::stores::{
    opencode_part, opencode_tool, store, CRUSH_SCHEMA, GOOSE_SCHEMA, KILO_TABLES, OPENCODE_SCHEMA,
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
             (OpenCode, Kilo, Crush, Goose): skipped\n\
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
