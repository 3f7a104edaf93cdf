//! OpenClaw sessions (the rows of `transcript_events` in each agent's
//! `openclaw-agent.sqlite`, read by `formats::store`, and the older
//! `~/.openclaw/agents/<agent>/sessions/<id>.jsonl`): OpenClaw runs on Pi's agent runtime and
//! writes Pi's session entries, so Pi's shape reads them, and labels them `openclaw` where the
//! log says whose it is (see `pi.rs`; a store always says so).

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
