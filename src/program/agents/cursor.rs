//! Cursor: its agent transcripts in `~/.cursor/projects/<project>/agent-transcripts/`.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "Cursor",
    format: Format::Cursor,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Home,
        in_base: ".cursor",
    },
    logs: &["projects/*/agent-transcripts"],
    hook: None,
    run: None,
};
