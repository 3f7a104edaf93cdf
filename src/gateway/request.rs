//! A request body with its `tools` augmented and everything else left as the bytes it came as.
//!
//! The body is parsed once into the crate's borrowed tree, and what changes (the `tools`' value,
//! the reasons given back to the history's calls) is spliced into the text it came as: a
//! conversation of megabytes is copied once, never made `Value`s and written out again, and
//! whatever it holds (whitespace, escapes written one way or another, numbers beyond `f64`,
//! which serde_json reads when the crate's parser will not) reaches the model exactly as the
//! agent wrote it. The history's calls are read from the same tree.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::classifier::{without_the_tool_use_safeguard, Safeguards, SAFEGUARDS_KEY};
use super::history::{restore, InText, Lookup};
use super::splices::Splices;
use crate::apis::Api;
use crate::json::{Json, Object, Parser};
use crate::layer::wire::augment_tools;
use crate::layer::{ReasonPosition, ToolNames};

/// A request after the layer.
#[derive(Debug, Default)]
pub struct Augmented {
    /// The body to forward, when it changed.
    pub body: Option<Vec<u8>>,
    /// The tools whose calls lose their reason in the answer.
    pub tracked: ToolNames,
    /// The agent's session, when the body names it.
    pub session: Option<String>,
    /// Why the tools were left as they came, when the body could not be read.
    pub problem: Option<String>,
    /// How many history calls were given their reason back.
    pub restored: usize,
}

/// Augments the `tools` of a request body in the API's shape, the parameter at `position` among
/// each declaration's properties, and gives the calls of its history the reasons `recall`
/// remembers at the same place in their arguments (see `history`).
pub fn augment(
    api: Api,
    body: &[u8],
    recall: Option<&dyn Lookup>,
    position: ReasonPosition,
) -> Augmented {
    PARSERS.with(|parsers| {
        let Parsers {
            body: parser,
            arguments,
        } = &mut *parsers.borrow_mut();
        let augmented = augment_with(api, body, (recall, position), parser, arguments);
        parser.shrink_to(KEPT_NODES);
        arguments.shrink_to(KEPT_NODES);
        augmented
    })
}

/// Each thread's parsers: one for request bodies, one for arguments written as text. A body is
/// tens of thousands of nodes, its history sent again on every turn: kept, their buffers are
/// not grown again from nothing for every request.
struct Parsers {
    body: Parser,
    arguments: Parser,
}

impl Default for Parsers {
    fn default() -> Self {
        Parsers {
            // A key written twice: which one would the API read? serde_json keeps both.
            body: Parser::rejecting_duplicate_keys(),
            arguments: Parser::default(),
        }
    }
}

/// How many nodes a thread's parser keeps room for between requests: a body of a few
/// megabytes.
const KEPT_NODES: usize = 1 << 18;

thread_local! {
    static PARSERS: RefCell<Parsers> = RefCell::default();
}

/// The body is parsed once, by the crate's own parser: the top level's members as written,
/// and the history's calls from the same tree. What that parser does not read (a key written
/// twice, text it is not sure of), serde_json reads, and its verdict is final. Whatever
/// changes is a splice into the body as it came.
fn augment_with(
    api: Api,
    body: &[u8],
    (recall, position): (Option<&dyn Lookup>, ReasonPosition),
    parser: &mut Parser,
    arguments: &mut Parser,
) -> Augmented {
    let parsed = simdutf8::basic::from_utf8(body)
        .ok()
        .and_then(|text| Some((text, parser.parse(text).ok()?.as_object()?)));
    let object = match parsed {
        Some((text, members)) => TopLevel::of(text, members),
        None => match TopLevel::read_by_serde(body) {
            Ok(object) => object,
            Err(error) => {
                return Augmented {
                    problem: Some(format!("the request body is not a JSON object ({error})")),
                    ..Augmented::default()
                }
            }
        },
    };
    let session = match api {
        Api::Anthropic => object
            .get("metadata")
            .and_then(|metadata| super::anthropic::session_of(object.written(metadata))),
        _ => None,
    };
    let mut tools_at = object.members.iter().filter(|member| member.key == "tools");
    let (Some(tools), None) = (tools_at.next(), tools_at.next()) else {
        // No tools, or the key twice: which one would the API read? When in doubt, do not touch.
        return Augmented {
            session,
            ..Augmented::default()
        };
    };
    let Ok(Value::Array(declarations)) = serde_json::from_str::<Value>(object.written(tools))
    else {
        return Augmented {
            session,
            problem: Some("the request's `tools` is not an array".to_owned()),
            ..Augmented::default()
        };
    };
    let listing = augment_tools(api, &declarations, position);
    let mut splices = Splices::default();
    if listing.changed {
        let (start, end) = tools.span;
        splices.replace(start, end, Value::from(listing.tools).to_string());
    }
    if api == Api::Anthropic && !listing.tracked.is_empty() {
        if let Err(problem) = withhold_from_the_classifier(&object, &mut splices) {
            // A request whose classifier the gateway cannot turn off is not augmented: then no
            // reason reaches what the provider classifies.
            return Augmented {
                session,
                problem: Some(problem),
                ..Augmented::default()
            };
        }
    }
    let mut restored = 0;
    let history = api
        .history()
        .zip(recall.filter(|recall| !recall.is_empty()));
    if let Some((history, recall)) = history.filter(|_| !listing.tracked.is_empty()) {
        // The splices, and where the text their positions are in starts in the body.
        let given = object.get(history.key).and_then(|member| {
            let tracked = &listing.tracked;
            match member.parsed {
                Some(value) => {
                    let history = InText {
                        value,
                        text: object.text,
                    };
                    Some((
                        0,
                        restore(api, &history, tracked, recall, arguments, position)?,
                    ))
                }
                // Read by serde_json (rarely: a key written twice, text the parser is not sure
                // of): the history is parsed on its own, as a `Value` would read it.
                None => {
                    let written = object.written(member);
                    let mut parser = Parser::default();
                    let parsed = InText {
                        value: parser.parse(written).ok()?,
                        text: written,
                    };
                    let (start, _) = member.span;
                    Some((
                        start,
                        restore(api, &parsed, tracked, recall, arguments, position)?,
                    ))
                }
            }
        });
        if let Some((offset, given)) = given {
            restored = given.len();
            splices.append_at(offset, given);
        }
    }
    let body = (!splices.is_empty()).then(|| splices.apply(object.text));
    Augmented {
        body,
        tracked: listing.tracked,
        session,
        problem: None,
        restored,
    }
}

/// Notes the splices that take the tool-use safeguard off the request (see `classifier`): the
/// entry out of `safeguards`, or the whole member when nothing else remains in it. A
/// `safeguards` written twice is an error: which one would the API read?
fn withhold_from_the_classifier(
    object: &TopLevel<'_>,
    splices: &mut Splices<'_>,
) -> Result<(), String> {
    let mut at = object
        .members
        .iter()
        .enumerate()
        .filter(|(_, member)| member.key == SAFEGUARDS_KEY);
    let Some((index, member)) = at.next() else {
        return Ok(());
    };
    if at.next().is_some() {
        return Err(format!("the request's `{SAFEGUARDS_KEY}` is written twice"));
    }
    let (start, end) = member.span;
    match without_the_tool_use_safeguard(object.written(member)) {
        Safeguards::AsItCame => {}
        Safeguards::Kept(rest) => splices.replace(start, end, rest),
        Safeguards::Dropped => {
            let (start, end) = object.member_whole(index);
            splices.replace(start, end, "");
        }
    }
    Ok(())
}

/// One member of a JSON object's top level.
struct Member<'a> {
    key: String,
    /// Where its value is written in the body.
    span: (usize, usize),
    /// The value as the crate's parser read it; `None` when serde_json read the body.
    parsed: Option<Json<'a>>,
}

/// The top level of a JSON object: its text, and its members in order.
struct TopLevel<'a> {
    text: &'a str,
    members: Vec<Member<'a>>,
}

impl<'a> TopLevel<'a> {
    /// The members of an object the crate's parser read from `text`.
    fn of(text: &'a str, object: Object<'a>) -> TopLevel<'a> {
        let members = object
            .members_as_written()
            .map(|(key, value, (start, end))| Member {
                key: key.decode().into_owned(),
                span: (start, end),
                parsed: Some(value),
            });
        TopLevel {
            text,
            members: members.collect(),
        }
    }

    /// The members as serde_json reads them, each value where its raw text lies in the body.
    fn read_by_serde(body: &'a [u8]) -> serde_json::Result<TopLevel<'a>> {
        let RawMembers(raw) = serde_json::from_slice(body)?;
        // A body serde_json read whole is UTF-8: its raw values are `str`s borrowed from it.
        let text = std::str::from_utf8(body).map_err(de::Error::custom)?;
        let members = raw.into_iter().map(|(key, written)| {
            let start = written.as_ptr() as usize - text.as_ptr() as usize;
            Member {
                key,
                span: (start, start + written.len()),
                parsed: None,
            }
        });
        Ok(TopLevel {
            text,
            members: members.collect(),
        })
    }

    fn get(&self, key: &str) -> Option<&Member<'a>> {
        self.members.iter().find(|member| member.key == key)
    }

    /// The text that goes when the member at `index` is taken out of the object, leaving it
    /// valid and every other byte as it was: from the end of the member before to the end of
    /// this one's value (its comma, key and value), or for the first member, from the brace to
    /// the comma after it.
    fn member_whole(&self, index: usize) -> (usize, usize) {
        let (_, end) = self.members[index].span;
        if let Some(before) = index.checked_sub(1) {
            let (_, previous_end) = self.members[before].span;
            return (previous_end, end);
        }
        // The object's text is JSON: whitespace, then its brace.
        let brace = self.text.find('{').map_or(0, |at| at + 1);
        let rest = &self.text[end..];
        let after = match rest.trim_start_matches([' ', '\t', '\n', '\r']) {
            more if more.starts_with(',') => self.text.len() - more.len() + 1,
            _ => end,
        };
        (brace, after)
    }

    /// A member's value as written.
    fn written(&self, member: &Member<'a>) -> &'a str {
        let (start, end) = member.span;
        &self.text[start..end]
    }
}

/// Each key of a JSON object and its value as written, as serde_json reads them.
struct RawMembers<'a>(Vec<(String, &'a str)>);

impl<'de: 'a, 'a> Deserialize<'de> for RawMembers<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = RawMembers<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<RawMembers<'de>, M::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value::<&'de RawValue>()?.get()));
                }
                Ok(RawMembers(members))
            }
        }
        deserializer
            .deserialize_map(Keys)
            .map_err(|error: D::Error| de::Error::custom(error))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::gateway::history::Recall;
    use crate::layer::{reason_property, REASON_PARAM};

    fn bash() -> Value {
        json!({"name": "Bash", "input_schema": {"type": "object",
            "properties": {"command": {"type": "string"}}, "required": ["command"]}})
    }

    #[test]
    fn only_the_tools_change_and_the_rest_keeps_its_bytes() {
        let body = format!(
            r#"{{ "model" : "m", "max_tokens": 1e400, "messages": [{{"role":"user","content":"caf\u00e9 \ud83d\ude00"}}], "tools": [{}] }}"#,
            bash()
        );
        let augmented = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last);
        let out = String::from_utf8(augmented.body.expect("augmented")).unwrap();
        // Everything around the tools' value is as it came, spaces and escapes and all.
        let tools_at = body.find(r#""tools": "#).unwrap() + r#""tools": "#.len();
        assert!(out.starts_with(&body[..tools_at]), "{out}");
        assert!(out.ends_with(" }"), "{out}");
        let tools: Value = serde_json::from_str(&out[tools_at..out.len() - 2]).unwrap();
        assert_eq!(
            tools[0]["input_schema"]["properties"][REASON_PARAM],
            reason_property()
        );
        assert_eq!(tools[0]["input_schema"]["required"], json!(["command"]));
        assert_eq!(augmented.tracked.into_iter().collect::<Vec<_>>(), ["Bash"]);
    }

    #[test]
    fn the_same_body_gives_the_same_bytes() {
        let body = json!({"model": "m", "tools": [bash(), {"type": "web_search_20250305",
            "name": "web_search", "max_uses": 5}]})
        .to_string();
        let first = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last)
            .body
            .unwrap();
        for _ in 0..10 {
            assert_eq!(
                augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last)
                    .body
                    .unwrap(),
                first
            );
        }
    }

    #[test]
    fn server_tools_and_own_reasons_are_left_alone() {
        let own = json!({"name": "Explain", "input_schema": {"type": "object",
            "properties": {"reason": {"type": "string"}}}});
        let server = json!({"type": "web_search_20250305", "name": "web_search"});
        let body = json!({"tools": [own, server]}).to_string();
        let augmented = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last);
        assert_eq!(augmented.body, None);
        assert!(augmented.tracked.is_empty());
    }

    #[test]
    fn bodies_without_readable_tools_go_on_as_they_came() {
        for body in [
            &b"not json"[..],
            b"[1,2]",
            b"{\"model\":\"m\"}",
            b"{\"tools\":\"all\"}",
            b"{\"tools\":[],\"tools\":[{\"name\":\"a\",\"input_schema\":{}}]}",
            b"{\"tools\":[]}",
        ] {
            let augmented = augment(Api::Anthropic, body, None, ReasonPosition::Last);
            assert_eq!(augmented.body, None, "{}", String::from_utf8_lossy(body));
            assert!(augmented.tracked.is_empty());
        }
        assert!(
            augment(Api::Anthropic, b"not json", None, ReasonPosition::Last)
                .problem
                .is_some()
        );
        assert!(augment(
            Api::Anthropic,
            b"{\"tools\":\"all\"}",
            None,
            ReasonPosition::Last
        )
        .problem
        .is_some());
    }

    /// What Claude Code 2.1.328 sends in auto mode, around the tools.
    const SAFEGUARD: &str =
        r#"{"type":"dangerous_tool_use","classifier_context":{"rules":["no rm -rf"]},"x":1}"#;

    fn with_safeguards(safeguards: &str, tools: &[Value]) -> String {
        format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":"caf\u00e9"}}],"tools":{},"max_tokens":1e400, "safeguards" : {safeguards} ,"stream":true}}"#,
            Value::from(tools.to_vec())
        )
    }

    #[test]
    fn the_tool_use_safeguard_goes_and_every_other_byte_stays() {
        let body = with_safeguards(&format!("[{SAFEGUARD}]"), &[bash()]);
        let out = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last);
        let out = String::from_utf8(out.body.unwrap()).unwrap();
        // Nothing remains of it, key and all, and the rest is as the agent wrote it.
        let augmented_tools = augment(
            Api::Anthropic,
            with_safeguards("[]", &[bash()]).as_bytes(),
            None,
            ReasonPosition::Last,
        );
        let expected = String::from_utf8(augmented_tools.body.unwrap())
            .unwrap()
            .replace(r#", "safeguards" : []"#, "");
        assert_eq!(out, expected);
        assert!(
            out.ends_with(r#""max_tokens":1e400 ,"stream":true}"#),
            "{out}"
        );
        assert!(!out.contains("safeguards") && !out.contains("dangerous"));
        // The same body, the same bytes, every time: the prompt cache keeps hitting.
        for _ in 0..5 {
            let again = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last)
                .body
                .unwrap();
            assert_eq!(again, out.as_bytes());
        }
    }

    #[test]
    fn other_safeguards_stay_as_they_were_written() {
        let other = r#"{"type" : "prompt_injection",  "level":2}"#;
        let body = with_safeguards(&format!("[ {SAFEGUARD} , {other} ]"), &[bash()]);
        let out = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last)
            .body
            .unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains(&format!(r#" "safeguards" : [{other}] ,"stream""#)),
            "{out}"
        );
        assert!(!out.contains("dangerous_tool_use"));
    }

    #[test]
    fn the_safeguard_goes_from_any_place_in_the_object() {
        let safeguards = format!("[{SAFEGUARD}]");
        let tools =
            Value::from(augment_tools(Api::Anthropic, &[bash()], ReasonPosition::Last).tools)
                .to_string();
        for (body, expected) in [
            (
                format!(" {{ \"safeguards\":{safeguards} ,\n\"tools\":[]}}"),
                " {\n\"tools\":[]}",
            ),
            (
                format!("{{\"tools\":[], \"safeguards\":{safeguards}\n}}"),
                "{\"tools\":[]\n}",
            ),
        ] {
            let body = body.replace("\"tools\":[]", &format!("\"tools\":[{}]", bash()));
            let out = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last)
                .body
                .unwrap();
            let out = String::from_utf8(out).unwrap();
            assert_eq!(out.replace(&tools, "[]"), expected, "{out}");
            serde_json::from_str::<Value>(&out).expect("still JSON");
        }
    }

    #[test]
    fn the_layers_own_reason_is_tracked_and_its_safeguard_goes_too() {
        let mut echo = bash();
        echo["name"] = json!("mcp__everything__echo");
        echo["input_schema"]["properties"][REASON_PARAM] = reason_property();
        let body = with_safeguards(&format!("[{SAFEGUARD}]"), &[echo]);
        let augmented = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last);
        assert_eq!(
            augmented.tracked.into_iter().collect::<Vec<_>>(),
            ["mcp__everything__echo"]
        );
        // Its declaration went on as it came: only the safeguard changed.
        let out = String::from_utf8(augmented.body.unwrap()).unwrap();
        assert_eq!(
            out,
            body.replace(&format!(r#", "safeguards" : [{SAFEGUARD}]"#), "")
        );
    }

    #[test]
    fn a_request_with_no_augmented_tool_keeps_its_safeguards() {
        let own = json!({"name": "Explain", "input_schema": {"type": "object",
            "properties": {"reason": {"type": "string"}}}});
        for tools in [vec![], vec![own]] {
            let body = with_safeguards(&format!("[{SAFEGUARD}]"), &tools);
            let augmented = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last);
            assert_eq!(augmented.body, None);
            assert!(augmented.tracked.is_empty());
        }
        // Other APIs have no such member: a key of that name is theirs.
        let chat = json!({"tools": [{"type": "function", "function": {"name": "shell",
            "parameters": {"type": "object"}}}], "safeguards": [SAFEGUARD]})
        .to_string();
        let out = augment(Api::OpenAiChat, chat.as_bytes(), None, ReasonPosition::Last)
            .body
            .unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("dangerous_tool_use"));
    }

    #[test]
    fn safeguards_written_twice_leave_the_request_unaugmented() {
        let body = with_safeguards(&format!("[{SAFEGUARD}]"), &[bash()]).replace(
            r#""stream":true"#,
            &format!(r#""safeguards":[{SAFEGUARD}]"#),
        );
        let augmented = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last);
        assert_eq!(augmented.body, None);
        assert!(augmented.tracked.is_empty());
        assert!(augmented.problem.unwrap().contains("safeguards"));
    }

    /// Each key of a top level, and where its value is written.
    type Written = Vec<(String, (usize, usize))>;

    /// The top level as the crate's parser reads it, and as serde_json does.
    fn both_readings(body: &str) -> (Written, Written) {
        let members = |object: TopLevel<'_>| {
            object
                .members
                .into_iter()
                .map(|member| (member.key, member.span))
                .collect::<Vec<_>>()
        };
        let mut parser = Parser::rejecting_duplicate_keys();
        let tree = parser.parse(body).unwrap().as_object().unwrap();
        let by_serde = TopLevel::read_by_serde(body.as_bytes()).unwrap();
        (members(TopLevel::of(body, tree)), members(by_serde))
    }

    #[test]
    fn the_crate_parser_reads_the_top_level_as_serde_json_does() {
        let body = format!(
            "{{ \"\\u0074ools\" :\n[{}] ,\"n\":1.5e3,\"t\":true,\"f\" : false,\"z\":null,\"s\":\"a\\\"}}\",\"o\":{{\"a\":[]}} }}\n",
            bash()
        );
        let (tree, serde) = both_readings(&body);
        assert_eq!(tree, serde);
        assert_eq!(tree[0].0, "tools");
        assert_eq!(tree.len(), 7);
        // Augmented the same way whichever read it: only the tools' value is new.
        let augmented = augment(Api::Anthropic, body.as_bytes(), None, ReasonPosition::Last)
            .body
            .unwrap();
        let text = String::from_utf8(augmented).unwrap();
        let (start, end) = tree[0].1;
        assert!(text.starts_with(&body[..start]), "{text}");
        assert!(text.ends_with(&body[end..]), "{text}");
    }

    #[test]
    fn a_body_with_a_key_written_twice_anywhere_is_read_by_serde_json() {
        // Inside the history: the crate's parser refuses it, serde_json reads the top level, and
        // the history is still given its reasons.
        let mut recall = Recall::default();
        recall.note("toolu_1", "Bash", &json!("Look"));
        let body = json!({"messages": [{"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]}],
            "tools": [bash()]})
        .to_string()
        .replace(
            r#""role":"assistant""#,
            r#""role":"user","role":"assistant""#,
        );
        assert!(Parser::rejecting_duplicate_keys().parse(&body).is_err());
        let augmented = augment(
            Api::Anthropic,
            body.as_bytes(),
            Some(&recall),
            ReasonPosition::Last,
        );
        assert_eq!(augmented.restored, 1);
        let text = String::from_utf8(augmented.body.unwrap()).unwrap();
        assert!(text.contains(r#""role":"user","role":"assistant""#));
        assert!(text.contains(r#"{"command":"ls","reason":"Look"}"#));
    }

    #[test]
    fn each_api_gets_the_reason_at_the_place_asked_and_the_answer_is_stripped() {
        let schema = json!({"type": "object",
            "properties": {"command": {"type": "string"}, "cwd": {"type": "string"}},
            "required": ["command"]});
        let bodies = [
            (
                Api::Anthropic,
                "/v1/messages",
                json!({"model": "m", "tools": [{"name": "Bash", "input_schema": schema}]}),
                "/tools/0/input_schema/properties",
            ),
            (
                Api::OpenAiChat,
                "/v1/chat/completions",
                json!({"model": "m", "tools": [{"type": "function",
                    "function": {"name": "Bash", "parameters": schema}}]}),
                "/tools/0/function/parameters/properties",
            ),
            (
                Api::OpenAiResponses,
                "/v1/responses",
                json!({"model": "m", "tools": [{"type": "function", "name": "Bash",
                    "parameters": schema}]}),
                "/tools/0/parameters/properties",
            ),
            (
                Api::Gemini,
                "/v1beta/models/m:generateContent",
                json!({"tools": [{"functionDeclarations": [{"name": "Bash",
                    "parametersJsonSchema": schema}]}]}),
                "/tools/0/functionDeclarations/0/parametersJsonSchema/properties",
            ),
        ];
        for (api, path, body, properties) in bodies {
            for (position, order) in [
                (ReasonPosition::First, ["reason", "command", "cwd"]),
                (ReasonPosition::Last, ["command", "cwd", "reason"]),
            ] {
                let body = body.to_string();
                let (exchange, augmented) =
                    crate::gateway::Exchange::new(api, path, body.as_bytes(), true, None, position);
                let augmented = augmented.expect("augmented");
                // The same body gives the same bytes.
                let (_, again) =
                    crate::gateway::Exchange::new(api, path, body.as_bytes(), true, None, position);
                assert_eq!(again.as_ref(), Some(&augmented), "{api:?}");
                let sent: Value = serde_json::from_slice(&augmented).unwrap();
                let keys: Vec<&String> = sent
                    .pointer(properties)
                    .and_then(Value::as_object)
                    .expect("properties")
                    .keys()
                    .collect();
                assert_eq!(keys, order, "{api:?} {position:?}");
                assert_eq!(
                    sent.pointer(&properties.replace("properties", "required")),
                    Some(&json!(["command"])),
                    "{api:?}"
                );
                assert_eq!(exchange.tracked().len(), 1, "{api:?}");
            }
        }
    }
}
