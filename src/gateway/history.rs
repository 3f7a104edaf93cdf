//! The model keeps seeing its own reasons: the calls of the history an agent sends back get the
//! reason the gateway took off them, from the reasons log.
//!
//! Behind the gateway an agent records each call without its reason and sends that record back
//! on every turn, so the model's context fills with its own calls that carry none; models
//! imitate their context, and the field they see themselves leave out is the field they drop.
//! So each call of the history whose id the log holds, to a tool augmented in that request, and
//! which carries no `reason` of its own, is given the logged one before the request goes
//! upstream. The agent's own records are never touched; a call whose id is not in the log goes
//! on as it came.
//!
//! The same body and log always give the same bytes (a provider's prompt cache keeps hitting):
//! history entries without a restored call are copied as the bytes they came as, and a reason
//! once known for an id never changes (the first logged wins).
//!
//! [`Recall`] is what the gateway remembers, bounded: the records of the last
//! [`RECALL_TAIL`] bytes of the log when it starts (a restarted gateway still finds what was
//! logged before it), then every reason it logs, while the ids, tools and reasons held stay
//! under [`RECALL_BYTES`], the oldest forgotten first.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::apis::Api;
use crate::json::{Json, Parser};
use crate::layer::{ToolNames, REASON_PARAM};
use crate::reasons_log::Logged;

/// How much of the end of the reasons log a starting gateway reads.
pub const RECALL_TAIL: u64 = 16 << 20;

/// How many bytes of ids, tool names and reasons a [`Recall`] holds at most.
pub const RECALL_BYTES: usize = 16 << 20;

/// A reason remembered for a call id.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// The tool the call was for.
    pub tool: String,
    /// The reason, as logged.
    pub reason: Value,
}

/// The reasons a gateway can give back, by call id, bounded in size.
#[derive(Debug)]
pub struct Recall {
    reasons: HashMap<String, Recalled>,
    /// Ids in the order they were noted: the first is forgotten first.
    order: VecDeque<String>,
    bytes: usize,
    limit: usize,
}

impl Default for Recall {
    fn default() -> Self {
        Recall::with_limit(RECALL_BYTES)
    }
}

impl Recall {
    /// An empty recall holding at most `limit` bytes of ids, tools and reasons.
    pub fn with_limit(limit: usize) -> Recall {
        Recall {
            reasons: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }

    /// Notes a logged reason, unless the id has one already (the first logged wins).
    pub fn note(&mut self, call_id: &str, tool: &str, reason: &Value) {
        if self.reasons.contains_key(call_id) {
            return;
        }
        let size = size_of(call_id, tool, reason);
        self.reasons.insert(
            call_id.to_owned(),
            Recalled {
                tool: tool.to_owned(),
                reason: reason.clone(),
            },
        );
        self.order.push_back(call_id.to_owned());
        self.bytes += size;
        while self.bytes > self.limit {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(forgotten) = self.reasons.remove(&oldest) {
                self.bytes -= size_of(&oldest, &forgotten.tool, &forgotten.reason);
            }
        }
    }

    /// The reason remembered for a call id.
    pub fn get(&self, call_id: &str) -> Option<&Recalled> {
        self.reasons.get(call_id)
    }

    /// How many ids have a reason.
    pub fn len(&self) -> usize {
        self.reasons.len()
    }

    /// Whether no id has a reason.
    pub fn is_empty(&self) -> bool {
        self.reasons.is_empty()
    }

    /// Notes the records of the last `tail` bytes of a reasons log, in the order they were
    /// written (a line cut by the start of the tail is skipped, as are lines that are no record).
    pub fn read_tail(&mut self, path: &Path, tail: u64) -> io::Result<()> {
        let mut file = File::open(path)?;
        let end = file.seek(SeekFrom::End(0))?;
        let start = end.saturating_sub(tail);
        file.seek(SeekFrom::Start(start))?;
        let mut lines = BufReader::new(file.take(end - start)).split(b'\n');
        if start > 0 {
            lines.next();
        }
        for line in lines {
            // A record is read the one way the reasons log reads its records back.
            if let Some(Logged {
                call_id: Some(call_id),
                tool,
                reason,
                ..
            }) = Logged::parse(&line?)
            {
                self.note(&call_id, &tool, &reason);
            }
        }
        Ok(())
    }
}

fn size_of(call_id: &str, tool: &str, reason: &Value) -> usize {
    let reason = match reason {
        Value::String(text) => text.len(),
        other => other.to_string().len(),
    };
    call_id.len() + tool.len() + reason
}

/// The history (`raw`, a request body's value at the API's history key) with the remembered
/// reasons given back, and how many; `None` when none was, or the history cannot be read (it then
/// goes on as it came).
///
/// A reason is spliced into the text of the call's arguments, and every other byte of the
/// history is copied as it came. The history is read once, by the crate's own parser (no
/// allocation per string, its strings skipped 64 bytes at a time), and only a call is made a
/// `Value` for the rules that decide: reading each entry that holds a call into a `Value` and
/// writing it again, then serde_json's passes over the text, cost over a millisecond on a
/// history of 200 calls.
pub(crate) fn restore(
    api: Api,
    raw: &RawValue,
    tracked: &ToolNames,
    recall: &Recall,
) -> Option<(String, usize)> {
    let history = api.history()?;
    let text = raw.get();
    if !text.contains(history.marker) {
        return None;
    }
    let mut parser = Parser::default();
    let entries = parser.parse(text).ok()?.as_array()?;
    let mut splices = Vec::new();
    for entry in entries {
        let calls = match history.calls {
            Some(key) => entry.as_object().and_then(|entry| entry.get(key)),
            None => Some(entry),
        };
        let calls = calls.into_iter().flat_map(|calls| match history.calls {
            Some(_) => calls.as_array().into_iter().flatten().collect::<Vec<_>>(),
            None => vec![calls],
        });
        for call in calls {
            splices.extend(give_back(
                api,
                history.arguments,
                text,
                call,
                tracked,
                recall,
            ));
        }
    }
    if splices.is_empty() {
        return None;
    }
    let added: usize = splices.iter().map(|splice| splice.text.len()).sum();
    let mut restored = String::with_capacity(text.len() + added);
    let mut copied = 0;
    // The splices are in the order of the calls, each inside its own call: none overlap.
    for splice in &splices {
        restored.push_str(&text[copied..splice.start]);
        restored.push_str(&splice.text);
        copied = splice.end;
    }
    restored.push_str(&text[copied..]);
    Some((restored, splices.len()))
}

/// Text that replaces `start..end` of a text (an insertion when the two are equal).
#[derive(Debug, PartialEq)]
struct Splice {
    start: usize,
    end: usize,
    text: String,
}

/// Gives one history call (parsed from `text`) its remembered reason, when it is a call in
/// `api`'s shape to a tool augmented in this request, its id is remembered for that tool, and it
/// carries no reason: the splice into `text` that does it.
fn give_back(
    api: Api,
    arguments_at: &[&str],
    text: &str,
    call: Json<'_>,
    tracked: &ToolNames,
    recall: &Recall,
) -> Option<Splice> {
    // What has no arguments where the API keeps them is no call to give a reason to (a text
    // block, a tool's result): known before the call is made a `Value`.
    let mut arguments = call;
    for key in arguments_at {
        arguments = arguments.as_object()?.get(key)?;
    }
    let value = call.to_value();
    if Api::of_call(&value) != Some(api) {
        return None;
    }
    let tool = api
        .called_name(&value)
        .filter(|tool| tracked.contains(*tool))?;
    let recalled = api
        .call_id(&value)
        .and_then(|id| recall.get(&id))
        .filter(|recalled| recalled.tool == tool)?;
    let reason = serde_json::to_string(&recalled.reason).ok()?;
    let (start, end, spliced) = match api.arguments(&value)? {
        Value::Object(map) if !map.contains_key(REASON_PARAM) => {
            let close = arguments.closing_brace()?;
            reason_into_object(&text[..=close], map.is_empty(), &reason)?
        }
        // Arguments that travel as the text of a JSON object (Chat, Responses).
        Value::String(written) => {
            let (start, end) = arguments.string_span()?;
            let string = &text[start..end];
            let (from, to, spliced) = match serde_json::from_str::<Value>(written) {
                Ok(Value::Object(map)) if !map.contains_key(REASON_PARAM) => {
                    reason_into_string(string, &map, &reason)?
                }
                Err(_) if written.trim().is_empty() => {
                    let object = format!("{{{}:{reason}}}", Value::from(REASON_PARAM));
                    (0, string.len(), Value::String(object).to_string())
                }
                _ => return None,
            };
            (start + from, start + to, spliced)
        }
        _ => return None,
    };
    Some(Splice {
        start,
        end,
        text: spliced,
    })
}

/// The splice that gives an object's text (`{…}`, as written) the member `"reason":` `reason`
/// (JSON text) last, after its other members' text as written.
fn reason_into_object(object: &str, empty: bool, reason: &str) -> Option<(usize, usize, String)> {
    let close = object
        .len()
        .checked_sub(1)
        .filter(|_| object.ends_with('}'))?;
    let member = format!("{}:{reason}", Value::from(REASON_PARAM));
    if empty {
        return Some((close, close, member));
    }
    let after_last = object[..close].trim_end().len();
    Some((after_last, after_last, format!(",{member}")))
}

/// The splice that gives the object a JSON string's text holds (`"{…}"`, as written, escapes
/// and all; `object` is what it holds) the member `"reason":` `reason` last, written in the
/// string's escapes. When the string's last `}` is not plainly the object's (its closing brace
/// written as an escape), the whole string is written again, holding the object with its reason.
fn reason_into_string(
    string: &str,
    object: &Map<String, Value>,
    reason: &str,
) -> Option<(usize, usize, String)> {
    let inside = string.strip_prefix('"')?.strip_suffix('"')?;
    let member = format!("{}:{reason}", Value::from(REASON_PARAM));
    let member = if object.is_empty() {
        member
    } else {
        format!(",{member}")
    };
    let escaped = Value::String(member).to_string();
    let escaped = &escaped[1..escaped.len() - 1];
    if let Some(close) = inside.rfind('}') {
        let after = &inside[close + 1..];
        // What follows the brace holds no escape other than whitespace's: it is the closing one.
        let only_whitespace = serde_json::from_str::<String>(&format!("\"{after}\""))
            .is_ok_and(|after| after.trim().is_empty());
        if only_whitespace {
            return Some((close + 1, close + 1, escaped.to_owned()));
        }
    }
    let mut object = object.clone();
    object.insert(REASON_PARAM.to_owned(), serde_json::from_str(reason).ok()?);
    let text = Value::String(Value::Object(object).to_string()).to_string();
    Some((0, string.len(), text))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tracked(names: &[&str]) -> ToolNames {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    fn raw(value: &Value) -> Box<RawValue> {
        RawValue::from_string(value.to_string()).unwrap()
    }

    #[test]
    fn the_first_logged_reason_wins_and_the_oldest_is_forgotten_first() {
        let mut recall = Recall::with_limit(40);
        recall.note("a", "Bash", &json!("first"));
        recall.note("a", "Bash", &json!("second"));
        assert_eq!(recall.get("a").unwrap().reason, json!("first"));
        for id in ["b", "c", "d", "e"] {
            recall.note(id, "Bash", &json!("0123456"));
        }
        assert!(recall.get("a").is_none());
        assert!(recall.get("e").is_some());
        assert!(recall.bytes <= 40);
    }

    #[test]
    fn anthropic_history_gets_the_reason_back_where_it_has_none() {
        let mut recall = Recall::default();
        recall.note("toolu_1", "Bash", &json!("Look around"));
        recall.note("toolu_2", "Bash", &json!("Not this one"));
        recall.note("toolu_3", "Read", &json!("Another tool's id"));
        let messages = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Bash",
                    "input": {"command": "pwd", "reason": "its own"}},
                {"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {}},
                {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}
        ]);
        let (text, given) = restore(
            Api::Anthropic,
            &raw(&messages),
            &tracked(&["Bash"]),
            &recall,
        )
        .unwrap();
        assert_eq!(given, 1);
        let restored: Value = serde_json::from_str(&text).unwrap();
        let blocks = &restored[1]["content"];
        assert_eq!(
            blocks[0]["input"],
            json!({"command": "ls", "reason": "Look around"})
        );
        assert_eq!(blocks[1]["input"]["reason"], "its own");
        assert_eq!(blocks[2]["input"], json!({}));
        // Entries without a restored call are the bytes they came as.
        assert!(text.starts_with(r#"[{"role":"user","content":"hi"},"#));
        assert!(restore(
            Api::Anthropic,
            &raw(&messages),
            &tracked(&["Read"]),
            &recall
        )
        .is_none());
    }

    #[test]
    fn chat_and_responses_arguments_text_gets_the_reason_back() {
        let mut recall = Recall::default();
        recall.note("call_1", "shell", &json!("Count"));
        let chat = json!([{"role": "assistant", "tool_calls": [{"id": "call_1",
            "type": "function", "function": {"name": "shell", "arguments": "{\"command\":[\"wc\"]}"}}]}]);
        let (text, _) =
            restore(Api::OpenAiChat, &raw(&chat), &tracked(&["shell"]), &recall).unwrap();
        let restored: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            restored[0]["tool_calls"][0]["function"]["arguments"],
            "{\"command\":[\"wc\"],\"reason\":\"Count\"}"
        );
        let input = json!([{"type": "function_call", "call_id": "call_1", "name": "shell",
            "arguments": ""}, {"type": "function_call_output", "call_id": "call_1", "output": "1"}]);
        let (text, _) = restore(
            Api::OpenAiResponses,
            &raw(&input),
            &tracked(&["shell"]),
            &recall,
        )
        .unwrap();
        let restored: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(restored[0]["arguments"], "{\"reason\":\"Count\"}");
    }

    #[test]
    fn a_history_that_cannot_be_read_is_left_as_it_came() {
        let mut recall = Recall::default();
        recall.note("c", "shell", &json!("r"));
        let shell = tracked(&["shell"]);
        for history in [
            json!("a string"),
            json!({"not": "an array"}),
            json!([
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "shell",
                "arguments": "not json"}}]}]),
        ] {
            assert!(restore(Api::OpenAiChat, &raw(&history), &shell, &recall).is_none());
        }
    }

    #[test]
    fn the_reason_is_spliced_into_the_arguments_text_as_written() {
        let splice = |object: &str, empty: bool| {
            let (start, end, text) = reason_into_object(object, empty, r#""why""#).unwrap();
            format!("{}{text}{}", &object[..start], &object[end..])
        };
        // Keys stay in their order, whitespace as written, the reason last.
        assert_eq!(
            splice(r#"{"z":1,"a":2}"#, false),
            r#"{"z":1,"a":2,"reason":"why"}"#
        );
        assert_eq!(
            splice("{ \"a\": [1, {}] \n}", false),
            "{ \"a\": [1, {}],\"reason\":\"why\" \n}"
        );
        assert_eq!(splice("{}", true), r#"{"reason":"why"}"#);
        assert_eq!(splice("{ }", true), r#"{ "reason":"why"}"#);
        let in_string = |string: &str| {
            let inner: String = serde_json::from_str(string).unwrap();
            let Value::Object(object) = serde_json::from_str(&inner).unwrap() else {
                panic!("{inner} is an object");
            };
            let (start, end, text) = reason_into_string(string, &object, r#""a \"b\"""#).unwrap();
            let spliced = format!("{}{text}{}", &string[..start], &string[end..]);
            let inner: String = serde_json::from_str(&spliced).unwrap();
            (spliced, serde_json::from_str::<Value>(&inner).unwrap())
        };
        let (spliced, value) = in_string(r#""{\"cmd\":\"echo \\\"}\\\"\"}""#);
        assert_eq!(value, json!({"cmd": "echo \"}\"", "reason": "a \"b\""}));
        assert!(
            spliced.starts_with(r#""{\"cmd\":\"echo \\\"}\\\"\","#),
            "{spliced}"
        );
        let (_, value) = in_string(r#""{}""#);
        assert_eq!(value, json!({"reason": "a \"b\""}));
        let (_, value) = in_string(r#""{\"a\":1}\n ""#);
        assert_eq!(value, json!({"a": 1, "reason": "a \"b\""}));
        // A closing brace written as an escape: the string is written again, whole.
        let (spliced, value) = in_string(r#""{\"a\":{}\u007d""#);
        assert_eq!(value, json!({"a": {}, "reason": "a \"b\""}));
        assert!(!spliced.contains("u007d"));
    }

    #[test]
    fn a_history_keeps_every_byte_but_the_reasons_given() {
        let mut recall = Recall::default();
        recall.note("toolu_1", "Bash", &json!("Look"));
        let history =
            "[ {\"role\": \"assistant\", \"content\": [\n  {\"input\": {\"command\" : \"ls\"},\
            \"name\": \"Bash\", \"type\": \"tool_use\", \"id\": \"toolu_1\"} ] } ]";
        let raw = RawValue::from_string(history.to_owned()).unwrap();
        let (text, given) = restore(Api::Anthropic, &raw, &tracked(&["Bash"]), &recall).unwrap();
        assert_eq!(given, 1);
        assert_eq!(
            text,
            history.replace(r#""ls"}"#, r#""ls","reason":"Look"}"#)
        );
    }

    #[test]
    fn a_restarted_gateway_reads_the_logs_tail() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("reasons.jsonl");
        let mut text = String::new();
        for n in 0..1000 {
            let record = json!({"time": "t", "via": "gateway", "tool": "Bash",
                "call_id": format!("toolu_{n}"), "reason": format!("reason {n}")});
            text.push_str(&format!("{record}\n"));
        }
        text.push_str("{torn line\n");
        std::fs::write(&log, &text).unwrap();
        let mut recall = Recall::default();
        recall.read_tail(&log, 10_000).unwrap();
        assert!(recall.get("toolu_999").is_some());
        assert!(recall.get("toolu_0").is_none());
        assert!(recall.len() < 1000 && recall.len() > 50);
        let mut whole = Recall::default();
        whole.read_tail(&log, RECALL_TAIL).unwrap();
        assert_eq!(whole.len(), 1000);
    }
}
