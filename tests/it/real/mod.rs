//! The real parts no one here wrote: agents, SDKs, MCP servers, a real model, BFCL. Ignored in
//! `cargo test`; `.ci/run` installs the parts and runs them in a release build.

mod real_agents;
mod real_auto_mode;
mod real_bfcl;
pub mod real_codex_gemini;
mod real_model;
mod real_model_agent;
pub mod real_more_agents;
mod real_prompt;
mod real_proxy_listen;
mod real_proxy_oauth;
mod real_proxy_remote;
pub mod real_run;
mod real_run_droid_grok;
mod real_run_openclaw;
pub mod real_run_pi_hermes;
mod real_run_screens;
