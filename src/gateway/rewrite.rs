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
}

impl Output {
    /// Adds what comes after: its bytes after these, its reasons after these.
    pub fn append(&mut self, mut after: Output) {
        self.bytes.append(&mut after.bytes);
        self.reasons.append(&mut after.reasons);
    }
}

/// Rewrites one API's stream, an event at a time.
pub(crate) trait EventRewriter: Send {
    /// One complete event, as the bytes it came as.
    fn event(&mut self, event: &[u8], out: &mut Output);
    /// The stream ended: whatever is held back goes out as it came.
    fn end(&mut self, out: &mut Output);
}
