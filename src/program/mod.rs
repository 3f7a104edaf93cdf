//! The `reasons` program: everything only the executable uses, beside the library that the rest
//! of `src/` is. The commands parse nothing themselves (clap's definitions are the library's
//! `cli`, so that tests can render the man pages); they find their logs through `sources` and
//! read them through `schedule`, write through `output` (and `report`, the HTML page), and speak
//! to the person through `messages` and `progress`.

pub mod agent_asks;
pub mod agents;
pub mod ask_gateway;
pub mod broken_pipe;
pub mod commands;
pub mod exit_codes;
pub mod followed_rewrite;
pub mod gateway_server;
pub mod hook_settings;
pub mod http;
pub mod json_settings;
pub mod logs_to_read;
pub mod messages;
pub mod otlp;
pub mod output;
pub mod progress;
pub mod relay;
pub mod report;
pub mod schedule;
pub mod sources;
pub mod wiring;
