//! The man pages under `man/` are the ones the binary makes from its own clap definitions
//! (`reasons generate man DIR`); this keeps them current. Run with `REASONS_BLESS=1` to rewrite
//! them after changing the command line.

use std::fs;

use crate::util::{reasons, root};

#[test]
fn man_pages_are_the_ones_the_binary_makes() {
    let made = tempfile::tempdir().expect("a temporary folder");
    let status = reasons()
        .args(["generate", "man"])
        .arg(made.path())
        .status()
        .expect("reasons runs");
    assert!(status.success(), "reasons generate man failed");
    let checked_in = root().join("man");
    let names = |dir: &std::path::Path| {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("the folder is readable")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    };
    if std::env::var_os("REASONS_BLESS").is_some() {
        for name in names(&checked_in) {
            fs::remove_file(checked_in.join(name)).expect("man/ is writable");
        }
        for name in names(made.path()) {
            fs::copy(made.path().join(&name), checked_in.join(&name)).expect("man/ is writable");
        }
    }
    assert_eq!(
        names(made.path()),
        names(&checked_in),
        "man/ holds other pages than the binary makes; run `REASONS_BLESS=1 cargo test man_pages` and commit man/"
    );
    let stale: Vec<String> = names(made.path())
        .into_iter()
        .filter(|name| {
            fs::read(made.path().join(name)).ok() != fs::read(checked_in.join(name)).ok()
        })
        .collect();
    assert!(
        stale.is_empty(),
        "man pages out of date: {stale:?}; run `REASONS_BLESS=1 cargo test man_pages` and commit man/"
    );
}
