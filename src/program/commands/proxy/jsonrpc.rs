//! What the proxy must know of a JSON-RPC message without rewriting it (the layer does that):
//! which requests it holds, each owed an answer; the error answers the proxy gives itself; and a
//! JSON text as one line, which is how stdio frames a message.

use bytes::Bytes;
use serde_json::{json, Value};

/// The JSON-RPC code of the errors the proxy answers a request with when the server could not:
/// the range the JSON-RPC spec leaves to implementations.
pub const TRANSPORT_ERROR: i64 = -32000;

/// One message from the client, after the layer, and what the proxy must know about it.
pub struct Outgoing {
    pub body: Bytes,
    /// The ids of the requests in it: each is owed an answer, from the server or from us.
    pub requests: Vec<Value>,
    /// The id of an `initialize` request: its answer says the protocol version.
    pub initialize: Option<Value>,
    /// It is `notifications/initialized`: the session is open, the server's own stream may be
    /// asked for.
    pub initialized: bool,
    /// The progress tokens its requests gave (`params._meta.progressToken`): a server's progress
    /// notification names the request it belongs to by one.
    pub progress_tokens: Vec<Value>,
}

/// What the proxy must know of a client's message; `None` when it is not JSON.
pub fn outgoing(body: &[u8]) -> Option<Outgoing> {
    let parsed: Value = serde_json::from_slice(body).ok()?;
    let mut message = Outgoing {
        body: Bytes::copy_from_slice(body),
        requests: Vec::new(),
        initialize: None,
        initialized: false,
        progress_tokens: Vec::new(),
    };
    let each: Vec<&Value> = match &parsed {
        Value::Array(batch) => batch.iter().collect(),
        single => vec![single],
    };
    for one in each {
        let Some(method) = one.get("method").and_then(Value::as_str) else {
            continue;
        };
        match one.get("id") {
            Some(id) if !id.is_null() => {
                if method == "initialize" {
                    message.initialize = Some(id.clone());
                }
                message.requests.push(id.clone());
                if let Some(token) = one.pointer("/params/_meta/progressToken") {
                    message.progress_tokens.push(token.clone());
                }
            }
            _ => message.initialized |= method == "notifications/initialized",
        }
    }
    Some(message)
}

/// What the proxy must know of a server's message.
#[derive(Debug, Default, PartialEq)]
pub struct FromServer {
    /// The ids of the requests it answers (a response, or each of a batch's).
    pub answers: Vec<Value>,
    /// The token of a progress notification, which names the request it is about.
    pub progress_token: Option<Value>,
}

/// What the proxy must know of a server's message; nothing when it is not JSON.
pub fn from_server(body: &[u8]) -> FromServer {
    let mut message = FromServer::default();
    let Ok(parsed) = serde_json::from_slice::<Value>(body) else {
        return message;
    };
    let each: Vec<&Value> = match &parsed {
        Value::Array(batch) => batch.iter().collect(),
        single => vec![single],
    };
    for one in each {
        match one.get("method").and_then(Value::as_str) {
            Some("notifications/progress") => {
                message.progress_token = one.pointer("/params/progressToken").cloned();
            }
            Some(_) => {}
            None => message
                .answers
                .extend(one.get("id").filter(|id| !id.is_null()).cloned()),
        }
    }
    message
}

/// A request id as the key it is matched by: its JSON text, so that `1` and `"1"` stay apart.
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

/// A JSON-RPC error answer to request `id`, as one line.
pub fn error_message(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

/// A server's JSON text as one line: a line end inside JSON is whitespace (a string cannot hold
/// one raw), so taking them out changes nothing of its meaning.
pub fn one_line(mut data: Vec<u8>) -> Vec<u8> {
    if memchr::memchr2(b'\n', b'\r', &data).is_some() {
        data.retain(|&byte| byte != b'\n' && byte != b'\r');
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_in_a_message_are_owed_an_answer_and_notifications_are_not() {
        let message = outgoing(br#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#)
            .expect("JSON");
        assert_eq!(message.requests, [json!(7)]);
        assert_eq!(message.initialize, Some(json!(7)));
        let message =
            outgoing(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).expect("JSON");
        assert!(message.requests.is_empty() && message.initialized);
        let message = outgoing(
            br#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"b","result":{}}]"#,
        )
        .expect("JSON");
        assert_eq!(message.requests, [json!("a")], "an answer is owed nothing");
        assert!(outgoing(b"{not json").is_none());
        let message = outgoing(
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":"p"}}}"#,
        )
        .expect("JSON");
        assert_eq!(message.progress_tokens, [json!("p")]);
    }

    #[test]
    fn a_servers_answers_and_progress_are_told_apart_from_its_requests() {
        let message = from_server(br#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"s","method":"roots/list"},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"no"}}]"#);
        assert_eq!(message.answers, [json!(1), json!(2)]);
        let message = from_server(
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#,
        );
        assert_eq!(
            message,
            FromServer {
                answers: Vec::new(),
                progress_token: Some(json!(7))
            }
        );
        assert_eq!(from_server(b"not json"), FromServer::default());
        assert_ne!(id_key(&json!(1)), id_key(&json!("1")));
    }

    #[test]
    fn a_json_text_over_several_lines_becomes_one_with_the_same_meaning() {
        let text = b"{\r\n  \"a\": \"x y\",\n  \"b\": [1,\n2]\n}".to_vec();
        let line = one_line(text.clone());
        assert!(!line.contains(&b'\n'));
        let before: Value = serde_json::from_slice(&text).expect("JSON");
        let after: Value = serde_json::from_slice(&line).expect("JSON");
        assert_eq!(before, after);
    }
}
