//! What the commands that read logs share: which logs (the sources the paths name, less the
//! reasons logs joined with them), how to read them, and what to say about the paths that named
//! none.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::program::cli::InputArgs;
use anyhow::{bail, Context};
use reasons::formats::ReadOptions;
use reasons::reasons_log;

use crate::program::read::schedule::SourceOptions;
use crate::program::read::sources::{self, Problem, Source};

/// The logs a command reads, and how.
pub struct LogsToRead {
    pub sources: Vec<Source>,
    /// Paths that named no readable log: reported, and the run ends with status 2.
    pub problems: Vec<Problem>,
    pub source_options: SourceOptions,
    /// Whether each record is flushed as soon as it is written.
    pub line_buffered: bool,
}

/// What a command needs of its logs beyond what `InputArgs` says: none of it by default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Needs {
    /// Each call's arguments kept in its record.
    pub keep_arguments: bool,
    /// The one file named followed as it grows (`--follow`).
    pub follow: bool,
    /// Each record flushed as soon as it is written.
    pub line_buffered: bool,
}

/// The logs the command line names, and how to read them.
pub fn logs_to_read(input: InputArgs, needs: Needs) -> anyhow::Result<LogsToRead> {
    let Needs {
        keep_arguments,
        follow,
        line_buffered,
    } = needs;
    let expanded = sources::expand(&input.paths, &mut |announcement| {
        crate::program::messages::message!("{announcement}");
    })?;
    if follow && !matches!(&expanded.sources[..], [Source::File(_)]) {
        bail!("--follow reads exactly one file");
    }
    let mut logs = input.reasons_log;
    if logs.is_empty() {
        let purpose = reasons_log::Purpose::Join {
            usual_folders: expanded.local,
        };
        if let Some(default) = reasons_log::which(None, purpose) {
            crate::program::messages::message!("joining {}", default.display());
            logs.push(default);
        }
    }
    let reasons = read_reasons_logs(&logs)?;
    // A reasons log is never read as a session log, even from a folder that holds it.
    let is_reasons_log = |source: &Source| {
        source
            .path()
            .is_some_and(|path| logs.iter().any(|log| same_file(log, path)))
    };
    let sources = expanded
        .sources
        .into_iter()
        .filter(|source| !is_reasons_log(source));
    Ok(LogsToRead {
        sources: sources.collect(),
        problems: expanded.problems,
        source_options: SourceOptions {
            read: ReadOptions {
                format: input.input_format,
                keep_arguments,
                audit_declared: input.audit_declared,
                check_every_line: input.strict,
            },
            strict: input.strict,
            follow,
            reasons,
        },
        line_buffered,
    })
}

/// The reasons logs to join, read into one index; `None` when there are none.
fn read_reasons_logs(logs: &[PathBuf]) -> anyhow::Result<Option<Arc<reasons_log::Index>>> {
    if logs.is_empty() {
        return Ok(None);
    }
    let mut index = reasons_log::Index::default();
    for log in logs {
        let skipped = index.skipped;
        let file = File::open(log)
            .with_context(|| format!("cannot open the reasons log {}", log.display()))?;
        index
            .add(io::BufReader::new(file))
            .with_context(|| format!("cannot read the reasons log {}", log.display()))?;
        let skipped = index.skipped - skipped;
        if skipped > 0 {
            crate::program::messages::message!(
                "{}: {skipped} lines are not reasons-log records, skipped",
                log.display()
            );
        }
    }
    Ok(Some(Arc::new(index)))
}

pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Says so when the logs read held no call at all: "0 calls" alone does not tell that the paths
/// named no agent log (or none in a format this tool reads). A run that `failed` has said what
/// went wrong with its files already, and a file it could not read is no proof of no log.
pub fn say_if_no_agent_log(sources: &[Source], calls: u64, failed: bool) {
    if calls > 0 || sources.is_empty() || failed {
        return;
    }
    if let [Source::Stdin] = sources {
        crate::program::messages::message!("no agent log found in standard input");
        return;
    }
    const NAMED: usize = 3;
    let mut names: Vec<String> = sources.iter().take(NAMED).map(Source::name).collect();
    if sources.len() > NAMED {
        names.push(format!("and {} more", sources.len() - NAMED));
    }
    crate::program::messages::message!(
        "no agent log found in {} file{}: {}",
        sources.len(),
        if sources.len() == 1 { "" } else { "s" },
        names.join(", ")
    );
}

/// Says what is wrong with each path that could not be read; true when there was any.
pub fn report_problems(problems: &[Problem]) -> bool {
    for problem in problems {
        crate::program::messages::message!("{}: {}", problem.path, problem.message);
    }
    !problems.is_empty()
}
