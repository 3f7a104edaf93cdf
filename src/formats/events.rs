//! What reading a log gives: each [`Event`] as it is read, and the [`ReadSummary`] at the end.

use crate::record::{CallRecord, Format};

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
