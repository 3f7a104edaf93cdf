//! The reading loop over one source: JSONL line by line or a single document (as its start
//! told, `super::start`), the prefilter, the lines that are not JSON, and serde_json's last word
//! on them. What the lines mean is not its business: each event it parses goes to an
//! [`EventReceiver`], with the lines its objects are on.

use std::io::{self, BufRead, Read};

use serde::de::IgnoredAny;
use serde_json::Value;

use super::prefilter::{Hits, Prefilter};
use super::start::{trim, Layout, Start};
use crate::json::{Json, Parser};

/// A line gathered across reads keeps its buffer up to this size; a longer one lets it go.
const KEPT_BUFFER: usize = 1 << 20;

/// What the line loop hands its events to.
pub(crate) trait EventReceiver {
    /// Whether something is waiting for more of itself (a call streamed in fragments): then the
    /// prefilter passes the lines that only go on with it too.
    fn stream_open(&self) -> bool;

    /// One event: a JSONL line, or a top-level value of a document. `ordinal` is the place of
    /// its first object in document order, to be moved past the objects it holds.
    fn event(&mut self, event: Json<'_>, lines: &Lines, ordinal: &mut usize) -> io::Result<()>;

    /// A line that is not JSON, not UTF-8, or cut short.
    fn malformed(&mut self, line: u64, message: String) -> io::Result<()>;
}

/// Reads lines of JSON and hands each event that may matter to `receiver`.
pub(crate) struct LineReader<E> {
    receiver: E,
    prefilter: &'static Prefilter,
    /// Parse every line in full, not only those the prefilter passes.
    check_every_line: bool,
    /// Parses each line; taken out of the reader while a line's tree is in use.
    parser: Parser,
    /// Where each line of the block being read ends, kept for the next block.
    line_ends: Vec<usize>,
}

impl<E: EventReceiver> LineReader<E> {
    pub(crate) fn new(receiver: E, prefilter: &'static Prefilter, check_every_line: bool) -> Self {
        LineReader {
            receiver,
            prefilter,
            check_every_line,
            parser: Parser::for_events(),
            line_ends: Vec::with_capacity(1024),
        }
    }

    /// What the events were handed to.
    pub(crate) fn receiver(&mut self) -> &mut E {
        &mut self.receiver
    }

    /// The events' receiver, once reading is done.
    pub(crate) fn into_receiver(self) -> E {
        self.receiver
    }

    /// Reads the rest of a source whose start is read: line by line, or the whole of it as one
    /// document, as its start told. A start the input ended in is read on first: a followed
    /// file's first line may still have been being written. Returns the number of lines read.
    pub(crate) fn read_after<R: BufRead>(
        &mut self,
        mut start: Start,
        mut input: R,
    ) -> io::Result<u64> {
        if !start.is_whole() {
            start.read_on(&mut input)?;
        }
        let line = start.line();
        if start.first_line().is_empty() {
            return Ok(line);
        }
        match start.layout() {
            Layout::Document => {
                let mut buffer = start.into_from_first_line();
                input.read_to_end(&mut buffer)?;
                self.document(&buffer, line)?;
                let newlines = memchr::memchr_iter(b'\n', &buffer).count() as u64;
                Ok(line - 1 + newlines + u64::from(!buffer.ends_with(b"\n")))
            }
            Layout::Lines => {
                let prefilter = self.prefilter;
                self.jsonl_line(line, start.first_line(), prefilter)?;
                let rest = start.after_first_line().chain(input);
                Ok(self.jsonl(rest, line + 1, prefilter)? - 1)
            }
        }
    }

    /// Reads a source its start told is JSON lines from its start (the first piece of a file
    /// read in pieces); returns the number of lines read.
    pub(crate) fn read_lines_from_start<R: BufRead>(&mut self, mut input: R) -> io::Result<u64> {
        if input.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
            input.consume(3);
        }
        self.read_more(input, 1)
    }

    /// Reads JSONL lines that go on a source (numbered from 1); returns how many it read.
    pub(crate) fn read_more<R: BufRead>(&mut self, input: R, first_line: u64) -> io::Result<u64> {
        let prefilter = self.prefilter;
        Ok(self.jsonl(input, first_line, prefilter)? - first_line)
    }

    /// Reads JSONL from the line numbered `line` on, straight from the input's buffer: the
    /// prefilter searches each buffered block of whole lines at once and only lines where a
    /// token starts are cut out and parsed. A line that runs past the buffer is gathered in
    /// `partial` first. Every whole line in a block is dealt with before the next read, so a
    /// live stream stays live. Returns the number of the line after the last.
    fn jsonl<R: BufRead>(
        &mut self,
        mut input: R,
        mut line: u64,
        prefilter: &Prefilter,
    ) -> io::Result<u64> {
        let mut partial = Vec::new();
        loop {
            let available = match input.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            let length = available.len();
            if length == 0 {
                if !partial.is_empty() {
                    self.jsonl_line(line, &partial, prefilter)?;
                    line += 1;
                }
                return Ok(line);
            }
            if !partial.is_empty() {
                let Some(end) = memchr::memchr(b'\n', available) else {
                    partial.extend_from_slice(available);
                    input.consume(length);
                    continue;
                };
                partial.extend_from_slice(&available[..=end]);
                input.consume(end + 1);
                self.jsonl_line(line, &partial, prefilter)?;
                line += 1;
                if partial.capacity() > KEPT_BUFFER {
                    partial = Vec::new();
                }
                partial.clear();
                continue;
            }
            match memchr::memrchr(b'\n', available) {
                Some(end) => {
                    line = self.jsonl_block(line, &available[..=end], prefilter)?;
                    partial.extend_from_slice(&available[end + 1..]);
                }
                None => partial.extend_from_slice(available),
            }
            input.consume(length);
        }
    }

    /// Whole lines, the first numbered `line`; returns the number of the line after them. The
    /// lines are found once, by one search for their ends: the prefilter's runs and the lines
    /// it skips both go by them.
    fn jsonl_block(&mut self, line: u64, block: &[u8], prefilter: &Prefilter) -> io::Result<u64> {
        let mut ends = std::mem::take(&mut self.line_ends);
        ends.clear();
        ends.extend(memchr::memchr_iter(b'\n', block));
        let read = self.jsonl_runs(line, block, &ends, prefilter);
        self.line_ends = ends;
        read
    }

    /// The lines of a block, which end at `ends`, run by run.
    fn jsonl_runs(
        &mut self,
        mut line: u64,
        block: &[u8],
        ends: &[usize],
        prefilter: &Prefilter,
    ) -> io::Result<u64> {
        for run in prefilter.runs(block, ends) {
            line = self.jsonl_run(line, block, run.start, &ends[run.lines], run.prefilter)?;
        }
        Ok(line)
    }

    /// Whole lines that one prefilter searches: from `start` of `block`, each ending at the
    /// next of `ends`. Returns the number of the line after them.
    fn jsonl_run(
        &mut self,
        mut line: u64,
        block: &[u8],
        start: usize,
        ends: &[usize],
        prefilter: &Prefilter,
    ) -> io::Result<u64> {
        let Some(&last) = ends.last() else {
            return Ok(line);
        };
        let mut hits = Hits::new(prefilter, &block[start..=last]);
        let mut at = start;
        let mut ends = ends.iter();
        while let Some(hit) = hits.next(at - start, self.receiver.stream_open()) {
            let hit = start + hit;
            // Lines before the one the token is in are skipped, but checked that they look like
            // one whole JSON value: that catches what a writer killed mid-line or a stray text
            // line leaves.
            for &end in ends.by_ref() {
                if end > hit {
                    self.parse_line(line, &block[at..=end])?;
                    line += 1;
                    at = end + 1;
                    break;
                }
                self.check_skipped(line, &block[at..end], LineEnd::Newline)?;
                line += 1;
                at = end + 1;
            }
        }
        for &end in ends {
            self.check_skipped(line, &block[at..end], LineEnd::Newline)?;
            line += 1;
            at = end + 1;
        }
        Ok(line)
    }

    fn check_skipped(&mut self, line: u64, bytes: &[u8], end: LineEnd) -> io::Result<()> {
        let text = trim(bytes);
        if text.is_empty() {
            return Ok(());
        }
        if looks_whole(text) {
            if self.check_every_line {
                return self.validate(line, text, end);
            }
            return Ok(());
        }
        if matches!(text.first(), Some(b'{' | b'[' | b'"')) {
            return self.receiver.malformed(line, cut(end));
        }
        self.receiver
            .malformed(line, "invalid JSON: not a JSON value".to_owned())
    }

    /// Parses a line that holds no call, only to say whether it is JSON, as a line parsed for
    /// its calls would say it.
    fn validate(&mut self, line: u64, text: &[u8], end: LineEnd) -> io::Result<()> {
        let valid = simdutf8::basic::from_utf8(text)
            .ok()
            .is_some_and(|text| self.parser.parse(text).is_ok());
        if valid {
            return Ok(());
        }
        let text = match std::str::from_utf8(text) {
            Ok(text) => text,
            Err(error) => {
                let message = format!("invalid UTF-8 at byte {}", error.valid_up_to() + 1);
                return self.receiver.malformed(line, message);
            }
        };
        match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) => Ok(()),
            Err(error) if error.is_eof() && end == LineEnd::EndOfInput => {
                self.receiver.malformed(line, cut(end))
            }
            Err(error) => self
                .receiver
                .malformed(line, format!("invalid JSON: {error}")),
        }
    }

    /// One line read on its own (the first, and lines longer than the input's buffer).
    fn jsonl_line(&mut self, line: u64, bytes: &[u8], prefilter: &Prefilter) -> io::Result<()> {
        let text = trim(bytes);
        if text.is_empty() {
            return Ok(());
        }
        // The line as written picks the prefilter, as it does for a line in a block: the two
        // must agree on every line however the input was cut into reads.
        if !prefilter
            .for_line(bytes)
            .may_hold_call(text, self.receiver.stream_open())
        {
            return self.check_skipped(line, text, LineEnd::of(bytes));
        }
        self.parse_line(line, bytes)
    }

    /// Parses a line that may hold a call.
    fn parse_line(&mut self, line: u64, bytes: &[u8]) -> io::Result<()> {
        let end = LineEnd::of(bytes);
        let text = trim(bytes);
        let mut parser = std::mem::take(&mut self.parser);
        // A SIMD check says only whether the line is UTF-8; the reference says where it is not.
        let parsed = simdutf8::basic::from_utf8(text)
            .ok()
            .and_then(|text| parser.parse(text).ok());
        let result = match parsed {
            Some(json) => self.receiver.event(json, &Lines::Fixed(line), &mut 0),
            None => self.reference_line(line, text, end),
        };
        self.parser = parser;
        result
    }

    /// A line the tree does not read: serde_json has the last word on what is not JSON (or
    /// not UTF-8), and says why.
    fn reference_line(&mut self, line: u64, text: &[u8], end: LineEnd) -> io::Result<()> {
        let text = match std::str::from_utf8(text) {
            Ok(text) => text,
            Err(error) => {
                let message = format!("invalid UTF-8 at byte {}", error.valid_up_to() + 1);
                return self.receiver.malformed(line, message);
            }
        };
        match serde_json::from_str::<Value>(text) {
            Ok(value) => self.reference_event(&value, &Lines::Fixed(line), &mut 0),
            Err(error) if error.is_eof() && end == LineEnd::EndOfInput => {
                self.receiver.malformed(line, cut(end))
            }
            Err(error) => self
                .receiver
                .malformed(line, format!("invalid JSON: {error}")),
        }
    }

    /// A whole document, which may hold several top-level values (documents written one after
    /// the other): each is one event.
    fn document(&mut self, bytes: &[u8], first_line: u64) -> io::Result<()> {
        let before = first_line - 1;
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => {
                let valid = &bytes[..error.valid_up_to()];
                let line = before + 1 + memchr::memchr_iter(b'\n', valid).count() as u64;
                return self.receiver.malformed(line, "invalid UTF-8".to_owned());
            }
        };
        let lines = Lines::of_document(bytes, before);
        let mut ordinal = 0;
        let mut parser = std::mem::take(&mut self.parser);
        let mut at = 0;
        let mut values = 0;
        let result = loop {
            while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
                at += 1;
            }
            let Some(&first) = bytes.get(at) else {
                break Ok(());
            };
            match parser.parse_next(text, &mut at) {
                // serde_json wants a value that does not close itself (a number, a literal)
                // followed by whitespace or a bracket, a quote, a comma or a colon.
                Ok(json)
                    if matches!(first, b'{' | b'[' | b'"')
                        || matches!(
                            bytes.get(at),
                            None | Some(
                                b' ' | b'\n'
                                    | b'\t'
                                    | b'\r'
                                    | b'"'
                                    | b'['
                                    | b']'
                                    | b'{'
                                    | b'}'
                                    | b','
                                    | b':'
                            )
                        ) =>
                {
                    if let Err(error) = self.receiver.event(json, &lines, &mut ordinal) {
                        break Err(error);
                    }
                    values += 1;
                }
                _ => break self.reference_document(text, values, &lines, &mut ordinal, before),
            }
        };
        self.parser = parser;
        result
    }

    /// Reads a document from its value numbered `from` on with serde_json, which has the last
    /// word on where its JSON goes wrong.
    fn reference_document(
        &mut self,
        text: &str,
        from: usize,
        lines: &Lines,
        ordinal: &mut usize,
        before: u64,
    ) -> io::Result<()> {
        let values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        for value in values.skip(from) {
            match value {
                Ok(value) => self.reference_event(&value, lines, ordinal)?,
                Err(error) => {
                    // Past a syntax error there is no telling where the next value starts.
                    let line = before + error.line() as u64;
                    return self
                        .receiver
                        .malformed(line, format!("invalid JSON: {error}"));
                }
            }
        }
        Ok(())
    }

    /// An event serde_json read where the tree did not: the tree reads its serialisation.
    fn reference_event(
        &mut self,
        value: &Value,
        lines: &Lines,
        ordinal: &mut usize,
    ) -> io::Result<()> {
        let text = value.to_string();
        let mut parser = Parser::default();
        match parser.parse(&text) {
            Ok(json) => self.receiver.event(json, lines, ordinal),
            Err(_) => Ok(()),
        }
    }
}

/// Maps an object's place in document order to its line.
pub(crate) enum Lines {
    /// A JSONL event: everything in it is on its line.
    Fixed(u64),
    /// A single document: the line of each `{`, in document order.
    Objects(Vec<u32>),
}

impl Lines {
    /// Records the line of each object's opening brace, in document order. The parser visits
    /// objects in the same order, so the n-th object it builds is the n-th brace found here.
    /// `before` is how many lines of the input precede `text`.
    pub(crate) fn of_document(text: &[u8], before: u64) -> Lines {
        let mut lines = Vec::new();
        let mut line = u32::try_from(before + 1).unwrap_or(u32::MAX);
        let mut in_string = false;
        let mut escaped = false;
        for &byte in text {
            if byte == b'\n' {
                // Past four billion lines the number sticks: a wrong line, never a panic.
                line = line.saturating_add(1);
            }
            if in_string {
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == b'"' {
                    in_string = false;
                }
            } else if byte == b'"' {
                in_string = true;
            } else if byte == b'{' {
                lines.push(line);
            }
        }
        Lines::Objects(lines)
    }

    /// The line of the object numbered `ordinal` in document order.
    pub(crate) fn line(&self, ordinal: usize) -> u64 {
        match self {
            Lines::Fixed(line) => *line,
            Lines::Objects(lines) => lines.get(ordinal).map_or(1, |&line| u64::from(line)),
        }
    }

    /// Whether objects are told apart by their place in the document.
    pub(crate) fn counts_objects(&self) -> bool {
        matches!(self, Lines::Objects(_))
    }
}

/// Whether a line the prefilter skipped is shaped like one whole JSON value: brackets or quotes
/// that close, a number, or a literal. Cheap enough to run on every byte the prefilter saves.
fn looks_whole(text: &[u8]) -> bool {
    match (text.first(), text.last()) {
        (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']')) => true,
        (Some(b'"'), Some(b'"')) => text.len() >= 2,
        (Some(first), Some(last)) if first == &b'-' || first.is_ascii_digit() => {
            last.is_ascii_digit()
        }
        _ => matches!(text, b"true" | b"false" | b"null"),
    }
}

fn cut(end: LineEnd) -> String {
    match end {
        LineEnd::EndOfInput => "truncated last line".to_owned(),
        LineEnd::Newline => "invalid JSON: the line ends before its value does".to_owned(),
    }
}

/// How a line ends: with its newline, or with the input (the last line, which a writer stopped
/// in the middle of it leaves cut short).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineEnd {
    Newline,
    EndOfInput,
}

impl LineEnd {
    fn of(line: &[u8]) -> LineEnd {
        if line.ends_with(b"\n") {
            LineEnd::Newline
        } else {
            LineEnd::EndOfInput
        }
    }
}
