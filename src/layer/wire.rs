//! The layer at a model's API: the `tools` of a request body augmented in that API's shape, and
//! the reasons taken off the tool calls of its answer.
//!
//! A gateway between an agent and its model uses it per request: it knows from the request's path
//! which [`Api`] the body speaks; [`augment_tools`] makes the listing of that one request, and
//! [`strip_answer`] strips its answer against the tools that listing tracks, so that concurrent
//! sessions share nothing. The rules are [`Listing`]'s and [`super::strip_noting`]'s, and where each API
//! keeps its declarations and calls is its API shape's ([`crate::apis`]): this module only joins them.
//! Nothing here reads, writes or prints.
//!
//! ```
//! use reasons::apis::Api;
//! use reasons::layer::wire::{augment_tools, strip_answer};
//! use reasons::layer::ReasonPosition;
//! use serde_json::json;
//!
//! let tools = [
//!     json!({"functionDeclarations": [{"name": "run_shell_command",
//!         "parametersJsonSchema": {"type": "object", "properties": {"command": {"type": "string"}}}}]}),
//!     json!({"googleSearch": {}}),
//! ];
//! let listing = augment_tools(Api::Gemini, &tools, ReasonPosition::Last);
//! assert!(listing.changed);
//! assert!(listing.tools[0]
//!     .pointer("/functionDeclarations/0/parametersJsonSchema/properties/reason")
//!     .is_some());
//!
//! let mut answer = json!({"candidates": [{"content": {"role": "model", "parts": [
//!     {"functionCall": {"name": "run_shell_command", "args": {"command": "ls", "reason": "See what is here"}}}
//! ]}}]});
//! let mut taken = Vec::new();
//! assert!(strip_answer(Api::Gemini, &mut answer, &listing.tracked, &mut taken));
//! assert_eq!(taken[0].to_string(), "run_shell_command: See what is here");
//! assert_eq!(
//!     answer.pointer("/candidates/0/content/parts/0/functionCall/args"),
//!     Some(&json!({"command": "ls"}))
//! );
//! ```

use serde_json::Value;

use super::{strip_noting_as, Listing, ReasonPosition, TakenReason, ToolNames};
use crate::apis::Api;

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

/// Makes one listing of a request body's top-level `tools` array in `api`'s shape, under §1's
/// rules (collisions, unreadable declarations and duplicate names are left alone and not
/// tracked). A declaration whose `reason` is exactly the layer's own (augmented before, by
/// `reasons proxy`) goes on as it came and is tracked: its calls are the layer's
/// ([`Listing::claiming_the_layers_own`]). Entries that declare no function in the API's own
/// shape (server-side tools, other kinds, a shape from another API) go upstream as they came.
/// The parameter goes at `position` among each declaration's properties.
pub fn augment_tools(api: Api, tools: &[Value], position: ReasonPosition) -> AugmentedTools {
    let mut listing = Listing::claiming_the_layers_own().placing(position);
    let published: Vec<Value> = tools
        .iter()
        .map(|tool| {
            if api.declares_a_function(tool) {
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

/// Takes the reason off one complete call in `api`'s shape, in place, noting it: a call
/// assembled from a stream's fragments, a Responses `output_item.done` item, a Gemini part. A
/// call in any other shape (an Anthropic `server_tool_use`, a Responses `mcp_call` or
/// `custom_tool_call`) runs elsewhere than in the agent and is left as it came. Returns whether
/// the call changed.
pub fn strip_answer_call(
    api: Api,
    call: &mut Value,
    tracked: &ToolNames,
    taken: &mut Vec<TakenReason>,
) -> bool {
    // Recognised once here, then read in its API's shape.
    Api::of_call(call) == Some(api) && strip_noting_as(api, call, tracked, taken)
}

/// Takes the reason off every call of an answer body in place (the calls its shape names, in the
/// order they appear), noting each, and returns whether the body changed.
pub fn strip_answer(
    api: Api,
    answer: &mut Value,
    tracked: &ToolNames,
    taken: &mut Vec<TakenReason>,
) -> bool {
    if tracked.is_empty() {
        return false;
    }
    api.answer_calls(answer)
        .into_iter()
        .fold(false, |changed, call| {
            strip_answer_call(api, call, tracked, taken) | changed
        })
}

#[cfg(test)]
mod tests;
