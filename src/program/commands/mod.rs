//! One module per subcommand, and nothing else: what several commands share lives beside this
//! folder in `program/`. Each takes options of its own, never clap's types, and returns how
//! the run ended; `main` reports errors. This module turns parsed arguments into those options.

mod check;
mod completions;
mod export;
mod extract;
mod filter;
mod gateway;
mod generate;
mod hook;
mod proxy;
mod report;
#[cfg(unix)]
mod run;
mod stats;
mod watch;

use crate::program::otlp;
use crate::program::read::logs_to_read::{logs_to_read, same_file, Needs};

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;

use crate::program::cli::{
    self, CheckArgs, Command, ExtractArgs, NoMaskArgs, ReportArgs, StatsArgs,
};
use anyhow::{bail, Context};
use reasons::layer::ReasonPosition;
use reasons::masking::Masking;
use reasons::reasons_log::{self, Purpose};
use reasons::record::Status;
use reasons::stats::GroupBy;
use reasons::stream::Options;

use crate::program::exit_codes::ExitCode;
use crate::program::output::{CheckFormat, ExtractFormat, StatsFormat, TableWidth, WriterOptions};
use crate::program::read::sources::Source;

/// The layer's place for the parameter, as `--reason-position` names it.
fn position(place: cli::ReasonPlace) -> ReasonPosition {
    match place {
        cli::ReasonPlace::First => ReasonPosition::First,
        cli::ReasonPlace::Last => ReasonPosition::Last,
    }
}

/// Runs one parsed command.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Completions(args) => with_stdout(|out| completions::run(args.shell, out)),
        Command::Extract(args) => {
            let options = extract_options(args, io::stdout().is_terminal())?;
            with_stdout(|out| extract::run(options, out))
        }
        Command::Export(args) => {
            let Some(otlp) = otlp::endpoint(args.otlp) else {
                anyhow::bail!(
                    "export: name a collector with --otlp URL (or OTEL_EXPORTER_OTLP_ENDPOINT)"
                );
            };
            let logs = logs_to_read(
                args.input,
                Needs {
                    keep_arguments: true,
                    follow: false,
                    line_buffered: false,
                },
            )?;
            export::run(logs, &otlp, masking(args.mask))
        }
        Command::Check(args) => {
            let options = check_options(args)?;
            with_stdout(|out| check::run(options, out))
        }
        Command::Stats(args) => {
            let options = stats_options(args)?;
            with_stdout(|out| stats::run(options, out))
        }
        Command::Report(args) => {
            let output = args.output.clone();
            let options = report_options(args)?;
            match output {
                Some(path) => report::write_page_file(options, &path),
                None => with_stdout(|out| report::run(options, out).map(|(code, _)| code)),
            }
        }
        // The stream commands own stdout themselves: they flush per line, and the proxy writes
        // to it from the thread that reads the server.
        Command::Filter(args) => filter::run(
            Options {
                augment: !args.no_augment,
                strip: !args.no_strip,
                position: position(args.reason_position),
            },
            reasons_log::which(args.reasons_log, Purpose::WhenNamed).as_deref(),
            otlp::endpoint(args.otlp).as_deref(),
            masking(args.mask),
            io::stdin().lock(),
            io::stdout().lock(),
        ),
        Command::Proxy(args) => {
            let reasons_log = reasons_log::which(args.reasons_log, Purpose::WhenNamed);
            let position = position(args.reason_position);
            let otlp = otlp::endpoint(args.otlp);
            let masking = masking(args.mask);
            if let (true, Some(url)) = (args.sign_out, &args.url) {
                return proxy::remote::sign_out(url, &mut io::stdout().lock());
            }
            if let Some(listen) = args.listen {
                return proxy::listen::run(proxy::listen::Options {
                    listen: &listen,
                    behind: match args.url {
                        Some(url) => proxy::listen::Behind::Url {
                            url,
                            headers: args.header,
                        },
                        None => proxy::listen::Behind::Server(args.server),
                    },
                    reasons_log: reasons_log.as_deref(),
                    reasons_in_meta: args.meta,
                    position,
                    otlp: otlp.as_deref(),
                    masking,
                });
            }
            match args.url {
                Some(url) => proxy::remote::run(
                    &url,
                    &args.header,
                    reasons_log.as_deref(),
                    args.meta,
                    position,
                    otlp.as_deref(),
                    masking,
                ),
                None => proxy::run(
                    &args.server,
                    reasons_log.as_deref(),
                    args.meta,
                    position,
                    otlp.as_deref(),
                    masking,
                ),
            }
        }
        Command::Gateway(args) => {
            let shared = args.gateway;
            gateway::run(gateway::Options {
                listen: shared
                    .listen
                    .unwrap_or_else(|| cli::GATEWAY_LISTEN.to_owned()),
                upstreams: shared.upstream,
                reasons_log: reasons_log_to_write(shared.reasons_log)?,
                strip: !shared.no_strip,
                verbose: shared.verbose,
                restore: !shared.no_restore,
                position: position(shared.reason_position),
                max_body: shared.max_body,
                serve_reasons: args.serve_reasons,
                store: args.store,
                store_ttl: Some(args.store_ttl),
                otlp: otlp::endpoint(shared.otlp),
                masking: masking(shared.mask),
            })
        }
        #[cfg(not(unix))]
        Command::Run(_) => bail!("run: starts agents on Unix only (Linux, macOS)"),
        #[cfg(unix)]
        Command::Run(args) => {
            let shared = args.gateway;
            run::run(run::Options {
                agent: args.agent,
                program: args.program,
                listen: shared.listen,
                upstreams: shared.upstream,
                reasons_log: reasons_log_to_write(shared.reasons_log)?,
                strip: match (args.strip, shared.no_strip) {
                    (true, _) => Some(true),
                    (_, true) => Some(false),
                    _ => None,
                },
                verbose: shared.verbose,
                restore: !shared.no_restore,
                position: position(shared.reason_position),
                max_body: shared.max_body,
                otlp: otlp::endpoint(shared.otlp),
                masking: masking(shared.mask),
                watch: args.watch,
                confirm: args.confirm,
                args: args.args,
            })
        }
        Command::Watch(args) => {
            let reasons_log = reasons_log::which(args.reasons_log, Purpose::Always);
            // With no PATH, the usual local folders only when a person is at a terminal: a
            // pipe's stdin is no session log to follow.
            let sessions = if !args.paths.is_empty() || io::stdin().is_terminal() {
                Some(args.paths)
            } else {
                None
            };
            if reasons_log.is_none() && sessions.is_none() {
                bail!("nothing to watch: name a --reasons-log or session logs");
            }
            watch::run(
                watch::Options {
                    reasons_log,
                    sessions,
                    plain: args.plain,
                    masking: shown_masked(args.mask),
                },
                io::stdout().is_terminal(),
            )
        }
        Command::Hook(args) => hook::run(args.command),
        Command::Generate(args) => generate::run(args.what),
    }
}

/// Whether what a command sends or shows elsewhere is masked: unless `--no-mask`.
fn masking(args: NoMaskArgs) -> Masking {
    Masking::masked_unless(args.no_mask)
}

/// Whether what a command shows the person on their own terminal is masked: only with `--mask`.
fn shown_masked(mask: bool) -> Masking {
    Masking::masked_unless(!mask)
}

/// The reasons log a command that always logs writes to ([`reasons_log::which`]).
fn reasons_log_to_write(named: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    reasons_log::which(named, Purpose::Always).context(
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

fn patterns(globs: &[String], option: &str) -> anyhow::Result<Vec<glob::Pattern>> {
    globs
        .iter()
        .map(|pattern| {
            glob::Pattern::new(pattern)
                .with_context(|| format!("{option} {pattern}: not a valid pattern"))
        })
        .collect()
}

/// The width a table is laid out to: `$COLUMNS` when it is set (as `ls` reads it, so a script
/// or a test can choose), else the terminal's, else 100.
fn terminal_width() -> u16 {
    columns_variable()
        .or_else(|| comfy_table::Table::new().width())
        .unwrap_or(100)
}

/// `$COLUMNS`, when it is set to a width.
fn columns_variable() -> Option<u16> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|columns| columns.trim().parse().ok())
        .filter(|&columns| columns > 0)
}

/// Whether the output is known to be read at [`terminal_width`]: `$COLUMNS` is set, or stdout is
/// the terminal. (A pipe's reader may be a file, whatever the terminal around it.)
fn width_is_known() -> bool {
    columns_variable().is_some() || io::stdout().is_terminal()
}

fn extract_options(
    args: ExtractArgs,
    stdout_is_terminal: bool,
) -> anyhow::Result<extract::Options> {
    let format = match args.format {
        Some(cli::ExtractFormat::Table) => ExtractFormat::Table,
        Some(cli::ExtractFormat::Jsonl) => ExtractFormat::Jsonl,
        Some(cli::ExtractFormat::Csv) => ExtractFormat::Csv,
        Some(cli::ExtractFormat::Tsv) => ExtractFormat::Tsv,
        None if stdout_is_terminal => ExtractFormat::Table,
        None => ExtractFormat::Jsonl,
    };
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
    let logs = logs_to_read(
        args.input,
        Needs {
            keep_arguments,
            follow: args.follow,
            line_buffered: args.line_buffered || stdout_is_terminal,
        },
    )?;
    let live = args.follow || matches!(&logs.sources[..], [Source::Stdin]);
    Ok(extract::Options {
        logs,
        format,
        filter: extract::Filter {
            tools: patterns(&args.tool, "--tool")?,
            statuses,
            session: args.session,
        },
        writer: WriterOptions {
            arguments: args.arguments,
            width: terminal_width(),
            live,
        },
        masking: shown_masked(args.mask),
    })
}

fn check_options(args: CheckArgs) -> anyhow::Result<check::Options> {
    // The lint reads what a call touched off its arguments.
    let needs = Needs {
        keep_arguments: args.lint,
        ..Needs::default()
    };
    Ok(check::Options {
        logs: logs_to_read(args.input, needs)?,
        format: match args.format {
            cli::CheckFormat::Text => CheckFormat::Text,
            cli::CheckFormat::Github => CheckFormat::Github,
            cli::CheckFormat::Jsonl => CheckFormat::Jsonl,
        },
        allow: patterns(&args.allow, "--allow")?,
        lint: args.lint.then_some(reasons::lint::Limits {
            max_len: args.limits.max_len,
            repeat: args.limits.repeat,
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
    // The lint reads what a call touched off its arguments.
    let needs = Needs {
        keep_arguments: args.lint && !merge,
        ..Needs::default()
    };
    Ok(stats::Options {
        logs: logs_to_read(args.input, needs)?,
        by: match args.by {
            cli::Grouping::Tool => GroupBy::Tool,
            cli::Grouping::File => GroupBy::File,
            cli::Grouping::Session => GroupBy::Session,
            cli::Grouping::Format => GroupBy::Format,
            cli::Grouping::Day => GroupBy::Day,
        },
        format: match args.format {
            cli::StatsFormat::Table => StatsFormat::Table,
            cli::StatsFormat::Json => StatsFormat::Json,
            cli::StatsFormat::Markdown => StatsFormat::Markdown,
            cli::StatsFormat::Csv => StatsFormat::Csv,
        },
        min_coverage: args.min_coverage,
        width: TableWidth {
            columns: terminal_width(),
            known: width_is_known(),
        },
        merge,
        lint: args.lint.then_some(reasons::lint::Limits {
            max_len: args.limits.max_len,
            repeat: args.limits.repeat,
        }),
    })
}

fn report_options(args: ReportArgs) -> anyhow::Result<report::Options> {
    let output = args.output;
    let masking = masking(args.mask);
    // The page shows every call's arguments.
    let logs = logs_to_read(
        args.input,
        Needs {
            keep_arguments: true,
            ..Needs::default()
        },
    )?;
    if let Some(output) = &output {
        // A log named as the page would be replaced by it.
        let names_a_log = logs
            .sources
            .iter()
            .any(|source| source.path().is_some_and(|path| same_file(path, output)));
        if names_a_log {
            bail!("-o {}: is a log this page reads", output.display());
        }
    }
    Ok(report::Options { logs, masking })
}
