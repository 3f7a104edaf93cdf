//! The environment every program a test starts runs in, written once: this machine's own is
//! cleared, so that no test reads or rewrites a developer's settings. Without it a test inherits
//! the agents' home variables (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`,
//! `COPILOT_HOME`, `CLINE_DATA_DIR`…), the `XDG_*` folders, `REASONS_LOG`, a collector
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`), `COLUMNS` and `HOME` itself, and `hook install`, a gateway's
//! default log or an agent's first run would write into the developer's own files.
//!
//! A program keeps only [`KEPT`] of this machine's variables, gets `LANG` and an empty `HOME` of
//! its own, and then whatever its test names: a test that needs an agent's home or a reasons log
//! says so on the command. `tests/it/isolation.rs` proves it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The only variable of this machine's that a started program keeps: where programs are (node,
/// bash, tmux, `script`, the agents' own helpers).
pub const KEPT: &[&str] = &["PATH"];

/// The locale every program gets: UTF-8, so that an agent's screen and tmux's capture keep their
/// characters whatever the developer's locale is.
pub const LANG: &str = "C.UTF-8";

/// The environment of a program whose HOME is `home`: [`KEPT`] from this machine, `LANG`, `HOME`.
pub fn base(home: &Path) -> Vec<(&'static str, OsString)> {
    let mut env: Vec<(&'static str, OsString)> = KEPT
        .iter()
        .filter_map(|name| Some((*name, std::env::var_os(name)?)))
        .collect();
    env.push(("LANG", LANG.into()));
    env.push(("HOME", home.into()));
    env
}

/// Clears `command`'s environment down to [`base`] with an empty HOME of its own: what a test
/// adds afterwards (`.env(…)`) is all the rest it sees.
pub fn clear(command: &mut Command) -> &mut Command {
    clear_in(command, &fresh_home())
}

/// Clears `command`'s environment down to [`base`] with `home` as its HOME.
pub fn clear_in<'a>(command: &'a mut Command, home: &Path) -> &'a mut Command {
    command.env_clear().envs(base(home))
}

/// A new, empty folder for one program's HOME, in [`homes`].
pub fn fresh_home() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let home = homes().join(NEXT.fetch_add(1, Ordering::Relaxed).to_string());
    std::fs::create_dir_all(&home).expect("a HOME for the program under test");
    home
}

/// The folder of this test process's [`fresh_home`]s, under the one cargo gives integration
/// tests (`target/tmp`). The folders of processes that have ended are removed when the next
/// process makes its first.
pub fn homes() -> &'static Path {
    static HOMES: OnceLock<PathBuf> = OnceLock::new();
    HOMES.get_or_init(|| {
        let all = Path::new(env!("CARGO_TARGET_TMPDIR")).join("homes");
        remove_ended(&all);
        let ours = all.join(std::process::id().to_string());
        // A process id used again: what its earlier owner left is not this process's.
        let _ = std::fs::remove_dir_all(&ours);
        ours
    })
}

/// Removes the homes of test processes that are no longer running.
fn remove_ended(all: &Path) {
    for entry in std::fs::read_dir(all).into_iter().flatten().flatten() {
        let ended = entry
            .file_name()
            .to_str()
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| {
                // Only where running processes can be told: elsewhere the folders stay.
                cfg!(target_os = "linux")
                    && pid != std::process::id()
                    && !Path::new(&format!("/proc/{pid}")).exists()
            });
        if ended {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
