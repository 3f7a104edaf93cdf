//! One source read from start to end on the calling thread: what the call reader finds goes
//! straight to the rules of the source. (A large file is read in pieces, `pieces.rs`; an agent's
//! store row by row, `store.rs`.)

use std::io::{self, BufRead};

use super::call_reader::CallReader;
use super::events::{Event, ReadSummary};
use super::options::ReadOptions;
use super::source_rules::{Offset, Rules};

/// Reads one log as [`super::read_log`] describes.
pub(crate) fn read_whole<R: BufRead>(
    source: &str,
    input: R,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Event) -> io::Result<()>,
) -> io::Result<ReadSummary> {
    let mut rules = Rules::new(source, options);
    let offset = Offset::default();
    let mut apply = |item| rules.apply(item, offset, sink);
    let mut reader = CallReader::new(options, &mut apply);
    let lines = reader.read_start(input)?;
    let events = reader.finish()?;
    Ok(rules.finish(events, lines))
}
