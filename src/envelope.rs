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
    /// Gemini: the entries of a tool's `functionDeclarations`, `{"name","parameters"}` (an
    /// OpenAPI-style schema) or `{"name","parametersJsonSchema"}`; calls are `functionCall`
    /// parts, `{"functionCall":{"name","args","id"?}}`, or the bare `functionCall` object.
    ///
    /// A bare object is taken for a call only when it holds nothing but `name`, `args` and `id`:
    /// a Gemini CLI session records its calls as `{"id","name","args","result",…}`, and history
    /// is not a call on its way to a tool.
    Gemini,
}

/// The keys under which a Gemini declaration may keep its schema (its JSON name, and the proto
/// field name the API accepts too). A declaration holds exactly one of them.
const GEMINI_SCHEMA_KEYS: [&str; 3] = [
    "parametersJsonSchema",
    "parameters_json_schema",
    "parameters",
];

/// The keys a bare Gemini `functionCall` object may hold.
const GEMINI_CALL_KEYS: [&str; 3] = ["name", "args", "id"];

/// The keys under which a Gemini tool groups its function declarations.
pub const GEMINI_GROUP_KEYS: [&str; 2] = ["functionDeclarations", "function_declarations"];

/// The function declarations of a Gemini tool (`{"functionDeclarations":[…]}`), when `tool` is
/// one: the key they sit under, and the array. Other tools (`googleSearch`, `codeExecution`, …)
/// hold none.
pub fn gemini_group(tool: &Value) -> Option<(&'static str, &Vec<Value>)> {
    let object = tool.as_object()?;
    GEMINI_GROUP_KEYS
        .into_iter()
        .find_map(|key| Some((key, object.get(key)?.as_array()?)))
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
        } else if object.contains_key("parametersJsonSchema")
            || object.contains_key("parameters_json_schema")
        {
            Some(Envelope::Gemini)
        } else if object.contains_key("parameters") {
            // A Responses tool always says `"type": "function"`; a Gemini declaration has no
            // `type`. The two keep name and schema in the same places, so the rules read both
            // alike and only the envelope reported depends on this.
            Some(match object.contains_key("type") {
                true => Envelope::Responses,
                false => Envelope::Gemini,
            })
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
        if object.get("functionCall").is_some_and(Value::is_object) {
            return Some(Envelope::Gemini);
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
            None if object.contains_key("name") && object.contains_key("arguments") => {
                Some(Envelope::Mcp)
            }
            None => (object.contains_key("name")
                && object.contains_key("args")
                && object
                    .keys()
                    .all(|key| GEMINI_CALL_KEYS.contains(&key.as_str())))
            .then_some(Envelope::Gemini),
        }
    }

    /// The object that holds a declaration's name and schema.
    fn declaration_body(self, declaration: &Value) -> Option<&Map<String, Value>> {
        match self {
            Envelope::OpenAiFunction => declaration.get("function")?.as_object(),
            _ => declaration.as_object(),
        }
    }

    /// Whether a declaration asks for strict schema adherence (`"strict": true` beside its
    /// schema).
    pub fn is_strict(self, declaration: &Value) -> bool {
        self.declaration_body(declaration)
            .and_then(|body| body.get("strict"))
            .is_some_and(|strict| strict == true)
    }

    fn declaration_body_mut(self, declaration: &mut Value) -> Option<&mut Map<String, Value>> {
        match self {
            Envelope::OpenAiFunction => declaration.get_mut("function")?.as_object_mut(),
            _ => declaration.as_object_mut(),
        }
    }

    /// The key under which a declaration keeps its JSON Schema. A Gemini declaration that holds
    /// more than one of its schema keys has none the layer can trust: the API refuses it, and
    /// extending one schema would leave the other saying otherwise.
    fn schema_key(self, body: &Map<String, Value>) -> Option<&'static str> {
        match self {
            Envelope::OpenAiFunction | Envelope::Responses => Some("parameters"),
            Envelope::Mcp => Some("inputSchema"),
            Envelope::Anthropic => Some("input_schema"),
            Envelope::Gemini => {
                let mut present = GEMINI_SCHEMA_KEYS
                    .into_iter()
                    .filter(|key| body.contains_key(*key));
                match (present.next(), present.next()) {
                    (Some(key), None) => Some(key),
                    _ => None,
                }
            }
        }
    }

    /// A declared tool's name, when it is a string.
    pub fn declared_name(self, declaration: &Value) -> Option<&str> {
        self.declaration_body(declaration)?.get("name")?.as_str()
    }

    /// A declaration's schema, whatever it holds.
    pub fn schema(self, declaration: &Value) -> Option<&Value> {
        let body = self.declaration_body(declaration)?;
        body.get(self.schema_key(body)?)
    }

    /// A declaration's schema, to be changed in place (on a copy).
    pub fn schema_mut(self, declaration: &mut Value) -> Option<&mut Value> {
        let body = self.declaration_body_mut(declaration)?;
        let key = self.schema_key(body)?;
        body.get_mut(key)
    }

    /// The object that holds a call's name and arguments.
    fn call_body(self, call: &Value) -> Option<&Map<String, Value>> {
        match self {
            Envelope::OpenAiFunction => call.get("function")?.as_object(),
            Envelope::Mcp if call.get("method").is_some() => call.get("params")?.as_object(),
            Envelope::Gemini if call.get("functionCall").is_some() => {
                call.get("functionCall")?.as_object()
            }
            _ => call.as_object(),
        }
    }

    fn call_body_mut(self, call: &mut Value) -> Option<&mut Map<String, Value>> {
        match self {
            Envelope::OpenAiFunction => call.get_mut("function")?.as_object_mut(),
            Envelope::Mcp if call.get("method").is_some() => {
                call.get_mut("params")?.as_object_mut()
            }
            Envelope::Gemini if call.get("functionCall").is_some() => {
                call.get_mut("functionCall")?.as_object_mut()
            }
            _ => call.as_object_mut(),
        }
    }

    /// The key under which a call keeps its arguments.
    fn arguments_key(self) -> &'static str {
        match self {
            Envelope::Anthropic => "input",
            Envelope::Gemini => "args",
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

    /// A call's id as text (a JSON-RPC id may be a number). A Gemini call often has none.
    pub fn call_id(self, call: &Value) -> Option<String> {
        let id = match self {
            Envelope::Responses => call.get("call_id")?,
            Envelope::Gemini => self.call_body(call)?.get("id")?,
            _ => call.get("id")?,
        };
        match id {
            Value::String(id) => Some(id.clone()),
            Value::Number(id) => Some(id.to_string()),
            _ => None,
        }
    }
}
