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
use crate::layer::{ToolNames, REASON_PARAM};

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
            let line = line?;
            let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            let fields = (
                record.get("call_id").and_then(Value::as_str),
                record.get("tool").and_then(Value::as_str),
                record.get(REASON_PARAM),
            );
            if let (Some(call_id), Some(tool), Some(reason)) = fields {
                self.note(call_id, tool, reason);
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
pub(crate) fn restore(
    api: Api,
    raw: &RawValue,
    tracked: &ToolNames,
    recall: &Recall,
) -> Option<(String, usize)> {
    let history = api.history()?;
    let entries: Vec<&RawValue> = serde_json::from_str(raw.get()).ok()?;
    let mut restored = 0;
    let mut rewritten: Vec<Option<String>> = Vec::with_capacity(entries.len());
    for entry in &entries {
        let text = entry.get();
        if !text.contains(history.marker) {
            rewritten.push(None);
            continue;
        }
        let Ok(mut entry) = serde_json::from_str::<Value>(text) else {
            rewritten.push(None);
            continue;
        };
        let mut given = 0;
        for call in (history.calls)(&mut entry) {
            given += usize::from(give_back(api, call, tracked, recall));
        }
        restored += given;
        rewritten.push((given > 0).then(|| entry.to_string()));
    }
    if restored == 0 {
        return None;
    }
    let mut text = String::with_capacity(raw.get().len() + restored * 64);
    text.push('[');
    for (n, (entry, rewritten)) in entries.iter().zip(&rewritten).enumerate() {
        if n > 0 {
            text.push(',');
        }
        text.push_str(rewritten.as_deref().unwrap_or(entry.get()));
    }
    text.push(']');
    Some((text, restored))
}

/// Gives one history call its remembered reason, when it is a call in `api`'s shape to a tool
/// augmented in this request, its id is remembered for that tool, and it carries no reason.
fn give_back(api: Api, call: &mut Value, tracked: &ToolNames, recall: &Recall) -> bool {
    if Api::of_call(call) != Some(api) {
        return false;
    }
    let Some(tool) = api.called_name(call).filter(|tool| tracked.contains(*tool)) else {
        return false;
    };
    let Some(recalled) = api
        .call_id(call)
        .and_then(|id| recall.get(&id))
        .filter(|recalled| recalled.tool == tool)
    else {
        return false;
    };
    let reason = recalled.reason.clone();
    let Some(arguments) = api.arguments_mut(call) else {
        return false;
    };
    match arguments {
        Value::Object(map) => insert_reason(map, reason),
        // Arguments that travel as the text of a JSON object (Chat, Responses).
        Value::String(text) => {
            let mut map = match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(map)) => map,
                _ if text.trim().is_empty() => Map::new(),
                _ => return false,
            };
            let given = insert_reason(&mut map, reason);
            if given {
                *text = Value::Object(map).to_string();
            }
            given
        }
        _ => false,
    }
}

fn insert_reason(map: &mut Map<String, Value>, reason: Value) -> bool {
    if map.contains_key(REASON_PARAM) {
        return false;
    }
    map.insert(REASON_PARAM.to_owned(), reason);
    true
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
