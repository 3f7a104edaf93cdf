//! One module per subcommand. Each takes options of its own, never clap's types, and returns how
//! the run ended; `main` reports errors. This module turns parsed arguments into those options.

mod check;
mod completions;
mod extract;
mod filter;
mod gateway;
mod hook;
mod proxy;
mod relay;
mod stats;

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use reasons::cli::{
    CheckArgs, Command, ExtractArgs, ExtractFormat, HookAgent, InputArgs, StatsArgs,
};
use reasons::formats::ReadOptions;
use reasons::reasons_log;
use reasons::record::Status;
use reasons::stream::Options;

use crate::exit_codes::ExitCode;
use crate::input::{self, Problem, Source};
use crate::output::WriterOptions;
use crate::scan::ScanOptions;

/// Runs one parsed command.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Completions(args) => with_stdout(|out| completions::run(args.shell, out)),
        Command::Extract(args) => {
            let options = extract_options(args, io::stdout().is_terminal())?;
            with_stdout(|out| extract::run(options, out))
        }
        Command::Check(args) => {
            let options = check_options(args)?;
            with_stdout(|out| check::run(options, out))
        }
        Command::Stats(args) => {
            let options = stats_options(args)?;
            with_stdout(|out| stats::run(options, out))
        }
        // The stream commands own stdout themselves: they flush per line, and the proxy writes
        // to it from the thread that reads the server.
        Command::Filter(args) => filter::run(
            Options {
                augment: !args.no_augment,
                strip: !args.no_strip,
            },
            args.reasons_log.as_deref(),
            io::stdin().lock(),
            io::stdout().lock(),
        ),
        Command::Proxy(args) => proxy::run(&args.server, args.reasons_log.as_deref()),
        Command::Gateway(args) => gateway::run(gateway::Options {
            listen: args.listen,
            upstream: args.upstream,
            reasons_log: reasons_log_or_default(args.reasons_log)?,
            strip: !args.no_strip,
        }),
        Command::Hook(args) => {
            let HookAgent::ClaudeCode = args.agent;
            // A hook never gets in the way: whatever goes wrong, the agent carries on.
            let log = args.reasons_log.or_else(reasons_log::default_path);
            hook::claude_code(io::stdin().lock(), io::stdout().lock(), log.as_deref());
            Ok(ExitCode::Success)
        }
    }
}

/// The reasons log named, else the default one.
fn reasons_log_or_default(named: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    named.or_else(reasons_log::default_path).context(
        "no --reasons-log given, and neither XDG_STATE_HOME nor HOME is set to find the default one in",
    )
}

/// Runs a command that writes reports, with stdout block-buffered and flushed at the end.
fn with_stdout(
    command: impl FnOnce(&mut (dyn Write + Send)) -> anyhow::Result<ExitCode>,
) -> anyhow::Result<ExitCode> {
    // Not locked for the whole run: files are handed on by whichever thread reads the next
    // one, and a lock taken per 64 KiB written costs nothing.
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout());
    let code = command(&mut out)?;
    out.flush()?;
    Ok(code)
}

/// The logs a command reads, and how.
pub struct Reading {
    pub sources: Vec<Source>,
    /// Paths that named no readable log: reported, and the run ends with status 2.
    pub problems: Vec<Problem>,
    pub scan: ScanOptions,
    /// Whether each record is flushed as soon as it is written.
    pub line_buffered: bool,
}

fn reading(
    input: InputArgs,
    keep_arguments: bool,
    follow: bool,
    line_buffered: bool,
) -> anyhow::Result<Reading> {
    let expanded = input::expand(&input.paths, &mut |announcement| {
        let _ = writeln!(io::stderr().lock(), "reasons: {announcement}");
    })?;
    if follow && !matches!(&expanded.sources[..], [Source::File(_)]) {
        bail!("--follow reads exactly one file");
    }
    let mut logs = input.reasons_log;
    if logs.is_empty() && expanded.local {
        if let Some(default) = reasons_log::default_path().filter(|path| path.is_file()) {
            let _ = writeln!(
                io::stderr().lock(),
                "reasons: joining {}",
                default.display()
            );
            logs.push(default);
        }
    }
    let reasons = read_reasons_logs(&logs)?;
    // A reasons log is never read as a session log, even from a folder that holds it.
    let is_reasons_log = |source: &Source| match source {
        Source::File(path) => logs.iter().any(|log| same_file(log, path)),
        Source::Stdin => false,
    };
    let sources = expanded
        .sources
        .into_iter()
        .filter(|source| !is_reasons_log(source));
    Ok(Reading {
        sources: sources.collect(),
        problems: expanded.problems,
        scan: ScanOptions {
            read: ReadOptions {
                format: input.input_format,
                keep_arguments,
                audit_declared: input.audit_declared,
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
            let _ = writeln!(
                io::stderr().lock(),
                "reasons: {}: {skipped} lines are not reasons-log records, skipped",
                log.display()
            );
        }
    }
    Ok(Some(Arc::new(index)))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Says what is wrong with each path that could not be read; true when there was any.
pub fn report_problems(problems: &[Problem]) -> bool {
    for problem in problems {
        let _ = writeln!(
            io::stderr().lock(),
            "reasons: {}: {}",
            problem.path,
            problem.message
        );
    }
    !problems.is_empty()
}

/// Whether an error is, at bottom, a write into a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|error| error.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn patterns(globs: &[String], option: &str) -> anyhow::Result<Vec<glob::Pattern>> {
    globs
        .iter()
        .map(|pattern| {
            glob::Pattern::new(pattern)
                .with_context(|| format!("{option} {pattern}: not a valid pattern"))
        })
        .collect()
}

/// The width a table is fitted to: the terminal's, else `$COLUMNS`, else 100.
fn terminal_width() -> u16 {
    comfy_table::Table::new()
        .width()
        .or_else(|| std::env::var("COLUMNS").ok()?.parse().ok())
        .unwrap_or(100)
}

fn extract_options(
    args: ExtractArgs,
    stdout_is_terminal: bool,
) -> anyhow::Result<extract::Options> {
    let format = args.format.unwrap_or(if stdout_is_terminal {
        ExtractFormat::Table
    } else {
        ExtractFormat::Jsonl
    });
    // Tables and spreadsheets show what a call touched, which is read off its arguments.
    let keep_arguments = args.arguments || format != ExtractFormat::Jsonl;
    let mut statuses = args.status;
    if args.missing {
        statuses.extend(
            Status::ALL
                .into_iter()
                .filter(|status| status.lacks_reason()),
        );
    }
    Ok(extract::Options {
        reading: reading(
            args.input,
            keep_arguments,
            args.follow,
            args.line_buffered || stdout_is_terminal,
        )?,
        format,
        filter: extract::Filter {
            tools: patterns(&args.tool, "--tool")?,
            statuses,
            session: args.session,
        },
        writer: WriterOptions {
            arguments: args.arguments,
            width: terminal_width(),
        },
    })
}

fn check_options(args: CheckArgs) -> anyhow::Result<check::Options> {
    Ok(check::Options {
        reading: reading(args.input, false, false, false)?,
        format: args.format,
        allow: patterns(&args.allow, "--allow")?,
        lint: args.lint.then_some(check::Lint {
            max_len: args.max_len,
            repeat: args.repeat,
        }),
    })
}

fn stats_options(args: StatsArgs) -> anyhow::Result<stats::Options> {
    if let Some(threshold) = args.min_coverage {
        if !(0.0..=100.0).contains(&threshold) {
            bail!("--min-coverage {threshold}: give a percentage from 0 to 100");
        }
    }
    let merge = args.merge;
    Ok(stats::Options {
        reading: reading(args.input, false, false, false)?,
        by: args.by,
        format: args.format,
        min_coverage: args.min_coverage,
        merge,
    })
}
