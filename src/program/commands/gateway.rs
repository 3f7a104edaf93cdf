//! `reasons gateway`: the gateway's server ([`crate::program::gateway_server`]) in the
//! foreground, until it is stopped. `reasons run` starts the same server for one agent's run.

pub use crate::program::gateway_server::{run, Options};
