//! One source being read: [`Reading`], the rules of the source and where the events they let
//! through go, which every driver hands what the call reader finds, in the source's order:
//! [`read_whole`] and [`read_after`] (one source from start to end on the calling thread, here), `pieces.rs` (one
//! large file in pieces, on several threads) and `store.rs` (an agent's store, row by row).

use std::io::{self, BufRead};

use super::call_reader::CallReader;
use super::events::{Event, ReadSummary};
use super::options::ReadOptions;
use super::source_rules::{Item, Offset, Rules};
use crate::jsonl::start::Start;

/// The rules of one source and the sink of its events: what each way of reading a source
/// shares, so that none of them applies the rules its own way.
pub(crate) struct Reading<'r, 's> {
    rules: Rules<'r>,
    sink: &'s mut dyn FnMut(Event) -> io::Result<()>,
}

impl<'r, 's> Reading<'r, 's> {
    /// The reading of `source` (the name records carry), handing its events to `sink`.
    pub(crate) fn new(
        source: &'r str,
        options: &'r ReadOptions,
        sink: &'s mut dyn FnMut(Event) -> io::Result<()>,
    ) -> Reading<'r, 's> {
        Reading {
            rules: Rules::new(source, options),
            sink,
        }
    }

    /// What the call reader found, its lines and events counted from `offset` on.
    pub(crate) fn apply(&mut self, item: Item, offset: Offset) -> io::Result<()> {
        self.rules.apply(item, offset, &mut *self.sink)
    }

    /// The source ended after `events` events on `lines` lines.
    pub(crate) fn finish(self, events: u64, lines: u64) -> ReadSummary {
        self.rules.finish(events, lines)
    }
}

/// Reads one log as [`super::read_log`] describes, from start to end on this thread: its start
/// tells how it is laid out.
pub(crate) fn read_whole<R: BufRead>(
    source: &str,
    mut input: R,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Event) -> io::Result<()>,
) -> io::Result<ReadSummary> {
    let start = Start::read(&mut input)?;
    read_after(source, start, input, options, sink)
}

/// Reads the rest of a log whose start is read, on this thread, as the start told.
pub(crate) fn read_after<R: BufRead>(
    source: &str,
    start: Start,
    input: R,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Event) -> io::Result<()>,
) -> io::Result<ReadSummary> {
    let mut reading = Reading::new(source, options, sink);
    let mut apply = |item| reading.apply(item, Offset::default());
    let mut reader = CallReader::new(options, &mut apply);
    let lines = reader.read_after(start, input)?;
    let events = reader.finish()?;
    Ok(reading.finish(events, lines))
}
