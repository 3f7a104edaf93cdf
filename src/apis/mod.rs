//! The model APIs, one shape each. A shape says where its API keeps tool declarations, calls,
//! their ids and their arguments; where its requests declare tools and its answers carry calls;
//! the paths it serves, its provider and default upstream, its error body; and the one rule by
//! which its streamed calls are assembled (when a call starts, continues and ends). The layer and
//! the gateway read an API through its shape; the log readers (`formats/shapes/`) find calls in
//! their own shapes, but assemble a recorded stream's calls by the API's rule, so what a reader
//! finds in a recorded stream is exactly what the gateway takes off the live one.
//!
//! [`Api`] names them. Adding an API is a shape of its own (a file here implementing [`ApiShape`]),
//! its variant, its line in [`Api::ALL`] and [`Api::shape`], and its place in the two
//! recognisers ([`Api::of_declaration`], [`Api::of_call`]), whose order matters because shapes
//! overlap.
//!
//! ```
//! use reasons::apis::Api;
//! use serde_json::json;
//!
//! let call = json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}});
//! let api = Api::of_call(&call).unwrap();
//! assert_eq!(api, Api::Anthropic);
//! assert_eq!(api.call_id(&call).as_deref(), Some("toolu_1"));
//! assert_eq!(Api::of_path("/v1/chat/completions"), Some(Api::OpenAiChat));
//! assert_eq!(Api::OpenAiChat.provider().unwrap().name, "openai");
//! ```

use serde_json::{Map, Value};

pub mod anthropic;
pub mod gemini;
pub mod mcp;
pub mod openai_chat;
pub mod openai_responses;

pub use gemini::gemini_group;

/// A model API (or MCP, whose calls and declarations the layer reads too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Api {
    /// Anthropic Messages: `{"name","input_schema"}`; calls `{"type":"tool_use","id","name","input"}`.
    Anthropic,
    /// OpenAI Chat Completions function tools: `{"type":"function","function":{"name","parameters"}}`;
    /// calls `{"id","type":"function","function":{"name","arguments"}}`.
    OpenAiChat,
    /// OpenAI Responses: `{"type":"function","name","parameters"}`; calls
    /// `{"type":"function_call","call_id","name","arguments"}`.
    OpenAiResponses,
    /// Gemini: the entries of a tool's `functionDeclarations`; calls are `functionCall` parts.
    Gemini,
    /// MCP: `{"name","inputSchema"}`; calls are `tools/call` requests or their bare `params`.
    Mcp,
}

/// A model provider, whose APIs one upstream serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelProvider {
    /// The name `--upstream NAME=URL` gives it.
    pub name: &'static str,
    /// Its public API, where a gateway sends its requests unless told otherwise.
    pub default_upstream: &'static str,
}

/// Where a request body keeps the conversation an agent sends back on every turn.
#[derive(Debug, Clone, Copy)]
pub struct History {
    /// The body's top-level key holding the entries (an array).
    pub key: &'static str,
    /// The key of an entry's array of calls, in the API's call shape; `None` when the entry is
    /// the call itself.
    pub calls: Option<&'static str>,
    /// A key and the string it holds in every call, where the API's calls say what they are
    /// (what [`Api::of_call`] reads; a history's other entries and blocks are no calls).
    ///
    /// A history is sent on every turn and grows with the session: its calls are read in the
    /// text as parsed, where the shape's keys say their name, id and arguments are
    /// ([`ApiShape::call_body_key`], [`NAME_KEY`], [`ApiShape::call_id_key`], [`ApiShape::arguments_key`]),
    /// never read into `Value`s. A property test (`restoring_agrees_with_the_rules_on_values` in
    /// `gateway/history.rs`) keeps that reading and the rules on `Value`s in agreement.
    pub kind: Option<(&'static str, &'static str)>,
}

/// The key of a call's body that names its tool, in every API.
pub const NAME_KEY: &str = "name";

impl ModelProvider {
    /// Every provider a gateway serves, each once, in [`Api::ALL`]'s order.
    pub fn all() -> Vec<ModelProvider> {
        let mut providers: Vec<ModelProvider> = Vec::new();
        for provider in Api::ALL.into_iter().filter_map(Api::provider) {
            if !providers.contains(&provider) {
                providers.push(provider);
            }
        }
        providers
    }

    /// The provider a request goes to: the provider of its `api` (the API its path belongs
    /// to, [`Api::of_path`], decided once by the caller); else, on a path of no API's, the
    /// first whose clients' headers it carries; `None` when nothing in the request says (the
    /// gateway decides where such a request goes).
    pub fn of_request(
        api: Option<Api>,
        path: &str,
        has_header: &dyn Fn(&str) -> bool,
    ) -> Option<ModelProvider> {
        let api = api.or_else(|| {
            let path = path.trim_end_matches('/');
            Api::ALL
                .into_iter()
                .find(|api| api.shape().claims(path, has_header))
        });
        api.and_then(Api::provider)
    }
}

/// What one API is. Each implements it in its own file; [`Api`] hands out its shape.
pub trait ApiShape: Sync {
    /// The object that holds a declaration's name and schema.
    fn declaration_body<'a>(&self, declaration: &'a Value) -> Option<&'a Map<String, Value>> {
        declaration.as_object()
    }

    /// The same, to be changed in place.
    fn declaration_body_mut<'a>(
        &self,
        declaration: &'a mut Value,
    ) -> Option<&'a mut Map<String, Value>> {
        declaration.as_object_mut()
    }

    /// The key under which a declaration's body keeps its JSON Schema.
    fn schema_key(&self, body: &Map<String, Value>) -> Option<&'static str>;

    /// The key of the object inside a call that holds its name and arguments, when they are
    /// not the call's own (Chat's `function`).
    fn call_body_key(&self) -> Option<&'static str> {
        None
    }

    /// The object that holds a call's name and arguments.
    fn call_body<'a>(&self, call: &'a Value) -> Option<&'a Map<String, Value>> {
        match self.call_body_key() {
            Some(key) => call.get(key)?.as_object(),
            None => call.as_object(),
        }
    }

    /// The same, to be changed in place.
    fn call_body_mut<'a>(&self, call: &'a mut Value) -> Option<&'a mut Map<String, Value>> {
        match self.call_body_key() {
            Some(key) => call.get_mut(key)?.as_object_mut(),
            None => call.as_object_mut(),
        }
    }

    /// The key under which a call's body keeps its arguments.
    fn arguments_key(&self) -> &'static str {
        "arguments"
    }

    /// The key of a call's id.
    fn call_id_key(&self) -> &'static str {
        "id"
    }

    /// The value that is a call's id.
    fn call_id<'a>(&self, call: &'a Value) -> Option<&'a Value> {
        call.get(self.call_id_key())
    }

    /// The id the client's transcript gives the call, and the request's own id where the call
    /// is a request of its own (MCP).
    fn ids(&self, call: &Value) -> (Option<String>, Option<String>) {
        (id_text(self.call_id(call)), None)
    }

    /// Whether an entry of a request's `tools` declares a function in this API's own shape
    /// (server-side tools and other kinds go upstream as they came).
    fn declares_a_function(&self, tool: &Value) -> bool;

    /// The calls of an answer body, in the order they appear.
    fn answer_calls<'a>(&self, answer: &'a mut Value) -> Vec<&'a mut Value>;

    /// Where its requests keep the history of earlier calls, when they do.
    fn history(&self) -> Option<History> {
        None
    }

    /// Whether a request path (without its query) is one of this API's.
    fn serves(&self, path: &str) -> bool;

    /// Whether answers on this path carry calls (a token count does not).
    fn answers_with_calls(&self, _path: &str) -> bool {
        true
    }

    /// Whose API it is, when a gateway serves it.
    fn provider(&self) -> Option<ModelProvider>;

    /// Whether a request on a path of no API's (a model list, a connectivity check) goes to this
    /// API's provider, by the headers its clients send.
    fn claims(&self, _path: &str, _has_header: &dyn Fn(&str) -> bool) -> bool {
        false
    }

    /// An error answer in the API's envelope, so that the agent reports it as it reports the
    /// API's own errors.
    fn error_body(&self, status: u16, message: &str) -> Value;
}

impl Api {
    /// Every API, in the order their rooms are asked about a request (their paths never
    /// overlap; the headers of a request on another path may name several providers, and the
    /// more specific go first).
    pub const ALL: [Api; 5] = [
        Api::Anthropic,
        Api::Gemini,
        Api::OpenAiChat,
        Api::OpenAiResponses,
        Api::Mcp,
    ];

    /// The API's shape.
    pub fn shape(self) -> &'static dyn ApiShape {
        match self {
            Api::Anthropic => &anthropic::Anthropic,
            Api::OpenAiChat => &openai_chat::OpenAiChat,
            Api::OpenAiResponses => &openai_responses::OpenAiResponses,
            Api::Gemini => &gemini::Gemini,
            Api::Mcp => &mcp::Mcp,
        }
    }

    /// The API a request path (without its query) belongs to, when a gateway serves it.
    pub fn of_path(path: &str) -> Option<Api> {
        let path = path.trim_end_matches('/');
        Api::ALL.into_iter().find(|api| api.shape().serves(path))
    }

    /// Whose API it is, when a gateway serves it.
    pub fn provider(self) -> Option<ModelProvider> {
        self.shape().provider()
    }

    /// Recognises the API of a tool declaration from the key that holds its schema.
    pub fn of_declaration(declaration: &Value) -> Option<Api> {
        let object = declaration.as_object()?;
        if object.contains_key("function") {
            Some(Api::OpenAiChat)
        } else if object.contains_key("inputSchema") {
            Some(Api::Mcp)
        } else if object.contains_key("input_schema") {
            Some(Api::Anthropic)
        } else if object.contains_key("parametersJsonSchema")
            || object.contains_key("parameters_json_schema")
        {
            Some(Api::Gemini)
        } else if object.contains_key("parameters") {
            // A Responses tool always says `"type": "function"`; a Gemini declaration has no
            // `type`. The two keep name and schema in the same places, so the rules read both
            // alike and only the API reported depends on this.
            Some(match object.contains_key("type") {
                true => Api::OpenAiResponses,
                false => Api::Gemini,
            })
        } else {
            None
        }
    }

    /// Recognises the API of a tool call.
    pub fn of_call(call: &Value) -> Option<Api> {
        let object = call.as_object()?;
        if object.get("function").is_some_and(Value::is_object) {
            return Some(Api::OpenAiChat);
        }
        if object.get("functionCall").is_some_and(Value::is_object) {
            return Some(Api::Gemini);
        }
        match object.get("type").and_then(Value::as_str) {
            Some("function_call") => return Some(Api::OpenAiResponses),
            Some("tool_use") => return Some(Api::Anthropic),
            _ => {}
        }
        // A JSON-RPC message with any other method is no call, whatever else it holds: when in
        // doubt, do not strip.
        match object.get("method") {
            Some(method) => (method == "tools/call").then_some(Api::Mcp),
            None if object.contains_key("name") && object.contains_key("arguments") => {
                Some(Api::Mcp)
            }
            None => gemini::is_bare_call(object).then_some(Api::Gemini),
        }
    }

    /// Whether a declaration asks for strict schema adherence (`"strict": true` beside its
    /// schema).
    pub fn is_strict(self, declaration: &Value) -> bool {
        self.shape()
            .declaration_body(declaration)
            .and_then(|body| body.get("strict"))
            .is_some_and(|strict| strict == true)
    }

    /// A declared tool's name, when it is a string.
    pub fn declared_name(self, declaration: &Value) -> Option<&str> {
        self.shape()
            .declaration_body(declaration)?
            .get("name")?
            .as_str()
    }

    /// A declaration's schema, whatever it holds.
    pub fn schema(self, declaration: &Value) -> Option<&Value> {
        let shape = self.shape();
        let body = shape.declaration_body(declaration)?;
        body.get(shape.schema_key(body)?)
    }

    /// A declaration's schema, to be changed in place (on a copy).
    pub fn schema_mut(self, declaration: &mut Value) -> Option<&mut Value> {
        let shape = self.shape();
        let body = shape.declaration_body_mut(declaration)?;
        let key = shape.schema_key(body)?;
        body.get_mut(key)
    }

    /// The name of the tool a call is for, when it is a string.
    pub fn called_name(self, call: &Value) -> Option<&str> {
        self.shape().call_body(call)?.get(NAME_KEY)?.as_str()
    }

    /// A call's arguments, as recorded.
    pub fn arguments(self, call: &Value) -> Option<&Value> {
        let shape = self.shape();
        shape.call_body(call)?.get(shape.arguments_key())
    }

    /// A call's arguments, to be changed in place.
    pub fn arguments_mut(self, call: &mut Value) -> Option<&mut Value> {
        let shape = self.shape();
        let key = shape.arguments_key();
        shape.call_body_mut(call)?.get_mut(key)
    }

    /// A call's id as text (a JSON-RPC id may be a number). A Gemini call often has none.
    pub fn call_id(self, call: &Value) -> Option<String> {
        id_text(self.shape().call_id(call))
    }

    /// The id the client's transcript gives a call, and the JSON-RPC id of an MCP request.
    pub fn ids(self, call: &Value) -> (Option<String>, Option<String>) {
        self.shape().ids(call)
    }

    /// Whether an entry of a request's `tools` is a function declaration in this API's shape.
    pub fn declares_a_function(self, tool: &Value) -> bool {
        self.shape().declares_a_function(tool)
    }

    /// The calls of an answer body, in the order they appear.
    pub fn answer_calls(self, answer: &mut Value) -> Vec<&mut Value> {
        self.shape().answer_calls(answer)
    }

    /// Where its requests keep the history of earlier calls, when they do.
    pub fn history(self) -> Option<History> {
        self.shape().history()
    }

    /// Whether answers on this path carry calls.
    pub fn answers_with_calls(self, path: &str) -> bool {
        self.shape().answers_with_calls(path)
    }

    /// An error answer in the envelope of the API a request is for.
    pub fn error_body(self, status: u16, message: &str) -> Vec<u8> {
        self.shape()
            .error_body(status, message)
            .to_string()
            .into_bytes()
    }

    /// The API whose envelope the gateway's own error answer to a request takes: the request's
    /// API, or, on a path of no API's (a model list, a connectivity check), Anthropic's. Every
    /// API the gateway serves keeps an error's text at `error.message` (Anthropic's, OpenAI's,
    /// Gemini's alike), so whichever client sent the request reads it there.
    pub fn of_error_answer(api: Option<Api>) -> Api {
        api.unwrap_or(Api::Anthropic)
    }
}

/// An id as text: a string, or a number (JSON-RPC ids may be either).
fn id_text(id: Option<&Value>) -> Option<String> {
    match id? {
        Value::String(id) => Some(id.clone()),
        Value::Number(id) => Some(id.to_string()),
        _ => None,
    }
}

/// The elements of the array at `key`, when there is one.
fn items<'a>(value: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Value> {
    value
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gateway answers a path of no API's in one envelope ([`Api::of_error_answer`]): each
    /// served API's clients must find the text where that envelope puts it.
    #[test]
    fn every_served_api_keeps_an_errors_text_at_error_message() {
        for api in Api::ALL.into_iter().filter(|api| api.provider().is_some()) {
            let body: Value = serde_json::from_slice(&api.error_body(502, "unreachable")).unwrap();
            assert_eq!(body["error"]["message"], "unreachable", "{api:?}");
        }
    }
}
