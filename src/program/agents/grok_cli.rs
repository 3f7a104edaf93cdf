//! Grok CLI: each session's folder in `~/.grok/sessions/<cwd>/<session>/`, whose `updates.jsonl`
//! holds its calls (the `chat_history.jsonl` beside it holds none that a shape reads, so no
//! call counts twice); `$GROK_HOME` is its home itself.

use reasons::record::Format;

use super::{Agent, Base, Home};

pub const AGENT: Agent = Agent {
    title: "Grok CLI",
    format: Format::GrokCli,
    home: Home {
        variables: &["GROK_HOME"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".grok",
    },
    logs: &["sessions"],
    hook: None,
    run: None,
};
