//! Kilo: OpenCode's fork, its store `kilo.db` in `$XDG_DATA_HOME/kilo`, its configuration read
//! as OpenCode reads its own ([`super::opencode`]) under Kilo's names.

use reasons::record::Format;

use super::opencode::{self, Config};
use super::{Agent, Base, Home, Run};

pub const AGENT: Agent = Agent {
    title: "Kilo",
    format: Format::Kilo,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Data,
        in_base: "kilo",
    },
    logs: &["kilo.db"],
    hook: None,
    run: Some(Run {
        command: "kilo",
        pointed: "its providers' `baseURL` in `KILO_CONFIG_CONTENT`; no hook for one run (`--watch` shows the reasons).",
        strips: false,
        confirms: false,
        given: |_| Ok(opencode::base_urls(&CONFIG)),
        wire: |wiring, to, _| opencode::wire(&CONFIG, wiring, to),
    }),
};

const CONFIG: Config = Config {
    name: "kilo",
    file_variable: "KILO_CONFIG",
    content_variable: "KILO_CONFIG_CONTENT",
};
