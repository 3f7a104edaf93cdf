//! Kilo CLI sessions: OpenCode's store under another name (`kilo.db`, the same `part` table),
//! so OpenCode's shape reads them; the store says which agent wrote it (see
//! `crate::formats::store`), and its calls are labelled `kilo`.

use super::descriptor::Shape;
use super::opencode;
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    format: Format::Kilo,
    visit: None,
    tokens: &[opencode::TOKENS],
    stream_tokens: &[],
    container: None,
    holds: None,
    line_start: None,
    flush: None,
};
