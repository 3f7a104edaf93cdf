//! Calls that arrive in fragments over several events (streamed responses), while they are
//! still being joined, and where each started. The shapes that stream (`shapes/anthropic.rs`,
//! `shapes/openai_chat.rs`) fill and empty them; the reading loop asks whether any is open, and a
//! source read in pieces moves them from one piece to the next.

use std::collections::BTreeMap;

/// Where the event sits in the source, for the shapes that assemble a call from several
/// fragments and hand it over later.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub(crate) line: u64,
    pub(crate) event: u64,
    pub(crate) session: Option<String>,
    pub(crate) timestamp: Option<String>,
}

/// Calls that arrive in fragments over several events of a source, still being joined: one
/// assembly per shape that streams.
#[derive(Debug, Default)]
pub(crate) struct Fragments {
    pub(crate) chat: ChatAssembly,
    pub(crate) anthropic: AnthropicAssembly,
}

impl Fragments {
    /// Whether no call is waiting for more fragments: then a line that only continues or ends
    /// a stream changes nothing.
    pub(crate) fn is_idle(&self) -> bool {
        self.chat.is_idle() && self.anthropic.is_idle()
    }

    /// Moves the places of the calls still open `lines` lines and `events` events on: a piece
    /// of a source counts from its own start, the piece after it from another.
    pub(crate) fn rebase(&mut self, lines: u64, events: u64) {
        let mut rebase = |place: &mut Place| {
            place.line += lines;
            place.event += events;
        };
        self.chat.places().for_each(&mut rebase);
        self.anthropic.places().for_each(&mut rebase);
    }
}

/// A streamed call still receiving fragments.
#[derive(Debug)]
pub(crate) struct ChatPending {
    /// Completion id and choice index: the stream the fragments belong to.
    pub(crate) stream: (Option<String>, u64),
    pub(crate) index: u64,
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    pub(crate) arguments: String,
    pub(crate) place: Place,
}

/// Streamed calls not yet finished, in the order they started.
#[derive(Debug, Default)]
pub(crate) struct ChatAssembly {
    pub(crate) pending: Vec<ChatPending>,
}

impl ChatAssembly {
    pub(crate) fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }

    pub(crate) fn places(&mut self) -> impl Iterator<Item = &mut Place> {
        self.pending.iter_mut().map(|pending| &mut pending.place)
    }
}

/// A `tool_use` block whose input is still arriving in `input_json_delta` fragments.
#[derive(Debug)]
pub(crate) struct AnthropicPending {
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    /// The block's `input` when it started, as JSON text: the whole input when no fragment
    /// follows.
    pub(crate) input: String,
    pub(crate) json: String,
    pub(crate) place: Place,
}

/// Streamed blocks not yet stopped, by content block index.
#[derive(Debug, Default)]
pub(crate) struct AnthropicAssembly {
    pub(crate) pending: BTreeMap<u64, AnthropicPending>,
}

impl AnthropicAssembly {
    pub(crate) fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }

    pub(crate) fn places(&mut self) -> impl Iterator<Item = &mut Place> {
        self.pending.values_mut().map(|pending| &mut pending.place)
    }
}
