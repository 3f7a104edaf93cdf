//! One integration-test binary: every test here drives the real `reasons` executable.

mod agents;
mod browser;
mod check;
mod cli;
mod corpus;
mod docs;
mod extract;
mod filter;
mod gateway;
mod gateway_openai;
mod history;
mod hostile;
mod inputs;
mod joined;
mod man;
mod proxy;
#[cfg(unix)]
mod real_agents;
#[cfg(unix)]
mod real_codex_gemini;
#[cfg(unix)]
mod real_model;
#[cfg(unix)]
mod real_more_agents;
mod report;
mod samples;
mod stats;
mod stores;
mod streamed_calls;
mod tables;
mod util;
mod watch;
