//! SQLite stores shaped like the agents' own (OpenCode, Kilo, Crush, Goose), with the schemas of
//! the real ones in `../shared/corpus`: the store tests and the agent-list tests build theirs here.

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
