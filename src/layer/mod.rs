//! The reasons layer: one optional `reason` parameter on every tool declaration going out to the
//! model, and the same parameter removed from every call going in to the tool's server.
//!
//! The rules are written once, on plain [`serde_json::Value`]s, so that the [`Reasons`] provider
//! composer, the `filter` command and the `proxy` command all apply the very same ones:
//!
//! - [`Listing`] augments a catalogue (one or several pages of it) and works out which tool names
//!   the layer is responsible for;
//! - [`strip_call`] removes the reason from one call, against such a set of names;
//! - [`wire`] applies both to the bodies of a model API's requests and answers (Anthropic
//!   Messages, OpenAI Chat and Responses, Gemini), for a gateway between an agent and its model.
//!
//! Nothing here decides anything on what a reason says: it is a claim by the model, for a human.

use std::collections::BTreeSet;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

use crate::apis::{gemini_group, Api};
use crate::visible::visible;

pub mod wire;

pub use crate::reason_parameter::{
    reason_property, ReasonPosition, REASON_DESCRIPTION, REASON_PARAM,
};

/// The set of tool names whose calls the layer strips.
pub type ToolNames = BTreeSet<String>;

/// What the layer makes of one tool declaration.
#[derive(Debug, Clone, PartialEq)]
pub enum Declaration {
    /// Readable and free of collisions: the layer adds its parameter and strips calls to it.
    Augmentable {
        /// The tool's name.
        name: String,
        /// The API whose shape the declaration is in: where it keeps its name and schema.
        api: Api,
    },
    /// The tool has a `reason` of its own (declared, or listed in `required`): left alone.
    Collision {
        /// The tool's name.
        name: String,
        /// Whether its `reason` property is exactly the one this layer adds, as in a catalogue
        /// recorded behind the layer.
        layers_own: bool,
    },
    /// No schema the layer can extend without inventing one: passed through as it came.
    Unreadable {
        /// The tool's name, when one could be found.
        name: Option<String>,
    },
}

impl Declaration {
    /// Reads one declaration, in any of the envelopes the layer knows.
    pub fn classify(declaration: &Value) -> Declaration {
        let declared = Api::of_declaration(declaration).and_then(|envelope| {
            let name = envelope.declared_name(declaration)?;
            Some((envelope, name.to_owned()))
        });
        let Some((envelope, name)) = declared else {
            // Nothing the layer can read; a name it shows still keeps that name from being tracked.
            let name = declaration.get("name").and_then(Value::as_str);
            return Declaration::Unreadable {
                name: name.map(str::to_owned),
            };
        };
        let Some(schema) = envelope.schema(declaration).and_then(Value::as_object) else {
            return Declaration::Unreadable { name: Some(name) };
        };
        let properties = match schema.get("properties") {
            None => None,
            Some(Value::Object(properties)) => Some(properties),
            Some(_) => return Declaration::Unreadable { name: Some(name) },
        };
        if let Some(own) = properties.and_then(|properties| properties.get(REASON_PARAM)) {
            // The layer never lists its parameter in `required`: a required one is somebody's.
            let layers_own = *own == reason_property() && !requires_reason(schema);
            return Declaration::Collision { name, layers_own };
        }
        if requires_reason(schema) {
            return Declaration::Collision {
                name,
                layers_own: false,
            };
        }
        // A strict schema (OpenAI's structured outputs, Anthropic's strict tool use) must list
        // every property in `required`: an optional `reason` would make the API refuse the
        // request, and a required one would change the tool. There is no way to extend it. (One
        // that declares a `reason` of its own is a collision, above, like any other.)
        if envelope.is_strict(declaration) {
            return Declaration::Unreadable { name: Some(name) };
        }
        Declaration::Augmentable {
            name,
            api: envelope,
        }
    }

    /// Whether the declaration's `reason` is exactly the one this layer adds (SPEC §1's type
    /// and description, optional): a declaration that has been through the layer already, such
    /// as a catalogue `reasons proxy` augmented, or one recorded behind the layer. Its calls are
    /// the layer's to strip and to audit; any other `reason` is the tool's own.
    pub fn is_the_layers_own(&self) -> bool {
        matches!(
            self,
            Declaration::Collision {
                layers_own: true,
                ..
            }
        )
    }

    /// The tool's name, when the declaration has one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Declaration::Augmentable { name, .. } | Declaration::Collision { name, .. } => {
                Some(name)
            }
            Declaration::Unreadable { name } => name.as_deref(),
        }
    }
}

/// An odd schema, but one whose author plainly means something by the name.
fn requires_reason(schema: &Map<String, Value>) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|required| required.iter().any(|name| name == REASON_PARAM))
}

/// Returns a copy of `declaration` with the reason parameter added at `position` among its
/// properties, or `None` when the layer leaves it alone (unreadable, or a collision).
///
/// `required` is never touched: a model that omits the reason still makes a valid call.
pub fn augment_declaration(declaration: &Value, position: ReasonPosition) -> Option<Value> {
    let Declaration::Augmentable { api: envelope, .. } = Declaration::classify(declaration) else {
        return None;
    };
    let mut augmented = declaration.clone();
    let schema = envelope.schema_mut(&mut augmented)?.as_object_mut()?;
    if !schema.get("type").is_some_and(Value::is_string) {
        schema.insert("type".to_owned(), Value::from("object"));
    }
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?;
    position.put(properties, reason_property());
    Some(augmented)
}

/// One catalogue listing, possibly spread over several pages, and the tool names it leaves the
/// layer responsible for.
///
/// When in doubt, do not strip: a name declared more than once in a listing is tracked only if
/// every one of its declarations was augmented.
#[derive(Debug, Default, Clone)]
pub struct Listing {
    augmented: ToolNames,
    left_alone: ToolNames,
    /// Whether declarations already carrying the layer's own `reason` are tracked.
    claims_the_layers_own: bool,
    /// Where the parameter goes among each declaration's properties.
    position: ReasonPosition,
}

impl Listing {
    /// Starts an empty listing.
    pub fn new() -> Listing {
        Listing::default()
    }

    /// Starts an empty listing that also takes on the declarations the layer augmented already
    /// ([`Declaration::is_the_layers_own`]): they are published as they came, without a second
    /// property, and tracked, so their calls lose the reason here. The gateway's: an MCP tool
    /// that `reasons proxy` augmented reaches the agent's request already carrying the layer's
    /// `reason`, and its calls must reach the agent (and its classifier) without it.
    pub fn claiming_the_layers_own() -> Listing {
        Listing {
            claims_the_layers_own: true,
            ..Listing::default()
        }
    }

    /// The same listing, putting the parameter at `position` among each declaration's
    /// properties (the default is [`ReasonPosition::Last`]).
    pub fn placing(self, position: ReasonPosition) -> Listing {
        Listing { position, ..self }
    }

    /// Augments one page of declarations, returning the copies to publish, in the same order.
    /// Declarations the layer leaves alone come back exactly as they were.
    pub fn add_page(&mut self, declarations: &[Value]) -> Vec<Value> {
        declarations
            .iter()
            .map(|declaration| self.add(declaration))
            .collect()
    }

    /// Augments one declaration and notes its name.
    ///
    /// A Gemini tool (`{"functionDeclarations":[…]}`) is a group of declarations: each is added
    /// in turn, and the tool comes back with the group's copies in their place. Any other key of
    /// the tool, and tools with no declarations (`googleSearch`, `codeExecution`), are left as
    /// they came.
    pub fn add(&mut self, declaration: &Value) -> Value {
        if let Some((key, group)) = gemini_group(declaration) {
            let published = self.add_page(group);
            let mut tool = declaration.clone();
            if let Some(slot) = tool.get_mut(key) {
                *slot = Value::Array(published);
            }
            return tool;
        }
        let classified = Declaration::classify(declaration);
        let name = classified.name().map(str::to_owned);
        if self.claims_the_layers_own && classified.is_the_layers_own() {
            if let Some(name) = name {
                self.augmented.insert(name);
            }
            return declaration.clone();
        }
        match augment_declaration(declaration, self.position) {
            Some(augmented) => {
                if let Some(name) = name {
                    self.augmented.insert(name);
                }
                augmented
            }
            None => {
                if let Some(name) = name {
                    self.left_alone.insert(name);
                }
                declaration.clone()
            }
        }
    }

    /// Notes the names of a declaration (or of a Gemini tool's declarations) that is passed on as
    /// it came, without reading it: a name it shares with an augmented one is then not tracked.
    pub fn leave_alone(&mut self, declaration: &Value) {
        if let Some((_, group)) = gemini_group(declaration) {
            group
                .iter()
                .for_each(|declaration| self.leave_alone(declaration));
        } else if let Some(name) = Declaration::classify(declaration).name() {
            self.left_alone.insert(name.to_owned());
        }
    }

    /// The names whose calls the layer strips once this listing is in force.
    pub fn tracked(&self) -> ToolNames {
        self.augmented
            .difference(&self.left_alone)
            .cloned()
            .collect()
    }
}

/// A call after the layer has seen it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stripped {
    /// The call to forward.
    pub call: Value,
    /// The reason that was removed, whatever its value, when there was one.
    pub reason: Option<Value>,
}

/// Removes the reason from a call to a tracked tool, in any envelope the layer knows.
///
/// Only a call whose arguments are an object (or a JSON string holding one) *and* contain the
/// reason is rebuilt; a string is then re-serialised compactly with its keys in order. Every other
/// call comes back as the very value that was passed in.
pub fn strip_call(mut call: Value, tracked: &ToolNames) -> Stripped {
    let reason = Api::of_call(&call).and_then(|api| {
        let name = api.called_name(&call)?;
        if !tracked.contains(name) {
            return None;
        }
        take_reason(api.arguments_mut(&mut call)?)
    });
    Stripped { call, reason }
}

/// Takes the reason out of a call's complete arguments as a model writes them, JSON text: the
/// reason and the arguments without it. `None` when the text is no JSON object or holds no
/// reason. A stream's fragments, once joined, come here.
pub fn strip_arguments_text(arguments: &str) -> Option<StrippedArguments> {
    if arguments.trim().is_empty() {
        return None;
    }
    let Ok(Value::Object(mut arguments)) = serde_json::from_str::<Value>(arguments) else {
        return None;
    };
    let reason = arguments.shift_remove(REASON_PARAM)?;
    Some(StrippedArguments { reason, arguments })
}

/// The reason taken out of a call's arguments text, and the arguments that remain.
#[derive(Debug, Clone, PartialEq)]
pub struct StrippedArguments {
    /// The reason, whatever its value.
    pub reason: Value,
    /// The arguments without it, in their order.
    pub arguments: Map<String, Value>,
}

impl StrippedArguments {
    /// The arguments as the text a model writes them: compact, keys in order.
    pub fn text(&self) -> String {
        // `Map` serialises as the object it is; the same text `Value::Object` gives.
        serde_json::to_string(&self.arguments).unwrap_or_default()
    }
}

/// Takes the reason out of arguments that carry one, leaving everything else as it was.
fn take_reason(arguments: &mut Value) -> Option<Value> {
    match arguments {
        Value::Object(map) => map.shift_remove(REASON_PARAM),
        Value::String(text) if !text.trim().is_empty() => {
            let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(text) else {
                return None;
            };
            let reason = map.shift_remove(REASON_PARAM)?;
            *text = Value::Object(map).to_string();
            Some(reason)
        }
        _ => None,
    }
}

/// A reason taken off a call on its way to a tool, with what identifies the call.
#[derive(Debug, Clone, PartialEq)]
pub struct TakenReason {
    /// The tool the call was for.
    pub tool: String,
    /// The id the agent's transcript records for the call: the `tool_use` id, a Responses
    /// `call_id`, a Chat `tool_calls[].id`; for an MCP `tools/call` request, the tool-use id its
    /// client sent in `params._meta` (such as Claude Code's `claudecode/toolUseId`).
    pub call_id: Option<String>,
    /// The JSON-RPC id of an MCP `tools/call` request.
    pub request_id: Option<String>,
    /// The reason, whatever its value.
    pub reason: Value,
    /// The call's arguments as they went on without the reason (an object, or JSON text holding
    /// one), so that wherever the reason goes, the call it explains can go with it: the reasons
    /// log reads what the call touched off them. The layer only takes; it does not summarise.
    pub arguments: Value,
}

impl TakenReason {
    /// The reason taken off a call to `tool` whose `arguments` (an object, or JSON text holding
    /// one) remain.
    pub fn new(
        tool: String,
        call_id: Option<String>,
        request_id: Option<String>,
        reason: Value,
        arguments: Value,
    ) -> TakenReason {
        TakenReason {
            tool,
            call_id,
            request_id,
            reason,
            arguments,
        }
    }
}

/// `tool: reason`, on one line, for the human watching. What a terminal would interpret is shown
/// as visible marks ([`crate::visible`]) so that a model's text can neither break the line nor
/// drive the terminal.
impl fmt::Display for TakenReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&visible(&self.tool))?;
        f.write_str(": ")?;
        match &self.reason {
            Value::String(text) => f.write_str(&visible(text)),
            other => f.write_str(&visible(&other.to_string())),
        }
    }
}

/// [`strip_call`] in place, noting the reason taken off with the tool and the call's ids.
/// Returns whether the call changed.
pub fn strip_noting(call: &mut Value, tracked: &ToolNames, taken: &mut Vec<TakenReason>) -> bool {
    Api::of_call(call).is_some_and(|api| strip_noting_as(api, call, tracked, taken))
}

/// [`strip_noting`] on a call whose API is already known (a caller that recognised it, or
/// found it where only that API's calls are): the call is read in that API's shape, not
/// recognised again.
pub(crate) fn strip_noting_as(
    api: Api,
    call: &mut Value,
    tracked: &ToolNames,
    taken: &mut Vec<TakenReason>,
) -> bool {
    let Some(tool) = api
        .called_name(call)
        .filter(|name| tracked.contains(*name))
        .map(str::to_owned)
    else {
        return false;
    };
    let (call_id, request_id) = api.ids(call);
    let Some(arguments) = api.arguments_mut(call) else {
        return false;
    };
    let Some(reason) = take_reason(arguments) else {
        return false;
    };
    taken.push(TakenReason::new(
        tool,
        call_id,
        request_id,
        reason,
        arguments.clone(),
    ));
    true
}

/// Why a provider could not list its tools.
pub type ListError = Box<dyn std::error::Error + Send + Sync>;

/// The answer to one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The id of the call this answers, when the call had one.
    pub call_id: Option<String>,
    /// What the tool returned, or what went wrong.
    pub content: Value,
    /// Whether the call failed.
    pub is_error: bool,
}

impl ToolResult {
    /// A failed call, with a message saying why.
    pub fn error(call_id: Option<String>, message: impl Into<String>) -> ToolResult {
        ToolResult {
            call_id,
            content: Value::String(message.into()),
            is_error: true,
        }
    }
}

/// Anything that can publish a catalogue of tools and run calls to them: a registry, a server
/// connection, or another layer wrapped around one.
pub trait Provider: Send + Sync {
    /// The tool declarations to show the model.
    ///
    /// A provider that cannot list its tools fails: a silently shorter catalogue leaves a model
    /// wondering where a capability went.
    fn list_tools(&self) -> Result<Vec<Value>, ListError>;

    /// Runs a batch of calls. Never fails: one result per call, in the caller's order.
    fn execute(&self, calls: Vec<Value>) -> Vec<ToolResult>;
}

/// The reasons layer as a provider composer: it stacks wherever a provider goes.
///
/// Put it under the permission layer (so the human's prompt still sees the reason in the call's
/// arguments) and over everything else (so no layer that inspects arguments sees a parameter that
/// is not the server's).
#[derive(Debug)]
pub struct Reasons<P> {
    inner: P,
    /// Where the parameter goes among each declaration's properties.
    position: ReasonPosition,
    /// `None` until the first listing: before it, nothing is stripped.
    tracked: Mutex<Option<Arc<ToolNames>>>,
}

impl<P: Provider> Reasons<P> {
    /// Wraps a provider.
    pub fn new(inner: P) -> Reasons<P> {
        Reasons {
            inner,
            position: ReasonPosition::default(),
            tracked: Mutex::new(None),
        }
    }

    /// The same layer, putting the `reason` parameter at `position` among each declaration's
    /// properties: [`ReasonPosition::First`] asks the model for the reason before the
    /// arguments, [`ReasonPosition::Last`] (the default) after them. Nothing else changes: the
    /// parameter is never required, and the same catalogue always gives the same declarations.
    ///
    /// ```
    /// use reasons::layer::{ListError, Provider, ReasonPosition, Reasons, ToolResult};
    /// use serde_json::{json, Value};
    ///
    /// struct Shell;
    /// impl Provider for Shell {
    ///     fn list_tools(&self) -> Result<Vec<Value>, ListError> {
    ///         Ok(vec![json!({"type": "function", "function": {"name": "bash",
    ///             "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
    ///                            "required": ["command"]}}})])
    ///     }
    ///     fn execute(&self, calls: Vec<Value>) -> Vec<ToolResult> {
    ///         calls.iter().map(|_| ToolResult::error(None, "not run")).collect()
    ///     }
    /// }
    ///
    /// let layer = Reasons::new(Shell).reason_position(ReasonPosition::First);
    /// let tools = layer.list_tools().unwrap();
    /// let properties = tools[0]["function"]["parameters"]["properties"].as_object().unwrap();
    /// assert_eq!(properties.keys().collect::<Vec<_>>(), ["reason", "command"]);
    /// assert_eq!(tools[0]["function"]["parameters"]["required"], json!(["command"]));
    /// ```
    pub fn reason_position(self, position: ReasonPosition) -> Reasons<P> {
        Reasons { position, ..self }
    }

    /// Where this layer puts the `reason` parameter.
    pub fn position(&self) -> ReasonPosition {
        self.position
    }

    /// The wrapped provider.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// The names the last listing left the layer responsible for, sorted: useful in a test, and
    /// when asking why a call's reason was not stripped.
    pub fn augmented_tools(&self) -> Vec<String> {
        self.snapshot()
            .map(|names| names.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// One consistent view of the tracked names, for a whole batch.
    fn snapshot(&self) -> Option<Arc<ToolNames>> {
        self.tracked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl<P: Provider> Provider for Reasons<P> {
    fn list_tools(&self) -> Result<Vec<Value>, ListError> {
        // A provider that dies while listing has not listed: that is a failed listing, and the
        // tracked set stays as the last good listing left it.
        let declarations =
            catch_unwind(AssertUnwindSafe(|| self.inner.list_tools())).map_err(|panic| {
                format!(
                    "tool provider failed to list its tools: {}",
                    panic_message(&*panic)
                )
            })??;
        let mut listing = Listing::new().placing(self.position);
        let augmented = listing.add_page(&declarations);
        *self.tracked.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(Arc::new(listing.tracked()));
        Ok(augmented)
    }

    fn execute(&self, calls: Vec<Value>) -> Vec<ToolResult> {
        if calls.is_empty() {
            return Vec::new();
        }
        let ids: Vec<Option<String>> = calls.iter().map(call_id).collect();
        let forwarded = match self.snapshot() {
            Some(tracked) => calls
                .into_iter()
                .map(|call| strip_call(call, &tracked).call)
                .collect(),
            None => calls,
        };
        let mut results = match catch_unwind(AssertUnwindSafe(|| self.inner.execute(forwarded))) {
            Ok(results) => results,
            Err(panic) => {
                let message = format!("tool provider failed: {}", panic_message(&*panic));
                return ids
                    .into_iter()
                    .map(|id| ToolResult::error(id, message.clone()))
                    .collect();
            }
        };
        // One result per call, whatever the provider did: a missing one is an error for its
        // call, and an extra one answers no call, so nobody downstream can pair it with one.
        if results.len() < ids.len() {
            let missing = ids[results.len()..].iter().cloned();
            results.extend(missing.map(|id| ToolResult::error(id, "no result")));
        }
        results.truncate(ids.len());
        results
    }
}

/// The id of a call in whichever envelope it came.
fn call_id(call: &Value) -> Option<String> {
    Api::of_call(call).and_then(|api| api.call_id(call))
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "it panicked".to_owned()
    }
}

#[cfg(test)]
mod tests;
