//! Hermes Agent: its session files, `~/.hermes/sessions/session_<id>.json`; `$HERMES_HOME` is
//! its home itself. Its `state.db` beside them is not read.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "Hermes Agent",
    format: Format::Hermes,
    home: Home {
        variables: &["HERMES_HOME"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".hermes",
    },
    logs: &["sessions"],
    hook: None,
    run: None,
};
