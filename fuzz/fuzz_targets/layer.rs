//! The layer: for any declaration list and any calls, the rules of SPEC §1 hold.
//!
//! Declarations and calls are built from the fuzzer's bytes, mostly in the envelopes the layer
//! knows (Gemini tools and their grouped declarations among them), from keys that mean something
//! to them, with arbitrary JSON in every slot. What must
//! happen is written again here from the spec, not taken from the crate:
//!
//! - a declaration the layer can read gains exactly the `reason` property (and `type`/`properties`
//!   where missing), `required` never changes, anything else comes back exactly as it was;
//! - the tracked names are the augmented ones less any name some declaration left alone;
//! - a call is stripped exactly when the rules say, and then equals its input minus `reason`;
//!   every other call comes back as its input;
//! - `Reasons::execute` answers one result per call, in order, whatever the inner provider does.
#![no_main]

use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::{Mutex, Once};

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use reasons::layer::{
    reason_property, strip_call, ListError, Listing, Provider, Reasons, ToolResult, REASON_PARAM,
};
use serde_json::{Map, Value};

const KEYS: &[&str] = &[
    "reason",
    "strict",
    "Reason",
    "reasons",
    "name",
    "type",
    "function",
    "parameters",
    "inputSchema",
    "input_schema",
    "parametersJsonSchema",
    "functionDeclarations",
    "functionCall",
    "args",
    "properties",
    "required",
    "arguments",
    "input",
    "params",
    "method",
    "id",
    "call_id",
    "path",
    "",
];
const STRINGS: &[&str] = &[
    "a",
    "b",
    "c",
    "reason",
    "",
    " ",
    "\n\t",
    "object",
    "string",
    "function",
    "function_call",
    "tool_use",
    "tools/call",
    "tools/list",
    "{\"reason\":1}",
    "{}",
    "{\"a\":1,\"reason\":\"r\"}",
    "[1]",
    "null",
    "{\"reason\"",
];
const NAMES: &[&str] = &["a", "b", "c", "reason", ""];

fn pick<'a>(u: &mut Unstructured, from: &[&'a str]) -> Result<&'a str> {
    Ok(*u.choose(from)?)
}

fn string(u: &mut Unstructured, depth: u32) -> Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 => pick(u, STRINGS)?.to_owned(),
        1 => u.arbitrary::<String>()?,
        // A JSON-encoded object, the way a model's arguments travel; each level of encoding
        // escapes the one inside, so it is bounded by `depth` like any nesting.
        2 if depth > 0 => {
            let object = Value::Object(object(u, depth - 1)?);
            match u.int_in_range(0..=2)? {
                0 => object.to_string(),
                1 => serde_json::to_string_pretty(&object).unwrap_or_default(),
                _ => format!(" \n{object}\t "),
            }
        }
        _ => pick(u, NAMES)?.to_owned(),
    })
}

fn value(u: &mut Unstructured, depth: u32) -> Result<Value> {
    let most = if depth == 0 { 4 } else { 6 };
    Ok(match u.int_in_range(0..=most)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => match u.arbitrary::<bool>()? {
            true => Value::from(u.arbitrary::<i64>()?),
            false => {
                serde_json::Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number)
            }
        },
        3 | 4 => Value::String(string(u, depth.saturating_sub(1))?),
        5 => {
            let length = u.int_in_range(0..=3)?;
            let items = (0..length)
                .map(|_| value(u, depth - 1))
                .collect::<Result<_>>()?;
            Value::Array(items)
        }
        _ => Value::Object(object(u, depth - 1)?),
    })
}

fn object(u: &mut Unstructured, depth: u32) -> Result<Map<String, Value>> {
    let length = u.int_in_range(0..=4)?;
    let mut map = Map::new();
    for _ in 0..length {
        let key = match u.int_in_range(0..=4)? {
            0 => u.arbitrary::<String>()?,
            _ => pick(u, KEYS)?.to_owned(),
        };
        map.insert(key, value(u, depth)?);
    }
    Ok(map)
}

/// Puts a value at `key`, most of the time.
fn maybe(
    u: &mut Unstructured,
    map: &mut Map<String, Value>,
    key: &str,
    make: impl FnOnce(&mut Unstructured) -> Result<Value>,
) -> Result<()> {
    if u.ratio(7, 8)? {
        let value = make(u)?;
        map.insert(key.to_owned(), value);
    }
    Ok(())
}

fn name(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.ratio(7, 8)? {
        true => Value::from(pick(u, NAMES)?),
        false => value(u, 1)?,
    })
}

fn schema(u: &mut Unstructured) -> Result<Value> {
    if u.ratio(1, 8)? {
        return value(u, 2);
    }
    let mut schema = object(u, 1)?;
    let kind = match u.ratio(1, 2)? {
        true => Value::from(pick(u, &["object", "array"])?),
        false => value(u, 1)?,
    };
    maybe(u, &mut schema, "type", |_| Ok(kind))?;
    let mut properties = object(u, 1)?;
    if u.ratio(1, 4)? {
        let own = if u.arbitrary()? {
            reason_property()
        } else {
            value(u, 1)?
        };
        properties.insert(REASON_PARAM.to_owned(), own);
    }
    let properties = if u.ratio(1, 8)? {
        value(u, 1)?
    } else {
        Value::Object(properties)
    };
    maybe(u, &mut schema, "properties", |_| Ok(properties))?;
    let required = if u.ratio(1, 8)? {
        value(u, 1)?
    } else {
        let length = u.int_in_range(0..=3)?;
        let names = (0..length)
            .map(|_| Ok(Value::from(pick(u, &["path", "reason", "x"])?)))
            .collect::<Result<_>>()?;
        Value::Array(names)
    };
    maybe(u, &mut schema, "required", |_| Ok(required))?;
    Ok(Value::Object(schema))
}

fn declaration(u: &mut Unstructured, depth: u32) -> Result<Value> {
    let mut outer = object(u, 1)?;
    match u.int_in_range(0..=6)? {
        0 => {
            let mut function = object(u, 1)?;
            maybe(u, &mut function, "name", name)?;
            maybe(u, &mut function, "parameters", schema)?;
            outer.insert("type".into(), Value::from("function"));
            outer.insert("function".into(), Value::Object(function));
        }
        1 => {
            outer.insert("type".into(), Value::from("function"));
            maybe(u, &mut outer, "name", name)?;
            maybe(u, &mut outer, "parameters", schema)?;
        }
        2 => {
            maybe(u, &mut outer, "name", name)?;
            maybe(u, &mut outer, "inputSchema", schema)?;
        }
        3 => {
            maybe(u, &mut outer, "name", name)?;
            maybe(u, &mut outer, "input_schema", schema)?;
        }
        4 => {
            // Gemini: either schema key, now and then both.
            maybe(u, &mut outer, "name", name)?;
            let key = *u.choose(&[
                "parametersJsonSchema",
                "parameters_json_schema",
                "parameters",
            ])?;
            maybe(u, &mut outer, key, schema)?;
            if u.ratio(1, 8)? {
                outer.insert("parametersJsonSchema".into(), schema(u)?);
            }
        }
        5 if depth > 0 => {
            // A Gemini tool grouping declarations, beside whatever else.
            let group: Vec<Value> = (0..u.int_in_range(0..=3)?)
                .map(|_| declaration(u, depth - 1))
                .collect::<Result<_>>()?;
            let key = *u.choose(&["functionDeclarations", "function_declarations"])?;
            outer.insert(key.into(), Value::Array(group));
        }
        _ => return value(u, 3),
    }
    Ok(Value::Object(outer))
}

fn arguments(u: &mut Unstructured) -> Result<Value> {
    let mut object = object(u, 1)?;
    if u.ratio(3, 4)? {
        let reason = value(u, 1)?;
        object.insert(REASON_PARAM.to_owned(), reason);
    }
    Ok(match u.int_in_range(0..=4)? {
        0 | 1 => Value::Object(object),
        2 => Value::String(Value::Object(object).to_string()),
        3 => {
            Value::String(serde_json::to_string_pretty(&Value::Object(object)).unwrap_or_default())
        }
        _ => value(u, 2)?,
    })
}

fn call(u: &mut Unstructured) -> Result<Value> {
    let mut outer = object(u, 1)?;
    let mut body = Map::new();
    maybe(u, &mut body, "name", name)?;
    let id = match u.arbitrary::<bool>()? {
        true => Value::from(u.arbitrary::<String>()?),
        false => value(u, 0)?,
    };
    match u.int_in_range(0..=7)? {
        0 => {
            maybe(u, &mut body, "arguments", arguments)?;
            outer.insert("id".into(), id);
            outer.insert("type".into(), Value::from("function"));
            outer.insert("function".into(), Value::Object(body));
        }
        1 => {
            maybe(u, &mut body, "arguments", arguments)?;
            outer.insert("call_id".into(), id);
            outer.insert("type".into(), Value::from("function_call"));
            outer.extend(body);
        }
        2 => {
            maybe(u, &mut body, "input", arguments)?;
            outer.insert("id".into(), id);
            outer.insert("type".into(), Value::from("tool_use"));
            outer.extend(body);
        }
        3 => {
            maybe(u, &mut body, "arguments", arguments)?;
            outer.insert("jsonrpc".into(), Value::from("2.0"));
            outer.insert("id".into(), id);
            outer.insert("method".into(), Value::from("tools/call"));
            outer.insert("params".into(), Value::Object(body));
        }
        4 => {
            maybe(u, &mut body, "arguments", arguments)?;
            outer.extend(body);
        }
        5 => {
            // A Gemini part: the call under `functionCall`, its id inside, often none.
            maybe(u, &mut body, "args", arguments)?;
            if u.arbitrary()? {
                body.insert("id".into(), id);
            }
            outer.insert("functionCall".into(), Value::Object(body));
        }
        6 => {
            // A bare Gemini `functionCall`: a call only while it holds nothing else.
            maybe(u, &mut body, "args", arguments)?;
            if u.arbitrary()? {
                body.insert("id".into(), id);
            }
            if u.arbitrary()? {
                outer = body;
            } else {
                outer.extend(body);
            }
        }
        _ => return value(u, 3),
    }
    Ok(Value::Object(outer))
}

// ---------------------------------------------------------------------------------------------
// The oracle: SPEC §1, written again.

/// Where a declaration keeps its name and schema: `function` wins, then `inputSchema`,
/// `input_schema`, a Gemini `parametersJsonSchema` (in either spelling: then exactly one schema
/// key, else no schema at all), `parameters`.
fn declaration_body(declaration: &Value) -> Option<(&Map<String, Value>, Option<&'static str>)> {
    let object = declaration.as_object()?;
    if object.contains_key("function") {
        Some((object.get("function")?.as_object()?, Some("parameters")))
    } else if object.contains_key("inputSchema") {
        Some((object, Some("inputSchema")))
    } else if object.contains_key("input_schema") {
        Some((object, Some("input_schema")))
    } else if object.contains_key("parametersJsonSchema")
        || object.contains_key("parameters_json_schema")
    {
        let keys: Vec<&'static str> = [
            "parametersJsonSchema",
            "parameters_json_schema",
            "parameters",
        ]
        .into_iter()
        .filter(|key| object.contains_key(*key))
        .collect();
        Some((object, (keys.len() == 1).then(|| keys[0])))
    } else if object.contains_key("parameters") {
        Some((object, Some("parameters")))
    } else {
        None
    }
}

/// The declarations of a Gemini tool, and the key they sit under.
fn gemini_group(declaration: &Value) -> Option<(&'static str, &Vec<Value>)> {
    let object = declaration.as_object()?;
    ["functionDeclarations", "function_declarations"]
        .into_iter()
        .find_map(|key| Some((key, object.get(key)?.as_array()?)))
}

fn declared_name(declaration: &Value) -> Option<&str> {
    declaration_body(declaration)
        .and_then(|(body, _)| body.get("name")?.as_str())
        .or_else(|| declaration.get("name")?.as_str())
}

/// The declaration as the layer must publish it, or `None` when it must be left alone.
fn expected_augmentation(declaration: &Value) -> Option<Value> {
    let (body, key) = declaration_body(declaration)?;
    body.get("name")?.as_str()?;
    let key = key?;
    // A strict schema cannot gain an optional property.
    if body.get("strict") == Some(&Value::Bool(true)) {
        return None;
    }
    let schema = body.get(key)?.as_object()?;
    match schema.get("properties") {
        None => {}
        Some(Value::Object(properties)) if !properties.contains_key(REASON_PARAM) => {}
        Some(_) => return None,
    }
    let required = schema.get("required").and_then(Value::as_array);
    if required.is_some_and(|names| names.iter().any(|name| name == REASON_PARAM)) {
        return None;
    }
    let mut expected = declaration.clone();
    let body = if declaration.get("function").is_some() {
        expected.get_mut("function")?
    } else {
        &mut expected
    };
    let schema = body.get_mut(key)?.as_object_mut()?;
    if !schema.get("type").is_some_and(Value::is_string) {
        schema.insert("type".into(), Value::from("object"));
    }
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?
        .insert(REASON_PARAM.into(), reason_property());
    Some(expected)
}

/// The envelopes of SPEC §1 a call can come in.
#[derive(Clone, Copy, PartialEq)]
enum CallEnvelope {
    OpenAi,
    Responses,
    Anthropic,
    /// A `tools/call` request.
    McpRequest,
    /// The `params` of one, on its own.
    McpParams,
    /// `{"functionCall":{"name","args","id"?}}`.
    GeminiPart,
    /// `{"name","args","id"?}` and nothing else.
    GeminiBare,
}

fn call_envelope(call: &Value) -> Option<CallEnvelope> {
    let object = call.as_object()?;
    if object.get("function").is_some_and(Value::is_object) {
        return Some(CallEnvelope::OpenAi);
    }
    if object.get("functionCall").is_some_and(Value::is_object) {
        return Some(CallEnvelope::GeminiPart);
    }
    match object.get("type").and_then(Value::as_str) {
        Some("function_call") => return Some(CallEnvelope::Responses),
        Some("tool_use") => return Some(CallEnvelope::Anthropic),
        _ => {}
    }
    match object.get("method") {
        Some(method) if method == "tools/call" => Some(CallEnvelope::McpRequest),
        // A JSON-RPC message with any other method is no call, whatever else it holds.
        Some(_) => None,
        None if object.contains_key("name") && object.contains_key("arguments") => {
            Some(CallEnvelope::McpParams)
        }
        None => (object.contains_key("name")
            && object.contains_key("args")
            && object
                .keys()
                .all(|key| ["name", "args", "id"].contains(&key.as_str())))
        .then_some(CallEnvelope::GeminiBare),
    }
}

/// Where a call keeps its name and arguments.
fn call_parts(call: &Value) -> Option<(&Map<String, Value>, &'static str)> {
    Some(match call_envelope(call)? {
        CallEnvelope::OpenAi => (call.get("function")?.as_object()?, "arguments"),
        CallEnvelope::McpRequest => (call.get("params")?.as_object()?, "arguments"),
        CallEnvelope::Anthropic => (call.as_object()?, "input"),
        CallEnvelope::Responses | CallEnvelope::McpParams => (call.as_object()?, "arguments"),
        CallEnvelope::GeminiPart => (call.get("functionCall")?.as_object()?, "args"),
        CallEnvelope::GeminiBare => (call.as_object()?, "args"),
    })
}

/// The call the tool's server must receive, and the reason taken off, when the rules strip it.
fn expected_strip(call: &Value, tracked: &BTreeSet<String>) -> Option<(Value, Value)> {
    let (body, key) = call_parts(call)?;
    let name = body.get("name")?.as_str()?;
    if !tracked.contains(name) {
        return None;
    }
    let (stripped, reason) = match body.get(key)? {
        Value::Object(arguments) => {
            let mut arguments = arguments.clone();
            let reason = arguments.shift_remove(REASON_PARAM)?;
            (Value::Object(arguments), reason)
        }
        Value::String(text) if !text.trim().is_empty() => {
            let Ok(Value::Object(mut arguments)) = serde_json::from_str::<Value>(text) else {
                return None;
            };
            let reason = arguments.shift_remove(REASON_PARAM)?;
            (Value::String(Value::Object(arguments).to_string()), reason)
        }
        _ => return None,
    };
    let envelope = call_envelope(call)?;
    let mut expected = call.clone();
    let body = match envelope {
        CallEnvelope::OpenAi => expected.get_mut("function")?.as_object_mut()?,
        CallEnvelope::McpRequest => expected.get_mut("params")?.as_object_mut()?,
        CallEnvelope::GeminiPart => expected.get_mut("functionCall")?.as_object_mut()?,
        _ => expected.as_object_mut()?,
    };
    *body.get_mut(key)? = stripped;
    Some((expected, reason))
}

fn text(value: &Value) -> String {
    value.to_string()
}

// ---------------------------------------------------------------------------------------------
// A provider that records what it received, and misbehaves as told.

#[derive(Clone, Copy)]
enum Behaviour {
    Answers,
    Panics,
    AnswersTooFew,
    AnswersTooMany,
}

struct Recorder {
    declarations: Vec<Value>,
    behaviour: Behaviour,
    received: Mutex<Vec<Value>>,
}

impl Provider for Recorder {
    fn list_tools(&self) -> std::result::Result<Vec<Value>, ListError> {
        Ok(self.declarations.clone())
    }

    fn execute(&self, calls: Vec<Value>) -> Vec<ToolResult> {
        self.received.lock().unwrap().extend(calls.iter().cloned());
        let answer = |n: usize| ToolResult {
            call_id: Some(format!("answer {n}")),
            content: Value::Null,
            is_error: false,
        };
        match self.behaviour {
            Behaviour::Answers => (0..calls.len()).map(answer).collect(),
            Behaviour::Panics => {
                EXPECTED_PANIC.with(|expected| expected.set(true));
                panic!("the provider dies");
            }
            Behaviour::AnswersTooFew => (0..calls.len() / 2).map(answer).collect(),
            Behaviour::AnswersTooMany => (0..calls.len() * 2 + 1).map(answer).collect(),
        }
    }
}

thread_local! {
    static EXPECTED_PANIC: Cell<bool> = const { Cell::new(false) };
}

/// libFuzzer's hook aborts on every panic, even one the layer catches on purpose: let the
/// provider's own panic through, and abort on any other.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !EXPECTED_PANIC.with(|expected| expected.replace(false)) {
                fuzzer_hook(info);
            }
        }));
    });
}

fn call_id(call: &Value) -> Option<String> {
    let id = match call_envelope(call)? {
        CallEnvelope::Responses => call.get("call_id")?,
        CallEnvelope::GeminiPart => call.get("functionCall")?.get("id")?,
        _ => call.get("id")?,
    };
    match id {
        Value::String(id) => Some(id.clone()),
        Value::Number(id) => Some(id.to_string()),
        _ => None,
    }
}

/// Checks one declaration's publication against the rules, noting the names it augments or
/// leaves alone; a Gemini tool is its declarations, each checked in turn.
fn check_declaration(
    declaration: &Value,
    published: &Value,
    augmented: &mut BTreeSet<String>,
    left_alone: &mut BTreeSet<String>,
) {
    if let Some((key, group)) = gemini_group(declaration) {
        let mut expected = declaration.clone();
        let inner = published[key].as_array().expect("the group stays an array");
        assert_eq!(inner.len(), group.len());
        for (declaration, published) in group.iter().zip(inner) {
            check_declaration(declaration, published, augmented, left_alone);
        }
        // Nothing but the group's array changes.
        expected[key] = published[key].clone();
        assert_eq!(text(published), text(&expected), "a Gemini tool");
        return;
    }
    let name = declared_name(declaration).map(str::to_owned);
    match expected_augmentation(declaration) {
        Some(expected) => {
            assert_eq!(text(published), text(&expected), "{declaration}");
            augmented.extend(name);
        }
        None => {
            assert_eq!(text(published), text(declaration), "left alone");
            left_alone.extend(name);
        }
    }
}

fn run(u: &mut Unstructured) -> Result<()> {
    let declarations: Vec<Value> = (0..u.int_in_range(0..=6)?)
        .map(|_| declaration(u, 1))
        .collect::<Result<_>>()?;
    let calls: Vec<Value> = (0..u.int_in_range(0..=6)?)
        .map(|_| call(u))
        .collect::<Result<_>>()?;

    // Augmenting.
    let mut listing = Listing::new();
    let published = listing.add_page(&declarations);
    assert_eq!(published.len(), declarations.len());
    let mut augmented = BTreeSet::new();
    let mut left_alone = BTreeSet::new();
    for (declaration, published) in declarations.iter().zip(&published) {
        check_declaration(declaration, published, &mut augmented, &mut left_alone);
    }
    let tracked: BTreeSet<String> = augmented.difference(&left_alone).cloned().collect();
    assert_eq!(listing.tracked(), tracked);

    // Stripping.
    let mut forwarded = Vec::new();
    for call in &calls {
        let stripped = strip_call(call.clone(), &tracked);
        match expected_strip(call, &tracked) {
            Some((expected, reason)) => {
                assert_eq!(text(&stripped.call), text(&expected), "{call}");
                assert_eq!(stripped.reason, Some(reason));
            }
            None => {
                assert_eq!(text(&stripped.call), text(call), "untouched");
                assert_eq!(stripped.reason, None);
            }
        }
        forwarded.push(stripped.call);
    }

    // The composer: the same calls reach the provider, one result per call whatever it does.
    let behaviour = *u.choose(&[
        Behaviour::Answers,
        Behaviour::Panics,
        Behaviour::AnswersTooFew,
        Behaviour::AnswersTooMany,
    ])?;
    let layer = Reasons::new(Recorder {
        declarations: declarations.clone(),
        behaviour,
        received: Mutex::new(Vec::new()),
    });
    let listed_first = u.arbitrary::<bool>()?;
    if listed_first {
        let listed = layer.list_tools().expect("the recorder lists");
        assert_eq!(
            listed.iter().map(text).collect::<Vec<_>>(),
            published.iter().map(text).collect::<Vec<_>>()
        );
        assert_eq!(
            layer.augmented_tools(),
            tracked.iter().cloned().collect::<Vec<_>>()
        );
    }
    let results = layer.execute(calls.clone());
    assert_eq!(results.len(), calls.len());
    let received = layer.inner().received.lock().unwrap().clone();
    if !calls.is_empty() {
        let expected = if listed_first { &forwarded } else { &calls };
        assert_eq!(
            received.iter().map(text).collect::<Vec<_>>(),
            expected.iter().map(text).collect::<Vec<_>>()
        );
    }
    for (n, (result, call)) in results.iter().zip(&calls).enumerate() {
        match behaviour {
            Behaviour::Panics => {
                assert!(result.is_error);
                assert_eq!(result.call_id, call_id(call), "{call}");
            }
            Behaviour::AnswersTooFew if n >= calls.len() / 2 => {
                assert!(result.is_error);
                assert_eq!(result.call_id, call_id(call), "{call}");
            }
            _ => assert_eq!(result.call_id, Some(format!("answer {n}"))),
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    install_panic_hook();
    let _ = run(&mut Unstructured::new(data));
});
