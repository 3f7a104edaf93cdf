//! Reading recorded logs: `extract`, `check`, `stats`, their inputs and tables, the agents' logs
//! and stores, the samples and the real corpus, joined with a reasons log.

mod agents;
mod check;
mod corpus;
mod extract;
mod hostile;
mod inputs;
mod joined;
mod samples;
mod stats;
mod stores;
mod tables;
