//! A source read for its calls: the line loop (`crate::jsonl::lines`) hands each event it
//! parses to the walk, and what the walk finds goes on as [`Item`]s to the rules of the source
//! (`source_rules.rs`), which need the whole source in order.

use std::io::{self, BufRead};

use super::event_walk::{Scratch, Walker};
use super::fragments::Fragments;
use super::options::ReadOptions;
use super::shapes;
use super::source_rules::Item;
use crate::json::Json;
use crate::jsonl::lines::{EventReceiver, LineReader, Lines};
use crate::jsonl::start::Start;
use crate::record::Format;

/// Reads a source, or a piece of one, for its calls.
pub(crate) struct CallReader<'a> {
    lines: LineReader<Finder<'a>>,
}

/// The walk over each event the reading loop parses, and where its findings go.
struct Finder<'a> {
    options: &'a ReadOptions,
    out: &'a mut dyn FnMut(Item) -> io::Result<()>,
    fragments: Fragments,
    scratch: Scratch,
    /// Events parsed so far: JSONL lines, or top-level values of a document.
    events: u64,
}

impl<'a> CallReader<'a> {
    pub(crate) fn new(
        options: &'a ReadOptions,
        out: &'a mut dyn FnMut(Item) -> io::Result<()>,
    ) -> CallReader<'a> {
        CallReader::continuing(options, out, Fragments::default(), 0)
    }

    /// A reader that goes on from where another stopped, with the fragments it left open.
    pub(crate) fn continuing(
        options: &'a ReadOptions,
        out: &'a mut dyn FnMut(Item) -> io::Result<()>,
        fragments: Fragments,
        events: u64,
    ) -> CallReader<'a> {
        let finder = Finder {
            options,
            out,
            fragments,
            scratch: Scratch::default(),
            events,
        };
        let prefilter = shapes::prefilter(options.format);
        CallReader {
            lines: LineReader::new(finder, prefilter, options.check_every_line),
        }
    }

    /// Reads the rest of a source whose start is read (or all of it), as the start told,
    /// without handing over the calls left open at its end ([`CallReader::finish`] does);
    /// returns the number of lines read.
    pub(crate) fn read_after<R: BufRead>(&mut self, start: Start, input: R) -> io::Result<u64> {
        self.lines.read_after(start, input)
    }

    /// Reads a source of JSON lines from its start, as [`CallReader::read_after`] does.
    pub(crate) fn read_lines_from_start<R: BufRead>(&mut self, input: R) -> io::Result<u64> {
        self.lines.read_lines_from_start(input)
    }

    /// Reads JSONL lines that go on a source (numbered from 1); returns how many it read.
    pub(crate) fn read_more<R: BufRead>(&mut self, input: R, first_line: u64) -> io::Result<u64> {
        self.lines.read_more(input, first_line)
    }

    /// The calls still open, and the events parsed.
    pub(crate) fn into_state(self) -> (Fragments, u64) {
        let finder = self.lines.into_receiver();
        (finder.fragments, finder.events)
    }

    /// Hands over the calls of streams the source never finished; returns the events parsed.
    pub(crate) fn finish(mut self) -> io::Result<u64> {
        let finder = self.lines.receiver();
        let lines = Lines::Fixed(1);
        let mut walker = Walker::new(
            &mut finder.fragments,
            &lines,
            &mut finder.scratch,
            finder.options.keep_arguments,
            (0, finder.events),
            shapes::looks(None),
        );
        shapes::flush(&mut walker);
        let walked = walker.into_walked();
        if !walked.is_empty() {
            (finder.out)(Item::Event {
                walked,
                container: None,
                event: finder.events + 1,
                streams_open: false,
            })?;
        }
        Ok(finder.events)
    }
}

impl EventReceiver for Finder<'_> {
    fn stream_open(&self) -> bool {
        !self.fragments.is_idle()
    }

    fn event(&mut self, value: Json<'_>, lines: &Lines, ordinal: &mut usize) -> io::Result<()> {
        self.events += 1;
        let container = shapes::container_format(value);
        let mut walker = Walker::new(
            &mut self.fragments,
            lines,
            &mut self.scratch,
            self.options.keep_arguments,
            (*ordinal, self.events),
            shapes::looks(container),
        );
        walker.walk(value, None);
        *ordinal = walker.next_ordinal();
        let walked = walker.into_walked();
        if walked.is_empty() {
            return Ok(());
        }
        (self.out)(Item::Event {
            walked,
            container,
            event: self.events,
            streams_open: !self.fragments.is_idle(),
        })
    }

    fn malformed(&mut self, line: u64, message: String) -> io::Result<()> {
        (self.out)(Item::Malformed { line, message })
    }
}

/// The format of the first call an event holds, by its shape.
pub(crate) fn first_call_format(event: Json<'_>) -> Option<Format> {
    let mut fragments = Fragments::default();
    let mut scratch = Scratch::default();
    let lines = Lines::Fixed(1);
    let looks = shapes::looks(shapes::container_format(event));
    // Only the format is wanted, not what a record would keep.
    let keep_arguments = false;
    let mut walker = Walker::new(
        &mut fragments,
        &lines,
        &mut scratch,
        keep_arguments,
        (0, 1),
        looks,
    );
    walker.walk(event, None);
    shapes::flush(&mut walker);
    let walked = walker.into_walked();
    walked.found.first().map(|found| found.format)
}
