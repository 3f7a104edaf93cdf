//! `extract`'s renderings of call records, one writer per format.

use reasons::record::CallRecord;

use super::delimited::DelimitedWriter;
use super::jsonl::JsonlWriter;
use super::table::TableWriter;
use super::writer::Writer;

/// Output formats of `extract`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtractFormat {
    /// A table fitted to the terminal.
    Table,
    /// One JSON record per line.
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
    /// Tab-separated values with a header row.
    Tsv,
}

/// How records are to be written.
#[derive(Debug, Clone, Copy)]
pub struct WriterOptions {
    /// Whether each record's arguments are written too.
    pub arguments: bool,
    /// The width of the terminal a table is fitted to.
    pub width: u16,
    /// Whether the one log is read as it is written (stdin, `--follow`): a table then writes
    /// its rows as they come, in the widths of its first batch.
    pub live: bool,
}

/// The writer of call records for `format`.
pub fn record_writer(format: ExtractFormat, options: WriterOptions) -> Box<dyn Writer<CallRecord>> {
    match format {
        ExtractFormat::Table => Box::new(TableWriter::new(options.width, options.live)),
        ExtractFormat::Jsonl => Box::new(JsonlWriter {
            arguments: options.arguments,
        }),
        ExtractFormat::Csv => Box::new(DelimitedWriter::new(b',', options.arguments)),
        ExtractFormat::Tsv => Box::new(DelimitedWriter::new(b'\t', options.arguments)),
    }
}
