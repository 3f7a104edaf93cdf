//! One integration-test binary: every test here drives the real `reasons` executable.

mod browser;
mod check;
mod cli;
mod corpus;
mod docs;
mod extract;
mod filter;
mod gateway;
mod gateway_openai;
mod hostile;
mod inputs;
mod joined;
mod man;
mod proxy;
#[cfg(unix)]
mod real_agents;
#[cfg(unix)]
mod real_codex_gemini;
mod report;
mod samples;
mod stats;
mod tables;
mod upstream;
mod util;
