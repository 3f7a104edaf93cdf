//! `reasons generate man DIR` (hidden, for packagers and for `man/`): the man pages, made from
//! the command line's own definitions, as `rg --generate man` and `just --man` make theirs.

use std::fs;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;

use crate::program::cli::{Cli, Generate};
use crate::program::exit_codes::ExitCode;

/// Writes what `what` names.
pub fn run(what: Generate) -> anyhow::Result<ExitCode> {
    match what {
        Generate::Man { dir } => write_man_pages(&dir)?,
    }
    Ok(ExitCode::Success)
}

/// `reasons.1`, and `reasons-COMMAND.1` for each subcommand but the hidden ones, into `dir`.
fn write_man_pages(dir: &Path) -> anyhow::Result<()> {
    let mut command = Cli::command();
    command.build();
    fs::create_dir_all(dir).with_context(|| format!("{}: cannot create it", dir.display()))?;
    let mut pages = vec![("reasons.1".to_owned(), command.clone())];
    for sub in command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help" && !sub.is_hide_set())
    {
        let name = format!("reasons-{}", sub.get_name());
        pages.push((format!("{name}.1"), sub.clone().name(name)));
    }
    for (file, page) in pages {
        let mut rendered = Vec::new();
        clap_mangen::Man::new(page).render(&mut rendered)?;
        let path = dir.join(&file);
        fs::write(&path, rendered)
            .with_context(|| format!("{}: cannot write it", path.display()))?;
    }
    Ok(())
}
