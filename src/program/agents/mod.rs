//! What the program knows about each agent, one file an agent: its names, its home and the
//! variable that moves it, where its logs are and what format they are in, its hook (the event
//! it answers, the settings entry, the event's fields, whether it would ask the person), and how
//! `reasons run` points it at the gateway. [`ALL`] lists them; `cli` (names), `hook`, `hook
//! install`, `run`, `watch` and the usual local folders (`sources`) read them here and nowhere
//! else. As hyperfine's exporters, an agent is plain data and functions behind one type
//! ([`Agent`]): adding one is a file here and a line in [`ALL`].

pub mod antigravity;
pub mod asks;
pub mod claude_code;
pub mod cline;
pub mod codex;
pub mod copilot_cli;
pub mod crush;
pub mod cursor;
pub mod factory_droid;
pub mod gemini_cli;
pub mod goose;
pub mod grok_cli;
pub mod hermes;
pub mod hook_settings;
pub mod kilo;
pub mod kiro_cli;
pub mod openclaw;
pub mod opencode;
pub mod pi;
pub mod qwen_code;
pub mod vscode_copilot_chat;

use std::ffi::OsString;
use std::path::PathBuf;

use reasons::record::Format;
use serde_json::Value;

use crate::program::agents::asks::Surroundings;
use crate::program::agents::hook_settings::runs_our_hook;
pub use crate::program::agents::hook_settings::Placement;
use crate::program::json_settings::{json_files, read_json};
use crate::program::wiring::{GivenBaseUrl, Pointing, Wiring};

/// Every agent the program knows, in the order their usual folders are read.
pub const ALL: [&Agent; 19] = [
    &claude_code::AGENT,
    &codex::AGENT,
    &gemini_cli::AGENT,
    &cline::AGENT,
    &copilot_cli::AGENT,
    &qwen_code::AGENT,
    &cursor::AGENT,
    &crush::AGENT,
    &opencode::AGENT,
    &kilo::AGENT,
    &goose::AGENT,
    &vscode_copilot_chat::AGENT,
    &kiro_cli::AGENT,
    &pi::AGENT,
    &openclaw::AGENT,
    &antigravity::AGENT,
    &grok_cli::AGENT,
    &hermes::AGENT,
    &factory_droid::AGENT,
];

/// The agent known by `name`: any of [`Agent::names`].
pub fn named(name: &str) -> Option<&'static Agent> {
    ALL.into_iter()
        .find(|agent| agent.names().any(|known| known == name))
}

/// One agent.
pub struct Agent {
    /// Its name for people ("Claude Code").
    pub title: &'static str,
    /// The format its own session logs are read as; its name is the agent's (`claude-code`).
    pub format: Format,
    /// Where it keeps its files.
    pub home: Home,
    /// Its logs in its home: folders to walk (a `*` matches one folder of each project) and
    /// stores that are one file.
    pub logs: &'static [&'static str],
    /// Its hook, when it has one `reasons hook` speaks.
    pub hook: Option<Hook>,
    /// How `reasons run` starts it, when it can.
    pub run: Option<Run>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Agent").field(&self.name()).finish()
    }
}

impl Agent {
    /// Its name on the command line and in records: its logs' format's.
    pub fn name(&self) -> &'static str {
        self.format.as_str()
    }

    /// Every name the command line knows it by, the one it shows first: the command it is
    /// installed as (`claude`) where `reasons run` starts it, and its own name (`claude-code`).
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        let command = self.run.as_ref().map(|run| run.command);
        command
            .into_iter()
            .chain(Some(self.name()).filter(|name| Some(*name) != command))
    }
}

/// The folder a home is in when no variable moves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The home directory.
    Home,
    /// `$XDG_DATA_HOME`, else `~/.local/share` (OpenCode, Kilo and Goose use it on every
    /// system).
    Data,
    /// `$XDG_CONFIG_HOME`, else `~/.config` (VS Code's user data on Linux).
    Config,
}

/// An agent's home, read as the agent reads it (checked in their code): a variable that moves
/// it (Claude Code's `$CLAUDE_CONFIG_DIR` is its config folder itself; Gemini CLI's
/// `$GEMINI_CLI_HOME` stands for the home directory its `.gemini` folder is in), else its folder
/// in `$HOME` or the data folder. An empty variable counts as unset, as the agents count it;
/// where two move it, the first set wins (Qwen Code's `$QWEN_RUNTIME_DIR` over `$QWEN_HOME`).
#[derive(Debug)]
pub struct Home {
    /// The variables the agent reads that move its home, the first set winning.
    pub variables: &'static [&'static str],
    /// The home's folder inside the variable's path (empty when the variable is the home).
    pub inside_variable: &'static str,
    /// Where the home is without the variable.
    pub base: Base,
    /// The home's folder in its base.
    pub in_base: &'static str,
}

impl Home {
    /// The home's folder, with the variables read from the environment; `None` when neither
    /// the agent's variable nor `HOME` is set.
    pub fn folder(&self) -> Option<PathBuf> {
        self.folder_with(|name| std::env::var_os(name))
    }

    /// [`Home::folder`] with the variables read by `variable` (a hook reads them from the
    /// environment the agent gave it).
    pub fn folder_with(&self, variable: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
        let set = |name: &str| variable(name).filter(|value| !value.is_empty());
        if let Some(dir) = self.variables.iter().find_map(|name| set(name)) {
            return Some(PathBuf::from(dir).join(self.inside_variable));
        }
        let home = || set("HOME").map(PathBuf::from);
        let base = match self.base {
            Base::Home => home()?,
            Base::Data => match set("XDG_DATA_HOME").map(PathBuf::from) {
                Some(data) if data.is_absolute() => data,
                _ => home()?.join(".local/share"),
            },
            Base::Config => match set("XDG_CONFIG_HOME").map(PathBuf::from) {
                Some(config) if config.is_absolute() => config,
                _ => home()?.join(".config"),
            },
        };
        Some(base.join(self.in_base))
    }

    /// The home as a person reads it in a message: `$CLAUDE_CONFIG_DIR` when that is set, else
    /// `~/.claude`.
    pub fn shown(&self) -> String {
        self.shown_with(|name| std::env::var_os(name))
    }

    fn shown_with(&self, variable: impl Fn(&str) -> Option<OsString>) -> String {
        let set = self
            .variables
            .iter()
            .find(|name| variable(name).is_some_and(|value| !value.is_empty()));
        match (set, self.base) {
            (Some(name), _) if self.inside_variable.is_empty() => format!("${name}"),
            (Some(name), _) => format!("${name}/{}", self.inside_variable),
            (None, Base::Home) => format!("~/{}", self.in_base),
            (None, Base::Data) => format!("$XDG_DATA_HOME/{}", self.in_base),
            (None, Base::Config) => format!("$XDG_CONFIG_HOME/{}", self.in_base),
        }
    }
}

/// An agent's hook: what `reasons hook AGENT` reads and answers, and what `hook install` and
/// `run` put in its settings.
pub struct Hook {
    /// The event the hook answers, as the settings name it (`PreToolUse`).
    pub event: &'static str,
    /// The user settings file that holds it, in the agent's home.
    pub user_settings: &'static str,
    /// Whether the agent reads every `*.json` file of that file's folder (Copilot CLI's hooks
    /// folder): ours is then a file of its own, and a hook of ours in any of them counts.
    pub one_file_of_a_folder: bool,
    /// The `version` a hooks file of the agent's must carry, when it must.
    pub file_version: Option<u64>,
    /// The settings entry that runs `command` for every tool's calls.
    pub entry: fn(command: &str) -> Value,
    /// What the person will see, said once the hook is installed.
    pub what_is_shown: fn(Placement) -> &'static str,
    /// What else the person must know once it is installed.
    pub after_install: Option<&'static str>,
    /// The call the event is about, when it is this agent's event.
    pub call: fn(&Value) -> Option<HookCall<'_>>,
    /// How a reason the call no longer carries is found in the log.
    pub lookup: FindBy,
    /// Whether the agent shows a `systemMessage` beside the call (Copilot CLI shows none).
    pub message_beside: bool,
    /// Whether and how it asks, for an agent that shows a hook's text only in its dialog.
    pub ask: Option<Ask>,
    /// What `hook install` writes for it.
    pub installs: Installs,
}

/// What `reasons hook install AGENT` writes, and `uninstall` takes out.
pub enum Installs {
    /// An entry in its user settings ([`Hook::user_settings`], [`Hook::entry`]).
    Settings,
    /// Files of ours in its home (a plugin), with whatever enables them.
    Files {
        /// Where they go, as help text says it.
        described: &'static str,
        /// Writes them, the hook's command line given; says what it did on `out`.
        install: fn(command: &str, out: &mut dyn std::io::Write) -> anyhow::Result<()>,
        /// Takes them out again; says what it did on `out`.
        uninstall: fn(out: &mut dyn std::io::Write) -> anyhow::Result<()>,
    },
    /// Nothing: the hook is wired by `reasons run` for its run only.
    RunOnly,
}

impl Hook {
    /// Settings that hold the hook alone, as a new settings file of the agent's holds it.
    pub fn settings(&self, command: &str) -> Value {
        let mut settings = serde_json::Map::new();
        if let Some(version) = self.file_version {
            settings.insert("version".into(), version.into());
        }
        let hooks = serde_json::json!({self.event: [(self.entry)(command)]});
        settings.insert("hooks".into(), hooks);
        Value::Object(settings)
    }
}

/// A call, as a hook event tells it.
pub struct HookCall<'a> {
    pub tool: &'a str,
    pub arguments: Value,
    pub call_id: Option<&'a str>,
}

/// How a hook finds a logged reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindBy {
    /// By the call's id, which the event carries.
    CallId,
    /// By the tool and what the call touched (the event carries no id).
    Touched,
}

/// An agent whose dialog shows a hook's text only when the hook asks.
pub struct Ask {
    /// Whether a command line is the agent's (found among the hook's ancestors).
    pub is_agent: fn(&[String]) -> bool,
    /// Whether the agent would ask the person about this event anyway.
    pub would_ask: fn(&Value, &Surroundings) -> bool,
    /// Whether its dialog lists the call's arguments, so that a reason still among them is
    /// shown there already.
    pub dialog_lists_arguments: bool,
    /// The answer that asks, with `text` in the dialog.
    pub answer: fn(text: String) -> Value,
}

/// How `reasons run` starts the agent and points it at the gateway.
pub struct Run {
    /// The command it is installed as.
    pub command: &'static str,
    /// How a run points it at the gateway and wires its hook, as `reasons run --help` says it.
    pub pointed: &'static str,
    /// Whether calls lose their reason by default: only Claude Code validates its tools' input
    /// strictly (SPEC §4); the others run a call with an extra `reason` and keep it in their
    /// own logs, which is then where the audit finds it.
    pub strips: bool,
    /// The base URLs it is already given, from every place it reads one (its environment, its
    /// flags among `args`, its settings files), each to become the upstream of its API.
    pub given: fn(args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>>,
    /// Whether it takes `reasons run --confirm`: an agent that asks nothing by default, which
    /// the run can make ask the person before each call, the reason in the question.
    pub confirms: bool,
    /// Its arguments, environment and files that point it at the gateway (and wire the hook)
    /// for this run; `args` are the person's own, which it may change.
    pub wire: fn(&mut Wiring, &Pointing, args: &mut [String]) -> anyhow::Result<()>,
}

/// The call of a `PreToolUse` event as Claude Code and Codex send it (`hook_event_name`,
/// `tool_name`, `tool_input`, `tool_use_id`).
pub fn pre_tool_use_call(event: &Value) -> Option<HookCall<'_>> {
    if event.get("hook_event_name").and_then(Value::as_str) != Some("PreToolUse") {
        return None;
    }
    Some(HookCall {
        tool: event.get("tool_name")?.as_str()?,
        arguments: event.get("tool_input").cloned().unwrap_or(Value::Null),
        call_id: event.get("tool_use_id").and_then(Value::as_str),
    })
}

/// Where an agent's hook is installed, as help text says it: `~/.codex/hooks.json
/// ($CODEX_HOME/hooks.json when set)`; `None` for an agent without a hook, or whose hook
/// `reasons run` wires for its run only.
pub fn hook_settings_described(agent: &Agent) -> Option<String> {
    let hook = agent.hook.as_ref()?;
    match hook.installs {
        Installs::Settings => {}
        Installs::Files { described, .. } => return Some(described.to_owned()),
        Installs::RunOnly => return None,
    }
    let home = &agent.home;
    let mut described = format!("{}/{}", home.shown_with(|_| None), hook.user_settings);
    let moved: Vec<String> = home
        .variables
        .iter()
        .map(|name| {
            let inside = match home.inside_variable {
                "" => String::new(),
                inside => format!("/{inside}"),
            };
            format!("${name}{inside}/{}", hook.user_settings)
        })
        .collect();
    if !moved.is_empty() {
        described.push_str(&format!(" ({} when set)", moved.join(", else ")));
    }
    Some(described)
}

/// The user settings file of an agent's hook, in its home.
pub fn hook_settings_file(agent: &Agent) -> Option<PathBuf> {
    let hook = agent.hook.as_ref()?;
    Some(agent.home.folder()?.join(hook.user_settings))
}

/// Whether the agent's user settings already run our hook (installed by `reasons hook
/// install`): a run then wires no second one.
pub fn hook_installed(agent: &Agent) -> bool {
    let (Some(hook), Some(file)) = (&agent.hook, hook_settings_file(agent)) else {
        return false;
    };
    let files = match file.parent() {
        Some(folder) if hook.one_file_of_a_folder => json_files(folder),
        _ => vec![file],
    };
    files
        .iter()
        .filter_map(|file| read_json(file).ok().flatten())
        .any(|settings| runs_our_hook(&settings, agent.name()))
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
        let (claude, codex, gemini) = (
            &claude_code::AGENT.home,
            &codex::AGENT.home,
            &gemini_cli::AGENT.home,
        );
        let unset = env(&[("HOME", "/h")]);
        assert_eq!(claude.folder_with(&unset), Some("/h/.claude".into()));
        assert_eq!(codex.folder_with(&unset), Some("/h/.codex".into()));
        assert_eq!(gemini.folder_with(&unset), Some("/h/.gemini".into()));
        assert_eq!(claude.shown_with(&unset), "~/.claude");

        let set = env(&[
            ("HOME", "/h"),
            ("CLAUDE_CONFIG_DIR", "/c"),
            ("CODEX_HOME", "/x"),
            ("GEMINI_CLI_HOME", "/g"),
        ]);
        assert_eq!(claude.folder_with(&set), Some("/c".into()));
        assert_eq!(codex.folder_with(&set), Some("/x".into()));
        // Gemini CLI's variable stands for the home directory its `.gemini` is in.
        assert_eq!(gemini.folder_with(&set), Some("/g/.gemini".into()));
        assert_eq!(claude.shown_with(&set), "$CLAUDE_CONFIG_DIR");
        assert_eq!(gemini.shown_with(&set), "$GEMINI_CLI_HOME/.gemini");
    }

    #[test]
    fn qwen_codes_chats_are_in_its_runtime_folder_else_its_global_one() {
        let qwen = &qwen_code::AGENT.home;
        assert_eq!(
            qwen.folder_with(env(&[("HOME", "/h")])),
            Some("/h/.qwen".into())
        );
        let global = env(&[("HOME", "/h"), ("QWEN_HOME", "/q")]);
        assert_eq!(qwen.folder_with(&global), Some("/q".into()));
        assert_eq!(qwen.shown_with(&global), "$QWEN_HOME");
        let both = env(&[
            ("HOME", "/h"),
            ("QWEN_HOME", "/q"),
            ("QWEN_RUNTIME_DIR", "/r"),
        ]);
        assert_eq!(qwen.folder_with(&both), Some("/r".into()));
        assert_eq!(qwen.shown_with(&both), "$QWEN_RUNTIME_DIR");
        let empty_runtime = env(&[
            ("HOME", "/h"),
            ("QWEN_HOME", "/q"),
            ("QWEN_RUNTIME_DIR", ""),
        ]);
        assert_eq!(qwen.folder_with(&empty_runtime), Some("/q".into()));
    }

    #[test]
    fn an_empty_variable_counts_as_unset_and_no_home_is_none() {
        let codex = &codex::AGENT.home;
        let empty = env(&[("HOME", "/h"), ("CODEX_HOME", "")]);
        assert_eq!(codex.folder_with(&empty), Some("/h/.codex".into()));
        assert_eq!(codex.folder_with(env(&[])), None);
        assert_eq!(
            codex.folder_with(env(&[("CODEX_HOME", "/x")])),
            Some("/x".into())
        );
    }

    #[test]
    fn a_data_home_is_in_xdg_data_home_else_in_local_share() {
        let opencode = &opencode::AGENT.home;
        assert_eq!(
            opencode.folder_with(env(&[("HOME", "/h")])),
            Some("/h/.local/share/opencode".into())
        );
        assert_eq!(
            opencode.folder_with(env(&[("HOME", "/h"), ("XDG_DATA_HOME", "/d")])),
            Some("/d/opencode".into())
        );
        // A relative XDG_DATA_HOME is ignored, as the specification says.
        assert_eq!(
            opencode.folder_with(env(&[("HOME", "/h"), ("XDG_DATA_HOME", "d")])),
            Some("/h/.local/share/opencode".into())
        );
        assert_eq!(opencode.shown_with(env(&[])), "$XDG_DATA_HOME/opencode");
    }

    #[test]
    fn every_name_of_an_agent_finds_it_and_no_two_agents_share_one() {
        for agent in ALL {
            for name in agent.names() {
                assert_eq!(named(name).map(|found| found.title), Some(agent.title));
            }
        }
        assert_eq!(
            claude_code::AGENT.names().collect::<Vec<_>>(),
            ["claude", "claude-code"]
        );
        assert_eq!(codex::AGENT.names().collect::<Vec<_>>(), ["codex"]);
        assert_eq!(cursor::AGENT.names().collect::<Vec<_>>(), ["cursor"]);
    }

    #[test]
    fn a_hooks_settings_file_is_said_with_the_variable_that_moves_it() {
        assert_eq!(
            hook_settings_described(&claude_code::AGENT).as_deref(),
            Some("~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json when set)")
        );
        assert_eq!(
            hook_settings_described(&gemini_cli::AGENT).as_deref(),
            Some("~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini/settings.json when set)")
        );
        assert_eq!(hook_settings_described(&cursor::AGENT), None);
    }

    #[test]
    fn names_and_titles_are_one_each() {
        for (at, agent) in ALL.iter().enumerate() {
            for other in &ALL[at + 1..] {
                assert_ne!(agent.name(), other.name());
                assert_ne!(agent.title, other.title);
            }
        }
    }
}
