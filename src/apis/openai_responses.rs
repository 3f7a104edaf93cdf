//! OpenAI Responses: `function` tools and `function_call` output items.
//!
//! A streamed answer's call comes whole, up to four times: its arguments in
//! `response.function_call_arguments.delta` events, repeated whole by `…arguments.done`, by
//! `response.output_item.done` and by the `response.completed` copy of the response. A call is
//! its item, known by its `call_id` (else its item `id`), counted once.

use serde_json::{Map, Value};

use super::openai_chat::{error_body, is_a_function, OPENAI};
use super::{items, Api, ApiShape, History, ModelProvider};

/// OpenAI Responses's shape.
pub struct OpenAiResponses;

impl ApiShape for OpenAiResponses {
    fn schema_key(&self, _body: &Map<String, Value>) -> Option<&'static str> {
        Some("parameters")
    }

    fn call_id_key(&self) -> &'static str {
        "call_id"
    }

    fn declares_a_function(&self, tool: &Value) -> bool {
        is_a_function(tool) && Api::of_declaration(tool) == Some(Api::OpenAiResponses)
    }

    /// `output[]` `function_call` items (give it the `response` of a `response.completed`
    /// event); other items (`mcp_call`, `custom_tool_call`) run elsewhere or carry no schema.
    fn answer_calls<'a>(&self, answer: &'a mut Value) -> Vec<&'a mut Value> {
        items(answer, "output").collect()
    }

    /// `input[]` items of type `function_call`.
    fn history(&self) -> Option<History> {
        Some(History {
            key: "input",
            calls: None,
            kind: Some(("type", "function_call")),
        })
    }

    /// `…/responses`.
    fn serves(&self, path: &str) -> bool {
        path.ends_with("/responses")
    }

    fn provider(&self) -> Option<ModelProvider> {
        Some(OPENAI)
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        error_body(status, message)
    }
}
