//! The route a team's gateway answers reasons at (`gateway --serve-reasons`) and a hook asks
//! them of (`hook AGENT --gateway URL`): `GET /reasons/v1/calls/{call_id}`, answered with a
//! [`CallReason`] or 404. The path, the call id's encoding in it and the answer's shape are
//! here, for both ends.

use reasons::reasons_log::Logged;
use serde_json::{json, Value};

/// The path the questions are asked under; the call id follows it.
pub const ROUTE: &str = "/reasons/v1/calls/";

/// A call's reason as the route answers it (and as a team's store keeps it):
/// `{"call_id","tool","reason","touched","time"}`, read back with [`Logged::from_json`].
pub fn answer(logged: &Logged) -> Value {
    json!({"call_id": logged.call_id, "tool": logged.tool, "reason": logged.reason,
        "touched": logged.touched, "time": logged.time})
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
        let mut logged = Logged::reason_for("Bash", json!("See the files"));
        logged.call_id = Some("toolu_1".into());
        logged.touched = Some("ls".into());
        assert_eq!(Logged::from_json(answer(&logged)), Some(logged));
        assert_eq!(Logged::from_json(json!({"tool": "Bash"})), None);
    }
}
