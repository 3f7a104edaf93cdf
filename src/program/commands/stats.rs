//! `reasons stats`: calls and reason coverage per group, a totals row, and a CI gate.

use std::io::{self, Write};

use anyhow::Context;
use reasons::lint;
use reasons::record::{CallRecord, Status};
use reasons::stats::{percent, GroupBy, Report, Tally};

use crate::program::exit_codes::ExitCode;
use crate::program::output::{report_writer, StatsFormat, TableWidth};
use crate::program::read::logs_to_read::{report_problems, LogsToRead};
use crate::program::read::schedule::read_each_in_order;
use crate::program::read::sources::Source;

pub struct Options {
    pub logs: LogsToRead,
    pub by: GroupBy,
    pub format: StatsFormat,
    pub min_coverage: Option<f64>,
    /// The width a table is laid out to.
    pub width: TableWidth,
    /// Whether the sources are earlier JSON reports to add up, rather than logs.
    pub merge: bool,
    /// Count the reasons `check --lint` would flag, with these limits.
    pub lint: Option<lint::Limits>,
}

pub fn run(options: Options, out: &mut (dyn Write + Send)) -> anyhow::Result<ExitCode> {
    let mut failed = report_problems(&options.logs.problems);
    let mut tally = Tally::new(options.by);
    if options.merge {
        for source in &options.logs.sources {
            tally
                .merge_report(read_report(source)?)
                .map_err(|why| anyhow::anyhow!("{}: cannot merge: {why}", source.name()))?;
        }
    } else {
        let by = options.by;
        let lint = options.lint;
        if lint.is_some() {
            tally = tally.linted();
        }
        // With --lint, a file's reasons are kept until it is read: the lint's repeat rule looks
        // across each session.
        let new_file = || {
            let file = Tally::new(by);
            let file = if lint.is_some() { file.linted() } else { file };
            (file, Vec::<CallRecord>::new())
        };
        let all_read = read_each_in_order(
            &options.logs.sources,
            &options.logs.source_options,
            new_file,
            |(file, present), record| {
                file.add(&record);
                if lint.is_some() && record.status == Status::Present {
                    present.push(record);
                }
            },
            |_, (mut file, present), summary| {
                if let Some(limits) = lint {
                    let mut flagged: Vec<usize> = lint::hints(&present, limits)
                        .iter()
                        .map(|hint| hint.call)
                        .collect();
                    flagged.dedup();
                    for call in flagged {
                        file.add_lint_flagged(&present[call]);
                    }
                }
                file.add_file(summary.malformed_lines);
                tally.merge(file);
                Ok(())
            },
        )?;
        failed |= !all_read;
    }
    let report = tally.report();
    if !options.merge {
        crate::program::read::logs_to_read::say_if_no_agent_log(
            &options.logs.sources,
            report.totals.calls,
            failed,
        );
    }
    let mut writer = report_writer(options.format, options.width);
    writer.write(out, &report)?;
    writer.flush(out)?;
    if failed {
        return Ok(ExitCode::Error);
    }
    if let Some(threshold) = options.min_coverage {
        let coverage = report.totals.coverage;
        if coverage.is_none_or(|coverage| coverage < threshold) {
            let shown = coverage.map_or("none (no audited calls)".to_owned(), percent);
            crate::program::messages::message!(
                "coverage {shown} is below the minimum of {threshold}%"
            );
            return Ok(ExitCode::Finding);
        }
    }
    Ok(ExitCode::Success)
}

fn read_report(source: &Source) -> anyhow::Result<Report> {
    let name = source.name();
    let text = match source.path() {
        None => io::read_to_string(io::stdin()),
        Some(path) => std::fs::read_to_string(path),
    }
    .with_context(|| format!("{name}: cannot read"))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{name}: not a `reasons stats --format json` report"))
}
