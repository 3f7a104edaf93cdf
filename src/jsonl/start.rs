//! The start of a source, and what it says of the whole: JSON lines, or one JSON document
//! (pretty-printed trajectories, API payloads, cassettes). Told once, from the first line that is
//! not blank; the bytes read to tell it are kept, so that nothing is read twice and a source that
//! cannot be read again (a FIFO, stdin) loses none of them.

use std::io::{self, Read};
use std::ops::Range;

use serde::de::IgnoredAny;

/// How a source holds its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One event a line: read line by line, and a large file in pieces on several threads.
    Lines,
    /// One JSON document (or several, one after the other): read whole.
    Document,
}

/// The bytes of a source up to the end of its first line that is not blank (and whatever the
/// last read brought past it), with the layout that line tells.
#[derive(Debug)]
pub struct Start {
    /// Every byte read of the source so far.
    head: Vec<u8>,
    /// Where in `head` the first line that is not blank is, with its newline and without a
    /// byte order mark; empty when there is none yet.
    first: Range<usize>,
    /// The number of that line (or of the lines read, when there is none).
    line: u64,
    /// Whether the first line ended before the input did. When it did not, the layout was told
    /// from what there was: final for a file read to its end, not for a file still being
    /// written ([`Start::read_on`]).
    whole: bool,
    layout: Layout,
    /// Where the line being looked at starts, and how many lines are before it.
    line_start: usize,
    lines_before: u64,
}

/// How much the first read of the start takes: a document's first line is short.
const START_READ: usize = 8 * 1024;

impl Start {
    /// Reads `input` up to the end of its first line that is not blank, or to its end.
    pub(crate) fn read<R: Read + ?Sized>(input: &mut R) -> io::Result<Start> {
        let mut start = Start {
            head: Vec::new(),
            first: 0..0,
            line: 0,
            whole: false,
            layout: Layout::Lines,
            line_start: 0,
            lines_before: 0,
        };
        start.read_on(input)?;
        Ok(start)
    }

    /// Goes on reading a start the input ended in (a followed file whose first line was not
    /// written yet when it was opened); tells the layout again only when more came.
    pub(crate) fn read_on<R: Read + ?Sized>(&mut self, input: &mut R) -> io::Result<()> {
        let mut more = false;
        while !self.whole {
            // Reads grow with the line, so that a long one is not read in many small steps.
            let length = self.head.len();
            self.head.resize(length + START_READ.max(length), 0);
            let read = loop {
                match input.read(&mut self.head[length..]) {
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                    read => break read,
                }
            };
            self.head.truncate(length + *read.as_ref().unwrap_or(&0));
            if read? == 0 {
                break;
            }
            more = true;
            self.find_first_line(length);
        }
        if more || self.head.is_empty() {
            self.layout = if starts_document(self.first_line()) {
                Layout::Document
            } else {
                Layout::Lines
            };
        }
        Ok(())
    }

    /// WalkOptions for the first line that is not blank in what was read, the bytes from `new` on
    /// being new, and notes whether it ended.
    fn find_first_line(&mut self, new: usize) {
        let mut search = new.max(self.line_start);
        while let Some(end) = memchr::memchr(b'\n', &self.head[search..]) {
            let end = search + end + 1;
            let from = self.line_from();
            self.lines_before += 1;
            if !trim(&self.head[from..end]).is_empty() {
                (self.first, self.line, self.whole) = (from..end, self.lines_before, true);
                return;
            }
            self.line_start = end;
            search = end;
        }
        // Cut by the end of what was read: the line so far, or none.
        let from = self.line_from();
        let cut = !trim(&self.head[from..]).is_empty();
        self.first = if cut {
            from..self.head.len()
        } else {
            from..from
        };
        self.line = self.lines_before + u64::from(self.line_start < self.head.len());
    }

    /// Where the line being read starts, past a byte order mark on the first.
    fn line_from(&self) -> usize {
        if self.line_start == 0 && self.head.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            self.line_start
        }
    }

    /// How the source holds its events.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Whether the first line ended before the input did.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// The first line that is not blank, with its newline; empty when the source has none.
    pub(crate) fn first_line(&self) -> &[u8] {
        &self.head[self.first.clone()]
    }

    /// Its number; when there is none, the number of (blank) lines read.
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// What was read past the first line.
    pub(crate) fn after_first_line(&self) -> &[u8] {
        &self.head[self.first.end..]
    }

    /// Everything read from the first line on.
    pub(crate) fn into_from_first_line(mut self) -> Vec<u8> {
        self.head.drain(..self.first.start);
        self.head
    }
}

/// Whether the first line opens a pretty-printed document rather than being a JSONL event.
fn starts_document(first_line: &[u8]) -> bool {
    let line = trim(first_line);
    // Only a line that stops where a value opens or goes on can start a document, and only
    // such a line is parsed to see that it is not a whole value: reading the first line of
    // each of many small files with serde_json showed in the time spent on them.
    matches!(line.last(), Some(b'{' | b'[' | b',' | b':'))
        && serde_json::from_slice::<IgnoredAny>(line).is_err()
}

pub(crate) fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|byte| !byte.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|byte| !byte.is_ascii_whitespace())
        .map_or(start, |end| end + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `bytes` a few at a time, as a FIFO's writer may send them.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            let take = self.1.min(self.0.len()).min(buffer.len());
            buffer[..take].copy_from_slice(&self.0[..take]);
            self.0 = &self.0[take..];
            Ok(take)
        }
    }

    fn start(bytes: &[u8]) -> Start {
        let whole = Start::read(&mut &bytes[..]).expect("read");
        for step in [1, 2, 5] {
            let trickled = Start::read(&mut Trickle(bytes, step)).expect("read");
            assert_eq!(trickled.first_line(), whole.first_line(), "{step}");
            assert_eq!((trickled.line, trickled.layout), (whole.line, whole.layout));
        }
        whole
    }

    #[test]
    fn the_first_line_that_is_not_blank_tells_the_layout() {
        let lines = start(b"\n  \n{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(lines.layout(), Layout::Lines);
        assert_eq!((lines.first_line(), lines.line()), (&b"{\"a\":1}\n"[..], 3));
        let document = start(b"\xEF\xBB\xBF{\n  \"a\": 1\n}\n");
        assert_eq!(document.layout(), Layout::Document);
        assert_eq!((document.first_line(), document.line()), (&b"{\n"[..], 1));
        assert_eq!(document.into_from_first_line(), b"{\n  \"a\": 1\n}\n");
    }

    #[test]
    fn a_source_cut_before_its_first_line_ends_is_told_from_what_there_is() {
        let cut = start(b"\n{\"a\":");
        assert!(!cut.is_whole());
        assert_eq!((cut.layout(), cut.line()), (Layout::Document, 2));
        let empty = start(b"\n\n");
        assert_eq!((empty.first_line(), empty.line()), (&b""[..], 2));
        assert_eq!(start(b"\n \n ").line(), 3);
        assert_eq!(start(b"").line(), 0);
    }

    #[test]
    fn a_start_read_on_is_told_again_only_when_more_came() {
        let mut start = Start::read(&mut &b"{\"a\":"[..]).expect("read");
        assert_eq!(start.layout(), Layout::Document);
        start.read_on(&mut &b""[..]).expect("read");
        assert_eq!(start.layout(), Layout::Document);
        start.read_on(&mut &b"1}\n"[..]).expect("read");
        assert_eq!((start.layout(), start.is_whole()), (Layout::Lines, true));
    }
}
