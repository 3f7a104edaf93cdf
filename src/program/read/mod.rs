//! Finding and reading the local logs the audit commands are given: which sources the paths
//! name (`sources`), what a command reads of them (`logs_to_read`), reading them in parallel or
//! as live streams (`schedule`), following a log its agent rewrites whole (`followed_rewrite`),
//! and progress on a terminal (`progress`).

pub mod followed_rewrite;
pub mod logs_to_read;
pub mod progress;
pub mod schedule;
pub mod sources;
