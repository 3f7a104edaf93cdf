//! Crush: its sessions in a SQLite store of each project's own, `.crush/crush.db`. No folder in
//! the person's home holds them, so it has no usual place to be read from: its store is named
//! as a PATH.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "Crush",
    format: Format::Crush,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Data,
        in_base: "crush",
    },
    logs: &[],
    hook: None,
    run: None,
};
