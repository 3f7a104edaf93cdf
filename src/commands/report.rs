//! `reasons report`: one HTML page of every session read, for the person reviewing it.

use std::io::Write;

use reasons::record::CallRecord;
use reasons::stats::{GroupBy, Tally};

use super::reading::{report_problems, Reading};
use crate::exit_codes::ExitCode;
use crate::output::Writer;
use crate::report::{Page, PageWriter};
use crate::scan::each_in_order;

pub struct Options {
    /// How the logs are read; arguments are kept, since the page shows them.
    pub reading: Reading,
}

/// What one file gives the page: its calls, and the counts `stats` would give for them.
struct FileCalls {
    records: Vec<CallRecord>,
    by_tool: Tally,
    by_day: Tally,
}

pub fn run(options: Options, out: &mut (dyn Write + Send)) -> anyhow::Result<ExitCode> {
    let reading = options.reading;
    let mut failed = report_problems(&reading.problems);
    let mut records = Vec::new();
    let mut by_tool = Tally::new(GroupBy::Tool);
    let mut by_day = Tally::new(GroupBy::Day);
    let all_read = each_in_order(
        &reading.sources,
        &reading.scan,
        || FileCalls {
            records: Vec::new(),
            by_tool: Tally::new(GroupBy::Tool),
            by_day: Tally::new(GroupBy::Day),
        },
        |file, record| {
            file.by_tool.add(&record);
            file.by_day.add(&record);
            file.records.push(record);
        },
        |_, mut file, summary| {
            // Counted the way `stats` counts them, so the charts and `stats` agree.
            file.by_tool.add_file(summary.malformed_lines);
            file.by_day.add_file(summary.malformed_lines);
            by_tool.merge(file.by_tool);
            by_day.merge(file.by_day);
            records.append(&mut file.records);
            Ok(())
        },
    )?;
    failed |= !all_read;
    let page = Page {
        records: &records,
        by_tool: &by_tool.report(),
        by_day: &by_day.report(),
    };
    let mut writer = PageWriter;
    writer.write(out, &page)?;
    writer.flush(out)?;
    // The run ends here: freeing 100,000 argument trees one allocation at a time took a sixth of
    // the run, and the process gives all of it back at once.
    std::mem::forget(records);
    Ok(if failed {
        ExitCode::Error
    } else {
        ExitCode::Success
    })
}
