//! `stats` reports: coverage per group and in total, as a table, Markdown, CSV or JSON.

use std::io::{self, Write};

use reasons::stats::{percent, Counts, Report};

use super::cells::csv_field;
use super::table::{display_width, layout, write_table, Column, Fit};
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

/// Writes a whole report in one of `stats`'s formats.
pub struct ReportWriter {
    pub format: StatsFormat,
    /// The width a table is laid out to.
    pub width: u16,
}

impl Writer<Report> for ReportWriter {
    fn write(&mut self, out: &mut dyn Write, report: &Report) -> io::Result<()> {
        match self.format {
            StatsFormat::Json => {
                serde_json::to_writer(&mut *out, report).map_err(io::Error::other)?;
                writeln!(out)
            }
            StatsFormat::Table => write_stats_table(report, usize::from(self.width), out),
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

/// The key column wraps (a long path, say) and the numbers keep their width.
fn write_stats_table(report: &Report, width: usize, out: &mut dyn Write) -> io::Result<()> {
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
    let widths = layout(width, &columns, &wants);
    write_table(out, &columns, &widths, true, rows)?;
    writeln!(out, "{}", footer(report))
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
