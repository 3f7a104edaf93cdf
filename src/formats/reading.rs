//! What reading a log takes and gives: [`ReadOptions`], [`Event`], [`ReadSummary`].

use crate::record::CallRecord;
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

/// What reading a log hands over, in the order the log holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// One recorded tool call.
    Call(CallRecord),
    /// A line that is not JSON (or not UTF-8, or cut short): skipped, and reading goes on.
    Malformed {
        /// 1-based line of the input.
        line: u64,
        /// What is wrong with it.
        message: String,
    },
}

/// What a whole read found, beyond the events it handed over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadSummary {
    /// Events read: JSONL lines that were parsed, or top-level values of a single document.
    pub events: u64,
    /// Call records handed over.
    pub calls: u64,
    /// Calls not handed over because an earlier event of the same source recorded them.
    pub repeats: u64,
    /// Lines skipped as malformed.
    pub malformed_lines: u64,
    /// Lines read, blank ones too.
    pub lines: u64,
    /// The format of the first call, when there was one.
    pub format: Option<Format>,
}
