//! The man pages under `man/` are made from the clap definitions; this keeps them current.
//! Run with `REASONS_BLESS=1` to rewrite them after changing the command line.

use clap::CommandFactory;
use reasons::cli::Cli;

use crate::util::root;

fn render(command: &clap::Command) -> Vec<u8> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .expect("rendering into memory cannot fail");
    page
}

#[test]
fn man_pages_match_the_command_line() {
    let mut command = Cli::command();
    command.build();
    let mut pages = vec![("reasons.1".to_owned(), render(&command))];
    for sub in command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help")
    {
        let name = format!("reasons-{}", sub.get_name());
        let sub = sub.clone().name(name.clone());
        pages.push((format!("{name}.1"), render(&sub)));
    }
    let bless = std::env::var_os("REASONS_BLESS").is_some();
    let mut stale = Vec::new();
    for (file, page) in pages {
        let path = root().join("man").join(&file);
        if bless {
            std::fs::write(&path, &page).expect("man/ is writable");
        } else if std::fs::read(&path).ok().as_deref() != Some(&page[..]) {
            stale.push(file);
        }
    }
    assert!(
        stale.is_empty(),
        "man pages out of date: {stale:?}; run `REASONS_BLESS=1 cargo test man_pages` and commit man/"
    );
}
