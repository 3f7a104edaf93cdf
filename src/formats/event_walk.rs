//! The walk over one event: every shape looks at every object, in document order.
//!
//! Shapes are recognised wherever they sit (a request body, an export, a cassette wraps them in
//! ways no list of paths keeps up with), so the walk descends everywhere except where a shape says
//! the subtree is a result, a mirror or a call already taken.

use super::audited_arguments::AuditedArguments;
use super::catalogue::{self, Declarations};
use super::fragments::{Fragments, Place};
use crate::json::{Json, Object, Parser, Text};
use crate::jsonl::lines::Lines;
use crate::record::Format;

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

/// One shape's visit to an object: the object, the key that holds it (array items: the key that
/// holds the array), and the walk to hand calls to.
pub(crate) type VisitFn = for<'p> fn(Object<'p>, Option<&str>, &mut Walker<'_, 'p>) -> Visit;

/// What a walk looks for in one event.
#[derive(Clone, Copy)]
pub(crate) struct WalkOptions {
    /// The shapes' visits to each object, in order (see `shapes/mod.rs`).
    pub(crate) shapes: &'static [VisitFn],
    /// Whether a `tools` array is read as a catalogue.
    pub(crate) catalogues: bool,
    /// The keys that name the session of what an object holds, first found first taken.
    pub(crate) sessions: &'static [&'static str],
    /// The keys that give the time of what an object holds (a string, or a number as written).
    pub(crate) times: &'static [&'static str],
}

impl WalkOptions {
    /// Where most logs write the session and the time.
    pub(crate) const SESSIONS: &'static [&'static str] = &["sessionId", "session_id"];
    pub(crate) const TIMES: &'static [&'static str] = &["timestamp", "time"];
}

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
    pub(crate) arguments: AuditedArguments,
    /// The arguments cannot carry a reason whatever they hold (a provider-hosted tool).
    pub(crate) freeform: bool,
    /// Found in a streamed response's final snapshot: a call the stream already delivered
    /// item by item is not a new one.
    pub(crate) in_snapshot: bool,
    /// Found in a complete streamed item, which the snapshot after it repeats.
    pub(crate) in_streamed: bool,
}

/// What a shape hands the walker; where and when come from the walk.
pub(crate) struct Call {
    pub(crate) format: Format,
    pub(crate) call_id: Option<String>,
    pub(crate) tool: String,
    pub(crate) arguments: AuditedArguments,
    pub(crate) freeform: bool,
}

/// The session and timestamp in force while inside an object.
type Context<'p> = (Option<Text<'p>>, Option<Json<'p>>);

/// What one walk found: calls, catalogue entries, the session a Codex log names and the agent
/// a log says wrote it, in document order.
#[derive(Debug)]
pub(crate) struct Walked {
    pub(crate) found: Vec<Found>,
    pub(crate) catalogue: Declarations,
    pub(crate) session: Option<String>,
    pub(crate) agent: Option<NamedAgent>,
}

impl Walked {
    pub(crate) fn is_empty(&self) -> bool {
        self.found.is_empty()
            && self.catalogue.is_empty()
            && self.session.is_none()
            && self.agent.is_none()
    }
}

/// The agent a log says wrote it (a header, an entry only that agent writes), for the calls
/// after it that another shape finds: a Factory Droid session's `tool_use` blocks are
/// Anthropic's, an OpenClaw session's `toolCall` blocks Pi's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NamedAgent {
    /// The format its calls are labelled with.
    pub(crate) agent: Format,
    /// The format of the calls it relabels: the shape its log is written in.
    pub(crate) writes: Format,
}

/// What walks reuse from one event to the next.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// Parses the JSON that arguments given as a string hold.
    inner: Parser,
    /// The last catalogue read, as written, and what it declares: request bodies repeat theirs
    /// in every event.
    catalogue: Option<(String, Declarations)>,
}

/// One walk over one event.
pub(crate) struct Walker<'w, 'p> {
    pub(crate) fragments: &'w mut Fragments,
    lines: &'w Lines,
    scratch: &'w mut Scratch,
    /// Whether records keep the arguments.
    keep_arguments: bool,
    looks: WalkOptions,
    /// Ordinal of the next object in document order.
    ordinal: usize,
    /// Ordinal of the object the shapes are looking at.
    current: usize,
    event: u64,
    session: Option<Text<'p>>,
    timestamp: Option<Json<'p>>,
    in_snapshot: bool,
    in_streamed: bool,
    /// The `type` of the object the shapes are looking at: three of them ask.
    kind: Option<std::borrow::Cow<'p, str>>,
    walked: Walked,
}

impl<'w, 'p> Walker<'w, 'p> {
    /// A walk over an event numbered `event` whose first object is the one numbered
    /// `first_ordinal` in document order, looking for what `looks` says.
    pub(crate) fn new(
        fragments: &'w mut Fragments,
        lines: &'w Lines,
        scratch: &'w mut Scratch,
        keep_arguments: bool,
        (first_ordinal, event): (usize, u64),
        looks: WalkOptions,
    ) -> Walker<'w, 'p> {
        Walker {
            fragments,
            lines,
            scratch,
            keep_arguments,
            looks,
            ordinal: first_ordinal,
            current: first_ordinal,
            event,
            session: None,
            timestamp: None,
            in_snapshot: false,
            in_streamed: false,
            kind: None,
            walked: Walked {
                found: Vec::new(),
                catalogue: Vec::new(),
                session: None,
                agent: None,
            },
        }
    }

    /// What the walk found.
    pub(crate) fn into_walked(self) -> Walked {
        self.walked
    }

    /// The ordinal the next event of the same document starts at.
    pub(crate) fn next_ordinal(&self) -> usize {
        self.ordinal
    }

    pub(crate) fn walk(&mut self, value: Json<'p>, key: Option<&str>) {
        if let Some(map) = value.as_object() {
            self.walk_object(map, key);
        } else if let Some(items) = value.as_array() {
            // Array items belong to the key that holds the array (`tool_calls: [...]`).
            items.for_each(|item| self.walk(item, key));
        }
    }

    fn walk_object(&mut self, map: Object<'p>, key: Option<&str>) {
        let ordinal = self.ordinal;
        self.ordinal += 1;
        let saved = self.enter_context(map);
        self.current = ordinal;
        self.kind = str_at(map, "type");
        let visit = self
            .looks
            .shapes
            .iter()
            .map(|visit| visit(map, key, self))
            .find(|visit| *visit != Visit::Pass)
            .unwrap_or(Visit::Descend);
        match visit {
            Visit::Pass | Visit::Descend => self.descend(map),
            Visit::Skip => self.skip(map.values()),
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

    fn descend(&mut self, map: Object<'p>) {
        for (key, value) in map.iter() {
            // Most values are strings and numbers: nothing below them to walk.
            if !value.is_object() && !value.is_array() {
                continue;
            }
            let key = key.decode();
            let catalogue = self.looks.catalogues && key == "tools";
            if let Some(text) = value.array_text().filter(|_| catalogue) {
                self.catalogue(value, text);
                self.skip(std::iter::once(value));
            } else {
                self.walk(value, Some(&key));
            }
        }
    }

    /// Reads a `tools` array (written as `text`), or takes what the same text declared last.
    fn catalogue(&mut self, tools: Json<'p>, text: &str) {
        let cached = &mut self.scratch.catalogue;
        if cached.as_ref().is_none_or(|(written, _)| written != text) {
            let mut declarations = Declarations::new();
            catalogue::read(&tools.to_value(), &mut declarations);
            *cached = Some((text.to_owned(), declarations));
        }
        if let Some((_, declarations)) = cached {
            self.walked.catalogue.extend(declarations.iter().cloned());
        }
    }

    /// Values not walked still hold objects that count for the place of the ones after them.
    fn skip(&mut self, values: impl Iterator<Item = Json<'p>>) {
        if self.lines.counts_objects() {
            self.ordinal += values.map(count_objects).sum::<usize>();
        }
    }

    /// Takes the session and timestamp an object carries for everything inside it; returns
    /// what to restore when the object is left.
    fn enter_context(&mut self, map: Object<'p>) -> Option<Context<'p>> {
        let session = self
            .looks
            .sessions
            .iter()
            .find_map(|key| map.get(key).and_then(Json::as_text));
        let timestamp = self
            .looks
            .times
            .iter()
            .find_map(|key| map.get(key).filter(|time| is_scalar_text(*time)));
        if session.is_none() && timestamp.is_none() {
            return None;
        }
        let saved = (self.session, self.timestamp);
        if session.is_some() {
            self.session = session;
        }
        if timestamp.is_some() {
            self.timestamp = timestamp;
        }
        Some(saved)
    }

    /// The `type` of the object being visited, when it is a string.
    pub(crate) fn kind(&self) -> Option<std::borrow::Cow<'p, str>> {
        self.kind.clone()
    }

    /// Where the object being visited sits.
    pub(crate) fn place(&self) -> Place {
        Place {
            line: self.lines.line(self.current),
            event: self.event,
            session: self.session.map(|session| session.decode().into_owned()),
            timestamp: self.timestamp.and_then(scalar_text),
        }
    }

    /// Reads a call's arguments as recorded (`None`: it has none).
    pub(crate) fn arguments(&mut self, arguments: Option<Json<'_>>) -> AuditedArguments {
        AuditedArguments::read(arguments, &mut self.scratch.inner, self.keep_arguments)
    }

    /// Reads arguments that arrived as the text of a JSON string (streamed fragments).
    pub(crate) fn string_arguments(&mut self, text: &str) -> AuditedArguments {
        AuditedArguments::string(text, &mut self.scratch.inner, self.keep_arguments)
    }

    /// Reads arguments that arrived as JSON text (a streamed input joined).
    pub(crate) fn json_text_arguments(&self, text: &str) -> AuditedArguments {
        AuditedArguments::json_text(text, self.keep_arguments)
    }

    /// Notes the session a Codex log names once for all its events.
    pub(crate) fn session_meta(&mut self, session: String) {
        self.walked.session = Some(session);
    }

    /// Notes that the log says `agent` wrote it, in the shape whose calls are `writes`.
    pub(crate) fn names_agent(&mut self, agent: Format, writes: Format) {
        self.walked.agent = Some(NamedAgent { agent, writes });
    }

    /// Records a call found at the object being visited.
    pub(crate) fn call(&mut self, call: Call) {
        let place = self.place();
        self.call_at(call, place);
    }

    /// Records a call that was found (or assembled) at `place`.
    pub(crate) fn call_at(&mut self, call: Call, place: Place) {
        self.walked.found.push(Found {
            line: place.line,
            event: place.event,
            format: call.format,
            session: place.session,
            timestamp: place.timestamp,
            call_id: call.call_id,
            tool: call.tool,
            arguments: call.arguments,
            freeform: call.freeform,
            in_snapshot: self.in_snapshot,
            in_streamed: self.in_streamed,
        });
    }
}

/// How many objects a value holds, itself included: what a skipped subtree adds to the count.
fn count_objects(value: Json<'_>) -> usize {
    if let Some(map) = value.as_object() {
        1 + map.values().map(count_objects).sum::<usize>()
    } else if let Some(items) = value.as_array() {
        items.map(count_objects).sum()
    } else {
        0
    }
}

fn is_scalar_text(value: Json<'_>) -> bool {
    value.is_string() || value.as_number().is_some()
}

/// A string as it is; a number (Kimi writes epoch milliseconds, MCP ids) as written.
pub(crate) fn scalar_text(value: Json<'_>) -> Option<String> {
    if let Some(text) = value.as_str() {
        return Some(text.into_owned());
    }
    let number = value.as_number()?;
    Some(
        number
            .parse::<serde_json::Number>()
            .map_or_else(|_| number.to_owned(), |number| number.to_string()),
    )
}

/// The string at `key`, when there is one.
pub(crate) fn str_at<'p>(map: Object<'p>, key: &str) -> Option<std::borrow::Cow<'p, str>> {
    map.get(key).and_then(Json::as_str)
}

/// Whether the value at `key` is the string `text`.
pub(crate) fn str_is(map: Object<'_>, key: &str, text: &str) -> bool {
    map.get(key)
        .and_then(Json::as_text)
        .is_some_and(|found| found.is(text))
}

/// A call id: a string, or a number (JSON-RPC) as written.
pub(crate) fn id_at(map: Object<'_>, key: &str) -> Option<String> {
    map.get(key).and_then(scalar_text)
}
