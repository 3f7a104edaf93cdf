//! Comma- or tab-separated values with a header row, for spreadsheets.

use std::io::{self, Write};

use reasons::record::CallRecord;

use super::cells::csv_field;
use super::writer::Writer;
use reasons::touched::summary;

pub struct DelimitedWriter {
    delimiter: u8,
    arguments: bool,
    header_written: bool,
}

impl DelimitedWriter {
    pub fn new(delimiter: u8, arguments: bool) -> DelimitedWriter {
        DelimitedWriter {
            delimiter,
            arguments,
            header_written: false,
        }
    }

    fn row(&self, out: &mut dyn Write, fields: &[&str]) -> io::Result<()> {
        for (index, field) in fields.iter().enumerate() {
            if index > 0 {
                out.write_all(&[self.delimiter])?;
            }
            self.field(out, field)?;
        }
        out.write_all(b"\n")
    }

    /// CSV quotes a field that holds a delimiter, a quote or a line break (RFC 4180); TSV has no
    /// quoting, so those characters are escaped as `\t`, `\n`, `\r` and `\\`.
    fn field(&self, out: &mut dyn Write, field: &str) -> io::Result<()> {
        if self.delimiter == b'\t' {
            let escaped = field
                .replace('\\', "\\\\")
                .replace('\t', "\\t")
                .replace('\n', "\\n")
                .replace('\r', "\\r");
            return out.write_all(escaped.as_bytes());
        }
        out.write_all(csv_field(field).as_bytes())
    }
}

const HEADER: [&str; 10] = [
    "source",
    "line",
    "format",
    "session",
    "timestamp",
    "call_id",
    "tool",
    "status",
    "touched",
    "reason",
];

impl Writer<CallRecord> for DelimitedWriter {
    fn write(&mut self, out: &mut dyn Write, record: &CallRecord) -> io::Result<()> {
        if !self.header_written {
            let mut header = HEADER.to_vec();
            if self.arguments {
                header.push("arguments");
            }
            self.row(out, &header)?;
            self.header_written = true;
        }
        let line = record.line.to_string();
        let touched = record.arguments.as_ref().map(summary).unwrap_or_default();
        let arguments = record
            .arguments
            .as_ref()
            .map(|arguments| arguments.to_string())
            .unwrap_or_default();
        let mut fields = vec![
            record.source.as_str(),
            &line,
            record.format.as_str(),
            record.session.as_deref().unwrap_or(""),
            record.timestamp.as_deref().unwrap_or(""),
            record.call_id.as_deref().unwrap_or(""),
            &record.tool,
            record.status.as_str(),
            &touched,
            record.reason.as_deref().unwrap_or(""),
        ];
        if self.arguments {
            fields.push(&arguments);
        }
        self.row(out, &fields)
    }
}
