//! The reasons of a whole log by call id, and the one policy for an id logged more than once
//! (the first reason stands): what the audits join with the calls they read.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde_json::Value;

use super::matching::{gemini_api_id, responses_call_id};
use super::record::Logged;
use crate::record::{CallRecord, ReasonField, ReasonFrom, Status};

/// Notes `reason` for `call_id` unless the id has one already: the one policy for a call id
/// logged more than once, which the audit's join ([`Index`]), the gateway's restoration of a
/// history (`gateway::Recall`) and `watch` all follow. The first reason stands: it is what the
/// model wrote when it made the call; a later line with the same id is a replay (a history sent
/// again through a layer, a log appended twice), never a better answer. Keeping the first also
/// keeps a restored history the same bytes turn after turn. Returns whether it was noted.
pub fn note_first<V>(
    reasons: &mut HashMap<String, V>,
    call_id: &str,
    reason: impl FnOnce() -> V,
) -> bool {
    if reasons.contains_key(call_id) {
        return false;
    }
    reasons.insert(call_id.to_owned(), reason());
    true
}

/// The reasons of a log by call id, for joining with transcripts. For an id logged more than
/// once the first reason stands ([`note_first`]).
///
/// Lines that are not records ([`Logged::parse`]), or records without a call id, are counted and
/// skipped: a log is written by several processes, and a torn last line must not hide the rest.
#[derive(Debug, Default)]
pub struct Index {
    reasons: HashMap<String, Value>,
    /// Lines that were not records.
    pub skipped: u64,
}

impl Index {
    /// Reads a whole log.
    pub fn read(path: &Path) -> io::Result<Index> {
        let mut index = Index::default();
        index.add(BufReader::new(File::open(path)?))?;
        Ok(index)
    }

    /// Adds the records of another log.
    pub fn add(&mut self, input: impl BufRead) -> io::Result<()> {
        for line in input.split(b'\n') {
            let line = line?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match Logged::parse(&line) {
                Some(Logged {
                    call_id: Some(call_id),
                    reason,
                    ..
                }) => {
                    note_first(&mut self.reasons, &call_id, || reason);
                }
                _ => self.skipped += 1,
            }
        }
        Ok(())
    }

    /// The reason logged for a call id.
    pub fn get(&self, call_id: &str) -> Option<&Value> {
        self.reasons.get(call_id)
    }

    /// Gives a call whose own arguments carry no reason the reason logged for its id, with the
    /// status that reason gives it. Returns whether it did.
    pub fn join(&self, record: &mut CallRecord) -> bool {
        if record.status != Status::Missing {
            return false;
        }
        let Some(reason) = record
            .call_id
            .as_deref()
            .and_then(|id| self.get_for(record, id))
        else {
            return false;
        };
        (record.status, record.reason) = match reason {
            Value::String(text) => Status::of_reason_field(ReasonField::Text(text)),
            other => (
                Status::of_reason_field(ReasonField::NotText).0,
                Some(other.to_string()),
            ),
        };
        record.reason_from = ReasonFrom::Log;
        true
    }

    /// The reason logged for a record's call id. Gemini CLI records a call under
    /// `<tool>__<id>`, the API's `functionCall.id` behind its tool's name, and Pi's runtime a
    /// Responses call under `<call id>|<item id>`, where the gateway logged the API's call id:
    /// either is looked up.
    fn get_for(&self, record: &CallRecord, call_id: &str) -> Option<&Value> {
        self.get(call_id).or_else(|| {
            let api_id = gemini_api_id(&record.tool, call_id)
                .filter(|_| record.format == crate::record::Format::GeminiCli)
                .or_else(|| responses_call_id(call_id))?;
            self.get(api_id)
        })
    }

    /// How many call ids have a reason.
    pub fn len(&self) -> usize {
        self.reasons.len()
    }

    /// Whether no call id has a reason.
    pub fn is_empty(&self) -> bool {
        self.reasons.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_index_skips_torn_lines_and_keeps_the_first_reason() {
        let log = b"{\"tool\":\"Bash\",\"call_id\":\"a\",\"reason\":\"first\"}\nnot json\n\n{\"tool\":\"Bash\",\"call_id\":\"a\",\"reason\":\"second\"}\n{\"tool\":\"Bash\",\"call_id\":null,\"reason\":\"x\"}\n{\"tool\":\"Bash\",\"call_id\":\"b\",\"rea";
        let mut index = Index::default();
        index.add(&log[..]).unwrap();
        assert_eq!(index.get("a"), Some(&json!("first")));
        assert_eq!(index.get("b"), None);
        assert_eq!(index.skipped, 3);
    }

    #[test]
    fn a_call_without_a_reason_takes_the_logged_one() {
        let mut index = Index::default();
        index
            .add(&b"{\"tool\":\"Bash\",\"call_id\":\"t1\",\"reason\":\"Look\"}\n{\"tool\":\"Bash\",\"call_id\":\"t2\",\"reason\":\" \"}\n{\"tool\":\"Bash\",\"call_id\":\"t3\",\"reason\":7}\n"[..])
            .unwrap();
        let record = |id: &str, status: Status| CallRecord {
            source: "s".into(),
            line: 1,
            format: crate::record::Format::ClaudeCode,
            session: None,
            timestamp: None,
            call_id: Some(id.into()),
            tool: "Bash".into(),
            reason: None,
            status,
            reason_from: ReasonFrom::Call,
            arguments: None,
        };
        let joined = |id: &str, status: Status| {
            let mut record = record(id, status);
            index.join(&mut record);
            (record.status, record.reason, record.reason_from)
        };
        assert_eq!(
            joined("t1", Status::Missing),
            (Status::Present, Some("Look".into()), ReasonFrom::Log)
        );
        assert_eq!(
            joined("t2", Status::Missing),
            (Status::Blank, Some(" ".into()), ReasonFrom::Log)
        );
        assert_eq!(
            joined("t3", Status::Missing),
            (Status::Invalid, Some("7".into()), ReasonFrom::Log)
        );
        let mut gemini = record("Bash__t1", Status::Missing);
        gemini.format = crate::record::Format::GeminiCli;
        assert!(
            index.join(&mut gemini),
            "Gemini CLI's `<tool>__<id>` joins on the id"
        );
        assert_eq!(gemini.reason.as_deref(), Some("Look"));
        for (format, id) in [
            (crate::record::Format::ClaudeCode, "Bash__t1"),
            (crate::record::Format::GeminiCli, "Read__t1"),
        ] {
            let mut other = record(id, Status::Missing);
            other.format = format;
            assert!(!index.join(&mut other), "{id} in {format:?}");
        }
        let mut responses = record("t1|fc_1", Status::Missing);
        responses.format = crate::record::Format::Openclaw;
        assert!(
            index.join(&mut responses),
            "Pi's runtime's `<call id>|<item id>` joins on the call id"
        );
        assert_eq!(responses.reason.as_deref(), Some("Look"));
        assert_eq!(
            joined("t9", Status::Missing),
            (Status::Missing, None, ReasonFrom::Call)
        );
        // A call that carries a reason of its own, or cannot carry one, keeps what it has.
        for status in [Status::Blank, Status::Declared, Status::Freeform] {
            assert_eq!(joined("t1", status), (status, None, ReasonFrom::Call));
        }
    }
}
