//! The `reasons` executable: parse the command line, run the command, map the outcome to an
//! exit status.

// Every message to stderr goes through `messages`, which never panics.
#![deny(clippy::print_stderr)]

mod program;

use std::process;

use clap::Parser;

use program::cli::Cli;
use program::exit_codes::ExitCode;
use program::{broken_pipe, commands, messages};

/// Writing into a closed pipe (`reasons extract … | head`) is how a reader says it has seen
/// enough: it ends the run quietly, with status 0.
fn main() {
    let cli = Cli::parse();
    let code = match commands::run(cli.command) {
        Ok(code) => code,
        Err(error) if broken_pipe::is_broken_pipe(&error) => ExitCode::Success,
        Err(error) => {
            messages::message!("{error:#}");
            ExitCode::Error
        }
    };
    process::exit(code.into());
}
