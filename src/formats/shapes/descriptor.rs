//! What one shape tells the reader about itself: the [`Shape`] descriptor. Each file of
//! `shapes/` declares one; the registry (`shapes/mod.rs`) lists them, and the walk's order, the
//! prefilter's tokens, the whole-event rules and the flush at the end of a source all follow from
//! that list.

use std::borrow::Cow;
use std::cell::OnceCell;

use crate::formats::event_walk::{VisitFn, WalkOptions, Walker};
use crate::json::Object;
use crate::record::Format;

/// One format's reader, as data.
pub(crate) struct Shape {
    /// The format its calls are labelled with.
    pub(crate) format: Format,
    /// How it looks at each object of an event. `None` for a format whose calls another shape
    /// finds, inside an outer record that `container` recognises (Claude Code's `tool_use`
    /// blocks are Anthropic's; a Codex rollout wraps OpenAI Responses items).
    pub(crate) visit: Option<VisitFn>,
    /// The JSON tokens (quotes included) one of which every line holding its call, or the state
    /// a call needs (a catalogue, a session), contains: the prefilter skips lines with none. A
    /// shape without tokens does not compile (see the registry).
    pub(crate) tokens: &'static [&'static [&'static str]],
    /// Tokens of lines that only continue or end a call it streams in fragments: searched
    /// only while such a call is open.
    pub(crate) stream_tokens: &'static [&'static str],
    /// Whether an event's outer record says the whole event is in this format.
    pub(crate) container: Option<fn(&Outer<'_>) -> bool>,
    /// What an event whose outer record is this format's can hold, when less than everything.
    pub(crate) holds: Option<WalkOptions>,
    /// How the lines of its events start, when that tells them apart: reading any format, such
    /// a line is searched for this format's tokens only (which `holds` must justify).
    pub(crate) line_start: Option<&'static [u8]>,
    /// Hands over the calls it is still assembling from fragments when the source ends.
    pub(crate) flush: Option<fn(&mut Walker<'_, '_>)>,
}

impl Shape {
    /// A shape that only looks at objects: no streams, no outer record. The other fields are
    /// set with struct update syntax where a shape needs them.
    pub(crate) const fn visiting(
        format: Format,
        visit: VisitFn,
        tokens: &'static [&'static [&'static str]],
    ) -> Shape {
        Shape {
            format,
            visit: Some(visit),
            tokens,
            stream_tokens: &[],
            container: None,
            holds: None,
            line_start: None,
            flush: None,
        }
    }
}

/// The outermost object of an event, for the container tests: its `type` is looked up once, and
/// only when a test asks.
pub(crate) struct Outer<'p> {
    pub(crate) map: Object<'p>,
    kind: OnceCell<Option<Cow<'p, str>>>,
}

impl<'p> Outer<'p> {
    pub(crate) fn new(map: Object<'p>) -> Outer<'p> {
        Outer {
            map,
            kind: OnceCell::new(),
        }
    }

    /// The object's `type`, when it is a string.
    pub(crate) fn kind(&self) -> Option<&str> {
        self.kind
            .get_or_init(|| self.map.get("type").and_then(|kind| kind.as_str()))
            .as_deref()
    }
}
