//! Factory Droid: its sessions, `~/.factory/sessions/<cwd>/<session>.jsonl`.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "Factory Droid",
    format: Format::FactoryDroid,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Home,
        in_base: ".factory",
    },
    logs: &["sessions"],
    hook: None,
    run: None,
};
