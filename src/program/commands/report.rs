//! `reasons report`: one HTML page of every session read, for the person reviewing it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use reasons::masking::Masking;
use reasons::record::CallRecord;
use reasons::stats::{GroupBy, Tally};

use crate::program::exit_codes::ExitCode;
use crate::program::output::Writer;
use crate::program::read::logs_to_read::{report_problems, LogsToRead};
use crate::program::read::schedule::read_each_in_order;
use crate::program::report::{Page, PageWriter};

pub struct Options {
    /// How the logs are read; arguments are kept, since the page shows them.
    pub logs: LogsToRead,
    /// Whether each call's reason and arguments are masked before the page holds them (a page
    /// is kept and passed on: `--no-mask` turns it off).
    pub masking: Masking,
}

/// What one file gives the page: its calls, and the counts `stats` would give for them.
struct FileCalls {
    records: Vec<CallRecord>,
    by_tool: Tally,
    by_day: Tally,
}

/// Writes the page to `path`: into a temporary file beside it, renamed into place once it is
/// whole. A run that read no log at all (every path missing, say) leaves no page, rather than an
/// empty one, and never replaces the page a good run wrote; a run that read some logs but not
/// all writes the page of those and still ends with status 2. Says where the page went and how
/// many calls it holds.
pub fn write_page_file(options: Options, path: &Path) -> anyhow::Result<ExitCode> {
    let temporary = temporary_beside(path);
    let cannot_write = || format!("{}: cannot write", path.display());
    let file = File::options()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .with_context(cannot_write)?;
    let written = (|| {
        let mut out = BufWriter::with_capacity(64 * 1024, file);
        let (code, calls) = run(options, &mut out)?;
        out.into_inner()
            .map_err(|error| error.into_error())
            .and_then(|file| file.sync_all())
            .with_context(cannot_write)?;
        anyhow::Ok((code, calls))
    })();
    let (code, calls) = match written {
        Ok((code, calls)) if code == ExitCode::Success || calls > 0 => (code, calls),
        other => {
            let _ = std::fs::remove_file(&temporary);
            if other.is_ok() {
                crate::program::messages::message!(
                    "{}: not written: no log was read",
                    path.display()
                );
            }
            return other.map(|(code, _)| code);
        }
    };
    if let Err(error) = std::fs::rename(&temporary, path) {
        let _ = std::fs::remove_file(&temporary);
        return Err(error).with_context(cannot_write);
    }
    crate::program::messages::message!(
        "wrote {} ({calls} call{})",
        path.display(),
        if calls == 1 { "" } else { "s" }
    );
    Ok(code)
}

/// A name for the page while it is written, in the same folder so that renaming it is atomic.
fn temporary_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "page".into(), |name| name.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.part", std::process::id()))
}

/// Writes the page to `out`; returns how the run ended and how many calls the page holds.
pub fn run(options: Options, out: &mut (dyn Write + Send)) -> anyhow::Result<(ExitCode, usize)> {
    let (logs, masking) = (options.logs, options.masking);
    let mut failed = report_problems(&logs.problems);
    let mut records = Vec::new();
    let mut by_tool = Tally::new(GroupBy::Tool);
    let mut by_day = Tally::new(GroupBy::Day);
    let all_read = read_each_in_order(
        &logs.sources,
        &logs.source_options,
        || FileCalls {
            records: Vec::new(),
            by_tool: Tally::new(GroupBy::Tool),
            by_day: Tally::new(GroupBy::Day),
        },
        |file, mut record| {
            masking.call(&mut record);
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
    crate::program::read::logs_to_read::say_if_no_agent_log(
        &logs.sources,
        records.len() as u64,
        failed,
    );
    let page = Page {
        records: &records,
        by_tool: &by_tool.report(),
        by_day: &by_day.report(),
    };
    let mut writer = PageWriter;
    writer.write(out, &page)?;
    writer.flush(out)?;
    let calls = records.len();
    // The run ends here: freeing 100,000 argument trees one allocation at a time took a sixth of
    // the run, and the process gives all of it back at once.
    std::mem::forget(records);
    let code = if failed {
        ExitCode::Error
    } else {
        ExitCode::Success
    };
    Ok((code, calls))
}
