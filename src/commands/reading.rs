//! What the commands that read logs share: which logs, how to read them, and what to say about
//! the paths that named none.

use anyhow::bail;
use reasons::cli::InputArgs;
use reasons::formats::ReadOptions;

use crate::input::{self, Problem, Source};
use crate::scan::ScanOptions;

/// The logs a command reads, and how.
pub struct Reading {
    pub sources: Vec<Source>,
    /// Paths that named no readable log: reported, and the run ends with status 2.
    pub problems: Vec<Problem>,
    pub scan: ScanOptions,
    /// Whether each record is flushed as soon as it is written.
    pub line_buffered: bool,
}

pub fn reading(
    input: InputArgs,
    keep_arguments: bool,
    follow: bool,
    line_buffered: bool,
) -> anyhow::Result<Reading> {
    let expanded = input::expand(&input.paths, &mut |announcement| {
        crate::messages::message!("{announcement}");
    })?;
    if follow && !matches!(&expanded.sources[..], [Source::File(_)]) {
        bail!("--follow reads exactly one file");
    }
    Ok(Reading {
        sources: expanded.sources,
        problems: expanded.problems,
        scan: ScanOptions {
            read: ReadOptions {
                format: input.input_format,
                keep_arguments,
                audit_declared: input.audit_declared,
                check_every_line: input.strict,
            },
            strict: input.strict,
            follow,
        },
        line_buffered,
    })
}

/// Says what is wrong with each path that could not be read; true when there was any.
pub fn report_problems(problems: &[Problem]) -> bool {
    for problem in problems {
        crate::messages::message!("{}: {}", problem.path, problem.message);
    }
    !problems.is_empty()
}
