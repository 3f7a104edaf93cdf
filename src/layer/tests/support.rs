//! Fixtures: the envelopes the layer meets, a fake server that records what reaches it, and
//! helpers to compare values byte for byte.

use std::sync::Mutex;

use serde_json::{json, Map, Value};

use crate::layer::{ListError, Provider, Reasons, ToolResult};

/// Where a declaration keeps its name and schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    OpenAi,
    Responses,
    Mcp,
    Anthropic,
    /// An entry of a Gemini tool's `functionDeclarations`, with `parametersJsonSchema`. (With
    /// `parameters` it reads like a Responses declaration; [`gemini_tool`] builds both.)
    Gemini,
}

impl Shape {
    pub const ALL: [Shape; 5] = [
        Shape::OpenAi,
        Shape::Responses,
        Shape::Mcp,
        Shape::Anthropic,
        Shape::Gemini,
    ];

    /// A declaration of `name` with `schema`, in this shape.
    pub fn declare(self, name: &str, schema: Value) -> Value {
        self.declaration(Some(Value::from(name)), Some(schema))
    }

    /// A declaration whose name or schema may be missing or of any type.
    pub fn declaration(self, name: Option<Value>, schema: Option<Value>) -> Value {
        let mut body = Map::new();
        if let Some(name) = name {
            body.insert("name".into(), name);
        }
        body.insert("description".into(), Value::from("A tool."));
        if let Some(schema) = schema {
            body.insert(self.schema_key().into(), schema);
        }
        match self {
            Shape::OpenAi => json!({ "type": "function", "function": body }),
            Shape::Responses => {
                let mut declaration = Map::new();
                declaration.insert("type".into(), Value::from("function"));
                declaration.extend(body);
                Value::Object(declaration)
            }
            Shape::Mcp | Shape::Anthropic | Shape::Gemini => Value::Object(body),
        }
    }

    fn schema_key(self) -> &'static str {
        match self {
            Shape::OpenAi | Shape::Responses => "parameters",
            Shape::Mcp => "inputSchema",
            Shape::Anthropic => "input_schema",
            Shape::Gemini => "parametersJsonSchema",
        }
    }

    /// JSON pointer to the schema.
    pub fn schema_pointer(self) -> &'static str {
        match self {
            Shape::OpenAi => "/function/parameters",
            Shape::Responses => "/parameters",
            Shape::Mcp => "/inputSchema",
            Shape::Anthropic => "/input_schema",
            Shape::Gemini => "/parametersJsonSchema",
        }
    }
}

/// A Gemini tool: `{"functionDeclarations": [...]}` holding `declarations`.
pub fn gemini_tool(declarations: Vec<Value>) -> Value {
    json!({ "functionDeclarations": declarations })
}

/// Where a call keeps its id, name and arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallShape {
    /// `{"id","type":"function","function":{"name","arguments"}}`
    OpenAi,
    /// `{"type":"function_call","id","call_id","name","arguments"}`
    Responses,
    /// A JSON-RPC `tools/call` request, with a numeric id.
    McpRequest,
    /// The bare `params` of a `tools/call` request: no id.
    McpParams,
    /// `{"type":"tool_use","id","name","input"}`
    Anthropic,
    /// A Gemini part, `{"functionCall":{"id","name","args"}}`, with a `thoughtSignature` beside.
    GeminiPart,
    /// The bare Gemini `functionCall` object, `{"name","args"}`, with no id (as the API often
    /// answers).
    GeminiCall,
}

impl CallShape {
    pub const ALL: [CallShape; 7] = [
        CallShape::OpenAi,
        CallShape::Responses,
        CallShape::McpRequest,
        CallShape::McpParams,
        CallShape::Anthropic,
        CallShape::GeminiPart,
        CallShape::GeminiCall,
    ];

    /// A call numbered `n` to `name` with `arguments`.
    pub fn call(self, n: u64, name: &str, arguments: Value) -> Value {
        self.call_with(n, Some(Value::from(name)), Some(arguments))
    }

    /// A call whose name or arguments may be missing or of any type.
    pub fn call_with(self, n: u64, name: Option<Value>, arguments: Option<Value>) -> Value {
        let mut body = Map::new();
        if let Some(name) = name {
            body.insert("name".into(), name);
        }
        if let Some(arguments) = arguments {
            body.insert(self.arguments_key().into(), arguments);
        }
        let mut call = Map::new();
        match self {
            CallShape::OpenAi => {
                call.insert("id".into(), Value::from(format!("call_{n}")));
                call.insert("type".into(), Value::from("function"));
                call.insert("function".into(), Value::Object(body));
            }
            CallShape::Responses => {
                call.insert("type".into(), Value::from("function_call"));
                // The item id is not the call id: results answer `call_id`.
                call.insert("id".into(), Value::from(format!("fc_{n}")));
                call.insert("call_id".into(), Value::from(format!("call_{n}")));
                call.extend(body);
            }
            CallShape::McpRequest => {
                call.insert("jsonrpc".into(), Value::from("2.0"));
                call.insert("id".into(), Value::from(n));
                call.insert("method".into(), Value::from("tools/call"));
                call.insert("params".into(), Value::Object(body));
            }
            CallShape::McpParams => call = body,
            CallShape::Anthropic => {
                call.insert("type".into(), Value::from("tool_use"));
                call.insert("id".into(), Value::from(format!("toolu_{n}")));
                call.extend(body);
            }
            CallShape::GeminiPart => {
                let mut function_call = Map::new();
                function_call.insert("id".into(), Value::from(format!("gc_{n}")));
                function_call.extend(body);
                call.insert("functionCall".into(), Value::Object(function_call));
                call.insert("thoughtSignature".into(), Value::from("c2ln"));
            }
            CallShape::GeminiCall => call = body,
        }
        Value::Object(call)
    }

    fn arguments_key(self) -> &'static str {
        match self {
            CallShape::Anthropic => "input",
            CallShape::GeminiPart | CallShape::GeminiCall => "args",
            _ => "arguments",
        }
    }

    /// JSON pointer to the arguments.
    pub fn arguments_pointer(self) -> &'static str {
        match self {
            CallShape::OpenAi => "/function/arguments",
            CallShape::Responses | CallShape::McpParams => "/arguments",
            CallShape::McpRequest => "/params/arguments",
            CallShape::Anthropic => "/input",
            CallShape::GeminiPart => "/functionCall/args",
            CallShape::GeminiCall => "/args",
        }
    }

    /// The id a result for call number `n` must carry.
    pub fn expected_id(self, n: u64) -> Option<String> {
        match self {
            CallShape::OpenAi | CallShape::Responses => Some(format!("call_{n}")),
            CallShape::McpRequest => Some(n.to_string()),
            CallShape::McpParams | CallShape::GeminiCall => None,
            CallShape::Anthropic => Some(format!("toolu_{n}")),
            CallShape::GeminiPart => Some(format!("gc_{n}")),
        }
    }
}

/// An ordinary schema: one required string property.
pub fn path_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "path": { "type": "string" } },
        "required": ["path"]
    })
}

/// A schema that declares a `reason` of its own: the server wants it.
pub fn declaring_reason_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "reason": { "type": "string", "description": "Ticket number" } }
    })
}

/// A schema that lists `reason` in `required` without declaring it.
pub fn requiring_reason_schema() -> Value {
    json!({ "type": "object", "properties": {}, "required": ["reason"] })
}

/// A copy of `value` with the value at `pointer` replaced.
pub fn with(value: &Value, pointer: &str, new: Value) -> Value {
    let mut value = value.clone();
    *value.pointer_mut(pointer).expect("a value at the pointer") = new;
    value
}

/// Compares two values as their bytes: key order and string contents included.
#[track_caller]
pub fn assert_same_bytes(actual: &Value, expected: &Value) {
    assert_eq!(
        serde_json::to_string(actual).unwrap(),
        serde_json::to_string(expected).unwrap()
    );
}

/// A fake tool server: publishes a catalogue and records every batch it is handed, answering each
/// call with the call itself.
pub struct Server {
    catalogue: Mutex<Result<Vec<Value>, String>>,
    received: Mutex<Vec<Vec<Value>>>,
}

impl Default for Server {
    fn default() -> Server {
        Server::new(Vec::new())
    }
}

impl Server {
    pub fn new(catalogue: Vec<Value>) -> Server {
        Server {
            catalogue: Mutex::new(Ok(catalogue)),
            received: Mutex::default(),
        }
    }

    pub fn publish(&self, catalogue: Vec<Value>) {
        *self.catalogue.lock().unwrap() = Ok(catalogue);
    }

    pub fn fail_listing(&self, why: &str) {
        *self.catalogue.lock().unwrap() = Err(why.to_owned());
    }

    pub fn catalogue(&self) -> Vec<Value> {
        self.catalogue.lock().unwrap().clone().unwrap()
    }

    /// Every batch received, in order.
    pub fn batches(&self) -> Vec<Vec<Value>> {
        self.received.lock().unwrap().clone()
    }

    /// The calls of the last batch received.
    pub fn last_batch(&self) -> Vec<Value> {
        self.batches().pop().expect("a batch reached the server")
    }
}

impl Provider for Server {
    fn list_tools(&self) -> Result<Vec<Value>, ListError> {
        self.catalogue.lock().unwrap().clone().map_err(Into::into)
    }

    fn execute(&self, calls: Vec<Value>) -> Vec<ToolResult> {
        self.received.lock().unwrap().push(calls.clone());
        echoed(calls)
    }
}

/// Each call as its own successful result: what a server that only echoes answers.
pub fn echoed(calls: Vec<Value>) -> Vec<ToolResult> {
    calls
        .into_iter()
        .map(|call| ToolResult {
            call_id: None,
            content: call,
            is_error: false,
        })
        .collect()
}

/// The layer over a server publishing `catalogue`, listed once, and what it published.
pub fn listed(catalogue: Vec<Value>) -> (Reasons<Server>, Vec<Value>) {
    let layer = Reasons::new(Server::new(catalogue));
    let published = layer.list_tools().expect("the catalogue lists");
    (layer, published)
}

/// What the server receives when the layer is handed `call` alone.
pub fn forward(layer: &Reasons<Server>, call: Value) -> Value {
    let results = layer.execute(vec![call]);
    assert_eq!(results.len(), 1);
    let mut batch = layer.inner().last_batch();
    assert_eq!(batch.len(), 1);
    batch.pop().unwrap()
}

/// The catalogue most strip tests run against: `fs_write` is tracked, `ticket` declares a reason
/// of its own and `approve` requires one.
pub fn standard_layer() -> Reasons<Server> {
    listed(vec![
        Shape::OpenAi.declare("fs_write", path_schema()),
        Shape::Mcp.declare("ticket", declaring_reason_schema()),
        Shape::Anthropic.declare("approve", requiring_reason_schema()),
    ])
    .0
}
