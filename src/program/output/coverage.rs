//! `stats` reports: coverage per group and in total, as a table, Markdown, CSV or JSON.

use std::io::{self, Write};

use reasons::stats::{percent, Counts, Report};

use super::cells::csv_field;
use super::table::{display_width, layout, table_width, write_table, Column, Fit};
use super::writer::Writer;

/// Output formats of `stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsFormat {
    /// A table for the terminal.
    Table,
    /// One JSON object, for other tools and for `--merge`.
    Json,
    /// A Markdown table, ready for `$GITHUB_STEP_SUMMARY`.
    Markdown,
    /// Comma-separated values with a header row.
    Csv,
}

/// The width a `stats` table is laid out to.
#[derive(Debug, Clone, Copy)]
pub struct TableWidth {
    pub columns: u16,
    /// Whether the table is known to be read at that width (`$COLUMNS` is set, or stdout is the
    /// terminal): only then are columns left out to fit it. Elsewhere the table is whole.
    pub known: bool,
}

/// Writes a whole report in one of `stats`'s formats.
pub struct ReportWriter {
    pub format: StatsFormat,
    /// The width a table is laid out to.
    pub width: TableWidth,
}

impl Writer<Report> for ReportWriter {
    fn write(&mut self, out: &mut dyn Write, report: &Report) -> io::Result<()> {
        match self.format {
            StatsFormat::Json => {
                serde_json::to_writer(&mut *out, report).map_err(io::Error::other)?;
                writeln!(out)
            }
            StatsFormat::Table => write_stats_table(report, self.width, out),
            StatsFormat::Markdown => write_markdown(report, out),
            StatsFormat::Csv => write_csv(report, out),
        }
    }
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

const COLUMNS: [&str; 10] = [
    "calls",
    "present",
    "blank",
    "invalid",
    "missing",
    "declared",
    "freeform",
    "coverage",
    "median len",
    "",
];

/// The cells of one row after its key: the counts, coverage and median reason length.
fn cells(counts: &Counts) -> Vec<String> {
    let mut cells: Vec<String> = [
        counts.calls,
        counts.present,
        counts.blank,
        counts.invalid,
        counts.missing,
        counts.declared,
        counts.freeform,
    ]
    .iter()
    .map(u64::to_string)
    .collect();
    cells.push(counts.coverage.map_or("-".to_owned(), percent));
    cells.push(
        counts
            .median_reason_length
            .map_or("-".to_owned(), |median| format!("{median}")),
    );
    if let Some(flagged) = counts.lint_flagged {
        cells.push(flagged.to_string());
    }
    cells
}

/// The last column, when `--lint` counted: how many reasons it flags.
const FLAGGED: &str = "flagged";

fn header(report: &Report) -> Vec<String> {
    let flagged = report.totals.lint_flagged.map(|_| FLAGGED);
    std::iter::once(report.by.as_str())
        .chain(COLUMNS[..9].iter().copied())
        .chain(flagged)
        .map(str::to_owned)
        .collect()
}

fn rows(report: &Report) -> impl Iterator<Item = Vec<String>> + '_ {
    let groups = report.groups.iter().map(|group| {
        let mut row = vec![group.key.clone()];
        row.extend(cells(&group.counts));
        row
    });
    let mut totals = vec!["total".to_owned()];
    totals.extend(cells(&report.totals));
    groups.chain(std::iter::once(totals))
}

fn footer(report: &Report) -> String {
    format!(
        "{}, {} skipped",
        plural(report.files, "file read", "files read"),
        plural(report.malformed_lines, "malformed line", "malformed lines")
    )
}

/// The columns of the numbers left out of a table too wide for the terminal, the first first:
/// what `--format csv` or a wider terminal still shows. The key, the calls and the coverage are
/// never left out; `flagged`, asked for with `--lint`, goes last.
const LEFT_OUT_FIRST: [&str; 8] = [
    "median len",
    "declared",
    "freeform",
    "invalid",
    "blank",
    "present",
    "missing",
    FLAGGED,
];

/// The key column wraps (a long path, say) and the numbers keep their width. On a terminal (or
/// `$COLUMNS`) too narrow for every column, the least needed are left out until it fits, and a
/// last line says which.
fn write_stats_table(report: &Report, width: TableWidth, out: &mut dyn Write) -> io::Result<()> {
    let header = header(report);
    let flagged = report.totals.lint_flagged.map(|_| FLAGGED);
    let mut columns: Vec<Column> = COLUMNS[..9]
        .iter()
        .copied()
        .chain(flagged)
        .map(|header| Column {
            header,
            right: true,
            fit: Fit::Whole,
            weight: 0,
            least: 0,
        })
        .collect();
    columns.insert(
        0,
        Column {
            header: report.by.as_str(),
            right: false,
            fit: Fit::Wrap,
            weight: 1,
            least: 12,
        },
    );
    let rows: Vec<Vec<String>> = rows(report).collect();
    let wants: Vec<usize> = (0..columns.len())
        .map(|at| {
            std::iter::once(&header[at])
                .chain(rows.iter().map(|row| &row[at]))
                .map(|cell| display_width(cell))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let columns_wide = usize::from(width.columns);
    let shown = if width.known {
        shown_columns(&columns, &wants, columns_wide)
    } else {
        vec![true; columns.len()]
    };
    let kept = |cells: Vec<String>| -> Vec<String> {
        cells
            .into_iter()
            .zip(&shown)
            .filter_map(|(cell, &shown)| shown.then_some(cell))
            .collect()
    };
    let left_out: Vec<&str> = columns
        .iter()
        .zip(&shown)
        .filter_map(|(column, &shown)| (!shown).then_some(column.header))
        .collect();
    let columns = kept_columns(&columns, &shown);
    let wants: Vec<usize> = wants
        .into_iter()
        .zip(&shown)
        .filter_map(|(want, &shown)| shown.then_some(want))
        .collect();
    let widths = layout(columns_wide, &columns, &wants);
    write_table(out, &columns, &widths, true, rows.into_iter().map(kept))?;
    writeln!(out, "{}", footer(report))?;
    if !left_out.is_empty() {
        let said = format!(
            "not shown at {columns_wide} columns: {} (see --format csv)",
            left_out.join(", ")
        );
        for line in words_within(&said, columns_wide) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// How wide a key (a tool, a path) may be and still be kept on one line before numbers are left
/// out for it: a path of a usual depth, not the one outlier that would cost every column.
const KEY_ON_ONE_LINE: usize = 40;

/// Which columns a table `width` wide shows: every one when the table fits, else all but the
/// first few of [`LEFT_OUT_FIRST`], as few as it takes. Fitting first means the key on one line
/// (up to [`KEY_ON_ONE_LINE`]); when that cannot be had, the key wraps. When even the key, the
/// calls and the coverage do not fit, every column is shown and the terminal folds the lines.
fn shown_columns(columns: &[Column], wants: &[usize], width: usize) -> Vec<bool> {
    let fits = |shown: &[bool], key_on_one_line: bool| {
        let kept = kept_columns(columns, shown);
        let wants: Vec<usize> = wants
            .iter()
            .zip(shown)
            .filter_map(|(&want, &shown)| shown.then_some(want))
            .collect();
        let widths = layout(width, &kept, &wants);
        table_width(&widths) <= width
            && (!key_on_one_line || widths[0] >= wants[0].min(KEY_ON_ONE_LINE))
    };
    for key_on_one_line in [true, false] {
        let mut shown = vec![true; columns.len()];
        for header in LEFT_OUT_FIRST {
            if fits(&shown, key_on_one_line) {
                return shown;
            }
            if let Some(at) = columns.iter().position(|column| column.header == header) {
                shown[at] = false;
            }
        }
        if fits(&shown, key_on_one_line) {
            return shown;
        }
    }
    vec![true; columns.len()]
}

/// `text` in lines no wider than `width`, broken between words (a word wider than that on a
/// line of its own).
fn words_within(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if display_width(line) + 1 + display_width(word) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

fn kept_columns(columns: &[Column], shown: &[bool]) -> Vec<Column> {
    columns
        .iter()
        .zip(shown)
        .filter_map(|(column, &shown)| shown.then_some(*column))
        .collect()
}

fn write_markdown(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let escape = |cell: &str| cell.replace('\\', "\\\\").replace('|', "\\|");
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|cell| escape(cell)).collect();
        format!("| {} |", cells.join(" | "))
    };
    let coverage = report.totals.coverage.map_or("none".to_owned(), percent);
    writeln!(out, "### Reason coverage: {coverage}\n")?;
    writeln!(out, "{}", line(&header(report)))?;
    writeln!(out, "|---|{}", "---:|".repeat(header(report).len() - 1))?;
    for row in rows(report) {
        writeln!(out, "{}", line(&row))?;
    }
    writeln!(out, "\n{}", footer(report))
}

fn write_csv(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut header = header(report);
    header[9] = "median_reason_length".to_owned();
    writeln!(out, "{}", header.join(","))?;
    for mut row in rows(report) {
        // Spreadsheets want numbers, not a per-cent sign or a dash.
        row[8] = row[8].trim_end_matches('%').replace('-', "");
        row[9] = row[9].replace('-', "");
        let cells: Vec<_> = row.iter().map(|cell| csv_field(cell)).collect();
        writeln!(out, "{}", cells.join(","))?;
    }
    Ok(())
}
