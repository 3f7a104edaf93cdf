//! What a release ships, made from the binary under test by the release's own scripts: the
//! archive and installer (`dist/build`), the npm packages (`dist/npm/build`), the wheels
//! (`dist/pip/build`); and a clean environment to install them into.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::root;

/// The crate's version, as the archives and packages are named.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The machine's own target (the one archive built here), as install.sh names it from `uname`.
pub fn host_target() -> String {
    let os = match std::env::consts::OS {
        "linux" => "unknown-linux-gnu",
        "macos" => "apple-darwin",
        other => panic!("no release archive for {other}"),
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

/// Runs one of the release's scripts and checks that it succeeds.
#[track_caller]
pub fn script(path: &str, args: &[&str]) -> String {
    let output = Command::new(root().join(path))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the script runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{path} {args:?}: {stderr}");
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// `dist/build --binary <the binary under test> --out OUT`: the archive of this machine's
/// target, SHA256SUMS and install.sh, in OUT.
#[track_caller]
pub fn build_archive(out: &Path) -> PathBuf {
    let binary = env!("CARGO_BIN_EXE_reasons");
    let said = script(
        "dist/build",
        &["--binary", binary, "--out", out.to_str().unwrap()],
    );
    let archive = out.join(format!("reasons-{VERSION}-{}.tar.gz", host_target()));
    assert!(said.contains(archive.to_str().unwrap()), "{said}");
    archive
}

/// A command with none of this machine's environment but `PATH`, and `home` as `HOME`: what
/// a person's fresh account would give it.
pub fn clean(program: impl AsRef<std::ffi::OsStr>, home: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LANG", "C.UTF-8");
    command
}

/// Runs `command`, checks that it succeeds, and gives its standard output.
#[track_caller]
pub fn succeeds(command: &mut Command) -> String {
    let output = command.output().expect("the command runs");
    assert!(
        output.status.success(),
        "{command:?}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}
