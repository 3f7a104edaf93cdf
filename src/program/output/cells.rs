//! What several renderings share: the look of a table, a CSV field, the text of a reason.

use reasons::record::{CallRecord, Status};
use reasons::visible::visible;

/// The look of every table: a line under the header, nothing else to read past.
pub const TABLE_STYLE: comfy_table::TableStyle = comfy_table::TableStyle::new()
    .header_separator(comfy_table::LineStyle::none().fill('─').junction('─'));

/// A field of comma-separated values, quoted when it must be (RFC 4180).
pub fn csv_field(field: &str) -> std::borrow::Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\"")).into()
    } else {
        field.into()
    }
}

/// Text from a log as a terminal cell shows it: what a terminal would interpret (escape
/// sequences, carriage returns, bidirectional overrides) as visible marks.
pub fn cell_text(text: &str) -> String {
    visible(text).into_owned()
}

/// What a record's reason column shows: the reason, or why there is none, never able to drive
/// the terminal.
pub fn reason_text(record: &CallRecord) -> String {
    cell_text(&reason_words(record))
}

fn reason_words(record: &CallRecord) -> String {
    match (record.status, record.reason.as_deref()) {
        (Status::Present, Some(reason)) => reason.trim().to_owned(),
        (Status::Blank, _) => "(blank)".to_owned(),
        (Status::Invalid, _) => "(not a string)".to_owned(),
        (Status::Declared, Some(reason)) => format!("(declared) {}", reason.trim()),
        (Status::Declared, None) => "(declared by the tool)".to_owned(),
        (Status::Freeform, _) => "(cannot carry one)".to_owned(),
        _ => "(missing)".to_owned(),
    }
}
