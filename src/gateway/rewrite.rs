//! What a stream's rewriter gives, and the trait each API's rewriter implements: apart from the
//! gateway's API, so that the rewriters and the gateway need not import each other.

use crate::layer::TakenReason;

/// What a piece of a stream gives to send on.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Output {
    /// The bytes to send, in order.
    pub bytes: Vec<u8>,
    /// The reasons taken off the calls these bytes complete. Log them before sending the bytes:
    /// a hook that runs when the agent receives a call looks for its reason.
    pub reasons: Vec<TakenReason>,
    /// The calls the stream broke off in before they were complete: what was held of them was
    /// dropped, never sent, and nothing of them is logged.
    pub cut: Vec<CutCall>,
}

/// A call a broken stream cut off before it was complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutCall {
    /// Its tool.
    pub tool: String,
    /// Its id, when the stream had given one.
    pub call_id: Option<String>,
}

impl std::fmt::Display for CutCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.call_id {
            Some(id) => write!(f, "{} ({id})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

impl Output {
    /// Adds what comes after: its bytes after these, its reasons after these.
    pub fn append(&mut self, mut after: Output) {
        self.bytes.append(&mut after.bytes);
        self.reasons.append(&mut after.reasons);
        self.cut.append(&mut after.cut);
    }
}

/// Rewrites one API's stream, an event at a time. `Sync`: the gateway's answer body holds one,
/// and hyper takes only bodies it may share between threads.
pub(crate) trait EventRewriter: Send + Sync {
    /// One complete event, as the bytes it came as.
    fn event(&mut self, event: &[u8], out: &mut Output);
    /// The stream broke off (or ended without completing what is held): every call held back
    /// is dropped, noted in `out.cut`, and nothing of it is sent or logged.
    fn cut(&mut self, out: &mut Output);
    /// Whether an event the rewriter cannot read would break the stream here: it may be a piece
    /// of a call whose reason the gateway cannot take off (by default, while a call is held).
    fn unreadable_breaks(&self, _event: &[u8]) -> bool {
        self.holds()
    }
    /// Whether a call's fragments are held back now.
    fn holds(&self) -> bool;
}
