//! Where each agent's store keeps its calls: the table, its columns and its JSON column, and
//! which layout a database's tables fit.

use std::collections::{HashMap, HashSet};

use crate::record::Format;

/// Where one agent's store keeps its calls, and how a row becomes an event.
pub(super) struct Layout {
    pub(super) format: Format,
    /// The table whose rows hold the calls.
    pub(super) table: &'static str,
    /// Scalar columns, and the key each goes under in the event.
    pub(super) columns: &'static [(&'static str, &'static str)],
    /// The JSON column, and the key it goes under; `None`: it is an object whose members join
    /// the event's (OpenCode's `data` is the part itself).
    pub(super) json: (&'static str, Option<&'static str>),
    /// What a row whose JSON column is null is.
    pub(super) null_json: NullJson,
    /// Whether a table is one only this agent's store has, when another agent shares its
    /// schema.
    pub(super) marked_by: Option<fn(&str) -> bool>,
}

/// What a row whose JSON column is null is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NullJson {
    /// Something wrong with the row, said as a malformed line: the agent always writes it.
    Malformed,
    /// A row without calls, not read: Hermes leaves `tool_calls` null on a message that calls
    /// no tool.
    NoCalls,
    /// The event compressed into other columns, a zstd frame and the size of the text it
    /// holds: OpenClaw keeps an event of 1 KiB or more so, `event_json` null. A store written
    /// before it compressed lacks both columns, and is read all the same.
    Zstd {
        frame: &'static str,
        size: &'static str,
    },
}

/// Kilo's own tables beside OpenCode's: `kilo_board…` (7.7), `custom_llm2`.
fn is_kilos_table(table: &str) -> bool {
    table.starts_with("kilo_") || table.starts_with("custom_llm")
}

/// The columns of OpenCode's `part` table beside its JSON, which Kilo's store shares.
const OPENCODE_PART_COLUMNS: &[(&str, &str)] = &[
    ("id", "id"),
    ("message_id", "messageID"),
    ("session_id", "sessionID"),
];

/// Most specific first: Kilo's store is OpenCode's plus tables of its own.
pub(super) const LAYOUTS: [Layout; 6] = [
    Layout {
        format: Format::Kilo,
        table: "part",
        columns: OPENCODE_PART_COLUMNS,
        json: ("data", None),
        null_json: NullJson::Malformed,
        marked_by: Some(is_kilos_table),
    },
    Layout {
        format: Format::Opencode,
        table: "part",
        columns: OPENCODE_PART_COLUMNS,
        json: ("data", None),
        null_json: NullJson::Malformed,
        marked_by: None,
    },
    Layout {
        format: Format::Crush,
        table: "messages",
        columns: &[
            ("id", "id"),
            ("session_id", "session_id"),
            ("role", "role"),
            ("created_at", "created_at"),
        ],
        json: ("parts", Some("parts")),
        null_json: NullJson::Malformed,
        marked_by: None,
    },
    Layout {
        format: Format::Goose,
        table: "messages",
        columns: &[
            ("message_id", "message_id"),
            ("session_id", "session_id"),
            ("role", "role"),
            ("created_timestamp", "created_timestamp"),
        ],
        json: ("content_json", Some("content_json")),
        null_json: NullJson::Malformed,
        marked_by: None,
    },
    // Hermes Agent's `state.db`: a row is an OpenAI Chat message, its calls in `tool_calls`
    // (null on the others). Its `content` (a tool's whole output on a result) is left out.
    Layout {
        format: Format::Hermes,
        table: "messages",
        columns: &[
            ("session_id", "session_id"),
            ("role", "role"),
            ("tool_call_id", "tool_call_id"),
            ("tool_name", "tool_name"),
            ("finish_reason", "finish_reason"),
            ("timestamp", "timestamp"),
        ],
        json: ("tool_calls", Some("tool_calls")),
        null_json: NullJson::NoCalls,
        marked_by: None,
    },
    // OpenClaw's `openclaw-agent.sqlite`: a row is one entry of a Pi session log, the session
    // it belongs to beside it (the rows of every session interleave).
    Layout {
        format: Format::Openclaw,
        table: "transcript_events",
        columns: &[("session_id", "session_id")],
        json: ("event_json", None),
        null_json: NullJson::Zstd {
            frame: "event_zstd",
            size: "event_utf8_bytes",
        },
        marked_by: None,
    },
];

pub(super) fn fits(layout: &Layout, tables: &HashMap<String, HashSet<String>>) -> bool {
    let Some(columns) = tables.get(layout.table) else {
        return false;
    };
    layout
        .columns
        .iter()
        .map(|(column, _)| *column)
        .chain([layout.json.0])
        .all(|column| columns.contains(column))
        && layout
            .marked_by
            .is_none_or(|is_marked| tables.keys().any(|table| is_marked(table)))
}

/// One batch of rows after a rowid, in rowid order: the rowid, the scalar columns, the JSON,
/// and where the layout compresses, the frame and its size (nulls where the table has neither).
/// `columns` are the table's.
pub(super) fn select(layout: &Layout, columns: &HashSet<String>) -> String {
    let mut selected: Vec<&str> = layout.columns.iter().map(|(column, _)| *column).collect();
    selected.push(layout.json.0);
    let mut only = String::new();
    match layout.null_json {
        NullJson::Malformed => {}
        NullJson::NoCalls => only = format!(" AND {} IS NOT NULL", layout.json.0),
        NullJson::Zstd { frame, size } => {
            if columns.contains(frame) && columns.contains(size) {
                selected.extend([frame, size]);
            } else {
                selected.extend(["NULL", "NULL"]);
            }
        }
    }
    format!(
        "SELECT rowid, {} FROM {} WHERE rowid > ?1{only} ORDER BY rowid LIMIT ?2",
        selected.join(", "),
        layout.table
    )
}

/// What a store's JSON column must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JsonHolds {
    /// An object only.
    Object,
    /// An object or a list.
    ObjectOrList,
}

impl JsonHolds {
    /// A column whose members join the event's must be an object; one that goes under a key
    /// may be a list too.
    pub(super) fn of(layout: &Layout) -> JsonHolds {
        match layout.json.1 {
            None => JsonHolds::Object,
            Some(_) => JsonHolds::ObjectOrList,
        }
    }
}
