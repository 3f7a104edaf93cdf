//! Kiro CLI: each session's journal, `~/.kiro/sessions/cli/<session>.jsonl`, beside its state.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "Kiro CLI",
    format: Format::KiroCli,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Home,
        in_base: ".kiro",
    },
    logs: &["sessions/cli"],
    hook: None,
    run: None,
};
