//! A table for a person at a terminal: for each log, a heading with its path, then one row per
//! call with its line, the tool, what it touched, and the reason.
//!
//! Rows are laid out in batches — everything that arrived before the next read would wait — so a
//! live stream shows each call as it comes.

use std::io::{self, Write};

use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};
use reasons::record::CallRecord;

use super::cells::{cell_text, reason_text, TABLE_STYLE};
use super::writer::Writer;
use reasons::touched::summary;

pub struct TableWriter {
    width: u16,
    /// The log whose rows are queued or were written last.
    source: Option<String>,
    rows: Vec<[String; 4]>,
}

impl TableWriter {
    pub fn new(width: u16) -> TableWriter {
        TableWriter {
            width: width.max(40),
            source: None,
            rows: Vec::new(),
        }
    }

    fn write_rows(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let mut table = Table::new();
        table
            .load_style(TABLE_STYLE)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(self.width)
            // The reason is what this table is for: the other columns may not squeeze it out.
            .set_constraints([
                ColumnConstraint::ContentWidth,
                ColumnConstraint::UpperBoundary(Width::Percentage(20)),
                ColumnConstraint::UpperBoundary(Width::Percentage(40)),
                ColumnConstraint::LowerBoundary(Width::Percentage(30)),
            ])
            .set_header(["line", "tool", "touched", "reason"])
            .add_rows(self.rows.drain(..));
        if let Some(column) = table.column_mut(0) {
            column.set_cell_alignment(CellAlignment::Right);
        }
        writeln!(out, "{table}")
    }
}

impl Writer<CallRecord> for TableWriter {
    fn write(&mut self, out: &mut dyn Write, record: &CallRecord) -> io::Result<()> {
        if self.source.as_deref() != Some(record.source.as_str()) {
            self.write_rows(out)?;
            if self.source.is_some() {
                writeln!(out)?;
            }
            writeln!(out, "{}", cell_text(&record.source))?;
            self.source = Some(record.source.clone());
        }
        let touched = record.arguments.as_ref().map(summary).unwrap_or_default();
        self.rows.push([
            record.line.to_string(),
            cell_text(&record.tool),
            touched,
            reason_text(record),
        ]);
        Ok(())
    }

    fn flush(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.write_rows(out)?;
        out.flush()
    }
}
