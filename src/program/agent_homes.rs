//! Where the agents keep their homes: the one table that discovery (`sources`), `hook install`
//! and anything else that looks for an agent's files read, so that the hook goes where the logs
//! are read from, whatever the person set.
//!
//! Each agent names its home by a variable, read as the agents read it (checked in their code):
//! Claude Code's `$CLAUDE_CONFIG_DIR` is its config folder itself (`~/.claude` without it),
//! Codex's `$CODEX_HOME` and Copilot CLI's `$COPILOT_HOME` likewise (`~/.codex`, `~/.copilot`),
//! and Gemini CLI's `$GEMINI_CLI_HOME` stands for
//! the home directory, which its `.gemini` folder is in. An empty variable counts as unset, as
//! the agents count it.

use std::ffi::OsString;
use std::path::PathBuf;

/// One agent's home: the variable that moves it and where it is without that variable.
#[derive(Debug)]
pub struct AgentHome {
    /// The variable the agent reads.
    pub variable: &'static str,
    /// The home's folder inside the variable's path (empty when the variable is the home).
    inside_variable: &'static str,
    /// The home's folder in `$HOME` without the variable.
    in_home: &'static str,
}

/// Claude Code: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub const CLAUDE_CODE: AgentHome = AgentHome {
    variable: "CLAUDE_CONFIG_DIR",
    inside_variable: "",
    in_home: ".claude",
};

/// Codex: `$CODEX_HOME`, else `~/.codex`.
pub const CODEX: AgentHome = AgentHome {
    variable: "CODEX_HOME",
    inside_variable: "",
    in_home: ".codex",
};

/// Gemini CLI: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
pub const GEMINI_CLI: AgentHome = AgentHome {
    variable: "GEMINI_CLI_HOME",
    inside_variable: ".gemini",
    in_home: ".gemini",
};

/// GitHub Copilot CLI: `$COPILOT_HOME`, else `~/.copilot`.
pub const COPILOT_CLI: AgentHome = AgentHome {
    variable: "COPILOT_HOME",
    inside_variable: "",
    in_home: ".copilot",
};

impl AgentHome {
    /// The home's folder, with the variables read from the environment; `None` when neither
    /// the agent's variable nor `HOME` is set.
    pub fn folder(&self) -> Option<PathBuf> {
        self.folder_with(|name| std::env::var_os(name))
    }

    /// [`AgentHome::folder`] with the variables read by `variable`.
    pub fn folder_with(&self, variable: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
        let set = |name: &str| variable(name).filter(|value| !value.is_empty());
        match set(self.variable) {
            Some(dir) if self.inside_variable.is_empty() => Some(PathBuf::from(dir)),
            Some(dir) => Some(PathBuf::from(dir).join(self.inside_variable)),
            None => Some(PathBuf::from(set("HOME")?).join(self.in_home)),
        }
    }

    /// The home as a person reads it in a message: `$CLAUDE_CONFIG_DIR` when that is set,
    /// else `~/.claude`.
    pub fn shown(&self) -> String {
        self.shown_with(|name| std::env::var_os(name))
    }

    fn shown_with(&self, variable: impl Fn(&str) -> Option<OsString>) -> String {
        match variable(self.variable).filter(|value| !value.is_empty()) {
            Some(_) if self.inside_variable.is_empty() => format!("${}", self.variable),
            Some(_) => format!("${}/{}", self.variable, self.inside_variable),
            None => format!("~/{}", self.in_home),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        }
    }

    #[test]
    fn a_home_is_the_agents_variable_else_its_folder_in_home() {
        let unset = env(&[("HOME", "/h")]);
        assert_eq!(CLAUDE_CODE.folder_with(&unset), Some("/h/.claude".into()));
        assert_eq!(CODEX.folder_with(&unset), Some("/h/.codex".into()));
        assert_eq!(GEMINI_CLI.folder_with(&unset), Some("/h/.gemini".into()));
        assert_eq!(CLAUDE_CODE.shown_with(&unset), "~/.claude");

        let set = env(&[
            ("HOME", "/h"),
            ("CLAUDE_CONFIG_DIR", "/c"),
            ("CODEX_HOME", "/x"),
            ("GEMINI_CLI_HOME", "/g"),
        ]);
        assert_eq!(CLAUDE_CODE.folder_with(&set), Some("/c".into()));
        assert_eq!(CODEX.folder_with(&set), Some("/x".into()));
        // Gemini CLI's variable stands for the home directory its `.gemini` is in.
        assert_eq!(GEMINI_CLI.folder_with(&set), Some("/g/.gemini".into()));
        assert_eq!(CLAUDE_CODE.shown_with(&set), "$CLAUDE_CONFIG_DIR");
        assert_eq!(GEMINI_CLI.shown_with(&set), "$GEMINI_CLI_HOME/.gemini");
    }

    #[test]
    fn an_empty_variable_counts_as_unset_and_no_home_is_none() {
        let empty = env(&[("HOME", "/h"), ("CODEX_HOME", "")]);
        assert_eq!(CODEX.folder_with(&empty), Some("/h/.codex".into()));
        assert_eq!(CODEX.folder_with(env(&[])), None);
        assert_eq!(
            CODEX.folder_with(env(&[("CODEX_HOME", "/x")])),
            Some("/x".into())
        );
    }
}
