//! One integration-test binary: every test here drives the real `reasons` executable.

mod check;
mod cli;
mod extract;
mod man;
mod stats;
mod util;
