//! One integration-test binary: every test here drives the real `reasons` executable.

mod cli;
mod filter;
mod man;
mod proxy;
mod util;
