//! The layer at a model's API: the `tools` of a request body augmented in that API's wire format,
//! and the reasons taken off the tool calls of its answer.
//!
//! A gateway between an agent and its model uses it per request: it knows from the request's path
//! which [`Wire`] the body speaks; [`Wire::augment_tools`] makes the listing of that one request,
//! and [`Wire::strip_answer`] strips its answer against the tools that listing tracks, so that
//! concurrent sessions share nothing. The rules are [`Listing`]'s and [`strip_noting`]'s: this
//! module only says where each API keeps its declarations and its calls. Nothing here reads,
//! writes or prints.
//!
//! ```
//! use reasons::layer::wire::Wire;
//! use serde_json::json;
//!
//! let tools = [
//!     json!({"functionDeclarations": [{"name": "run_shell_command",
//!         "parametersJsonSchema": {"type": "object", "properties": {"command": {"type": "string"}}}}]}),
//!     json!({"googleSearch": {}}),
//! ];
//! let listing = Wire::Gemini.augment_tools(&tools);
//! assert!(listing.changed);
//! assert!(listing.tools[0]
//!     .pointer("/functionDeclarations/0/parametersJsonSchema/properties/reason")
//!     .is_some());
//!
//! let mut answer = json!({"candidates": [{"content": {"role": "model", "parts": [
//!     {"functionCall": {"name": "run_shell_command", "args": {"command": "ls", "reason": "See what is here"}}}
//! ]}}]});
//! let mut taken = Vec::new();
//! assert!(Wire::Gemini.strip_answer(&mut answer, &listing.tracked, &mut taken));
//! assert_eq!(taken[0].to_string(), "run_shell_command: See what is here");
//! assert_eq!(
//!     answer.pointer("/candidates/0/content/parts/0/functionCall/args"),
//!     Some(&json!({"command": "ls"}))
//! );
//! ```

use serde_json::Value;

use super::{strip_noting, Listing, TakenReason, ToolNames};
use crate::envelope::{gemini_group, Envelope};

/// The wire format of a model API: where its requests declare tools and its answers carry calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Anthropic Messages (`/v1/messages`, and `/v1/messages/count_tokens`): `tools[]` with an
    /// `input_schema`; calls are `tool_use` blocks of `content[]`.
    Anthropic,
    /// OpenAI Chat Completions (`…/chat/completions`): `tools[].function.parameters`; calls are
    /// `choices[].message.tool_calls[]`.
    Chat,
    /// OpenAI Responses (`…/responses`): `tools[]` of `type: function`; calls are `function_call`
    /// items of `output[]`.
    Responses,
    /// Gemini (`…/models/MODEL:generateContent`, `…:streamGenerateContent?alt=sse`):
    /// `tools[].functionDeclarations[]`; calls are `functionCall` parts of
    /// `candidates[].content.parts[]`.
    Gemini,
}

/// One request's listing: its `tools` as they go upstream, and the tools whose calls in its
/// answer lose their reason.
#[derive(Debug, Clone, PartialEq)]
pub struct AugmentedTools {
    /// The `tools` to send: the request's own, each readable declaration augmented.
    pub tools: Vec<Value>,
    /// The names tracked by this listing.
    pub tracked: ToolNames,
    /// Whether `tools` differs from the request's: when not, the body can go on byte for byte.
    pub changed: bool,
}

impl Wire {
    /// Where this API's declarations and calls keep their name, schema and arguments.
    fn envelope(self) -> Envelope {
        match self {
            Wire::Anthropic => Envelope::Anthropic,
            Wire::Chat => Envelope::OpenAiFunction,
            Wire::Responses => Envelope::Responses,
            Wire::Gemini => Envelope::Gemini,
        }
    }

    /// Whether an entry of a request's `tools` is one this API declares functions with: a Gemini
    /// tool holding `functionDeclarations`, or a function declaration in the API's own shape.
    /// Anything else (server-side tools, `custom`, `local_shell`, `tool_search` and `namespace`
    /// tools, a shape from another API) goes upstream as it came.
    fn reads(self, tool: &Value) -> bool {
        let kind = tool.get("type").and_then(Value::as_str);
        let declares_a_function = match self {
            Wire::Gemini => return gemini_group(tool).is_some(),
            // Anthropic server tools carry a versioned `type`; custom tools none, or `custom`.
            Wire::Anthropic => matches!(kind, None | Some("custom")),
            // Codex CLI declares client-run tools of other types with object schemas too
            // (`tool_search`); their calls come back as other items, which are never stripped,
            // so their declarations must not ask for a reason either.
            Wire::Chat | Wire::Responses => kind == Some("function"),
        };
        declares_a_function && Envelope::of_declaration(tool) == Some(self.envelope())
    }

    /// Makes one listing of a request body's top-level `tools` array, under §1's rules
    /// (collisions, unreadable declarations and duplicate names are left alone and not tracked).
    pub fn augment_tools(self, tools: &[Value]) -> AugmentedTools {
        let mut listing = Listing::new();
        let published: Vec<Value> = tools
            .iter()
            .map(|tool| {
                if self.reads(tool) {
                    listing.add(tool)
                } else {
                    listing.leave_alone(tool);
                    tool.clone()
                }
            })
            .collect();
        AugmentedTools {
            changed: published != tools,
            tools: published,
            tracked: listing.tracked(),
        }
    }

    /// Takes the reason off one complete call in this API's shape, in place, noting it: a call
    /// assembled from a stream's fragments, a Responses `output_item.done` item, a Gemini part.
    /// A call in any other shape (an Anthropic `server_tool_use`, a Responses `mcp_call` or
    /// `custom_tool_call`) runs elsewhere than in the agent and is left as it came. Returns
    /// whether the call changed.
    pub fn strip_call(
        self,
        call: &mut Value,
        tracked: &ToolNames,
        taken: &mut Vec<TakenReason>,
    ) -> bool {
        Envelope::of_call(call) == Some(self.envelope()) && strip_noting(call, tracked, taken)
    }

    /// Takes the reason off every call of an answer body in place, noting each in the order the
    /// calls appear, and returns whether the body changed:
    ///
    /// - Anthropic: `content[]` `tool_use` blocks;
    /// - Chat: `choices[].message.tool_calls[]`;
    /// - Responses: `output[]` `function_call` items (give it the `response` of a
    ///   `response.completed` event);
    /// - Gemini: `candidates[].content.parts[]` `functionCall` parts, in one answer, one streamed
    ///   chunk, or the array a `streamGenerateContent` without `alt=sse` answers with.
    pub fn strip_answer(
        self,
        answer: &mut Value,
        tracked: &ToolNames,
        taken: &mut Vec<TakenReason>,
    ) -> bool {
        if tracked.is_empty() {
            return false;
        }
        let mut strip =
            |changed: bool, call: &mut Value| self.strip_call(call, tracked, taken) | changed;
        match self {
            Wire::Anthropic => items(answer, "content").fold(false, &mut strip),
            Wire::Chat => items(answer, "choices")
                .filter_map(|choice| choice.get_mut("message"))
                .flat_map(|message| items(message, "tool_calls"))
                .fold(false, &mut strip),
            Wire::Responses => items(answer, "output").fold(false, &mut strip),
            Wire::Gemini => {
                let answers: Vec<&mut Value> = match answer {
                    Value::Array(answers) => answers.iter_mut().collect(),
                    answer => vec![answer],
                };
                answers
                    .into_iter()
                    .flat_map(|answer| items(answer, "candidates"))
                    .filter_map(|candidate| candidate.get_mut("content"))
                    .flat_map(|content| items(content, "parts"))
                    .fold(false, &mut strip)
            }
        }
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
mod tests;
