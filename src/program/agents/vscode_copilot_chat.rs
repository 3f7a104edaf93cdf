//! VS Code Copilot Chat: each chat of agent mode, one JSON document in
//! `~/.config/Code/User/workspaceStorage/<hash>/chatSessions/` (the workspace's), or in
//! `globalStorage/emptyWindowChatSessions/` (a window with no folder); VS Code's user data is
//! in `$XDG_CONFIG_HOME` on Linux. Insiders and VSCodium keep theirs under other names: named
//! as a PATH, they are read alike.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "VS Code Copilot Chat",
    format: Format::VscodeCopilotChat,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Config,
        in_base: "Code/User",
    },
    logs: &[
        "workspaceStorage/*/chatSessions",
        "globalStorage/emptyWindowChatSessions",
    ],
    hook: None,
    run: None,
};
