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

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use super::splices::Splices;
use crate::apis::{Api, History, NAME_KEY};
use crate::json::{Json, Parser};
use crate::layer::{ReasonPosition, ToolNames, REASON_PARAM};
use crate::reasons_log::{note_first, Logged};

/// How much of the end of the reasons log a starting gateway reads.
pub const RECALL_TAIL: u64 = 16 << 20;

/// How many bytes of ids, tool names and reasons a [`Recall`] holds at most.
pub const RECALL_BYTES: usize = 16 << 20;

/// A reason remembered for a call id: the record as the log holds it, and the reason as it is
/// spliced back into a history.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// The record: its tool, its reason, what the call touched and when (as far as known).
    pub logged: Logged,
    /// The member that gives an object its reason with a comma on each side, `,"reason":…,`,
    /// and the same as a JSON string holds it (escaped): written once when noted, since a
    /// history gives the same reasons back on every turn. [`Recalled::member`] cuts the commas
    /// the place needs.
    member: String,
    member_in_string: String,
}

impl Recalled {
    /// A logged reason, ready to be given back.
    pub fn new(logged: Logged) -> Recalled {
        let member = format!(",\"{REASON_PARAM}\":{},", logged.reason);
        let in_string = Value::String(member.clone()).to_string();
        Recalled {
            logged,
            member_in_string: in_string[1..in_string.len() - 1].to_owned(),
            member,
        }
    }

    /// The member for an object that has others, at `position` (after them, with a comma
    /// before it; before them, with a comma after it), or none (`empty`, no comma).
    fn member(&self, empty: bool, position: ReasonPosition) -> &str {
        with_commas(&self.member, empty, position)
    }

    /// The same, written inside a JSON string.
    fn member_in_string(&self, empty: bool, position: ReasonPosition) -> &str {
        with_commas(&self.member_in_string, empty, position)
    }

    /// What it holds, for the bound: the reason is held as a value and twice as text.
    fn size(&self, call_id: &str) -> usize {
        let told = |text: &Option<String>| text.as_ref().map_or(0, String::len);
        let logged = &self.logged;
        call_id.len()
            + logged.tool.len()
            + 2 * self.member.len()
            + self.member_in_string.len()
            + told(&logged.touched)
            + told(&logged.time)
            + told(&logged.via)
            + told(&logged.call_id)
            + told(&logged.session)
    }
}

/// A call id as OpenClaw sends it back to the model in a history: only its letters and digits
/// (`call_abc-1` as `callabc1`; OpenClaw 2026.9's "strict" tool call ids), so that a reason
/// logged under the id the model wrote is found under the one the history holds. `None` when the
/// id has nothing else, or nothing of it is left.
fn letters_and_digits(call_id: &str) -> Option<String> {
    let kept: String = call_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    (!kept.is_empty() && kept.len() != call_id.len()).then_some(kept)
}

/// `,member,` cut to the commas an object needs at `position`.
fn with_commas(member: &str, empty: bool, position: ReasonPosition) -> &str {
    let inner = &member[1..member.len() - 1];
    match (empty, position) {
        (true, _) => inner,
        (false, ReasonPosition::Last) => &member[..member.len() - 1],
        (false, ReasonPosition::First) => &member[1..],
    }
}

/// The reasons a gateway can give back, by call id, bounded in size: the one cache of them, which
/// the history's restoration and the reasons a gateway serves (`--serve-reasons`) both read.
#[derive(Debug)]
pub struct Recall {
    reasons: HashMap<String, Recalled>,
    /// Each id as an agent that keeps only the letters and digits of ids sends it back
    /// ([`letters_and_digits`]), to the id it stands for; `None` where two ids give the same.
    aliases: HashMap<String, Option<String>>,
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
            aliases: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }

    /// Notes a logged reason, unless the id has one already: the log's one policy
    /// ([`note_first`]), the first logged wins.
    pub fn note(&mut self, call_id: &str, tool: &str, reason: &Value) {
        let logged = Logged {
            call_id: Some(call_id.to_owned()),
            ..Logged::reason_for(tool, reason.clone())
        };
        self.note_recalled(call_id, Recalled::new(logged));
    }

    /// Notes a reason with what is known of it, unless the id has one already.
    fn note_recalled(&mut self, call_id: &str, recalled: Recalled) {
        if !note_first(&mut self.reasons, call_id, || recalled) {
            return;
        }
        self.bytes += self.reasons[call_id].size(call_id);
        if let Some(alias) = letters_and_digits(call_id) {
            self.bytes += alias.len() + call_id.len();
            self.aliases
                .entry(alias)
                .and_modify(|stands_for| *stands_for = None)
                .or_insert_with(|| Some(call_id.to_owned()));
        }
        self.order.push_back(call_id.to_owned());
        while self.bytes > self.limit {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(forgotten) = self.reasons.remove(&oldest) {
                self.bytes -= forgotten.size(&oldest);
            }
            if let Some(alias) = letters_and_digits(&oldest) {
                self.bytes -= alias.len() + oldest.len();
                self.aliases.remove(&alias);
            }
        }
    }

    /// The reason remembered for a call id, or for the id it stands for when an agent sent it
    /// back with only its letters and digits.
    pub fn get(&self, call_id: &str) -> Option<&Recalled> {
        self.reasons.get(call_id).or_else(|| {
            let stands_for = self.aliases.get(call_id)?.as_ref()?;
            self.reasons.get(stands_for)
        })
    }

    /// How many ids have a reason.
    pub fn len(&self) -> usize {
        self.reasons.len()
    }

    /// Whether no id has a reason.
    pub fn is_empty(&self) -> bool {
        self.reasons.is_empty()
    }

    /// Notes a record, just logged or read back from the reasons log (see
    /// [`crate::reasons_log::read_end`]); one without a call id has nothing to be matched by.
    pub fn note_logged(&mut self, logged: Logged) {
        if let Some(call_id) = logged.call_id.clone() {
            self.note_recalled(&call_id, Recalled::new(logged));
        }
    }
}

/// Where restoration looks up the reason of a history's call: a [`Recall`], or whatever stands in
/// front of one (the gateway's store notes the ids it is asked for and does not hold).
pub trait Lookup {
    /// The reason known for a call id.
    fn get(&self, call_id: &str) -> Option<&Recalled>;

    /// Whether no id can be known: restoration is then not even tried.
    fn is_empty(&self) -> bool;
}

impl Lookup for Recall {
    fn get(&self, call_id: &str) -> Option<&Recalled> {
        Recall::get(self, call_id)
    }

    fn is_empty(&self) -> bool {
        Recall::is_empty(self)
    }
}

/// A value the crate's parser read, with the text its positions are in.
pub(crate) struct InText<'a> {
    pub value: Json<'a>,
    pub text: &'a str,
}

/// The splices into a history (a request body's value at the API's history key, as parsed)
/// that give the remembered reasons back, one a call, at positions in `history.text`; `None`
/// when none was given, or the history cannot be read (it then goes on as it came).
///
/// Each call is looked at where the API's shape keeps its kind, name, id and arguments, in the
/// tree the body was parsed into once (no allocation per string, strings skipped
/// 64 bytes at a time). A reason is spliced into the text of the call's arguments, as text
/// written once when it was noted, and every other byte of the history stays as it came.
/// Reading each call into a `Value` for the rules that decide, writing the reasons again for
/// each call, and parsing the history a second time cost several times as much on a history of
/// 200 calls, which is sent again on every turn. `arguments` parses arguments written as text.
pub(crate) fn restore<'r>(
    api: Api,
    history: &InText<'_>,
    tracked: &ToolNames,
    recall: &'r dyn Lookup,
    arguments: &mut Parser,
    position: ReasonPosition,
) -> Option<Splices<'r>> {
    let shape = api.history()?;
    let entries = history.value.as_array()?;
    let mut splices = Splices::default();
    let mut look_at = |call| {
        give_back(
            api,
            &shape,
            call,
            history.text,
            (tracked, recall),
            (arguments, position),
            &mut splices,
        )
    };
    for entry in entries {
        match shape.calls {
            Some(key) => {
                let calls = entry.as_object().and_then(|entry| entry.get(key));
                for call in calls.and_then(Json::as_array).into_iter().flatten() {
                    look_at(call);
                }
            }
            None => {
                look_at(entry);
            }
        }
    }
    (!splices.is_empty()).then_some(splices)
}

/// Gives one history call its remembered reason, when it is a call in the history's shape to a
/// tool augmented in this request, its id is remembered for that tool, and it carries no reason
/// (`None` when it is given nothing). It is read where the API's shape keeps a call's name, id
/// and arguments, in the parsed `text`.
fn give_back<'r>(
    api: Api,
    history: &History,
    call: Json<'_>,
    text: &str,
    (tracked, recall): (&ToolNames, &'r dyn Lookup),
    (parser, position): (&mut Parser, ReasonPosition),
    splices: &mut Splices<'r>,
) -> Option<()> {
    let shape = api.shape();
    let object = call.as_object()?;
    // Most entries of a history are no calls: told apart by their keys' fingerprints.
    let id_key = shape.call_id_key();
    if !object.may_have(id_key) || !object.may_have(shape.call_body_key().unwrap_or(NAME_KEY)) {
        return None;
    }
    // Then one pass over the call's members for its kind (where the history holds more than
    // calls; else the id's key stands in, and what it finds is not looked at), its id, and its
    // name and arguments or the member that holds those two.
    let kind_key = history.kind.map_or(id_key, |(key, _)| key);
    let [kind, id, name, arguments] = match shape.call_body_key() {
        None => object.get_each([kind_key, id_key, NAME_KEY, shape.arguments_key()]),
        Some(body_key) => {
            let [kind, id, body] = object.get_each([kind_key, id_key, body_key]);
            let [name, arguments] = body?
                .as_object()?
                .get_each([NAME_KEY, shape.arguments_key()]);
            [kind, id, name, arguments]
        }
    };
    if let Some((_, wanted)) = history.kind {
        if !kind?.as_text()?.is(wanted) {
            return None;
        }
    }
    let tool = name?.as_str()?;
    if !tracked.contains(tool.as_ref()) {
        return None;
    }
    let id = id?.as_str()?;
    let recalled = recall
        .get(&id)
        .filter(|recalled| recalled.logged.tool == tool)?;
    let arguments = arguments?;
    if let Some(object) = arguments.as_object() {
        if object.contains_key(REASON_PARAM) {
            return None;
        }
        let close = arguments.closing_brace()?;
        let empty = object.len() == 0;
        let at = match position {
            _ if empty => close,
            // Before the first member's key.
            ReasonPosition::First => object.first_key_start()?,
            // After the last member's text, before the whitespace that closes the object.
            ReasonPosition::Last => text[..close].trim_end().len(),
        };
        splices.insert(at, recalled.member(empty, position));
        return Some(());
    }
    // Arguments that travel as the text of a JSON object (Chat, Responses).
    let written = arguments.as_str()?;
    let (start, end) = arguments.string_span()?;
    if written.trim().is_empty() {
        let object = format!("\"{{{}}}\"", recalled.member_in_string(true, position));
        splices.replace(start, end, object);
        return Some(());
    }
    let empty = match parser.parse(&written) {
        Ok(json) => {
            let object = json.as_object()?;
            if object.contains_key(REASON_PARAM) {
                return None;
            }
            object.len() == 0
        }
        // What the parser is not sure of, serde_json decides.
        Err(_) => match serde_json::from_str::<Value>(&written).ok()? {
            Value::Object(object) if !object.contains_key(REASON_PARAM) => object.is_empty(),
            _ => return None,
        },
    };
    let (from, to, text) = reason_into_string(&text[start..end], empty, recalled, position)?;
    splices.replace(start + from, start + to, text);
    Some(())
}

/// The splice that gives the object a JSON string's text holds (`"{…}"`, as written, escapes
/// and all; `empty` when the object has no members) the member `"reason":` and the recalled
/// reason at `position`, written in the string's escapes. When the string's brace on that side
/// is not plainly the object's (written as an escape, or after other escapes), the whole
/// string is written again, holding the object with its reason at its place.
fn reason_into_string<'r>(
    string: &str,
    empty: bool,
    recalled: &'r Recalled,
    position: ReasonPosition,
) -> Option<(usize, usize, Cow<'r, str>)> {
    let inside = string.strip_prefix('"')?.strip_suffix('"')?;
    let opening = inside.trim_start_matches([' ', '\t', '\n', '\r']);
    match position {
        ReasonPosition::First if !empty && opening.starts_with('{') => {
            // Just after the opening brace, in `string`'s positions (its quote is one byte).
            let at = 1 + (inside.len() - opening.len()) + 1;
            let member = recalled.member_in_string(empty, position);
            return Some((at, at, Cow::Borrowed(member)));
        }
        ReasonPosition::First if !empty => {
            return rewritten_with_reason(string, recalled, position)
        }
        _ => {}
    }
    if let Some(close) = inside.rfind('}') {
        let after = &inside[close + 1..];
        // What follows the brace holds no escape other than whitespace's: it is the closing one.
        let only_whitespace = after.bytes().all(|byte| byte.is_ascii_whitespace())
            || serde_json::from_str::<String>(&format!("\"{after}\""))
                .is_ok_and(|after| after.trim().is_empty());
        if only_whitespace {
            let member = recalled.member_in_string(empty, position);
            return Some((close + 1, close + 1, Cow::Borrowed(member)));
        }
    }
    rewritten_with_reason(string, recalled, position)
}

/// The splice that writes a JSON string holding an object again, with the recalled reason at
/// `position` in the object.
fn rewritten_with_reason<'r>(
    string: &str,
    recalled: &'r Recalled,
    position: ReasonPosition,
) -> Option<(usize, usize, Cow<'r, str>)> {
    let written: String = serde_json::from_str(string).ok()?;
    let Value::Object(mut object) = serde_json::from_str(&written).ok()? else {
        return None;
    };
    position.put(&mut object, recalled.logged.reason.clone());
    let text = Value::String(Value::Object(object).to_string()).to_string();
    Some((0, string.len(), Cow::Owned(text)))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;
    use serde_json::value::RawValue;

    use super::*;

    fn tracked(names: &[&str]) -> ToolNames {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    /// [`restore`] on a history written as `raw`, the reason last.
    fn restore_written(
        api: Api,
        raw: &RawValue,
        tracked: &ToolNames,
        recall: &Recall,
    ) -> Option<(String, usize)> {
        restore_written_at(api, raw, tracked, recall, ReasonPosition::Last)
    }

    /// [`restore`] on a history written as `raw`, the reason at `position`.
    fn restore_written_at(
        api: Api,
        raw: &RawValue,
        tracked: &ToolNames,
        recall: &Recall,
        position: ReasonPosition,
    ) -> Option<(String, usize)> {
        let mut parser = Parser::default();
        let history = InText {
            value: parser.parse(raw.get()).ok()?,
            text: raw.get(),
        };
        let splices = restore(
            api,
            &history,
            tracked,
            recall,
            &mut Parser::default(),
            position,
        )?;
        let given = splices.len();
        Some((String::from_utf8(splices.apply(raw.get())).unwrap(), given))
    }

    fn raw(value: &Value) -> Box<RawValue> {
        RawValue::from_string(value.to_string()).unwrap()
    }

    #[test]
    fn the_first_logged_reason_wins_and_the_oldest_is_forgotten_first() {
        let mut recall = Recall::with_limit(150);
        recall.note("a", "Bash", &json!("first"));
        recall.note("a", "Bash", &json!("second"));
        assert_eq!(recall.get("a").unwrap().logged.reason, json!("first"));
        // What a team's route answers with names the call it is about.
        assert_eq!(
            recall.get("a").unwrap().logged.call_id.as_deref(),
            Some("a")
        );
        for id in ["b", "c", "d", "e"] {
            recall.note(id, "Bash", &json!("0123456"));
        }
        assert!(recall.get("a").is_none());
        assert!(recall.get("e").is_some());
        assert!(recall.bytes <= 150);
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
        let (text, given) = restore_written(
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
        assert!(restore_written(
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
            restore_written(Api::OpenAiChat, &raw(&chat), &tracked(&["shell"]), &recall).unwrap();
        let restored: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            restored[0]["tool_calls"][0]["function"]["arguments"],
            "{\"command\":[\"wc\"],\"reason\":\"Count\"}"
        );
        let input = json!([{"type": "function_call", "call_id": "call_1", "name": "shell",
            "arguments": ""}, {"type": "function_call_output", "call_id": "call_1", "output": "1"}]);
        let (text, _) = restore_written(
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
    fn an_id_sent_back_with_only_its_letters_and_digits_finds_its_reason() {
        let mut recall = Recall::default();
        recall.note("call_abc-1", "exec", &json!("Leave a marker"));
        // OpenClaw sends earlier calls back as `callabc1`.
        let chat = json!([{"role": "assistant", "tool_calls": [{"id": "callabc1",
            "type": "function", "function": {"name": "exec", "arguments": "{\"command\":\"ls\"}"}}]}]);
        let (text, _) =
            restore_written(Api::OpenAiChat, &raw(&chat), &tracked(&["exec"]), &recall).unwrap();
        let restored: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            restored[0]["tool_calls"][0]["function"]["arguments"],
            "{\"command\":\"ls\",\"reason\":\"Leave a marker\"}"
        );
        // An id that is letters and digits already is its own, and never another's alias.
        recall.note("callabc1", "exec", &json!("Its own"));
        assert_eq!(recall.get("callabc1").unwrap().logged.reason, "Its own");
        // Two ids that give the same letters and digits: neither is found by them.
        recall.note("call_x-y", "exec", &json!("One"));
        recall.note("call_xy_", "exec", &json!("Other"));
        assert!(recall.get("callxy").is_none());
        assert_eq!(recall.get("call_x-y").unwrap().logged.reason, "One");
    }

    #[test]
    fn a_forgotten_id_takes_its_alias_with_it() {
        let mut recall = Recall::with_limit(150);
        recall.note("call_a", "exec", &json!("0123456789"));
        assert!(recall.get("calla").is_some());
        for id in ["call_b", "call_c", "call_d"] {
            recall.note(id, "exec", &json!("0123456789"));
        }
        assert!(recall.get("call_a").is_none());
        assert!(recall.get("calla").is_none());
        assert!(recall.get("calld").is_some());
    }

    #[test]
    fn with_the_reason_first_it_is_given_back_first() {
        let mut recall = Recall::default();
        recall.note("t", "Bash", &json!("Look"));
        recall.note("c", "shell", &json!("Count"));
        let first = ReasonPosition::First;
        let anthropic = RawValue::from_string(
            r#"[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{ "command": "ls", "n": 1 }}]}]"#
                .to_owned(),
        )
        .unwrap();
        let (text, given) = restore_written_at(
            Api::Anthropic,
            &anthropic,
            &tracked(&["Bash"]),
            &recall,
            first,
        )
        .unwrap();
        assert_eq!(given, 1);
        assert!(
            text.contains(r#""input":{ "reason":"Look","command": "ls", "n": 1 }"#),
            "{text}"
        );
        for (arguments, expected) in [
            (
                r#""{\"command\":[\"wc\"]}""#,
                r#""{\"reason\":\"Count\",\"command\":[\"wc\"]}""#,
            ),
            (r#"" {}""#, r#"" {\"reason\":\"Count\"}""#),
            (r#""""#, r#""{\"reason\":\"Count\"}""#),
            // A brace written as an escape: the string is written again, the reason first.
            (r#""\u007b\"a\":1}""#, r#""{\"reason\":\"Count\",\"a\":1}""#),
        ] {
            let chat = format!(
                r#"[{{"role":"assistant","tool_calls":[{{"id":"c","type":"function","function":{{"name":"shell","arguments":{arguments}}}}}]}}]"#
            );
            let raw = RawValue::from_string(chat.clone()).unwrap();
            let (text, _) =
                restore_written_at(Api::OpenAiChat, &raw, &tracked(&["shell"]), &recall, first)
                    .unwrap();
            assert_eq!(text, chat.replace(arguments, expected), "{arguments}");
        }
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
            assert!(restore_written(Api::OpenAiChat, &raw(&history), &shell, &recall).is_none());
        }
    }

    /// An Anthropic history with one call whose `input` is written as `input`, given its reason
    /// `a "b"`: the history's text afterwards.
    fn spliced_into_object(input: &str) -> String {
        let mut recall = Recall::default();
        recall.note("t", "Bash", &json!("a \"b\""));
        let history = format!(
            r#"[{{"role":"assistant","content":[{{"type":"tool_use","id":"t","name":"Bash","input":{input}}}]}}]"#
        );
        let raw = RawValue::from_string(history.clone()).unwrap();
        let (text, _) =
            restore_written(Api::Anthropic, &raw, &tracked(&["Bash"]), &recall).unwrap();
        let at = history.find(input).unwrap();
        assert!(text.starts_with(&history[..at]) && text.ends_with(&history[at + input.len()..]));
        text[at..text.len() - (history.len() - at - input.len())].to_owned()
    }

    /// The same for a Responses call whose `arguments` string is written as `string`: the
    /// string afterwards, and the object it holds.
    fn spliced_into_string(string: &str) -> (String, Value) {
        let mut recall = Recall::default();
        recall.note("c", "shell", &json!("a \"b\""));
        let history = format!(
            r#"[{{"type":"function_call","call_id":"c","name":"shell","arguments":{string}}}]"#
        );
        let raw = RawValue::from_string(history.clone()).unwrap();
        let (text, _) =
            restore_written(Api::OpenAiResponses, &raw, &tracked(&["shell"]), &recall).unwrap();
        let spliced = text[history.find(string).unwrap()..text.len() - 2].to_owned();
        let inner: String = serde_json::from_str(&spliced).unwrap();
        (spliced, serde_json::from_str(&inner).unwrap())
    }

    #[test]
    fn the_reason_is_spliced_into_the_arguments_text_as_written() {
        // Keys stay in their order, whitespace as written, the reason last.
        assert_eq!(
            spliced_into_object(r#"{"z":1,"a":2}"#),
            r#"{"z":1,"a":2,"reason":"a \"b\""}"#
        );
        assert_eq!(
            spliced_into_object("{ \"a\": [1, {}] \n}"),
            "{ \"a\": [1, {}],\"reason\":\"a \\\"b\\\"\" \n}"
        );
        assert_eq!(spliced_into_object("{}"), r#"{"reason":"a \"b\""}"#);
        assert_eq!(spliced_into_object("{ }"), r#"{ "reason":"a \"b\""}"#);
        let (spliced, value) = spliced_into_string(r#""{\"cmd\":\"echo \\\"}\\\"\"}""#);
        assert_eq!(value, json!({"cmd": "echo \"}\"", "reason": "a \"b\""}));
        assert!(
            spliced.starts_with(r#""{\"cmd\":\"echo \\\"}\\\"\","#),
            "{spliced}"
        );
        let (_, value) = spliced_into_string(r#""{}""#);
        assert_eq!(value, json!({"reason": "a \"b\""}));
        let (_, value) = spliced_into_string(r#""{\"a\":1}\n ""#);
        assert_eq!(value, json!({"a": 1, "reason": "a \"b\""}));
        let (spliced, value) = spliced_into_string(r#"" ""#);
        assert_eq!(value, json!({"reason": "a \"b\""}));
        assert_eq!(spliced, r#""{\"reason\":\"a \\\"b\\\"\"}""#);
        // A closing brace written as an escape: the string is written again, whole.
        let (spliced, value) = spliced_into_string(r#""{\"a\":{}\u007d""#);
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
        let (text, given) =
            restore_written(Api::Anthropic, &raw, &tracked(&["Bash"]), &recall).unwrap();
        assert_eq!(given, 1);
        assert_eq!(
            text,
            history.replace(r#""ls"}"#, r#""ls","reason":"Look"}"#)
        );
    }

    /// What restoring must give, written plainly on `Value`s with the rules every other part
    /// of the gateway uses ([`Api::of_call`], [`Api::called_name`], [`Api::call_id`],
    /// [`Api::arguments`]): the fast path must agree with it on every history.
    fn restored_by_the_rules(
        api: Api,
        history: &Value,
        tracked: &ToolNames,
        recall: &Recall,
        position: ReasonPosition,
    ) -> Value {
        let mut history = history.clone();
        let shape = api.history().unwrap();
        let Some(entries) = history.as_array_mut() else {
            return history;
        };
        for entry in entries {
            let calls: Vec<&mut Value> = match shape.calls {
                Some(key) => match entry.get_mut(key).and_then(Value::as_array_mut) {
                    Some(calls) => calls.iter_mut().collect(),
                    None => continue,
                },
                None => vec![entry],
            };
            for call in calls {
                if Api::of_call(call) != Some(api) {
                    continue;
                }
                let Some(tool) = api.called_name(call).filter(|tool| tracked.contains(*tool))
                else {
                    continue;
                };
                let Some(recalled) = api
                    .call_id(call)
                    .and_then(|id| recall.get(&id))
                    .filter(|recalled| recalled.logged.tool == tool)
                else {
                    continue;
                };
                let reason = recalled.logged.reason.clone();
                match api.arguments_mut(call) {
                    Some(Value::Object(object)) if !object.contains_key(REASON_PARAM) => {
                        position.put(object, reason);
                    }
                    Some(Value::String(text)) => {
                        let object = if text.trim().is_empty() {
                            Some(serde_json::Map::new())
                        } else {
                            match serde_json::from_str(text) {
                                Ok(Value::Object(object)) => Some(object),
                                _ => None,
                            }
                        };
                        if let Some(mut object) =
                            object.filter(|object| !object.contains_key(REASON_PARAM))
                        {
                            position.put(&mut object, reason);
                            *text = Value::Object(object).to_string();
                        }
                    }
                    _ => {}
                }
            }
        }
        history
    }

    /// The value with each string that holds a JSON object replaced by that object.
    fn objects_in_strings(value: Value) -> Value {
        match value {
            Value::String(text) => match serde_json::from_str(&text) {
                Ok(Value::Object(object)) => Value::Object(object),
                _ => Value::String(text),
            },
            Value::Array(items) => items.into_iter().map(objects_in_strings).collect(),
            Value::Object(object) => Value::Object(
                object
                    .into_iter()
                    .map(|(key, value)| (key, objects_in_strings(value)))
                    .collect(),
            ),
            other => other,
        }
    }

    fn a_call(api: Api) -> impl Strategy<Value = Value> {
        let kind = prop_oneof![
            Just("tool_use"),
            Just("server_tool_use"),
            Just("function_call"),
            Just("text")
        ];
        let id = prop_oneof![Just("a"), Just("b"), Just("c"), Just("zz")];
        let tool = prop_oneof![Just("Bash"), Just("Read"), Just("web_search")];
        let arguments = prop_oneof![
            Just(json!({})),
            Just(json!({"command": "ls"})),
            Just(json!({"command": "ls", "reason": "its own"})),
            Just(json!({"path": "a\"}\u{e9}", "n": [1, {}]})),
            Just(json!(["not", "an", "object"])),
            Just(json!(null)),
        ];
        let as_text = any::<bool>();
        (kind, id, tool, arguments, as_text).prop_map(
            move |(kind, id, tool, arguments, as_text)| {
                let arguments = match (api, as_text) {
                    (Api::Anthropic, false) => arguments,
                    (_, false) => Value::String(arguments.to_string()),
                    (_, true) if arguments.is_null() => json!(""),
                    (_, true) => Value::String(format!(" {} \n", arguments)),
                };
                match api {
                    Api::Anthropic => {
                        json!({"type": kind, "id": id, "name": tool, "input": arguments})
                    }
                    Api::OpenAiChat => json!({"id": id, "type": "function",
                    "function": {"name": tool, "arguments": arguments}}),
                    _ => json!({"type": kind, "call_id": id, "name": tool, "arguments": arguments}),
                }
            },
        )
    }

    fn a_history() -> impl Strategy<Value = (Api, Value)> {
        prop_oneof![
            Just(Api::Anthropic),
            Just(Api::OpenAiChat),
            Just(Api::OpenAiResponses)
        ]
        .prop_flat_map(|api| {
            let entry = prop::collection::vec(a_call(api), 0..4).prop_map(move |calls| match api {
                Api::Anthropic => json!({"role": "assistant", "content": calls}),
                Api::OpenAiChat => json!({"role": "assistant", "tool_calls": calls}),
                _ => calls.into_iter().next().unwrap_or(json!({"role": "user"})),
            });
            (
                Just(api),
                prop::collection::vec(entry, 0..6).prop_map(Value::Array),
            )
        })
    }

    proptest! {
        #[test]
        fn restoring_agrees_with_the_rules_on_values(
            (api, history) in a_history(),
            pretty in any::<bool>(),
            first in any::<bool>(),
        ) {
            let position = if first { ReasonPosition::First } else { ReasonPosition::Last };
            let mut recall = Recall::default();
            recall.note("a", "Bash", &json!("Look first"));
            recall.note("b", "Read", &json!({"not": "a string"}));
            recall.note("c", "Read", &json!("Read \"this\" \u{202e}"));
            let tracked = tracked(&["Bash", "Read"]);
            let text = if pretty {
                serde_json::to_string_pretty(&history).unwrap()
            } else {
                history.to_string()
            };
            let raw = RawValue::from_string(text.clone()).unwrap();
            let expected = restored_by_the_rules(api, &history, &tracked, &recall, position);
            // Arguments written as text keep the text they were written as: compared as the
            // objects they hold, written out so that the order of their keys counts too.
            let expected = objects_in_strings(expected).to_string();
            match restore_written_at(api, &raw, &tracked, &recall, position) {
                Some((restored, given)) => {
                    prop_assert!(given > 0);
                    let restored = serde_json::from_str::<Value>(&restored).unwrap();
                    prop_assert_eq!(objects_in_strings(restored).to_string(), expected);
                }
                None => prop_assert_eq!(objects_in_strings(history).to_string(), expected),
            }
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
        crate::reasons_log::read_end(&log, 10_000, &mut |logged| recall.note_logged(logged))
            .unwrap();
        assert!(recall.get("toolu_999").is_some());
        assert!(recall.get("toolu_0").is_none());
        assert!(recall.len() < 1000 && recall.len() > 50);
        let mut whole = Recall::default();
        crate::reasons_log::read_end(&log, RECALL_TAIL, &mut |logged| whole.note_logged(logged))
            .unwrap();
        assert_eq!(whole.len(), 1000);
    }
}
