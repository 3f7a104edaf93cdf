//! `reasons completions SHELL`: a completion script made from the clap definitions.

use std::io::Write;

use crate::program::cli::Cli;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::program::exit_codes::ExitCode;

/// Writes the completion script for `shell`.
pub fn run(shell: Shell, out: &mut (dyn Write + Send)) -> anyhow::Result<ExitCode> {
    let mut buffer = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "reasons", &mut buffer);
    out.write_all(&buffer)?;
    out.flush()?;
    Ok(ExitCode::Success)
}
