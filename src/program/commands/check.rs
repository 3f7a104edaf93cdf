//! `reasons check`: flag every call without a usable reason, one compiler-style line each.

use std::io::Write;

use reasons::lint;
use reasons::record::{CallRecord, Status};

use crate::program::broken_pipe::is_broken_pipe;
use crate::program::exit_codes::ExitCode;
use crate::program::output::{finding_writer, CheckFormat, Finding};
use crate::program::read::logs_to_read::{report_problems, LogsToRead};
use crate::program::read::schedule::{read_each_in_order, read_one, Cores};

pub struct Options {
    pub logs: LogsToRead,
    pub format: CheckFormat,
    /// Tools never flagged.
    pub allow: Vec<glob::Pattern>,
    /// Quality hints, when asked for.
    pub lint: Option<lint::Limits>,
}

/// What one file gives: its flagged calls in line order, and how many calls it had.
#[derive(Default)]
struct FileFindings {
    calls: u64,
    flagged: Vec<Finding>,
    /// Calls with a present reason, kept for the lints that look across a session.
    present: Vec<CallRecord>,
}

pub fn run(options: Options, out: &mut (dyn Write + Send)) -> anyhow::Result<ExitCode> {
    let mut failed = report_problems(&options.logs.problems);
    let allowed = |record: &CallRecord| options.allow.iter().any(|tool| tool.matches(&record.tool));
    let (mut calls, mut lacking, mut hints, mut files) = (0u64, 0u64, 0u64, 0u64);
    let mut writer = finding_writer(options.format);
    if let ([source], None) = (&options.logs.sources[..], options.lint) {
        // One log is checked as it is read: memory stays flat however much it flags.
        let summary = read_one(
            source,
            &options.logs.source_options,
            Cores::All,
            &mut || Ok(()),
            &mut |record| {
                calls += 1;
                let Some(message) = missing_message(record.status).filter(|_| !allowed(&record))
                else {
                    return Ok(());
                };
                lacking += 1;
                let finding = Finding {
                    record,
                    message: message.to_owned(),
                    lint: false,
                };
                writer.write(out, &finding)
            },
            &mut |warning| crate::program::messages::message!("{warning}"),
        );
        match summary {
            Ok(_) => files += 1,
            Err(error) if is_broken_pipe(&error) => return Err(error),
            Err(error) => {
                crate::program::messages::message!("{error:#}");
                failed = true;
            }
        }
        return finish(out, &options, failed, (calls, lacking, hints, files));
    }
    let all_read = read_each_in_order(
        &options.logs.sources,
        &options.logs.source_options,
        FileFindings::default,
        |file, record| {
            file.calls += 1;
            if allowed(&record) {
                return;
            }
            if let Some(message) = missing_message(record.status) {
                file.flagged.push(Finding {
                    record,
                    message: message.to_owned(),
                    lint: false,
                });
            } else if options.lint.is_some() && record.status == Status::Present {
                file.present.push(record);
            }
        },
        |_, mut file, _| {
            if let Some(lint) = options.lint {
                file.flagged.extend(lint_findings(&file.present, lint));
                file.flagged.sort_by_key(|finding| finding.record.line);
            }
            files += 1;
            calls += file.calls;
            for finding in &file.flagged {
                if finding.lint {
                    hints += 1;
                } else {
                    lacking += 1;
                }
                writer.write(out, finding)?;
            }
            Ok(())
        },
    )?;
    finish(
        out,
        &options,
        failed || !all_read,
        (calls, lacking, hints, files),
    )
}

/// Says what was found; `counts` are calls, calls lacking a reason, lint hints and files read.
fn finish(
    out: &mut dyn Write,
    options: &Options,
    failed: bool,
    (calls, lacking, hints, files): (u64, u64, u64, u64),
) -> anyhow::Result<ExitCode> {
    out.flush()?;
    crate::program::read::logs_to_read::say_if_no_agent_log(&options.logs.sources, calls, failed);
    let mut summary = format!(
        "reasons: {lacking} of {calls} calls have no usable reason in {files} file{}",
        if files == 1 { "" } else { "s" }
    );
    if options.lint.is_some() {
        summary.push_str(&format!("; {hints} reasons flagged by --lint"));
    }
    crate::program::messages::line(&summary);
    Ok(if failed {
        ExitCode::Error
    } else if lacking + hints > 0 {
        ExitCode::Finding
    } else {
        ExitCode::Success
    })
}

fn missing_message(status: Status) -> Option<&'static str> {
    match status {
        Status::Missing => Some("missing reason"),
        Status::Blank => Some("blank reason"),
        Status::Invalid => Some("reason is not a string"),
        Status::Present | Status::Declared | Status::Freeform => None,
    }
}

/// The quality hints of `--lint` for one file's calls with a reason, in no particular order.
fn lint_findings(present: &[CallRecord], limits: lint::Limits) -> Vec<Finding> {
    lint::hints(present, limits)
        .into_iter()
        .map(|hint| {
            let mut record = present[hint.call].clone();
            // Kept for the lint to read; the finding shows the call as `check` always has.
            record.arguments = None;
            Finding {
                record,
                message: hint.message,
                lint: true,
            }
        })
        .collect()
}
