//! The walk over one event: every shape looks at every object, in document order.
//!
//! Shapes are recognised wherever they sit (a request body, an export, a cassette wraps them in
//! ways no list of paths keeps up with), so the walk descends everywhere except where a shape says
//! the subtree is a result, a mirror or a call already taken.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{
    anthropic, catalogue, gemini, kimi, mcp, openai_chat, openhands, responses, swe_agent,
};
use crate::formats::Format;

/// What a shape makes of one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Visit {
    /// Not this shape's: let the next one look.
    Pass,
    /// Handled, or a result or mirror: nothing below it is a call.
    Skip,
    /// Look inside.
    Descend,
    /// Look inside a streamed response's final snapshot, where the items already streamed
    /// one by one come again.
    Snapshot,
    /// Look inside a streamed item that is complete: the snapshot after it repeats it.
    Streamed,
}

/// One shape's look at an object: the object, the key that holds it (array items: the key that
/// holds the array), and the walk to hand calls to.
type Shape = fn(&Map<String, Value>, Option<&str>, &mut Walker) -> Visit;

/// Catalogue entries: a tool's name and whether it declares a `reason` of its own.
pub(crate) type Declarations = Vec<(String, bool)>;

/// Every shape, in the order they look at an object. Wrappers that hide or mirror calls (Kimi
/// events, OpenHands actions and observations, SWE-agent trajectories) come before the shapes
/// they contain.
const SHAPES: [Shape; 8] = [
    kimi::visit,
    openhands::visit,
    swe_agent::visit,
    mcp::visit,
    anthropic::visit,
    responses::visit,
    gemini::visit,
    openai_chat::visit,
];

/// A call as a shape found it, before the rules that need the whole source.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) line: u64,
    pub(crate) event: u64,
    pub(crate) format: Format,
    pub(crate) session: Option<String>,
    pub(crate) timestamp: Option<String>,
    pub(crate) call_id: Option<String>,
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    /// The arguments cannot carry a reason whatever they hold (a provider-hosted tool).
    pub(crate) freeform: bool,
}

/// What a shape hands the walker; where and when come from the walk.
pub(crate) struct Call {
    pub(crate) format: Format,
    pub(crate) call_id: Option<String>,
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    pub(crate) freeform: bool,
}

/// Where the event sits in the source, for the shapes that assemble a call from several
/// fragments and hand it over later.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub(crate) line: u64,
    pub(crate) event: u64,
    pub(crate) session: Option<String>,
    pub(crate) timestamp: Option<String>,
}

/// What a source remembers from one event to the next.
#[derive(Debug, Default)]
pub(crate) struct SourceState {
    /// Tool name → whether the catalogue recorded in the log gives it a `reason` of its own.
    pub(crate) declared: HashMap<String, bool>,
    /// A session id that a whole stream shares (Codex names it once, in `session_meta`).
    pub(crate) session: Option<String>,
    /// Call ids a streamed response already delivered item by item.
    pub(crate) streamed_ids: HashSet<String>,
    pub(crate) chat_stream: openai_chat::Assembly,
    pub(crate) anthropic_stream: anthropic::Assembly,
}

/// Maps an object's place in document order to its line.
pub(crate) enum Lines {
    /// A JSONL event: everything in it is on its line.
    Fixed(u64),
    /// A single document: the line of each `{`, in document order.
    Objects(Vec<u32>),
}

impl Lines {
    /// Records the line of each object's opening brace, in document order. The parser visits
    /// objects in the same order, so the n-th object it builds is the n-th brace found here.
    /// `before` is how many lines of the input precede `text`.
    pub(crate) fn of_document(text: &[u8], before: u64) -> Lines {
        let mut lines = Vec::new();
        let mut line = u32::try_from(before + 1).unwrap_or(u32::MAX);
        let mut in_string = false;
        let mut escaped = false;
        for &byte in text {
            if byte == b'\n' {
                // Past four billion lines the number sticks: a wrong line, never a panic.
                line = line.saturating_add(1);
            }
            if in_string {
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == b'"' {
                    in_string = false;
                }
            } else if byte == b'"' {
                in_string = true;
            } else if byte == b'{' {
                lines.push(line);
            }
        }
        Lines::Objects(lines)
    }

    fn line(&self, ordinal: usize) -> u64 {
        match self {
            Lines::Fixed(line) => *line,
            Lines::Objects(lines) => lines.get(ordinal).map_or(1, |&line| u64::from(line)),
        }
    }
}

/// The session and timestamp in force while inside an object.
type Context = (Option<String>, Option<String>);

/// One walk over one event.
pub(crate) struct Walker<'a> {
    pub(crate) state: &'a mut SourceState,
    lines: &'a Lines,
    /// Ordinal of the next object in document order.
    ordinal: usize,
    /// Ordinal of the object the shapes are looking at.
    current: usize,
    event: u64,
    session: Option<String>,
    timestamp: Option<String>,
    in_snapshot: bool,
    in_streamed: bool,
    found: Vec<Found>,
    catalogue: Declarations,
}

impl<'a> Walker<'a> {
    pub(crate) fn new(
        state: &'a mut SourceState,
        lines: &'a Lines,
        first_ordinal: usize,
        event: u64,
    ) -> Walker<'a> {
        Walker {
            state,
            lines,
            ordinal: first_ordinal,
            current: first_ordinal,
            event,
            session: None,
            timestamp: None,
            in_snapshot: false,
            in_streamed: false,
            found: Vec::new(),
            catalogue: Vec::new(),
        }
    }

    /// The calls and catalogue entries the walk found, in document order.
    pub(crate) fn into_found(self) -> (Vec<Found>, Declarations) {
        (self.found, self.catalogue)
    }

    /// The ordinal the next event of the same document starts at.
    pub(crate) fn next_ordinal(&self) -> usize {
        self.ordinal
    }

    pub(crate) fn walk(&mut self, value: &Value, key: Option<&str>) {
        match value {
            Value::Object(map) => self.walk_object(map, key),
            // Array items belong to the key that holds the array (`tool_calls: [...]`).
            Value::Array(items) => items.iter().for_each(|item| self.walk(item, key)),
            _ => {}
        }
    }

    fn walk_object(&mut self, map: &Map<String, Value>, key: Option<&str>) {
        let ordinal = self.ordinal;
        self.ordinal += 1;
        let saved = self.enter_context(map);
        self.current = ordinal;
        let visit = SHAPES
            .iter()
            .map(|visit| visit(map, key, self))
            .find(|visit| *visit != Visit::Pass)
            .unwrap_or(Visit::Descend);
        match visit {
            Visit::Pass | Visit::Descend => self.descend(map),
            Visit::Skip => self.ordinal += map.values().map(count_objects).sum::<usize>(),
            Visit::Snapshot => {
                let outer = std::mem::replace(&mut self.in_snapshot, true);
                self.descend(map);
                self.in_snapshot = outer;
            }
            Visit::Streamed => {
                let outer = std::mem::replace(&mut self.in_streamed, true);
                self.descend(map);
                self.in_streamed = outer;
            }
        }
        if let Some((session, timestamp)) = saved {
            self.session = session;
            self.timestamp = timestamp;
        }
    }

    fn descend(&mut self, map: &Map<String, Value>) {
        for (key, value) in map {
            if key == "tools" && value.is_array() {
                catalogue::read(value, &mut self.catalogue);
                self.ordinal += count_objects(value);
            } else {
                self.walk(value, Some(key));
            }
        }
    }

    /// Takes the session and timestamp an object carries for everything inside it; returns
    /// what to restore when the object is left.
    fn enter_context(&mut self, map: &Map<String, Value>) -> Option<Context> {
        let session = ["sessionId", "session_id"]
            .iter()
            .find_map(|key| map.get(*key).and_then(Value::as_str));
        let timestamp = ["timestamp", "time"]
            .iter()
            .find_map(|key| map.get(*key).and_then(scalar_text));
        if session.is_none() && timestamp.is_none() {
            return None;
        }
        let saved = (self.session.clone(), self.timestamp.clone());
        if let Some(session) = session {
            self.session = Some(session.to_owned());
        }
        if let Some(timestamp) = timestamp {
            self.timestamp = Some(timestamp);
        }
        Some(saved)
    }

    /// Where the object being visited sits.
    pub(crate) fn place(&self) -> Place {
        Place {
            line: self.lines.line(self.current),
            event: self.event,
            session: self.session.clone(),
            timestamp: self.timestamp.clone(),
        }
    }

    /// Records a call found at the object being visited.
    pub(crate) fn call(&mut self, call: Call) {
        let place = self.place();
        self.call_at(call, place);
    }

    /// Records a call that was found (or assembled) at `place`.
    pub(crate) fn call_at(&mut self, call: Call, place: Place) {
        if let Some(id) = &call.call_id {
            if self.in_snapshot && self.state.streamed_ids.contains(id) {
                return;
            }
            if self.in_streamed {
                self.state.streamed_ids.insert(id.clone());
            }
        }
        self.found.push(Found {
            line: place.line,
            event: place.event,
            format: call.format,
            session: place.session,
            timestamp: place.timestamp,
            call_id: call.call_id,
            tool: call.tool,
            arguments: call.arguments,
            freeform: call.freeform,
        });
    }
}

/// How many objects a value holds, itself included: what a skipped subtree adds to the count.
fn count_objects(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(count_objects).sum::<usize>(),
        Value::Array(items) => items.iter().map(count_objects).sum(),
        _ => 0,
    }
}

/// A string as it is; a number (Kimi writes epoch milliseconds, MCP ids) as written.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The string at `key`, when there is one.
pub(crate) fn str_at<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    map.get(key).and_then(Value::as_str)
}

/// A call id: a string, or a number (JSON-RPC) as written.
pub(crate) fn id_at(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(scalar_text)
}

/// The format the whole event belongs to, when its outer record says so: the same tool_use
/// block is `claude-code` in a transcript line and `anthropic` in an API payload.
pub(crate) fn container_format(event: &Value) -> Option<Format> {
    let map = event.as_object()?;
    let kind = str_at(map, "type");
    if map.contains_key("payload")
        && matches!(
            kind,
            Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        )
    {
        return Some(Format::Codex);
    }
    if kind.is_some_and(|kind| kind.starts_with("context.") || kind == "tool.call") {
        return Some(Format::Kimi);
    }
    if map.get("messages").is_some_and(Value::is_array)
        && (map.contains_key("projectHash") || map.contains_key("sessionId"))
    {
        return Some(Format::GeminiCli);
    }
    if map.contains_key("parentUuid")
        || map.contains_key("leafUuid")
        || (matches!(kind, Some("user" | "assistant"))
            && map.get("message").is_some_and(Value::is_object))
    {
        return Some(Format::ClaudeCode);
    }
    if map.get("history").is_some_and(Value::is_array) {
        return Some(Format::SweAgent);
    }
    None
}
