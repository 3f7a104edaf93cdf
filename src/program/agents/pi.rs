//! Pi: its sessions in `~/.pi/agent/sessions/--<cwd>--/`; `$PI_CODING_AGENT_DIR` is its agent
//! folder itself.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "Pi",
    format: Format::Pi,
    home: Home {
        variables: &["PI_CODING_AGENT_DIR"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".pi/agent",
    },
    logs: &["sessions"],
    hook: None,
    run: None,
};
