//! The rules that need the whole source, in order: catalogues that make later calls `declared`,
//! the session a Codex log names once, calls a streamed snapshot repeats, and calls a later event
//! records again. They run on what the reading loop found, never on the log itself, so a source
//! read in pieces (see `pieces.rs`) gets them exactly as one read from start to end.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::io;

use super::audited_arguments::key_hasher;
use super::event_walk::{Found, NamedAgent, Walked};
use super::events::{Event, ReadSummary};
use super::options::ReadOptions;
use crate::record::Format;
use crate::record::{CallRecord, ReasonFrom, Status};

/// What reading hands to the rules of the source, in the order of the source.
#[derive(Debug)]
pub(crate) enum Item {
    /// What one event found (nothing is handed over for an event that found nothing).
    Event {
        walked: Walked,
        /// The format the event's outer record says it is in.
        container: Option<Format>,
        /// The event's number (calls assembled from a stream carry the one they started in).
        event: u64,
        /// Whether a stream is open after the event: a call it ends later counts as found here.
        streams_open: bool,
    },
    /// A line that is not JSON, not UTF-8, or cut short.
    Malformed { line: u64, message: String },
}

/// The state of one source's rules.
pub(crate) struct Rules<'a> {
    source: &'a str,
    options: &'a ReadOptions,
    /// Tool name → whether the catalogue recorded in the log gives it a `reason` of its own.
    declared: foldhash::HashMap<String, bool>,
    /// The session id a whole stream shares (Codex names it once, in `session_meta`).
    session: Option<String>,
    /// The agent the stream says wrote it, from where it said so on.
    agent: Option<NamedAgent>,
    /// Call ids a streamed response already delivered item by item.
    streamed_ids: HashSet<String>,
    /// The catalogue the last event that had one listed: request bodies repeat theirs.
    last_listing: Vec<(String, bool)>,
    /// Hash of (call id, tool, arguments) of every call with an id: the repeat rule's memory,
    /// and the one thing here that grows with the source, so it holds keys only.
    seen: HashSet<u64, BuildHasherDefault<AlreadyHashed>>,
    /// The event that first recorded a call, where it can matter later: for calls first seen
    /// in an event that left a stream open, or assembled from one. Only a call a stream ends
    /// later can carry the number of an event handed over before.
    first_events: HashMap<u64, u64, BuildHasherDefault<AlreadyHashed>>,
    /// The calls first seen in the event being handed over, with their events.
    this_event: Vec<(u64, u64)>,
    summary: ReadSummary,
}

impl<'a> Rules<'a> {
    pub(crate) fn new(source: &'a str, options: &'a ReadOptions) -> Rules<'a> {
        Rules {
            source,
            options,
            declared: foldhash::HashMap::default(),
            session: None,
            agent: None,
            streamed_ids: HashSet::new(),
            last_listing: Vec::new(),
            seen: HashSet::default(),
            first_events: HashMap::default(),
            this_event: Vec::new(),
            summary: ReadSummary::default(),
        }
    }

    /// Applies what the reading loop found, in source order; `offset` is where the piece of the
    /// source it came from starts (a piece counts lines and events from its own start).
    pub(crate) fn apply(
        &mut self,
        item: Item,
        offset: Offset,
        sink: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> io::Result<()> {
        match item {
            Item::Event {
                walked,
                container,
                event,
                streams_open,
            } => {
                if let Some(session) = walked.session {
                    self.session = Some(session);
                }
                if let Some(agent) = walked.agent {
                    self.agent = Some(agent);
                }
                // A request body lists its tools after the messages that call them: the event's
                // catalogue applies to the whole event. The same listing again changes nothing.
                if !walked.catalogue.is_empty() && walked.catalogue != self.last_listing {
                    let mut listing: HashMap<&str, bool> = HashMap::new();
                    for (name, declares_own) in &walked.catalogue {
                        // When in doubt, do not strip: one declaration of a name with its own
                        // reason is enough for the name to be declared.
                        *listing.entry(name).or_default() |= declares_own;
                    }
                    for (name, declares_own) in listing {
                        self.declared.insert(name.to_owned(), declares_own);
                    }
                    self.last_listing = walked.catalogue;
                }
                self.this_event.clear();
                let event = event + offset.events;
                for mut found in walked.found {
                    found.line += offset.lines;
                    found.event += offset.events;
                    let remember = streams_open || found.event != event;
                    self.call(found, container, remember, sink)?;
                }
                Ok(())
            }
            Item::Malformed { line, message } => {
                self.summary.malformed_lines += 1;
                sink(Event::Malformed {
                    line: line + offset.lines,
                    message,
                })
            }
        }
    }

    /// What the whole source gave, with the number of events the reading parsed.
    pub(crate) fn finish(mut self, events: u64, lines: u64) -> ReadSummary {
        self.summary.events = events;
        self.summary.lines = lines;
        self.summary
    }

    /// Hands over one call unless it repeats an earlier event's; `remember` when a call a
    /// stream ends later may carry the number of this call's event.
    fn call(
        &mut self,
        found: Found,
        container: Option<Format>,
        remember: bool,
        sink: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> io::Result<()> {
        if let Some(call_id) = &found.call_id {
            if found.in_snapshot && self.streamed_ids.contains(call_id) {
                return Ok(());
            }
            if found.in_streamed {
                self.streamed_ids.insert(call_id.clone());
            }
            let key = call_key(call_id, &found.tool, found.arguments.key);
            if self.is_repeat(key, found.event, remember) {
                self.summary.repeats += 1;
                return Ok(());
            }
        }
        // The shape the call is in, as its outer record says or else its own; the agent the
        // log named relabels only that agent's shape: a Claude Code line appended to a Droid
        // session is still Claude Code's.
        let shape = container.unwrap_or(found.format);
        let named = self
            .agent
            .filter(|named| named.writes == shape)
            .map(|named| named.agent);
        let format = self.options.format.or(named).unwrap_or(shape);
        // Most logs record no catalogue: then no call is declared, and none needs a lookup.
        let declared = !self.declared.is_empty() && self.declared.get(&found.tool) == Some(&true);
        let (status, reason) = if found.freeform {
            (Status::Freeform, None)
        } else if declared && !self.options.audit_declared {
            (Status::Declared, None)
        } else {
            (found.arguments.status, found.arguments.reason)
        };
        let record = CallRecord {
            source: self.source.to_owned(),
            line: found.line,
            format,
            session: found.session.or_else(|| self.session.clone()),
            timestamp: found.timestamp,
            call_id: found.call_id,
            tool: found.tool,
            reason,
            status,
            reason_from: ReasonFrom::Call,
            arguments: found.arguments.kept,
        };
        self.summary.calls += 1;
        self.summary.format.get_or_insert(format);
        sink(Event::Call(record))
    }
}

impl Rules<'_> {
    /// Whether the call `key` of `event` was first recorded by another event; notes it when it
    /// is new. Within one event every call counts, even when ids repeat.
    fn is_repeat(&mut self, key: u64, event: u64, remember: bool) -> bool {
        let first = self
            .this_event
            .iter()
            .find(|(seen, _)| *seen == key)
            .map(|&(_, first)| first);
        if let Some(first) = first {
            return first != event;
        }
        // One probe of a table that outgrows the caches: inserting says whether it was new.
        if !self.seen.insert(key) {
            // Not first seen in this event: it was in an earlier one, which a call a stream
            // ended can still carry; `first_events` has every such call.
            return self.first_events.get(&key) != Some(&event);
        }
        self.this_event.push((key, event));
        if remember {
            self.first_events.insert(key, event);
        }
        false
    }
}

/// How far a piece of a source starts into it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Offset {
    /// Lines before the piece.
    pub(crate) lines: u64,
    /// Events parsed before the piece.
    pub(crate) events: u64,
}

/// The keys of `seen` are hashes already: hashing them again would only cost time.
#[derive(Default)]
struct AlreadyHashed(u64);

impl Hasher for AlreadyHashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Identifies a call across events: the same id, tool and arguments.
fn call_key(call_id: &str, tool: &str, arguments: u64) -> u64 {
    let mut hasher = key_hasher();
    (call_id, tool, arguments).hash(&mut hasher);
    hasher.finish()
}
