//! `reasons check`: flag every call without a usable reason, one compiler-style line each.

use std::collections::HashMap;
use std::io::Write;

use reasons::record::{CallRecord, Status};

use super::broken_pipe::is_broken_pipe;
use super::logs_to_read::{report_problems, LogsToRead};
use crate::program::exit_codes::ExitCode;
use crate::program::output::{finding_writer, CheckFormat, Finding};
use crate::program::schedule::{read_each_in_order, read_one, Cores};

pub struct Options {
    pub logs: LogsToRead,
    pub format: CheckFormat,
    /// Tools never flagged.
    pub allow: Vec<glob::Pattern>,
    /// Quality hints, when asked for.
    pub lint: Option<Lint>,
}

/// Limits of `--lint`.
#[derive(Debug, Clone, Copy)]
pub struct Lint {
    /// The longest reason not flagged, in characters.
    pub max_len: usize,
    /// How many calls of one session may share a reason before it is boilerplate.
    pub repeat: usize,
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
    super::logs_to_read::say_if_no_agent_log(&options.logs.sources, calls, failed);
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

/// Reasons that say nothing a person can use.
const PLACEHOLDERS: [&str; 14] = [
    "n/a",
    "na",
    "none",
    "null",
    "nil",
    "-",
    "...",
    "…",
    "tbd",
    "todo",
    "reason",
    "no reason",
    "because",
    "why",
];

/// Words that, around a tool's name, add nothing to it: "run bash", "calling the Read tool".
const FILLER: [&str; 14] = [
    "a",
    "the",
    "tool",
    "call",
    "calling",
    "run",
    "running",
    "use",
    "using",
    "invoke",
    "invoking",
    "execute",
    "executing",
    "to",
];

/// The quality hints of `--lint` for one file's calls with a reason, in no particular order.
fn lint_findings(present: &[CallRecord], lint: Lint) -> Vec<Finding> {
    let session_of = |record: &CallRecord| record.session.clone().unwrap_or_default();
    let mut uses: HashMap<(String, &str), usize> = HashMap::new();
    for record in present {
        let text = record.reason.as_deref().unwrap_or("").trim();
        *uses.entry((session_of(record), text)).or_default() += 1;
    }
    let mut findings = Vec::new();
    for record in present {
        let text = record.reason.as_deref().unwrap_or("").trim();
        let mut flag = |message: String| {
            findings.push(Finding {
                record: record.clone(),
                message,
                lint: true,
            })
        };
        if PLACEHOLDERS.contains(&text.to_lowercase().as_str()) {
            flag(format!("reason is a placeholder: {text:?}"));
        } else if restates_tool(text, &record.tool) {
            flag(format!("reason only restates the tool name: {text:?}"));
        }
        let length = text.chars().count();
        if length > lint.max_len {
            flag(format!(
                "reason is {length} characters long (--max-len {})",
                lint.max_len
            ));
        } else if sentences(text) > 1 {
            flag("reason is longer than one sentence".to_owned());
        }
        let repeats = uses[&(session_of(record), text)];
        if repeats > lint.repeat {
            flag(format!(
                "the same reason is on {repeats} calls of this session (--repeat {})",
                lint.repeat
            ));
        }
    }
    findings
}

/// How many sentences a text holds: a `.`, `!` or `?` followed by more words, or a line break,
/// starts another.
fn sentences(text: &str) -> usize {
    let mut count = 1;
    let mut chars = text.trim().chars().peekable();
    while let Some(char) = chars.next() {
        let ends =
            matches!(char, '.' | '!' | '?') && chars.peek().is_some_and(|c| c.is_whitespace());
        if ends || char == '\n' {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.peek().is_some() {
                count += 1;
            }
        }
    }
    count
}

/// Whether a reason is only the tool's name, perhaps with filler around it.
fn restates_tool(reason: &str, tool: &str) -> bool {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let tool_words = words(tool);
    let meaningful: Vec<String> = words(reason)
        .into_iter()
        .filter(|word| !FILLER.contains(&word.as_str()))
        .collect();
    !tool_words.is_empty()
        && (meaningful == tool_words || meaningful.concat() == tool_words.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_counted_by_their_ends() {
        assert_eq!(sentences("Read the config."), 1);
        assert_eq!(sentences("Read v1.2 of the config"), 1);
        assert_eq!(sentences("Read it. Then write it."), 2);
        assert_eq!(sentences("First line\nsecond line"), 2);
    }

    #[test]
    fn a_reason_that_is_the_tool_name_restates_it() {
        assert!(restates_tool("Bash", "Bash"));
        assert!(restates_tool("run the bash tool", "Bash"));
        assert!(restates_tool("fs write", "fs_write"));
        assert!(restates_tool("fswrite", "fs_write"));
        assert!(!restates_tool("Check which tests fail", "Bash"));
    }
}
