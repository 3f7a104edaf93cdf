//! OpenClaw: each of its agents' sessions, `~/.openclaw/agents/<agent>/sessions/<id>.jsonl`, in
//! Pi's format; `$OPENCLAW_STATE_DIR` is its state folder itself.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "OpenClaw",
    format: Format::Openclaw,
    home: Home {
        variables: &["OPENCLAW_STATE_DIR"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".openclaw",
    },
    logs: &["agents/*/sessions"],
    hook: None,
    run: None,
};
