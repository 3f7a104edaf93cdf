//! `reasons extract`: every recorded call, with what it touched and its reason.

use std::cell::RefCell;
use std::io::Write;

use reasons::masking::Masking;
use reasons::record::{CallRecord, Status};

use crate::program::exit_codes::ExitCode;
use crate::program::output::{record_writer, ExtractFormat, WriterOptions};
use crate::program::read::logs_to_read::{report_problems, LogsToRead};
use crate::program::read::schedule::{read_each_in_order, read_one, Cores};

/// What `extract` shows.
pub struct Options {
    pub logs: LogsToRead,
    pub format: ExtractFormat,
    pub filter: Filter,
    pub writer: WriterOptions,
    /// Whether reasons and arguments are shown masked (`--mask`, for a shared screen).
    pub masking: Masking,
}

/// Which calls `extract` shows.
#[derive(Default)]
pub struct Filter {
    /// Tool name patterns; empty means every tool.
    pub tools: Vec<glob::Pattern>,
    /// Statuses; empty means every status.
    pub statuses: Vec<Status>,
    /// A session id.
    pub session: Option<String>,
}

impl Filter {
    pub fn keeps(&self, record: &CallRecord) -> bool {
        (self.tools.is_empty() || self.tools.iter().any(|tool| tool.matches(&record.tool)))
            && (self.statuses.is_empty() || self.statuses.contains(&record.status))
            && self
                .session
                .as_ref()
                .is_none_or(|session| record.session.as_ref() == Some(session))
    }
}

pub fn run(options: Options, out: &mut (dyn Write + Send)) -> anyhow::Result<ExitCode> {
    let Options {
        logs,
        format,
        filter,
        writer: writer_options,
        masking,
    } = options;
    let mut writer = record_writer(format, writer_options);
    let mut failed = report_problems(&logs.problems);
    // Calls read, before the filters: none at all means no agent log was found.
    let mut calls = 0;
    if let [source] = &logs.sources[..] {
        // One source is streamed: each call is written as soon as its line is read.
        let shared = RefCell::new((out, &mut writer));
        let summary = read_one(
            source,
            &logs.source_options,
            Cores::All,
            &mut || {
                let (out, writer) = &mut *shared.borrow_mut();
                writer.flush(*out)
            },
            &mut |mut record| {
                if !filter.keeps(&record) {
                    return Ok(());
                }
                masking.call(&mut record);
                let (out, writer) = &mut *shared.borrow_mut();
                writer.write(*out, &record)?;
                if logs.line_buffered {
                    writer.flush(*out)?;
                }
                Ok(())
            },
            &mut |warning| warn(&warning),
        );
        let (out, writer) = &mut *shared.borrow_mut();
        writer.finish(*out)?;
        writer.flush(*out)?;
        match summary {
            Ok(summary) => calls = summary.calls,
            Err(error) if crate::program::broken_pipe::is_broken_pipe(&error) => return Err(error),
            Err(error) => {
                crate::program::messages::message!("{error:#}");
                failed = true;
            }
        }
    } else {
        let all_read = read_each_in_order(
            &logs.sources,
            &logs.source_options,
            Vec::new,
            |records, mut record| {
                if filter.keeps(&record) {
                    masking.call(&mut record);
                    records.push(record);
                }
            },
            |_, records, summary| {
                calls += summary.calls;
                for record in &records {
                    writer.write(out, record)?;
                }
                writer.finish(out)?;
                if logs.line_buffered {
                    writer.flush(out)?;
                }
                Ok(())
            },
        )?;
        failed |= !all_read;
        writer.flush(out)?;
    }
    crate::program::read::logs_to_read::say_if_no_agent_log(&logs.sources, calls, failed);
    Ok(if failed {
        ExitCode::Error
    } else {
        ExitCode::Success
    })
}

fn warn(warning: &str) {
    crate::program::messages::message!("{warning}");
}
