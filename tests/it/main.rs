//! One integration-test binary: every test here drives the real `reasons` executable, grouped by
//! feature.

#[cfg(unix)]
mod action;
mod cli;
mod docs;
mod filter;
mod gateway;
mod hook;
mod isolation;
mod man;
mod proxy;
mod proxy_listen;
mod proxy_remote;
mod read;
#[cfg(unix)]
mod real;
#[cfg(unix)]
mod release;
mod report;
#[cfg(unix)]
mod run;
mod util;
mod watch;
