//! The call record: what every reader produces for one recorded tool call, and the format it
//! was recorded in (`format.rs`).
//!
//! A call's [`Status`] is read off its arguments as they were recorded; coverage counts the
//! audited ones:
//!
//! ```
//! use reasons::record::Status;
//! use serde_json::json;
//!
//! let (status, reason) = Status::of_arguments(&json!(r#"{"path":"a.yml","reason":"Add the retry"}"#));
//! assert_eq!((status, reason.as_deref()), (Status::Present, Some("Add the retry")));
//! assert_eq!(Status::of_arguments(&json!({"path": "a.yml"})).0, Status::Missing);
//! assert_eq!(Status::of_arguments(&json!({"reason": "  "})).0, Status::Blank);
//! assert!(Status::Missing.lacks_reason() && !Status::Freeform.is_audited());
//! ```

use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::call_arguments::{decode_arguments, Arguments};
use crate::reason_parameter::REASON_PARAM;

mod format;

pub use format::Format;

/// What a recorded call says about its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// `reason` is a string with non-whitespace text.
    Present,
    /// `reason` is an empty or all-whitespace string.
    Blank,
    /// `reason` is there but is not a string.
    Invalid,
    /// The arguments are an object (or a JSON string holding one) without `reason`.
    Missing,
    /// The tool declares a `reason` of its own: a real argument, not the layer's.
    Declared,
    /// The arguments cannot carry a reason (free text, an argv array, a hosted tool).
    Freeform,
}

impl Status {
    /// Every status, in the order reports list them.
    pub const ALL: [Status; 6] = [
        Status::Present,
        Status::Blank,
        Status::Invalid,
        Status::Missing,
        Status::Declared,
        Status::Freeform,
    ];

    /// The name used on the command line and in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Present => "present",
            Status::Blank => "blank",
            Status::Invalid => "invalid",
            Status::Missing => "missing",
            Status::Declared => "declared",
            Status::Freeform => "freeform",
        }
    }

    /// Whether this status is part of the coverage denominator.
    pub fn is_audited(self) -> bool {
        matches!(
            self,
            Status::Present | Status::Blank | Status::Invalid | Status::Missing
        )
    }

    /// Whether this status counts against coverage (what `check` flags).
    pub fn lacks_reason(self) -> bool {
        matches!(self, Status::Blank | Status::Invalid | Status::Missing)
    }

    /// Classifies a call by its arguments, as they were recorded.
    ///
    /// Returns the status and, when the reason is a string, its text (when it is there but not a
    /// string, the value as JSON text). Arguments that travel as a
    /// JSON-encoded string are decoded first; the empty string and an absent (`null`) value mean
    /// "no arguments", which is an object without a reason.
    pub fn of_arguments(arguments: &Value) -> (Status, Option<String>) {
        match decode_arguments(arguments) {
            Arguments::Object(map) => match map.get(REASON_PARAM) {
                None => Status::of_reason_field(ReasonField::Absent),
                Some(Value::String(text)) => Status::of_reason_field(ReasonField::Text(text)),
                Some(other) => (
                    Status::of_reason_field(ReasonField::NotText).0,
                    Some(other.to_string()),
                ),
            },
            Arguments::Empty => Status::of_reason_field(ReasonField::NoArguments),
            Arguments::NotAnObject => Status::of_reason_field(ReasonField::NotAnObject),
        }
    }

    /// The status a reason gives a call whose arguments held it (as a reasons log records it,
    /// whatever its value), and its text when it is a string.
    pub fn of_reason(reason: &Value) -> (Status, Option<String>) {
        Status::of_reason_field(match reason {
            Value::String(text) => ReasonField::Text(text),
            _ => ReasonField::NotText,
        })
    }

    /// The rule itself, on what the arguments hold where a reason would be: readers that keep
    /// JSON in another form than `Value` come here too.
    pub(crate) fn of_reason_field(field: ReasonField<'_>) -> (Status, Option<String>) {
        match field {
            ReasonField::Absent | ReasonField::NoArguments => (Status::Missing, None),
            ReasonField::Text(text) if text.trim().is_empty() => {
                (Status::Blank, Some(text.to_owned()))
            }
            ReasonField::Text(text) => (Status::Present, Some(text.to_owned())),
            ReasonField::NotText => (Status::Invalid, None),
            ReasonField::NotAnObject => (Status::Freeform, None),
        }
    }
}

/// What a call's arguments hold where the layer's `reason` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReasonField<'a> {
    /// No arguments at all: `null`, absent, or an empty or all-whitespace string.
    NoArguments,
    /// Arguments that are not an object and hold no JSON object.
    NotAnObject,
    /// An object without `reason`.
    Absent,
    /// `reason` is this string.
    Text(&'a str),
    /// `reason` is there but is not a string.
    NotText,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Status {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| format!("unknown status `{s}`"))
    }
}

/// Where a record's reason comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasonFrom {
    /// The call's own arguments (also when they hold none).
    #[default]
    Call,
    /// A reasons log, joined on the call's id: the layer took the reason off before the agent
    /// recorded the call.
    Log,
}

/// One recorded tool call, as a reader found it.
///
/// Serialized with `reason` as the log holds it: a string, `null`, or — when the status is
/// `invalid` — the JSON value that is not a string.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CallRecord {
    /// The path as given, or `-` for stdin.
    pub source: String,
    /// 1-based line of the event that holds the call.
    pub line: u64,
    /// The log format the call was read from.
    pub format: Format,
    /// The session id, when the log has one.
    pub session: Option<String>,
    /// The event's timestamp as written, when it has one.
    pub timestamp: Option<String>,
    /// The call's id, when it has one.
    pub call_id: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// The reason's text, when it is a string; when it is there but not a string (`invalid`),
    /// the value as JSON text.
    #[serde(default, deserialize_with = "reason_as_logged")]
    pub reason: Option<String>,
    /// What the call says about its reason.
    pub status: Status,
    /// Where the reason was found: in the call's own arguments, or in a reasons log.
    #[serde(default)]
    pub reason_from: ReasonFrom,
    /// The call's arguments, kept only when asked for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub arguments: Option<Value>,
}

impl Serialize for CallRecord {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = if self.arguments.is_some() { 11 } else { 10 };
        let mut record = serializer.serialize_struct("CallRecord", fields)?;
        record.serialize_field("source", &self.source)?;
        record.serialize_field("line", &self.line)?;
        record.serialize_field("format", &self.format)?;
        record.serialize_field("session", &self.session)?;
        record.serialize_field("timestamp", &self.timestamp)?;
        record.serialize_field("call_id", &self.call_id)?;
        record.serialize_field("tool", &self.tool)?;
        match (self.status, self.reason.as_deref()) {
            (Status::Invalid, Some(json)) => match serde_json::from_str::<Value>(json) {
                Ok(value) => record.serialize_field("reason", &value)?,
                Err(_) => record.serialize_field("reason", json)?,
            },
            (_, reason) => record.serialize_field("reason", &reason)?,
        }
        record.serialize_field("status", &self.status)?;
        record.serialize_field("reason_from", &self.reason_from)?;
        match &self.arguments {
            Some(arguments) => record.serialize_field("arguments", arguments)?,
            None => record.skip_field("arguments")?,
        }
        record.end()
    }
}

/// A record's `reason` read back: a string as it is, any other value as its JSON text.
fn reason_as_logged<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(deserializer)? {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text),
        Some(other) => Some(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_reason_is_serialized_as_the_value_the_log_holds() {
        let arguments = serde_json::json!({"command": "ls", "reason": {"why": "round per line"}});
        let (status, reason) = Status::of_arguments(&arguments);
        assert_eq!(status, Status::Invalid);
        let record = CallRecord {
            source: "-".into(),
            line: 1,
            format: Format::ClaudeCode,
            session: None,
            timestamp: None,
            call_id: None,
            tool: "Bash".into(),
            reason,
            status,
            reason_from: ReasonFrom::Call,
            arguments: None,
        };
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["reason"], serde_json::json!({"why": "round per line"}));
        assert_eq!(json["status"], "invalid");
        assert!(json.get("arguments").is_none());
        let back: CallRecord = serde_json::from_value(json).unwrap();
        assert_eq!(back, record);
    }
}
