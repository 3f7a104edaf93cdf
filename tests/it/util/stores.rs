//! SQLite stores shaped like the agents' own (OpenCode, Kilo, Crush, Goose, Hermes Agent,
//! OpenClaw), with the schemas of the real ones (in `../shared/corpus`, or in the agent's own
//! code): the store tests and the agent-list tests build theirs here.

use std::path::Path;

use rusqlite::Connection;
use serde_json::{json, Value};

/// OpenCode's tables as its 1.18 store has them (the columns the reader needs, and a few more).
pub const OPENCODE_SCHEMA: &str = "
    CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `slug` text NOT NULL,
        `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL,
        `time_created` integer NOT NULL, `time_updated` integer NOT NULL);
    CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL,
        `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
    CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
        `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
    CREATE INDEX `part_session_idx` ON `part` (`session_id`);";

/// What Kilo 7.7 adds to OpenCode's store that tells the two apart.
pub const KILO_TABLES: &str = "
    CREATE TABLE `kilo_board` (`root_session_id` text PRIMARY KEY, `objective` text NOT NULL,
        `next_seq` integer DEFAULT 1 NOT NULL, `time_created` integer NOT NULL,
        `time_updated` integer NOT NULL);";

/// Crush's tables (its `.crush/crush.db`), migrated by the Go `goose` tool, hence the table
/// whose name is another agent's.
pub const CRUSH_SCHEMA: &str = "
    CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL,
        is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')));
    CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);
    CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
        parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT);";

/// Goose's tables (its `sessions.db`).
pub const GOOSE_SCHEMA: &str = "
    CREATE TABLE schema_version (version INTEGER PRIMARY KEY);
    CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
        working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
    CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT,
        session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
        content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
        timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);";

/// Hermes Agent 0.19's `sessions` and `messages` tables, as `hermes_state.py` creates them
/// (schema version 22; its full-text index and other tables left out).
pub const HERMES_SCHEMA: &str = include_str!("../../stores/hermes-schema.sql");

/// OpenClaw 2026.9.6's `transcript_events` table, as its agent store (`openclaw-agent.sqlite`)
/// creates it (the other forty-two left out: [`openclaw_store`] writes without the foreign key
/// to `session_windows`).
pub const OPENCLAW_SCHEMA: &str = r#"
    CREATE TABLE IF NOT EXISTS transcript_events (
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      event_json TEXT,
      created_at INTEGER NOT NULL,
      event_zstd BLOB,
      event_utf8_bytes INTEGER CHECK (event_utf8_bytes IS NULL OR event_utf8_bytes >= 0),
      navigation_json TEXT,
      PRIMARY KEY (session_id, seq),
      FOREIGN KEY (session_id) REFERENCES "session_windows"(session_id) ON DELETE CASCADE,
      CHECK (
        (event_json IS NOT NULL AND event_zstd IS NULL)
        OR (
          event_json IS NULL AND event_zstd IS NOT NULL
          AND event_utf8_bytes IS NOT NULL
          AND event_utf8_bytes BETWEEN 1 AND 4194304
          AND length(event_zstd) BETWEEN 1 AND 4194304
          AND navigation_json IS NOT NULL
        )
      ),
      CHECK (
        navigation_json IS NULL OR CASE WHEN json_valid(navigation_json) THEN coalesce(
          octet_length(navigation_json) <= 16384
          AND json_type(navigation_json, '$.version') = 'integer'
          AND json_extract(navigation_json, '$.version') = 1
          AND json_type(navigation_json, '$.report') = 'object'
          AND json_extract(navigation_json, '$.report.kind') IN ('canonical', 'leaf', 'link', 'ignored')
          AND json_type(navigation_json, '$.navigation') = 'object'
          AND json_type(navigation_json, '$.reset') = 'object'
          AND json_type(navigation_json, '$.model') = 'object'
          AND json_type(navigation_json, '$.modelBytes') = 'integer'
          AND json_extract(navigation_json, '$.modelBytes') BETWEEN 0 AND 4194304
          AND json_type(navigation_json, '$.modelWithoutCheckpointBytes') = 'integer'
          AND json_extract(navigation_json, '$.modelWithoutCheckpointBytes') BETWEEN 0 AND 4194304
          AND json_type(navigation_json, '$.withoutCustomDataBytes') = 'integer'
          AND json_extract(navigation_json, '$.withoutCustomDataBytes') BETWEEN 0 AND 4194304,
          0) ELSE 0 END
      )
    ) STRICT;
"#;

/// What OpenClaw's check on `transcript_events` asks of a compressed row's `navigation_json`.
pub const OPENCLAW_NAVIGATION: &str = r#"{"version":1,"report":{"kind":"canonical"},"navigation":{},"reset":{},"model":{},"modelBytes":0,"modelWithoutCheckpointBytes":0,"withoutCustomDataBytes":0}"#;

/// A store at `path` with `schema`, in WAL mode as the agents keep theirs.
pub fn store(path: &Path, schema: &str) -> Connection {
    let connection = Connection::open(path).expect("a new database");
    connection
        .pragma_update(None, "journal_mode", "wal")
        .expect("WAL mode");
    connection.execute_batch(schema).expect("the schema");
    connection
}

/// One OpenCode part row; `data` as the agent writes it.
pub fn opencode_part(connection: &Connection, id: &str, session: &str, data: &str) {
    connection
        .execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) \
             VALUES (?1, 'msg_1', ?2, 1785878930686, 1785878930723, ?3)",
            (id, session, data),
        )
        .expect("a part");
}

/// An OpenCode tool part calling `bash` with `input`.
pub fn opencode_tool(call_id: &str, input: Value) -> String {
    json!({"type": "tool", "tool": "bash", "callID": call_id,
        "state": {"status": "completed", "input": input, "output": "ok",
            "time": {"start": 1785878930703u64, "end": 1785878930722u64}}})
    .to_string()
}

/// One row of Hermes's `messages`, as `append_message` writes it; `tool_calls` the JSON text of
/// the message's calls, or `None`. Returns its rowid.
pub fn hermes_message(
    connection: &Connection,
    session: &str,
    role: &str,
    tool_calls: Option<&Value>,
    tool_call_id: Option<&str>,
    timestamp: f64,
) -> i64 {
    connection
        .execute(
            "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, \
             timestamp, finish_reason, active) VALUES (?1, ?2, 'text', ?3, ?4, NULL, ?5, ?6, 1)",
            (
                session,
                role,
                tool_call_id,
                tool_calls.map(Value::to_string),
                timestamp,
                tool_calls.map(|_| "tool_calls"),
            ),
        )
        .expect("a message");
    connection.last_insert_rowid()
}

/// An OpenAI Chat `tool_calls` entry as Hermes keeps it: `arguments` JSON text.
pub fn hermes_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "call_id": id, "type": "function",
        "function": {"name": name, "arguments": arguments.to_string()}})
}

/// An OpenClaw store at `path`, in WAL mode as OpenClaw keeps it, its foreign keys not checked
/// (the table they name is left out).
pub fn openclaw_store(path: &Path) -> Connection {
    let connection = store(path, OPENCLAW_SCHEMA);
    connection
        .pragma_update(None, "foreign_keys", false)
        .expect("no foreign keys");
    connection
}

/// One row of OpenClaw's `transcript_events`, its event compressed as OpenClaw compresses the
/// longer ones when `compressed`. Returns its rowid.
pub fn openclaw_event(
    connection: &Connection,
    session: &str,
    seq: i64,
    event: &Value,
    compressed: bool,
) -> i64 {
    let text = event.to_string();
    let (json, frame, size, navigation) = if compressed {
        let frame = zstd::bulk::compress(text.as_bytes(), 1).expect("compressed");
        (
            None,
            Some(frame),
            Some(text.len() as i64),
            Some(OPENCLAW_NAVIGATION),
        )
    } else {
        (Some(text), None, None, None)
    };
    connection
        .execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, \
             event_utf8_bytes, navigation_json) VALUES (?1, ?2, ?3, 1781204523000, ?4, ?5, ?6)",
            (session, seq, json, frame, size, navigation),
        )
        .expect("an event");
    connection.last_insert_rowid()
}
