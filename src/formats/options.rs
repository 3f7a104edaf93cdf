//! What reading a log takes: [`ReadOptions`].

use crate::record::Format;

/// How to read a log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Read the log as this format, instead of deciding from its content.
    pub format: Option<Format>,
    /// Keep each call's arguments in its record.
    pub keep_arguments: bool,
    /// Audit the calls of tools that declare a `reason` of their own, instead of marking them
    /// `declared`.
    pub audit_declared: bool,
    /// Parse every line in full, so that each one that is not JSON is reported. Otherwise a line
    /// that cannot hold a call is only checked to look like one whole JSON value (its brackets
    /// or quotes close, or it is a number or a literal), which catches cut and stray lines but
    /// not JSON that is wrong inside.
    pub check_every_line: bool,
}
