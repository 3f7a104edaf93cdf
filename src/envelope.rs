//! Where the name, the schema and the arguments live in each wire shape.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// What a call's arguments hold, once a JSON-encoded string is decoded.
#[derive(Debug, PartialEq)]
pub enum Arguments<'a> {
    /// A JSON object, given as one or decoded from a string.
    Object(Cow<'a, Map<String, Value>>),
    /// No arguments: `null`, or a string that is empty or all whitespace.
    Empty,
    /// Anything else: a string that is not JSON or not an object, an array, a number…
    NotAnObject,
}

/// Reads a call's arguments the way agent clients do: an object, or the JSON string a model's
/// function call travels as, with the empty string meaning "no arguments".
pub fn decode_arguments(arguments: &Value) -> Arguments<'_> {
    match arguments {
        Value::Object(map) => Arguments::Object(Cow::Borrowed(map)),
        Value::Null => Arguments::Empty,
        Value::String(text) if text.trim().is_empty() => Arguments::Empty,
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Arguments::Object(Cow::Owned(map)),
            _ => Arguments::NotAnObject,
        },
        _ => Arguments::NotAnObject,
    }
}

/// A wire shape for tool declarations and calls.
///
/// The layer's rules are written once; an envelope only says where each shape keeps a tool's
/// name, its schema, a call's arguments and a call's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    /// OpenAI Chat function tools: `{"type":"function","function":{"name","parameters"}}`;
    /// calls `{"id","type":"function","function":{"name","arguments"}}`.
    OpenAiFunction,
    /// OpenAI Responses: `{"type":"function","name","parameters"}`; calls
    /// `{"type":"function_call","call_id","name","arguments"}`.
    Responses,
    /// MCP: `{"name","inputSchema"}`; calls are `tools/call` requests
    /// (`{"jsonrpc","id","method":"tools/call","params":{"name","arguments"}}`) or their bare
    /// `params` object.
    Mcp,
    /// Anthropic Messages: `{"name","input_schema"}`; calls `{"type":"tool_use","id","name","input"}`.
    Anthropic,
}

impl Envelope {
    /// Recognises the envelope of a tool declaration from the key that holds its schema.
    pub fn of_declaration(declaration: &Value) -> Option<Envelope> {
        let object = declaration.as_object()?;
        if object.contains_key("function") {
            Some(Envelope::OpenAiFunction)
        } else if object.contains_key("inputSchema") {
            Some(Envelope::Mcp)
        } else if object.contains_key("input_schema") {
            Some(Envelope::Anthropic)
        } else if object.contains_key("parameters") {
            Some(Envelope::Responses)
        } else {
            None
        }
    }

    /// Recognises the envelope of a tool call.
    pub fn of_call(call: &Value) -> Option<Envelope> {
        let object = call.as_object()?;
        if object.get("function").is_some_and(Value::is_object) {
            return Some(Envelope::OpenAiFunction);
        }
        match object.get("type").and_then(Value::as_str) {
            Some("function_call") => return Some(Envelope::Responses),
            Some("tool_use") => return Some(Envelope::Anthropic),
            _ => {}
        }
        // A JSON-RPC message with any other method is no call, whatever else it holds: when in
        // doubt, do not strip.
        match object.get("method") {
            Some(method) => (method == "tools/call").then_some(Envelope::Mcp),
            None => (object.contains_key("name") && object.contains_key("arguments"))
                .then_some(Envelope::Mcp),
        }
    }

    /// The object that holds a declaration's name and schema.
    fn declaration_body(self, declaration: &Value) -> Option<&Map<String, Value>> {
        match self {
            Envelope::OpenAiFunction => declaration.get("function")?.as_object(),
            _ => declaration.as_object(),
        }
    }

    fn declaration_body_mut(self, declaration: &mut Value) -> Option<&mut Map<String, Value>> {
        match self {
            Envelope::OpenAiFunction => declaration.get_mut("function")?.as_object_mut(),
            _ => declaration.as_object_mut(),
        }
    }

    /// The key under which a declaration keeps its JSON Schema.
    fn schema_key(self) -> &'static str {
        match self {
            Envelope::OpenAiFunction | Envelope::Responses => "parameters",
            Envelope::Mcp => "inputSchema",
            Envelope::Anthropic => "input_schema",
        }
    }

    /// A declared tool's name, when it is a string.
    pub fn declared_name(self, declaration: &Value) -> Option<&str> {
        self.declaration_body(declaration)?.get("name")?.as_str()
    }

    /// A declaration's schema, whatever it holds.
    pub fn schema(self, declaration: &Value) -> Option<&Value> {
        self.declaration_body(declaration)?.get(self.schema_key())
    }

    /// A declaration's schema, to be changed in place (on a copy).
    pub fn schema_mut(self, declaration: &mut Value) -> Option<&mut Value> {
        self.declaration_body_mut(declaration)?
            .get_mut(self.schema_key())
    }

    /// The object that holds a call's name and arguments.
    fn call_body(self, call: &Value) -> Option<&Map<String, Value>> {
        match self {
            Envelope::OpenAiFunction => call.get("function")?.as_object(),
            Envelope::Mcp if call.get("method").is_some() => call.get("params")?.as_object(),
            _ => call.as_object(),
        }
    }

    fn call_body_mut(self, call: &mut Value) -> Option<&mut Map<String, Value>> {
        match self {
            Envelope::OpenAiFunction => call.get_mut("function")?.as_object_mut(),
            Envelope::Mcp if call.get("method").is_some() => {
                call.get_mut("params")?.as_object_mut()
            }
            _ => call.as_object_mut(),
        }
    }

    /// The key under which a call keeps its arguments.
    fn arguments_key(self) -> &'static str {
        match self {
            Envelope::Anthropic => "input",
            _ => "arguments",
        }
    }

    /// The name of the tool a call is for, when it is a string.
    pub fn called_name(self, call: &Value) -> Option<&str> {
        self.call_body(call)?.get("name")?.as_str()
    }

    /// A call's arguments, as recorded.
    pub fn arguments(self, call: &Value) -> Option<&Value> {
        self.call_body(call)?.get(self.arguments_key())
    }

    /// A call's arguments, to be changed in place.
    pub fn arguments_mut(self, call: &mut Value) -> Option<&mut Value> {
        let key = self.arguments_key();
        self.call_body_mut(call)?.get_mut(key)
    }

    /// The id the client's own transcript gives an MCP `tools/call` request: a `params._meta`
    /// entry named `…toolUseId` or `…toolCallId` (Claude Code sends `claudecode/toolUseId`).
    pub fn client_call_id(self, call: &Value) -> Option<String> {
        let meta = self.call_body(call)?.get("_meta")?.as_object()?;
        meta.iter().find_map(|(key, value)| {
            let name = key.rsplit('/').next()?;
            let is_tool_use =
                name.eq_ignore_ascii_case("toolUseId") || name.eq_ignore_ascii_case("toolCallId");
            is_tool_use
                .then(|| value.as_str().map(str::to_owned))
                .flatten()
        })
    }

    /// A call's id as text (a JSON-RPC id may be a number).
    pub fn call_id(self, call: &Value) -> Option<String> {
        let key = match self {
            Envelope::Responses => "call_id",
            _ => "id",
        };
        match call.get(key)? {
            Value::String(id) => Some(id.clone()),
            Value::Number(id) => Some(id.to_string()),
            _ => None,
        }
    }
}
