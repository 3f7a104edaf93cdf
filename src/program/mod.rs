//! The `reasons` program: everything only the executable uses, beside the library that the rest
//! of `src/` is. `cli` holds the command line's clap definitions; `commands` turns them into one
//! call per subcommand. The commands find and read their logs through `read`, write through
//! `output` (and `report`, the HTML page), and speak to the person through `messages`. What the
//! program knows of each agent is in `agents`, one file an agent; `hook` answers an agent's
//! hook, `gateway_server` serves the layer over HTTP.

pub mod agents;
pub mod broken_pipe;
pub mod cli;
pub mod commands;
pub mod exit_codes;
pub mod gateway_server;
pub mod hook;
pub mod http;
pub mod json_settings;
pub mod messages;
pub mod otlp;
pub mod output;
pub mod read;
pub mod reasons_route;
pub mod relay;
pub mod report;
pub mod wiring;
