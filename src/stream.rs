//! The reasons layer on live streams of newline-delimited JSON: one line in, exactly one line out.
//!
//! Two ways to stand in a stream:
//!
//! - [`Filter`] sees one stream that may carry anything (a capture of both directions of an MCP
//!   session, request bodies to a model API, bare calls) and recognises catalogues and calls by
//!   their shape. `reasons filter` is built on it.
//! - [`proxy_halves`] gives the two halves of an MCP stdio proxy, one per direction, that share
//!   what the layer knows: the client's half strips `tools/call` requests and notes which requests
//!   were `tools/list`; the server's half augments exactly the results that answer those requests.
//!   `reasons proxy` is built on them.
//!
//! Either way, a line that is not rewritten comes back as the very bytes that went in, whatever
//! they are: blank, invalid UTF-8, malformed JSON, a notification. A rewritten line keeps its key
//! order and its line ending. Nothing here reads, writes or prints: the caller owns the I/O.
//!
//! ```
//! use reasons::stream::{Filter, Options};
//!
//! let mut filter = Filter::new(Options::default());
//! let listing = filter.line(
//!     br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"fs_write","inputSchema":{"type":"object"}}]}}"#,
//! );
//! assert!(listing.is_rewritten());
//! let call = filter.line(
//!     b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"fs_write\",\"arguments\":{\"path\":\"a\",\"reason\":\"Save the draft\"}}}\n",
//! );
//! assert_eq!(
//!     &call.bytes[..],
//!     b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"fs_write\",\"arguments\":{\"path\":\"a\"}}}\n"
//! );
//! assert_eq!(call.reasons[0].to_string(), "fs_write: Save the draft");
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use memchr::memmem;
use serde_json::Value;

use crate::apis::{gemini_group, Api};
use crate::layer::{
    strip_noting, strip_noting_as, Listing, ReasonPosition, TakenReason, ToolNames,
};

/// Which halves of the layer a [`Filter`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Add the `reason` parameter to catalogues passing by. When off, catalogues pass as they
    /// are but still decide which tools' calls are stripped.
    pub augment: bool,
    /// Take the `reason` off calls to the tools the latest catalogue augmented.
    pub strip: bool,
    /// Where the parameter goes among each declaration's properties (`--reason-position`).
    pub position: ReasonPosition,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            augment: true,
            strip: true,
            position: ReasonPosition::default(),
        }
    }
}

/// One line out of a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Line<'a> {
    /// The line to write: the input itself, or its rewrite with the same line ending.
    pub bytes: Cow<'a, [u8]>,
    /// The reasons taken off calls on this line, in order.
    pub reasons: Vec<TakenReason>,
}

impl<'a> Line<'a> {
    fn untouched(line: &'a [u8]) -> Line<'a> {
        Line {
            bytes: Cow::Borrowed(line),
            reasons: Vec::new(),
        }
    }

    /// Whether the line was rewritten (a catalogue augmented or a reason stripped).
    pub fn is_rewritten(&self) -> bool {
        matches!(self.bytes, Cow::Owned(_))
    }
}

/// The layer over one stream of newline-delimited JSON that may carry anything, recognising
/// catalogues and calls by their shape.
///
/// - Catalogues: MCP `tools/list` results (`result.tools`), request bodies with a `tools` array
///   (OpenAI Chat, OpenAI Responses, Anthropic Messages, Gemini) and bare arrays of declarations
///   (or of Gemini tools, `{"functionDeclarations":[…]}`). Each is
///   a new listing and replaces the set of tracked tools, except that a `tools/list` result that
///   follows one carrying `nextCursor` continues that listing.
/// - Calls on their way to a tool: MCP `tools/call` requests (a retry after `input_required` is
///   one too), bare call objects and arrays of them, and `tools/call` requests inside a JSON-RPC
///   batch; Gemini `functionCall` parts and bare `{"name","args"}` objects count as bare calls.
///   Calls recorded inside messages (assistant `tool_calls`, `tool_use` content blocks,
///   `function_call` items of an `input` transcript, `functionCall` parts of a Gemini request's
///   `contents` or of a model's answer) are history, not forwards: left alone.
///
/// Before the first catalogue nothing is stripped.
#[derive(Debug)]
pub struct Filter {
    options: Options,
    /// `None` until the first catalogue.
    tracked: Option<ToolNames>,
    pages: Pages,
    needles: Needles,
}

impl Filter {
    /// A filter that has seen no catalogue yet.
    pub fn new(options: Options) -> Filter {
        Filter {
            options,
            tracked: None,
            pages: Pages::placing(options.position),
            // The keys of every shape that can be rewritten, or whose catalogue replaces the
            // tracked set; quoted, so that prose mentioning tools does not count.
            needles: Needles::new(&[
                "\"tools\"",
                "\"arguments\"",
                "\"input\"",
                "\"inputSchema\"",
                "\"input_schema\"",
                "\"parameters\"",
                "\"function\"",
                // Gemini: bare declarations and tools (a request body has `"tools"`), and calls:
                // a `functionCall` without `args` has nothing to strip.
                "\"parametersJsonSchema\"",
                "\"parameters_json_schema\"",
                "\"functionDeclarations\"",
                "\"function_declarations\"",
                "\"args\"",
            ]),
        }
    }

    /// The tools whose calls are stripped now, or `None` before the first catalogue: useful in a
    /// test, and when asking why a reason was not taken off.
    pub fn tracked(&self) -> Option<&ToolNames> {
        self.tracked.as_ref()
    }

    /// Passes one line (with or without its line ending) through the layer.
    pub fn line<'a>(&mut self, line: &'a [u8]) -> Line<'a> {
        let (body, ending) = split_ending(line);
        let Some(mut value) = self.needles.parse_candidate(body) else {
            return Line::untouched(line);
        };
        let mut reasons = Vec::new();
        let changed = match &mut value {
            Value::Array(items) if is_catalogue(items) => self.catalogue(items, false, false),
            Value::Array(items) if is_batch(items) => {
                items.iter_mut().fold(false, |changed, item| {
                    self.object(item, &mut reasons) | changed
                })
            }
            // Each call's API is recognised once, then carried to the rules.
            Value::Array(items) => match items.iter().map(call_api).collect::<Option<Vec<_>>>() {
                Some(apis) => items
                    .iter_mut()
                    .zip(apis)
                    .fold(false, |changed, (item, api)| {
                        self.strip(api, item, &mut reasons) | changed
                    }),
                None => false,
            },
            Value::Object(_) => self.object(&mut value, &mut reasons),
            _ => false,
        };
        rewritten(line, changed, &value, ending, reasons)
    }

    /// One JSON object: a JSON-RPC message, a request body, a bare call, or none of these.
    fn object(&mut self, value: &mut Value, reasons: &mut Vec<TakenReason>) -> bool {
        if value.get("method").is_some() {
            return call_api(value).is_some_and(|api| self.strip(api, value, reasons));
        }
        if let Some(result) = list_result(value) {
            let more = has_more(result);
            let continues = self.pages.in_progress();
            return match result.get_mut("tools") {
                Some(Value::Array(tools)) => self.catalogue(tools, continues, more),
                _ => false,
            };
        }
        if value.get("jsonrpc").is_some() {
            return false;
        }
        if let Some(Value::Array(tools)) = value.get_mut("tools") {
            return self.catalogue(tools, false, false);
        }
        call_api(value).is_some_and(|api| self.strip(api, value, reasons))
    }

    fn catalogue(&mut self, tools: &mut Vec<Value>, continues: bool, more: bool) -> bool {
        let page = self.pages.add(tools, continues, more);
        self.tracked = Some(page.tracked);
        match page.augmented {
            Some(augmented) if self.options.augment => {
                *tools = augmented;
                true
            }
            _ => false,
        }
    }

    fn strip(&mut self, api: Api, call: &mut Value, reasons: &mut Vec<TakenReason>) -> bool {
        match &self.tracked {
            Some(tracked) if self.options.strip => strip_noting_as(api, call, tracked, reasons),
            _ => false,
        }
    }
}

/// What the two halves of a proxy share: the tracked tools, and the `tools/list` requests still
/// waiting for their answer.
#[derive(Debug, Default)]
struct Shared {
    /// `None` until the first listing.
    tracked: Mutex<Option<Arc<ToolNames>>>,
    /// Keyed by the request's id as JSON text, so that `1` and `"1"` stay apart; the value says
    /// whether the request carried a cursor, continuing the listing in progress.
    pending_lists: Mutex<HashMap<String, bool>>,
}

impl Shared {
    fn tracked(&self) -> Option<Arc<ToolNames>> {
        self.tracked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, bool>> {
        self.pending_lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The two halves of an MCP stdio proxy, one for each direction, sharing what the layer knows.
///
/// Each half can run on its own thread; they share only a few short locks, so a message in one
/// direction never waits for one in the other. The server's catalogues get the parameter at
/// `position` among each declaration's properties.
pub fn proxy_halves(position: ReasonPosition) -> (ClientToServer, ServerToClient) {
    let shared = Arc::new(Shared::default());
    (
        ClientToServer {
            shared: Arc::clone(&shared),
            // The method names `"tools/call"` and `"tools/list"`, also with an escaped slash.
            needles: Needles::new(&["\"tools/", "\"tools\\/"]),
            reasons_in_meta: false,
        },
        ServerToClient {
            shared,
            pages: Pages::placing(position),
        },
    )
}

/// The client→server half of a proxy: strips `tools/call` requests (including a retry after
/// `input_required`) and notes the ids of `tools/list` requests, so that the other half knows
/// which results are listings.
#[derive(Debug)]
pub struct ClientToServer {
    shared: Arc<Shared>,
    needles: Needles,
    /// Whether a stripped call carries its reason on to the server in `params._meta`.
    reasons_in_meta: bool,
}

impl ClientToServer {
    /// Forwards each reason taken off a `tools/call` request to the server in the request's
    /// `params._meta` (`reasons proxy --meta`, MCP SEP-2817), for servers that audit, instead
    /// of only deleting it: [`crate::apis::mcp::give_invocation_reason`].
    pub fn forward_reasons_in_meta(mut self) -> ClientToServer {
        self.reasons_in_meta = true;
        self
    }

    /// Passes one line from the client through the layer.
    ///
    /// Call it before forwarding the line: a `tools/list` request is noted here, and must be
    /// noted before its answer can arrive.
    pub fn line<'a>(&mut self, line: &'a [u8]) -> Line<'a> {
        let (body, ending) = split_ending(line);
        let Some(mut value) = self.needles.parse_candidate(body) else {
            return Line::untouched(line);
        };
        let tracked = self.shared.tracked();
        let mut reasons = Vec::new();
        let changed = match &mut value {
            Value::Array(items) if is_batch(items) => {
                items.iter_mut().fold(false, |changed, item| {
                    self.message(item, tracked.as_deref(), &mut reasons) | changed
                })
            }
            Value::Object(_) => self.message(&mut value, tracked.as_deref(), &mut reasons),
            _ => false,
        };
        rewritten(line, changed, &value, ending, reasons)
    }

    fn message(
        &self,
        value: &mut Value,
        tracked: Option<&ToolNames>,
        reasons: &mut Vec<TakenReason>,
    ) -> bool {
        match value.get("method").and_then(Value::as_str) {
            Some("tools/call") => {
                let stripped = tracked.is_some_and(|tracked| strip_noting(value, tracked, reasons));
                if stripped && self.reasons_in_meta {
                    if let Some(taken) = reasons.last() {
                        crate::apis::mcp::give_invocation_reason(value, &taken.reason);
                    }
                }
                stripped
            }
            Some("tools/list") => {
                if let Some(id) = value.get("id").and_then(id_key) {
                    let continues = value
                        .get("params")
                        .and_then(|params| params.get("cursor"))
                        .is_some_and(|cursor| !cursor.is_null());
                    self.shared.pending().insert(id, continues);
                }
                false
            }
            _ => false,
        }
    }
}

/// The server→client half of a proxy: augments the results that answer the client's
/// `tools/list` requests, page by page, and publishes the tools it leaves tracked.
#[derive(Debug)]
pub struct ServerToClient {
    shared: Arc<Shared>,
    pages: Pages,
}

impl ServerToClient {
    /// Passes one line from the server through the layer.
    ///
    /// Call it before forwarding the line: the tracked tools are published here, before the
    /// client can read the listing and call one of them.
    pub fn line<'a>(&mut self, line: &'a [u8]) -> Line<'a> {
        let (body, ending) = split_ending(line);
        // Only an answer to a pending `tools/list` request can change, and an error answer must
        // be seen too (to forget the request), so no substring can rule a line out here.
        if self.shared.pending().is_empty() {
            return Line::untouched(line);
        }
        let Some(mut value) = parse(body) else {
            return Line::untouched(line);
        };
        let changed = match &mut value {
            Value::Array(items) if is_batch(items) => items
                .iter_mut()
                .fold(false, |changed, item| self.message(item) | changed),
            Value::Object(_) => self.message(&mut value),
            _ => false,
        };
        rewritten(line, changed, &value, ending, Vec::new())
    }

    fn message(&mut self, value: &mut Value) -> bool {
        if value.get("method").is_some() {
            return false;
        }
        let Some(id) = value.get("id").and_then(id_key) else {
            return false;
        };
        // An error answers the request too: forget it either way.
        let Some(continues) = self.shared.pending().remove(&id) else {
            return false;
        };
        let Some(result) = list_result(value) else {
            return false;
        };
        let more = has_more(result);
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return false;
        };
        let page = self.pages.add(tools, continues, more);
        *self
            .shared
            .tracked
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(page.tracked));
        match page.augmented {
            Some(augmented) => {
                *tools = augmented;
                true
            }
            None => false,
        }
    }
}

/// A listing that may span pages.
#[derive(Debug, Default)]
struct Pages {
    /// The listing whose last page said more were to come.
    in_progress: Option<Listing>,
    /// Where each new listing puts the parameter.
    position: ReasonPosition,
}

/// One page, through the layer.
struct Page {
    /// The augmented declarations, when any declaration was augmented.
    augmented: Option<Vec<Value>>,
    /// The tools tracked by the listing so far. A listing that is still arriving is already in
    /// force: tools of the previous listing that it has not repeated yet are not stripped, which
    /// is the safe side.
    tracked: ToolNames,
}

impl Pages {
    fn placing(position: ReasonPosition) -> Pages {
        Pages {
            in_progress: None,
            position,
        }
    }

    fn in_progress(&self) -> bool {
        self.in_progress.is_some()
    }

    /// Adds a page: to the listing in progress when it `continues` one, else as a new listing;
    /// `more` says whether further pages follow.
    fn add(&mut self, tools: &[Value], continues: bool, more: bool) -> Page {
        let mut listing = match self.in_progress.take() {
            Some(listing) if continues => listing,
            _ => Listing::new().placing(self.position),
        };
        let published = listing.add_page(tools);
        let page = Page {
            augmented: (published != tools).then_some(published),
            tracked: listing.tracked(),
        };
        self.in_progress = more.then_some(listing);
        page
    }
}

/// Substrings without which a line cannot matter to the layer. A key or method spelled with a
/// `\u` escape would hide from them, so such a line is always looked at.
#[derive(Debug)]
struct Needles(Vec<memmem::Finder<'static>>);

impl Needles {
    fn new(needles: &[&str]) -> Needles {
        let mut finders: Vec<_> = needles
            .iter()
            .map(|needle| memmem::Finder::new(needle.as_bytes()).into_owned())
            .collect();
        finders.push(memmem::Finder::new(b"\\u").into_owned());
        Needles(finders)
    }

    /// The line as JSON when it may be rewritten. Most lines of a session (results,
    /// notifications) can hold neither a catalogue nor a call; telling them apart without
    /// building a JSON tree keeps the stream fast.
    fn parse_candidate(&self, body: &[u8]) -> Option<Value> {
        if !self.0.iter().any(|finder| finder.find(body).is_some()) {
            return None;
        }
        parse(body)
    }
}

/// Splits a line into its body and its ending (`\n`, `\r\n`, or nothing on a last line).
fn split_ending(line: &[u8]) -> (&[u8], &[u8]) {
    let body_len = match line {
        [.., b'\r', b'\n'] => line.len() - 2,
        [.., b'\n'] => line.len() - 1,
        _ => line.len(),
    };
    line.split_at(body_len)
}

/// A line's JSON, when it is an object or an array; anything else is never rewritten.
fn parse(body: &[u8]) -> Option<Value> {
    let first = body.iter().find(|byte| !byte.is_ascii_whitespace())?;
    if *first != b'{' && *first != b'[' {
        return None;
    }
    serde_json::from_slice(body).ok()
}

/// The line to write: the original when nothing changed, else the value re-serialised compactly
/// (keys in their order) with the original ending.
fn rewritten<'a>(
    line: &'a [u8],
    changed: bool,
    value: &Value,
    ending: &[u8],
    reasons: Vec<TakenReason>,
) -> Line<'a> {
    if !changed {
        return Line {
            bytes: Cow::Borrowed(line),
            reasons,
        };
    }
    match serde_json::to_vec(value) {
        Ok(mut bytes) => {
            bytes.extend_from_slice(ending);
            Line {
                bytes: Cow::Owned(bytes),
                reasons,
            }
        }
        // A tree that was just parsed always serialises; were it not to, the line goes on as it
        // came and nothing is reported taken off.
        Err(_) => Line::untouched(line),
    }
}

fn is_tools_call(value: &Value) -> bool {
    value.get("method").and_then(Value::as_str) == Some("tools/call")
}

/// The API of a call on its way to a tool: a `tools/call` request, or a bare call in a known
/// envelope. A JSON-RPC message with any other method is never one, whatever else it holds.
fn call_api(value: &Value) -> Option<Api> {
    match value.get("method") {
        Some(_) if !is_tools_call(value) => None,
        _ => Api::of_call(value),
    }
}

/// A declaration in a known envelope, and not a call that happens to share its wrapper (an
/// OpenAI Chat call and declaration both sit under `function`).
fn is_declaration(value: &Value) -> bool {
    Api::of_declaration(value).is_some() && !has_call_arguments(value)
}

fn has_call_arguments(value: &Value) -> bool {
    Api::of_call(value).is_some_and(|envelope| envelope.arguments(value).is_some())
}

/// A bare array of declarations: objects only, at least one declaration (or Gemini tool holding
/// declarations), and no call among them (provider-hosted tools with no schema may sit beside the
/// declarations).
fn is_catalogue(items: &[Value]) -> bool {
    items.iter().all(Value::is_object)
        && items
            .iter()
            .any(|item| is_declaration(item) || gemini_group(item).is_some())
        && !items.iter().any(has_call_arguments)
}

/// A JSON-RPC batch: every element a JSON-RPC message.
fn is_batch(items: &[Value]) -> bool {
    !items.is_empty() && items.iter().all(|item| item.get("jsonrpc").is_some())
}

/// The `result` of a JSON-RPC response that holds a `tools` array.
fn list_result(value: &mut Value) -> Option<&mut Value> {
    value.get("id")?;
    let result = value.get_mut("result")?;
    result.get("tools")?.as_array()?;
    Some(result)
}

/// Whether a `tools/list` result says more pages follow. Clients stop at an empty cursor too.
fn has_more(result: &Value) -> bool {
    result
        .get("nextCursor")
        .and_then(Value::as_str)
        .is_some_and(|cursor| !cursor.is_empty())
}

/// A JSON-RPC id as a key: its JSON text, so that the number `1` and the string `"1"` differ.
fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::String(_) | Value::Number(_) => Some(id.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
