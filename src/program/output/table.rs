//! Tables for a person at a terminal, laid out to its width: `extract`'s — one table per log, a
//! heading with its path, then one row per call with its line, the tool, what it touched and the
//! reason — and `stats`'s.
//!
//! The columns are sized here, once per table, and comfy-table draws them at exactly those
//! widths: a column of numbers keeps its width, what a call touched is cut to one line, and a
//! reason or a tool's name wraps at word boundaries. A log read as a live stream (stdin, or
//! `--follow`) is written in batches, each as soon as the next read would wait; every batch of
//! one log keeps the widths of its first, so the log is still one table.

use std::io::{self, Write};

use comfy_table::{CellAlignment, ColumnConstraint, Table, Width};
use reasons::record::CallRecord;
use reasons::visible::cut_to;
use unicode_width::UnicodeWidthStr;

use super::cells::{cell_text, reason_text, TABLE_STYLE};
use super::writer::Writer;
use reasons::touched::summary;

/// Each column's padding in the tables' style: one space either side.
const PADDING: usize = 2;

/// The width of a table whose columns' contents are `widths` wide: their padding, and a space
/// between one column and the next.
pub fn table_width(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + (PADDING + 1) * widths.len() - 1
}

/// How a column fits the room it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Always as wide as its widest cell (numbers, line numbers).
    Whole,
    /// Wrapped at word boundaries when it gets less than it wants.
    Wrap,
    /// Cut to one line, with `…` where text was left out.
    Cut,
}

/// What a column is and how it gives way when the terminal is narrow.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub header: &'static str,
    pub right: bool,
    pub fit: Fit,
    /// Its share of the room the columns that give way have, against the others'.
    pub weight: usize,
    /// The width it keeps, however narrow the terminal, unless it wants less.
    pub least: usize,
}

/// The content widths of `columns` in a table `width` characters wide, given how wide each
/// column's widest cell is (`wants`, headers included).
///
/// A `Whole` column gets what it wants. The others get what they want if everything fits;
/// otherwise each first gets its least width (or less, if it wants less), then the room left is
/// shared out by weight, no column getting more than it wants, until nothing is left. A table
/// that does not fit even so is not squeezed at all: that would only break its words, and the
/// terminal folds its lines anyway.
pub fn layout(width: usize, columns: &[Column], wants: &[usize]) -> Vec<usize> {
    let mut widths: Vec<usize> = columns
        .iter()
        .zip(wants)
        .map(|(column, &want)| match column.fit {
            Fit::Whole => want,
            Fit::Wrap | Fit::Cut => want.min(column.least).max(1),
        })
        .collect();
    if table_width(&widths) > width {
        return wants.to_vec();
    }
    let mut room = width - table_width(&widths);
    while room > 0 {
        let growing: Vec<usize> = (0..columns.len())
            .filter(|&at| columns[at].fit != Fit::Whole && widths[at] < wants[at])
            .collect();
        let weights: usize = growing.iter().map(|&at| columns[at].weight).sum();
        if weights == 0 {
            break;
        }
        let share = room;
        for &at in &growing {
            let part = (share * columns[at].weight / weights).max(1);
            let given = part.min(wants[at] - widths[at]).min(room);
            widths[at] += given;
            room -= given;
        }
    }
    widths
}

/// The display width of `text`: what a terminal gives it, wide characters counting two.
pub fn display_width(text: &str) -> usize {
    text.width()
}

/// Writes one table, or one more batch of its rows, in `widths`, with the header when asked.
pub fn write_table(
    out: &mut dyn Write,
    columns: &[Column],
    widths: &[usize],
    header: bool,
    rows: impl IntoIterator<Item = Vec<String>>,
) -> io::Result<()> {
    let mut table = Table::new();
    table.load_style(TABLE_STYLE);
    if header {
        table.set_header(columns.iter().map(|column| column.header));
    }
    for row in rows {
        table.add_row(row.into_iter().zip(columns.iter().zip(widths)).map(
            |(cell, (column, &width))| match column.fit {
                Fit::Cut => cut_to(&cell, width),
                Fit::Whole | Fit::Wrap => cell,
            },
        ));
    }
    // Constraints apply to the columns there are: set once the rows are in.
    table.set_constraints(
        widths
            .iter()
            .map(|&width| ColumnConstraint::Absolute(Width::Fixed(clamp(width + PADDING)))),
    );
    for (at, column) in columns.iter().enumerate() {
        if let (true, Some(table_column)) = (column.right, table.column_mut(at)) {
            table_column.set_cell_alignment(CellAlignment::Right);
        }
    }
    // comfy-table pads the last column out to its width: a terminal needs no trailing spaces.
    for line in table.lines() {
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn clamp(width: usize) -> u16 {
    u16::try_from(width).unwrap_or(u16::MAX)
}

/// `extract`'s columns.
const CALL_COLUMNS: [Column; 4] = [
    Column {
        header: "line",
        right: true,
        fit: Fit::Whole,
        weight: 0,
        least: 0,
    },
    Column {
        header: "tool",
        right: false,
        fit: Fit::Wrap,
        weight: 1,
        least: 10,
    },
    Column {
        header: "touched",
        right: false,
        fit: Fit::Cut,
        weight: 1,
        least: 12,
    },
    // The reason is what this table is for: it gets twice the share of what the call touched.
    Column {
        header: "reason",
        right: false,
        fit: Fit::Wrap,
        weight: 2,
        least: 16,
    },
];

/// What a table of a live stream is laid out for before its calls are seen: line numbers into
/// the hundred thousands, a tool's name as long as most, and as much of what a call touched and
/// of its reason as there is room for.
const LIVE_WANTS: [usize; 4] = [6, 16, usize::MAX / 4, usize::MAX / 4];

/// `extract`'s table: one per log, in the order the logs are read.
pub struct TableWriter {
    width: usize,
    /// Whether the log is read as it is written: then rows are written in batches as they come.
    live: bool,
    /// The log whose rows are queued or were written last.
    source: Option<String>,
    rows: Vec<Vec<String>>,
    /// The widths of the current log's table, fixed when its first rows are written.
    widths: Option<Vec<usize>>,
    /// Whether a table was written: the next one is set off by a blank line.
    tables: bool,
}

impl TableWriter {
    pub fn new(width: u16, live: bool) -> TableWriter {
        TableWriter {
            width: usize::from(width),
            live,
            source: None,
            rows: Vec::new(),
            widths: None,
            tables: false,
        }
    }

    fn write_rows(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let header = self.widths.is_none();
        if header {
            let mut wants: Vec<usize> = CALL_COLUMNS
                .iter()
                .map(|column| display_width(column.header))
                .collect();
            for row in &self.rows {
                for (want, cell) in wants.iter_mut().zip(row) {
                    *want = (*want).max(widest_line(cell));
                }
            }
            if self.live {
                for (want, least) in wants.iter_mut().zip(LIVE_WANTS) {
                    *want = (*want).max(least);
                }
            }
            self.widths = Some(layout(self.width, &CALL_COLUMNS, &wants));
            if self.tables {
                writeln!(out)?;
            }
            self.tables = true;
            let source = self.source.as_deref().unwrap_or("-");
            writeln!(
                out,
                "{}",
                if source == "-" {
                    "standard input".to_owned()
                } else {
                    cell_text(source)
                }
            )?;
        }
        let widths = self.widths.as_deref().unwrap_or_default();
        write_table(out, &CALL_COLUMNS, widths, header, self.rows.drain(..))
    }
}

/// The widest line of a cell's text.
fn widest_line(text: &str) -> usize {
    text.lines().map(display_width).max().unwrap_or(0)
}

impl Writer<CallRecord> for TableWriter {
    fn write(&mut self, out: &mut dyn Write, record: &CallRecord) -> io::Result<()> {
        if self.source.as_deref() != Some(record.source.as_str()) {
            self.finish(out)?;
            self.source = Some(record.source.clone());
        }
        let touched = record.arguments.as_ref().map(summary).unwrap_or_default();
        self.rows.push(vec![
            record.line.to_string(),
            cell_text(&record.tool),
            touched,
            reason_text(record),
        ]);
        Ok(())
    }

    /// A live log's rows are written as they come; any other log's wait for its end, so that
    /// its table is laid out for all of them.
    fn flush(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.live {
            self.write_rows(out)?;
        }
        out.flush()
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.write_rows(out)?;
        self.widths = None;
        self.source = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_get_what_they_want_when_everything_fits() {
        assert_eq!(
            layout(160, &CALL_COLUMNS, &[4, 4, 30, 60]),
            vec![4, 4, 30, 60]
        );
    }

    #[test]
    fn a_narrow_terminal_gives_the_reason_twice_the_share_of_what_a_call_touched() {
        let widths = layout(80, &CALL_COLUMNS, &[4, 4, 60, 200]);
        assert_eq!(table_width(&widths), 80, "{widths:?}");
        assert_eq!(widths[..2], [4, 4]);
        // Past their least widths (12 and 16), the reason grew twice as much.
        assert_eq!(widths[2..], [12 + 11, 16 + 22]);
    }

    #[test]
    fn a_short_reason_leaves_the_room_to_what_the_call_touched() {
        let widths = layout(80, &CALL_COLUMNS, &[4, 4, 100, 20]);
        assert_eq!(widths, vec![4, 4, 80 - 11 - 4 - 4 - 20, 20]);
    }

    #[test]
    fn a_table_that_cannot_fit_is_not_squeezed() {
        let wants = [7, 30, 30, 30];
        assert_eq!(layout(40, &CALL_COLUMNS, &wants), wants);
        // At its least widths it fits: squeezed.
        assert_eq!(layout(60, &CALL_COLUMNS, &wants)[..], [7, 11, 13, 18]);
    }
}
