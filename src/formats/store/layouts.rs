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
    /// Whether a table is one only this agent's store has, when another agent shares its
    /// schema.
    pub(super) marked_by: Option<fn(&str) -> bool>,
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
pub(super) const LAYOUTS: [Layout; 4] = [
    Layout {
        format: Format::Kilo,
        table: "part",
        columns: OPENCODE_PART_COLUMNS,
        json: ("data", None),
        marked_by: Some(is_kilos_table),
    },
    Layout {
        format: Format::Opencode,
        table: "part",
        columns: OPENCODE_PART_COLUMNS,
        json: ("data", None),
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

/// One batch of rows after a rowid, in rowid order: the rowid, the scalar columns, the JSON.
pub(super) fn select(layout: &Layout) -> String {
    let columns: Vec<&str> = layout.columns.iter().map(|(column, _)| *column).collect();
    format!(
        "SELECT rowid, {}, {} FROM {} WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
        columns.join(", "),
        layout.json.0,
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
