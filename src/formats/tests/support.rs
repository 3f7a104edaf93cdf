//! Reading text the way the tests of every shape and rule need it.

use crate::formats::events::{Event, ReadSummary};
use crate::formats::options::ReadOptions;
use crate::formats::reading::read_whole as read_log;
use crate::record::{CallRecord, Status};

/// Everything a read hands over: the records, the malformed lines, the summary.
pub(crate) fn read_with(
    text: &str,
    options: &ReadOptions,
) -> (Vec<CallRecord>, Vec<(u64, String)>, ReadSummary) {
    let mut calls = Vec::new();
    let mut malformed = Vec::new();
    let summary = read_log("test", text.as_bytes(), options, &mut |event| {
        match event {
            Event::Call(record) => calls.push(record),
            Event::Malformed { line, message } => malformed.push((line, message)),
        }
        Ok(())
    })
    .expect("reading from memory does not fail");
    (calls, malformed, summary)
}

pub(crate) fn records(text: &str) -> Vec<CallRecord> {
    read_with(text, &ReadOptions::default()).0
}

/// `(line, tool, status)` of each call: what most rules are about.
pub(crate) fn brief(text: &str) -> Vec<(u64, String, Status)> {
    records(text)
        .into_iter()
        .map(|record| (record.line, record.tool, record.status))
        .collect()
}

/// `brief` with owned names, for comparing against literals.
pub(crate) fn expect(calls: &[(u64, &str, Status)]) -> Vec<(u64, String, Status)> {
    calls
        .iter()
        .map(|(line, tool, status)| (*line, (*tool).to_owned(), *status))
        .collect()
}
