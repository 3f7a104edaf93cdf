//! `reasons stats`: calls and reason coverage per group, a totals row, and a CI gate.

use std::io::{self, Write};

use anyhow::Context;
use comfy_table::{CellAlignment, Table};
use reasons::cli::StatsFormat;
use reasons::stats::{Counts, GroupBy, Report, Tally};

use crate::commands::{report_problems, Reading};
use crate::exit_codes::ExitCode;
use crate::input::Source;
use crate::output::{csv_field, TABLE_STYLE};
use crate::scan::each_in_order;

pub struct Options {
    pub reading: Reading,
    pub by: GroupBy,
    pub format: StatsFormat,
    pub min_coverage: Option<f64>,
    /// Whether the sources are earlier JSON reports to add up, rather than logs.
    pub merge: bool,
}

pub fn run(options: Options, out: &mut (dyn Write + Send)) -> anyhow::Result<ExitCode> {
    let mut failed = report_problems(&options.reading.problems);
    let mut tally = Tally::new(options.by);
    if options.merge {
        for source in &options.reading.sources {
            tally
                .merge_report(read_report(source)?)
                .map_err(|why| anyhow::anyhow!("{}: cannot merge: {why}", source.name()))?;
        }
    } else {
        let by = options.by;
        let all_read = each_in_order(
            &options.reading.sources,
            &options.reading.scan,
            || Tally::new(by),
            |tally, record| tally.add(&record),
            |_, mut file, summary| {
                file.add_file(summary.malformed_lines);
                tally.merge(file);
                Ok(())
            },
        )?;
        failed |= !all_read;
    }
    let report = tally.report();
    match options.format {
        StatsFormat::Json => {
            serde_json::to_writer(&mut *out, &report)?;
            writeln!(out)?;
        }
        StatsFormat::Table => write_table(&report, out)?,
        StatsFormat::Markdown => write_markdown(&report, out)?,
        StatsFormat::Csv => write_csv(&report, out)?,
    }
    out.flush()?;
    if failed {
        return Ok(ExitCode::Error);
    }
    if let Some(threshold) = options.min_coverage {
        let coverage = report.totals.coverage;
        if coverage.is_none_or(|coverage| coverage < threshold) {
            let shown = coverage.map_or("none (no audited calls)".to_owned(), percent);
            crate::messages::message!("coverage {shown} is below the minimum of {threshold}%");
            return Ok(ExitCode::Finding);
        }
    }
    Ok(ExitCode::Success)
}

fn read_report(source: &Source) -> anyhow::Result<Report> {
    let name = source.name();
    let text = match source {
        Source::Stdin => io::read_to_string(io::stdin()),
        Source::File(path) => std::fs::read_to_string(path),
    }
    .with_context(|| format!("{name}: cannot read"))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{name}: not a `reasons stats --format json` report"))
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

fn percent(coverage: f64) -> String {
    format!("{coverage:.1}%")
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
    cells
}

fn header(report: &Report) -> Vec<String> {
    std::iter::once(report.by.as_str().to_owned())
        .chain(COLUMNS[..9].iter().map(|column| (*column).to_owned()))
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

fn write_table(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut table = Table::new();
    table.load_style(TABLE_STYLE).set_header(header(report));
    for row in rows(report) {
        table.add_row(row);
    }
    for index in 1..10 {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    writeln!(out, "{table}")?;
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
    writeln!(out, "|---|{}", "---:|".repeat(9))?;
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
