//! OpenClaw sessions (`~/.openclaw/agents/<agent>/sessions/<id>.jsonl`): OpenClaw runs on Pi's
//! agent runtime and writes Pi's session format, so Pi's shape reads them, and labels them
//! `openclaw` where the log says whose it is (see `pi.rs`).

use super::descriptor::Shape;
use super::pi;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Openclaw,
    visit: None,
    tokens: pi::TOKENS,
    stream_tokens: &[],
    container: None,
    holds: None,
    line_start: None,
    flush: None,
};
