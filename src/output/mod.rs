//! Writers for call records, one module per output format behind one small trait.

mod delimited;
mod jsonl;
mod summary;
mod table;

use std::io::{self, Write};

use reasons::cli::ExtractFormat;
use reasons::record::CallRecord;

pub use summary::touched;

/// Writes call records in one output format.
pub trait RecordWriter: Send {
    /// Writes one record (or queues it, for a table that is laid out in batches).
    fn write(&mut self, out: &mut dyn Write, record: &CallRecord) -> io::Result<()>;

    /// Writes whatever is queued: called before a read that may block, and at the end.
    fn flush(&mut self, out: &mut dyn Write) -> io::Result<()> {
        out.flush()
    }
}

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

/// How records are to be written.
#[derive(Debug, Clone, Copy)]
pub struct WriterOptions {
    /// Whether each record's arguments are written too.
    pub arguments: bool,
    /// The width of the terminal a table is fitted to.
    pub width: u16,
}

/// The writer for `format`.
pub fn record_writer(format: ExtractFormat, options: WriterOptions) -> Box<dyn RecordWriter> {
    match format {
        ExtractFormat::Table => Box::new(table::TableWriter::new(options.width)),
        ExtractFormat::Jsonl => Box::new(jsonl::JsonlWriter {
            arguments: options.arguments,
        }),
        ExtractFormat::Csv => Box::new(delimited::DelimitedWriter::new(b',', options.arguments)),
        ExtractFormat::Tsv => Box::new(delimited::DelimitedWriter::new(b'\t', options.arguments)),
    }
}

/// What a record's reason column shows: the reason, or why there is none.
pub fn reason_text(record: &CallRecord) -> String {
    use reasons::record::Status;
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
