//! The `reasons` executable: parse the command line, run the command, map the outcome to an
//! exit status.

mod commands;
mod exit_codes;

use std::io::{self, Write};
use std::process;

use clap::Parser;

use exit_codes::ExitCode;
use reasons::cli::Cli;

fn main() {
    let cli = Cli::parse();
    let code = match commands::run(cli.command) {
        Ok(code) => code,
        Err(error) if is_broken_pipe(&error) => ExitCode::Success,
        Err(error) => {
            let _ = writeln!(io::stderr().lock(), "reasons: {error:#}");
            ExitCode::Error
        }
    };
    process::exit(code.into());
}

/// Writing into a closed pipe (`reasons extract … | head`) is how a reader says it has seen
/// enough: not an error.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|error| error.kind() == io::ErrorKind::BrokenPipe)
    })
}
