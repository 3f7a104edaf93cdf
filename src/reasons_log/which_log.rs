//! Which reasons log a command uses: the one it is given, else the one `REASONS_LOG` names,
//! else the default one, as the command's [`Purpose`] allows. [`which`] is the one place that
//! decides it.

use std::path::{Path, PathBuf};

/// The environment variable that names the reasons log for every command at once.
pub const ENVIRONMENT: &str = "REASONS_LOG";

/// What a command wants the reasons log for, which decides where it looks when none is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The gateway and `run` log every reason, `watch` and the hooks read them: the log named,
    /// else the default one ([`which`]).
    Always,
    /// `filter` and `proxy` log only when asked: the log named, else the one `REASONS_LOG` names,
    /// else none.
    WhenNamed,
    /// The audits join a log with the calls they read: the log named, else the default one when
    /// it exists and either `REASONS_LOG` names it or the usual local folders are read (whose
    /// sessions it may hold: a log is never joined with logs it cannot be about by chance).
    Join {
        /// Whether the command reads the usual local folders (no path given).
        usual_folders: bool,
    },
}

/// The reasons log a command uses: the one it is given, else the one `REASONS_LOG` names, else
/// `$XDG_STATE_HOME/reasons/reasons.jsonl`, else `~/.local/state/reasons/reasons.jsonl`, as its
/// [`Purpose`] allows. `None` when it uses none (or, for [`Purpose::Always`], when none of those
/// variables is set). Every command asks here.
pub fn which(named: Option<PathBuf>, purpose: Purpose) -> Option<PathBuf> {
    if named.is_some() {
        return named;
    }
    match purpose {
        Purpose::Always => default_path(),
        Purpose::WhenNamed => named_by_environment(),
        Purpose::Join { usual_folders } => {
            if !usual_folders && named_by_environment().is_none() {
                return None;
            }
            // Named by the variable before any gateway wrote to it: nothing to join yet.
            default_path().filter(|path| path.is_file())
        }
    }
}

/// The log `REASONS_LOG` names, when it names one.
fn named_by_environment() -> Option<PathBuf> {
    std::env::var_os(ENVIRONMENT)
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
}

/// The log used when none is named on the command line: the one `REASONS_LOG` names, else
/// `$XDG_STATE_HOME/reasons/reasons.jsonl`, else `~/.local/state/reasons/reasons.jsonl`. `None`
/// when none of those variables is set.
fn default_path() -> Option<PathBuf> {
    if let Some(named) = named_by_environment() {
        return Some(named);
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            let home = std::env::var_os("HOME").filter(|dir| !dir.is_empty())?;
            Some(Path::new(&home).join(".local/state"))
        })?;
    Some(state.join("reasons").join("reasons.jsonl"))
}
