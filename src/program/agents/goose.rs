//! Goose: its sessions (`sessions.db`, and JSONL files before 1.10) in
//! `$XDG_DATA_HOME/goose/sessions` on every system.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "Goose",
    format: Format::Goose,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Data,
        in_base: "goose",
    },
    logs: &["sessions"],
    hook: None,
    run: None,
};
