//! The route a team's gateway answers reasons at (`gateway --serve-reasons`) and a hook asks
//! them of (`hook AGENT --gateway URL`): `GET /reasons/v1/calls/{call_id}`, answered with a
//! [`CallReason`] or 404. The path, the call id's encoding in it and the answer's shape are
//! here, for both ends.

use reasons::gateway::Recalled;
use reasons::masking::Masking;
use reasons::reasons_log::Record;
use serde_json::{json, Value};

/// The path the questions are asked under; the call id follows it.
pub const ROUTE: &str = "/reasons/v1/calls/";

/// A call's reason as the route answers it (and as a team's store keeps it): the call, its tool,
/// the reason, what the call touched and when the reason was taken.
#[derive(Debug, Clone, PartialEq)]
pub struct CallReason {
    pub call_id: String,
    pub tool: String,
    pub reason: Value,
    pub touched: Option<String>,
    pub time: Option<String>,
}

impl CallReason {
    /// What a gateway remembers of `call_id`.
    pub fn recalled(call_id: &str, recalled: &Recalled) -> CallReason {
        CallReason {
            call_id: call_id.to_owned(),
            tool: recalled.tool.clone(),
            reason: recalled.reason.clone(),
            touched: recalled.touched.clone(),
            time: recalled.time.clone(),
        }
    }

    /// A reason just logged, when its call has an id.
    pub fn logged(record: &Record) -> Option<CallReason> {
        Some(CallReason {
            call_id: record.taken.call_id.clone()?,
            tool: record.taken.tool.clone(),
            reason: record.taken.reason.clone(),
            touched: Some(record.touched.clone()),
            time: Some(record.time.clone()),
        })
    }

    /// As it leaves the machine: its reason and what its call touched masked when `masking`
    /// says so.
    pub fn masked(mut self, masking: Masking) -> CallReason {
        masking.json(&mut self.reason);
        if let Some(touched) = &mut self.touched {
            *touched = masking.text(touched).into_owned();
        }
        self
    }

    /// The answer's JSON: `{"call_id","tool","reason","touched","time"}`.
    pub fn to_json(&self) -> Value {
        json!({"call_id": self.call_id, "tool": self.tool, "reason": self.reason,
            "touched": self.touched, "time": self.time})
    }

    /// An answer read back; `None` when it is not one.
    pub fn from_json(answer: &Value) -> Option<CallReason> {
        let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(CallReason {
            call_id: text("call_id")?,
            tool: text("tool")?,
            reason: answer.get("reason")?.clone(),
            touched: text("touched"),
            time: text("time"),
        })
    }
}

/// The URL `gateway` answers the question about `call_id` at: `GATEWAY/reasons/v1/calls/ID`, the
/// id percent-encoded but for the characters an agent's ids are made of.
pub fn question_url(gateway: &str, call_id: &str) -> String {
    let mut url = gateway.trim_end_matches('/').to_owned();
    url.push_str(ROUTE);
    for byte in call_id.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                url.push(char::from(byte));
            }
            _ => url.push_str(&format!("%{byte:02X}")),
        }
    }
    url
}

/// The call id a request's path asks about: `None` for a path off the route, or one whose id is
/// empty, holds a `/`, or does not decode.
pub fn asked_call_id(path: &str) -> Option<String> {
    let encoded = path.strip_prefix(ROUTE)?;
    percent_decoded(encoded).filter(|id| !id.is_empty() && !id.contains('/'))
}

/// `%XX` escapes decoded; `None` when they do not make UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            decoded.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_names_the_call_id_percent_encoded_under_any_prefix() {
        assert_eq!(
            question_url("http://gw:4179/", "toolu_01AbC-x.y~z"),
            "http://gw:4179/reasons/v1/calls/toolu_01AbC-x.y~z"
        );
        assert_eq!(
            question_url("https://team.example/gateway", "a/b c?é"),
            "https://team.example/gateway/reasons/v1/calls/a%2Fb%20c%3F%C3%A9"
        );
    }

    #[test]
    fn the_asked_call_id_is_the_one_the_question_encoded() {
        for id in ["toolu_01AbC-x.y~z", "a b?é", "call_x|fc_x"] {
            let url = question_url("http://gw", id);
            let path = url.strip_prefix("http://gw").unwrap();
            assert_eq!(asked_call_id(path).as_deref(), Some(id));
        }
        assert_eq!(asked_call_id("/reasons/v1/calls/a%2Fb"), None);
        assert_eq!(asked_call_id("/reasons/v1/calls/"), None);
        assert_eq!(asked_call_id("/v1/messages"), None);
    }

    #[test]
    fn percent_escapes_are_decoded_and_bad_ones_refused() {
        assert_eq!(percent_decoded("toolu_01"), Some("toolu_01".into()));
        assert_eq!(percent_decoded("a%2Fb%20c%C3%A9"), Some("a/b cé".into()));
        assert_eq!(percent_decoded("a%2"), None);
        assert_eq!(percent_decoded("a%zz"), None);
        assert_eq!(percent_decoded("%FF"), None);
    }

    #[test]
    fn an_answer_reads_back_as_it_was_written() {
        let answer = CallReason {
            call_id: "toolu_1".into(),
            tool: "Bash".into(),
            reason: json!("See the files"),
            touched: Some("ls".into()),
            time: None,
        };
        assert_eq!(CallReason::from_json(&answer.to_json()), Some(answer));
        assert_eq!(CallReason::from_json(&json!({"tool": "Bash"})), None);
    }
}
