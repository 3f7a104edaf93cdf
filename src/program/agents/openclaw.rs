//! OpenClaw: each of its agents' store, `~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite`
//! (table `transcript_events`, a Pi session entry a row), and the session files it wrote before
//! it kept them there, `~/.openclaw/agents/<agent>/sessions/<id>.jsonl`, in Pi's format;
//! `$OPENCLAW_STATE_DIR` is its state folder itself.

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
    logs: &["agents/*/agent/openclaw-agent.sqlite", "agents/*/sessions"],
    hook: None,
    run: None,
};
