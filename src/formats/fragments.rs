//! Calls that arrive in fragments over several events (streamed responses), while they are
//! still being joined, and where each started. The shapes that stream (`shapes/anthropic.rs`,
//! `shapes/openai_chat.rs`) fill and empty them; the reading loop asks whether any is open, and a
//! source read in pieces moves them from one piece to the next.

use crate::apis::anthropic::StreamedBlocks;
use crate::apis::openai_chat::StreamedCalls;

/// Where the event sits in the source, for the shapes that assemble a call from several
/// fragments and hand it over later.
#[derive(Debug, Clone, Default)]
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
        self.chat.kept_mut().for_each(&mut rebase);
        self.anthropic.kept_mut().for_each(&mut rebase);
    }
}

/// Streamed Chat calls not yet finished, joined by the API's one rule.
pub(crate) type ChatAssembly = StreamedCalls<Place>;

/// Streamed Anthropic `tool_use` blocks not yet stopped, joined by the API's one rule.
pub(crate) type AnthropicAssembly = StreamedBlocks<Place>;
