//! One integration-test binary: every test here drives the real `reasons` executable.

#[cfg(unix)]
mod action;
mod agents;
mod browser;
mod check;
mod cli;
mod corpus;
mod docs;
mod extract;
mod faults;
mod filter;
mod gateway;
mod gateway_openai;
mod gateway_transport;
mod history;
mod hostile;
mod inputs;
mod isolation;
mod joined;
mod man;
mod masking;
mod otlp;
mod proxy;
mod proxy_remote;
#[cfg(unix)]
mod real_agents;
#[cfg(unix)]
mod real_auto_mode;
#[cfg(unix)]
mod real_bfcl;
#[cfg(unix)]
mod real_codex_gemini;
#[cfg(unix)]
mod real_model;
#[cfg(unix)]
mod real_model_agent;
#[cfg(unix)]
mod real_more_agents;
#[cfg(unix)]
mod real_prompt;
#[cfg(unix)]
mod real_proxy_remote;
mod reason_position;
#[cfg(unix)]
mod release;
mod report;
mod rotation;
mod samples;
mod stats;
mod stores;
mod streamed_calls;
mod tables;
mod team;
mod util;
mod watch;

// `reasons run`: with fake agents, and with the real ones.
#[cfg(unix)]
mod real_run;
#[cfg(unix)]
mod real_run_pi_hermes;
#[cfg(unix)]
mod run;
