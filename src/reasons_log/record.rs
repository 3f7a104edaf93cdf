//! A line of the reasons log, written ([`Record`]) and read back ([`Logged`]): what a line
//! holds, in which order, and the one parser every reader of the log uses.

use std::time::SystemTime;

use serde_json::{Map, Value};

use crate::dates;
use crate::layer::TakenReason;
use crate::masking::Masking;
use crate::touched;

/// Which part of the layer took the reason off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `reasons gateway`, at the model's API.
    Gateway,
    /// `reasons proxy`, in front of an MCP server.
    Proxy,
    /// `reasons filter`, on a JSON-lines stream.
    Filter,
}

impl Via {
    /// The name written in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Gateway => "gateway",
            Via::Proxy => "proxy",
            Via::Filter => "filter",
        }
    }
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// When the reason was taken off, as RFC 3339 UTC.
    pub time: String,
    /// Which part of the layer took it.
    pub via: Via,
    /// The reason as it was taken off, with the tool and the ids it came with.
    pub taken: TakenReason,
    /// The session the call belongs to, when the request said.
    pub session: Option<String>,
    /// What the call touched: the one summary the log, the spans and every view show, made once
    /// for every way the record goes out.
    pub touched: String,
}

impl Record {
    /// A record stamped with the current time.
    pub fn now(via: Via, taken: TakenReason, session: Option<String>) -> Record {
        Record {
            time: dates::rfc3339(SystemTime::now()),
            via,
            touched: touched::summary(&taken.arguments),
            taken,
            session,
        }
    }

    /// The record as one JSON object, keys in the documented order; `request_id` and `session`
    /// only when known.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("time".into(), Value::from(self.time.as_str()));
        object.insert("via".into(), Value::from(self.via.as_str()));
        object.insert("tool".into(), Value::from(self.taken.tool.as_str()));
        object.insert("call_id".into(), self.taken.call_id.clone().into());
        object.insert("reason".into(), self.taken.reason.clone());
        object.insert("touched".into(), Value::from(self.touched.as_str()));
        if let Some(request_id) = &self.taken.request_id {
            object.insert("request_id".into(), Value::from(request_id.as_str()));
        }
        if let Some(session) = &self.session {
            object.insert("session".into(), Value::from(session.as_str()));
        }
        Value::Object(object)
    }

    /// The record as it reads back from the log.
    pub fn logged(&self) -> Logged {
        Logged {
            time: Some(self.time.clone()),
            via: Some(self.via.as_str().to_owned()),
            tool: self.taken.tool.clone(),
            call_id: self.taken.call_id.clone(),
            reason: self.taken.reason.clone(),
            touched: Some(self.touched.clone()),
            session: self.session.clone(),
        }
    }

    /// The record as the line that is appended, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = self.to_json().to_string().into_bytes();
        line.push(b'\n');
        line
    }
}

/// One line of a log as it is read back: what [`Record`] wrote, with its fields as text. Every
/// reader (the [`Index`](super::Index), the backward search, `watch`, the gateway's history and its team
/// answers) reads a line with [`Logged::parse`], so a line is a record to all of them or to none.
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    /// When the reason was taken off, as written.
    pub time: Option<String>,
    /// Which part of the layer took it (`gateway`, `proxy`, `filter`), as written.
    pub via: Option<String>,
    /// The tool the call was for.
    pub tool: String,
    /// The call's id, when the layer knew it.
    pub call_id: Option<String>,
    /// The reason, whatever its value.
    pub reason: Value,
    /// What the call touched; logs written before it was recorded have none.
    pub touched: Option<String>,
    /// The session, when the request said.
    pub session: Option<String>,
}

impl Logged {
    /// A line of the log; `None` when it is no record (malformed, torn, without a tool or a
    /// reason).
    pub fn parse(line: &[u8]) -> Option<Logged> {
        Logged::from_json(serde_json::from_slice::<Value>(line).ok()?)
    }

    /// A record as a JSON object holds it (a line of the log, a team's answer about a call);
    /// `None` when it is no record.
    pub fn from_json(record: Value) -> Option<Logged> {
        let Value::Object(mut record) = record else {
            return None;
        };
        let mut text = |key: &str| match record.shift_remove(key) {
            Some(Value::String(text)) => Some(text),
            _ => None,
        };
        let (time, via, tool, call_id, touched, session) = (
            text("time"),
            text("via"),
            text("tool")?,
            text("call_id"),
            text("touched"),
            text("session"),
        );
        Some(Logged {
            reason: record.shift_remove("reason")?,
            time,
            via,
            tool,
            call_id,
            touched,
            session,
        })
    }

    /// A reason for a call to `tool`, with nothing else known of it.
    pub fn reason_for(tool: &str, reason: Value) -> Logged {
        Logged {
            time: None,
            via: None,
            tool: tool.to_owned(),
            call_id: None,
            reason,
            touched: None,
            session: None,
        }
    }

    /// As it leaves the machine: its reason and what its call touched masked when `masking`
    /// says so (SPEC §4.2.2).
    pub fn masked(mut self, masking: Masking) -> Logged {
        masking.json(&mut self.reason);
        if let Some(touched) = &mut self.touched {
            *touched = masking.text(touched).into_owned();
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::reasons_log::test_records::taken;

    #[test]
    fn a_record_has_the_documented_keys_in_order() {
        let mut record = Record::now(
            Via::Proxy,
            TakenReason {
                request_id: Some("7".into()),
                ..taken("fs_write", "toolu_1", json!("Save it"))
            },
            Some("s1".into()),
        );
        record.time = "2026-12-01T00:00:00.000Z".into();
        assert_eq!(
            String::from_utf8(record.to_line()).unwrap(),
            "{\"time\":\"2026-12-01T00:00:00.000Z\",\"via\":\"proxy\",\"tool\":\"fs_write\",\
             \"call_id\":\"toolu_1\",\"reason\":\"Save it\",\"touched\":\"ls\",\"request_id\":\"7\",\"session\":\"s1\"}\n"
        );
    }
}
