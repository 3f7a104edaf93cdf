//! Antigravity CLI: each conversation's transcript,
//! `~/.gemini/antigravity-cli/brain/<conversation>/.system_generated/logs/transcript.jsonl`.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "Antigravity CLI",
    format: Format::Antigravity,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Home,
        in_base: ".gemini/antigravity-cli",
    },
    logs: &["brain"],
    hook: None,
    run: None,
};
