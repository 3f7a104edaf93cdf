//! One module per subcommand. Each takes options of its own (never clap's types) and returns how
//! the run ended; errors are reported by `main`.

mod completions;
mod filter;
mod proxy;
mod relay;

use anyhow::bail;
use reasons::cli::Command;
use reasons::stream::Options;

use crate::exit_codes::ExitCode;

/// Runs one parsed command.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Completions(args) => completions::run(args.shell, &mut std::io::stdout()),
        Command::Extract(_) => not_implemented("extract"),
        Command::Check(_) => not_implemented("check"),
        Command::Stats(_) => not_implemented("stats"),
        Command::Filter(args) => filter::run(
            Options {
                augment: !args.no_augment,
                strip: !args.no_strip,
            },
            args.reasons_log.as_deref(),
            std::io::stdin().lock(),
            std::io::stdout().lock(),
        ),
        Command::Proxy(args) => proxy::run(&args.server, args.reasons_log.as_deref()),
    }
}

fn not_implemented(command: &str) -> anyhow::Result<ExitCode> {
    bail!("{command} is not implemented yet")
}
