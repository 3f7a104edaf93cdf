//! The reading loop: JSONL or single document, the prefilter, malformed lines, and the walk over
//! each event that may hold a call. What it finds goes on as [`Item`]s to the rules of the
//! source (`source.rs`), which need the whole source in order.

use std::io::{self, BufRead};

use serde::de::IgnoredAny;
use serde_json::Value;

use super::prefilter::{Hits, Prefilter};
use super::walk::{container_format, Lines, Scratch, Streams, Walked, Walker};
use super::{anthropic, openai_chat, Format, ReadOptions};
use crate::json::{Json, Parser};

/// A line gathered across reads keeps its buffer up to this size; a longer one lets it go.
const KEPT_BUFFER: usize = 1 << 20;

/// What reading hands to the rules of the source, in the order of the source.
#[derive(Debug)]
pub(crate) enum Item {
    /// What one event found (nothing is handed over for an event that found nothing).
    Event {
        walked: Walked,
        /// The format the event's outer record says it is in.
        container: Option<Format>,
        /// The event's number (calls assembled from a stream carry the one they started in).
        event: u64,
        /// Whether a stream is open after the event: a call it ends later counts as found here.
        streams_open: bool,
    },
    /// A line that is not JSON, not UTF-8, or cut short.
    Malformed { line: u64, message: String },
}

pub(crate) struct Reader<'a> {
    options: &'a ReadOptions,
    out: &'a mut dyn FnMut(Item) -> io::Result<()>,
    streams: Streams,
    /// Parses each line; taken out of the reader while a line's tree is in use.
    parser: Parser,
    scratch: Scratch,
    /// Where each line of the block being read ends, kept for the next block.
    line_ends: Vec<usize>,
    /// Events parsed so far: JSONL lines, or top-level values of a document.
    events: u64,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(
        options: &'a ReadOptions,
        out: &'a mut dyn FnMut(Item) -> io::Result<()>,
    ) -> Reader<'a> {
        Reader {
            options,
            out,
            streams: Streams::default(),
            parser: Parser::for_events(),
            scratch: Scratch::default(),
            line_ends: Vec::with_capacity(1024),
            events: 0,
        }
    }

    /// A reader that goes on from where another stopped, with the streams it left open.
    pub(crate) fn continuing(
        options: &'a ReadOptions,
        out: &'a mut dyn FnMut(Item) -> io::Result<()>,
        streams: Streams,
        events: u64,
    ) -> Reader<'a> {
        Reader {
            streams,
            events,
            ..Reader::new(options, out)
        }
    }

    /// Reads a whole source; returns the number of events parsed.
    pub(crate) fn read<R: BufRead>(mut self, input: R) -> io::Result<u64> {
        self.read_start(input)?;
        self.finish()
    }

    /// Reads the start of a source (or all of it) as `read` does, without handing over the
    /// streams left open at its end; returns the number of lines read.
    pub(crate) fn read_start<R: BufRead>(&mut self, mut input: R) -> io::Result<u64> {
        let mut buffer = Vec::new();
        let mut line = 0u64;
        loop {
            buffer.clear();
            if input.read_until(b'\n', &mut buffer)? == 0 {
                return Ok(line);
            }
            line += 1;
            if line == 1 && buffer.starts_with(b"\xEF\xBB\xBF") {
                buffer.drain(..3);
            }
            if !trim(&buffer).is_empty() {
                break;
            }
        }
        if starts_document(&buffer) {
            input.read_to_end(&mut buffer)?;
            self.document(&buffer, line)?;
            let newlines = memchr::memchr_iter(b'\n', &buffer).count() as u64;
            return Ok(line - 1 + newlines + u64::from(!buffer.ends_with(b"\n")));
        }
        let prefilter = Prefilter::of(self.options.format);
        self.jsonl_line(line, &buffer, prefilter)?;
        Ok(self.jsonl(input, line + 1, prefilter)? - 1)
    }

    /// Reads JSONL lines that go on a source (numbered from 1); returns how many it read.
    pub(crate) fn read_more<R: BufRead>(&mut self, input: R, first_line: u64) -> io::Result<u64> {
        let prefilter = Prefilter::of(self.options.format);
        Ok(self.jsonl(input, first_line, prefilter)? - first_line)
    }

    /// The streams still open, and the events parsed.
    pub(crate) fn into_state(self) -> (Streams, u64) {
        (self.streams, self.events)
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
        while let Some(hit) = hits.next(at - start, !self.streams.is_idle()) {
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
                self.check_skipped(line, &block[at..end], false)?;
                line += 1;
                at = end + 1;
            }
        }
        for &end in ends {
            self.check_skipped(line, &block[at..end], false)?;
            line += 1;
            at = end + 1;
        }
        Ok(line)
    }

    fn check_skipped(&mut self, line: u64, bytes: &[u8], last_line: bool) -> io::Result<()> {
        let text = trim(bytes);
        if text.is_empty() {
            return Ok(());
        }
        if looks_whole(text) {
            if self.options.check_every_line {
                return self.validate(line, text, last_line);
            }
            return Ok(());
        }
        if matches!(text.first(), Some(b'{' | b'[' | b'"')) {
            return self.malformed(line, cut(last_line));
        }
        self.malformed(line, "invalid JSON: not a JSON value".to_owned())
    }

    /// Parses a line that holds no call, only to say whether it is JSON, as a line parsed for
    /// its calls would say it.
    fn validate(&mut self, line: u64, text: &[u8], cut_short: bool) -> io::Result<()> {
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
                return self.malformed(line, message);
            }
        };
        match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) => Ok(()),
            Err(error) if error.is_eof() && cut_short => self.malformed(line, cut(true)),
            Err(error) => self.malformed(line, format!("invalid JSON: {error}")),
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
            .may_hold_call(text, !self.streams.is_idle())
        {
            return self.check_skipped(line, text, !bytes.ends_with(b"\n"));
        }
        self.parse_line(line, bytes)
    }

    /// Parses a line that may hold a call.
    fn parse_line(&mut self, line: u64, bytes: &[u8]) -> io::Result<()> {
        let cut_short = !bytes.ends_with(b"\n");
        let text = trim(bytes);
        let mut parser = std::mem::take(&mut self.parser);
        // A SIMD check says only whether the line is UTF-8; the reference says where it is not.
        let parsed = simdutf8::basic::from_utf8(text)
            .ok()
            .and_then(|text| parser.parse(text).ok());
        let result = match parsed {
            Some(json) => self.event(json, &Lines::Fixed(line), &mut 0),
            None => self.reference_line(line, text, cut_short),
        };
        self.parser = parser;
        result
    }

    /// A line the tree does not read: serde_json has the last word on what is not JSON (or
    /// not UTF-8), and says why.
    fn reference_line(&mut self, line: u64, text: &[u8], cut_short: bool) -> io::Result<()> {
        let text = match std::str::from_utf8(text) {
            Ok(text) => text,
            Err(error) => {
                let message = format!("invalid UTF-8 at byte {}", error.valid_up_to() + 1);
                return self.malformed(line, message);
            }
        };
        match serde_json::from_str::<Value>(text) {
            Ok(value) => self.reference_event(&value, &Lines::Fixed(line), &mut 0),
            Err(error) if error.is_eof() && cut_short => self.malformed(line, cut(true)),
            Err(error) => self.malformed(line, format!("invalid JSON: {error}")),
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
                return self.malformed(line, "invalid UTF-8".to_owned());
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
                    if let Err(error) = self.event(json, &lines, &mut ordinal) {
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
                    return self.malformed(line, format!("invalid JSON: {error}"));
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
            Ok(json) => self.event(json, lines, ordinal),
            Err(_) => Ok(()),
        }
    }

    fn event(&mut self, value: Json<'_>, lines: &Lines, ordinal: &mut usize) -> io::Result<()> {
        self.events += 1;
        let container = container_format(value);
        let mut walker = Walker::new(
            &mut self.streams,
            lines,
            &mut self.scratch,
            self.options.keep_arguments,
            *ordinal,
            self.events,
        )
        .within(container);
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
            streams_open: !self.streams.is_idle(),
        })
    }

    /// Hands over the calls of streams the source never finished; returns the events parsed.
    pub(crate) fn finish(mut self) -> io::Result<u64> {
        let lines = Lines::Fixed(1);
        let mut walker = Walker::new(
            &mut self.streams,
            &lines,
            &mut self.scratch,
            self.options.keep_arguments,
            0,
            self.events,
        );
        openai_chat::flush(&mut walker);
        anthropic::flush(&mut walker);
        let walked = walker.into_walked();
        if !walked.is_empty() {
            (self.out)(Item::Event {
                walked,
                container: None,
                event: self.events + 1,
                streams_open: false,
            })?;
        }
        Ok(self.events)
    }

    fn malformed(&mut self, line: u64, message: String) -> io::Result<()> {
        (self.out)(Item::Malformed { line, message })
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

fn cut(at_end: bool) -> String {
    if at_end {
        "truncated last line".to_owned()
    } else {
        "invalid JSON: the line ends before its value does".to_owned()
    }
}

/// The format of the first call an event holds, by its shape.
pub(crate) fn first_call_format(event: Json<'_>) -> Option<Format> {
    let mut streams = Streams::default();
    let mut scratch = Scratch::default();
    let lines = Lines::Fixed(1);
    let mut walker = Walker::new(&mut streams, &lines, &mut scratch, false, 0, 1)
        .within(container_format(event));
    walker.walk(event, None);
    openai_chat::flush(&mut walker);
    anthropic::flush(&mut walker);
    let walked = walker.into_walked();
    walked.found.first().map(|found| found.format)
}

/// Whether the first line opens a pretty-printed document rather than being a JSONL event.
pub(crate) fn starts_document(first_line: &[u8]) -> bool {
    let line = trim(first_line);
    // Only a line that stops where a value opens or goes on can start a document, and only
    // such a line is parsed to see that it is not a whole value: reading the first line of
    // each of many small files with serde_json was 1.5% of the time spent on them.
    matches!(line.last(), Some(b'{' | b'[' | b',' | b':'))
        && serde_json::from_slice::<IgnoredAny>(line).is_err()
}

fn trim(bytes: &[u8]) -> &[u8] {
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

/// Reading text the way the tests of every shape and rule need it.
#[cfg(test)]
pub(crate) mod testing {
    use super::super::{read_log, Event, ReadOptions, ReadSummary};
    use crate::record::{CallRecord, Status};

    /// Everything a read hands over: the records, the malformed lines, the summary.
    pub(crate) fn read_with(
        text: &str,
        options: &ReadOptions,
    ) -> (Vec<CallRecord>, Vec<(u64, String)>, ReadSummary) {
        let mut calls = Vec::new();
        let mut malformed = Vec::new();
        let summary = read_log("test", text.as_bytes(), options, &mut |event| {
            match event {
                Event::Call(record) => calls.push(record),
                Event::Malformed { line, message } => malformed.push((line, message)),
            }
            Ok(())
        })
        .expect("reading from memory does not fail");
        (calls, malformed, summary)
    }

    pub(crate) fn records(text: &str) -> Vec<CallRecord> {
        read_with(text, &ReadOptions::default()).0
    }

    /// `(line, tool, status)` of each call: what most rules are about.
    pub(crate) fn brief(text: &str) -> Vec<(u64, String, Status)> {
        records(text)
            .into_iter()
            .map(|record| (record.line, record.tool, record.status))
            .collect()
    }

    /// `brief` with owned names, for comparing against literals.
    pub(crate) fn expect(calls: &[(u64, &str, Status)]) -> Vec<(u64, String, Status)> {
        calls
            .iter()
            .map(|(line, tool, status)| (*line, (*tool).to_owned(), *status))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, BufRead, Read};

    use super::testing::{brief, expect, read_with, records};
    use super::*;
    use crate::formats::{read_log, Event};
    use crate::record::Status::{Declared, Freeform, Invalid, Missing, Present};

    const TOOL_USE: &str = r#"{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls","reason":"look"}}]}}"#;

    #[test]
    fn jsonl_lines_are_events_with_their_own_line_numbers() {
        let text = format!("{{\"type\":\"summary\"}}\n{TOOL_USE}\n\n{TOOL_USE}\n");
        let text = text.replacen("\"t1\"", "\"t2\"", 1);
        assert_eq!(
            brief(&text),
            expect(&[(2, "Bash", Present), (4, "Bash", Present)])
        );
    }

    #[test]
    fn crlf_line_endings_and_a_missing_last_newline_are_read() {
        let text = format!("{TOOL_USE}\r\n{}", TOOL_USE.replace("t1", "t2"));
        let (calls, malformed, _) = read_with(&text, &ReadOptions::default());
        assert_eq!(calls.len(), 2);
        assert!(malformed.is_empty());
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_line() {
        assert_eq!(records(&format!("\u{feff}{TOOL_USE}\n")).len(), 1);
    }

    #[test]
    fn a_pretty_printed_document_is_read_whole_and_lines_point_at_each_call() {
        let text = "{\n  \"messages\": [\n    {\n      \"role\": \"assistant\",\n      \"tool_calls\": [\n        {\n          \"id\": \"c1\",\n          \"function\": {\"name\": \"ls\", \"arguments\": \"{}\"}\n        },\n        {\n          \"id\": \"c2\",\n          \"function\": {\"name\": \"cat\", \"arguments\": \"{}\"}\n        }\n      ]\n    }\n  ]\n}\n";
        assert_eq!(
            brief(text),
            expect(&[(6, "ls", Missing), (10, "cat", Missing)])
        );
    }

    #[test]
    fn a_document_on_one_line_is_one_event_at_line_one() {
        let text = r#"[{"type":"function_call","name":"a","arguments":"{}","call_id":"x"},{"type":"function_call","name":"a","arguments":"{}","call_id":"x"}]"#;
        // One event: the same call twice in it counts twice.
        assert_eq!(brief(text), expect(&[(1, "a", Missing), (1, "a", Missing)]));
    }

    #[test]
    fn a_bad_json_line_is_malformed_and_reading_goes_on() {
        let text = format!(
            "{TOOL_USE}\n{{\"type\":\"tool_use\", oops}}\n{}\n",
            TOOL_USE.replace("t1", "t2")
        );
        let (calls, malformed, summary) = read_with(&text, &ReadOptions::default());
        assert_eq!(calls.len(), 2);
        assert_eq!(malformed.len(), 1);
        assert_eq!(malformed[0].0, 2);
        assert_eq!(summary.malformed_lines, 1);
    }

    #[test]
    fn a_truncated_last_line_is_malformed() {
        let text = format!("{TOOL_USE}\n{}", &TOOL_USE[..60]);
        let (calls, malformed, _) = read_with(&text, &ReadOptions::default());
        assert_eq!(calls.len(), 1);
        assert_eq!(malformed, [(2, "truncated last line".to_owned())]);
    }

    #[test]
    fn a_cut_line_the_prefilter_skips_is_still_malformed() {
        let text = "{\"type\":\"user\",\"message\":{\"content\":\"hel\n";
        let (_, malformed, _) = read_with(text, &ReadOptions::default());
        assert_eq!(malformed.len(), 1);
    }

    #[test]
    fn invalid_utf8_is_malformed_and_reading_goes_on() {
        let mut bytes = TOOL_USE.replace("look", "lo\u{e9}k").into_bytes();
        let at = bytes.iter().position(|&byte| byte == 0xC3).expect("é");
        bytes[at] = 0xFF;
        bytes.push(b'\n');
        bytes.extend_from_slice(TOOL_USE.replace("t1", "t2").as_bytes());
        let mut malformed = Vec::new();
        let mut calls = 0;
        read_log("test", &bytes[..], &ReadOptions::default(), &mut |event| {
            match event {
                Event::Call(_) => calls += 1,
                Event::Malformed { line, message } => malformed.push((line, message)),
            }
            Ok(())
        })
        .expect("read");
        assert_eq!(calls, 1);
        assert_eq!(malformed.len(), 1);
        assert_eq!(malformed[0].0, 1);
        assert!(malformed[0].1.contains("UTF-8"), "{}", malformed[0].1);
    }

    #[test]
    fn valid_json_that_is_no_event_is_silently_nothing() {
        let text = "\"tool_use\"\n42\n[1]\nnull\n{\"tools\": 3}\n";
        let (calls, malformed, _) = read_with(text, &ReadOptions::default());
        assert!(calls.is_empty());
        assert!(malformed.is_empty());
    }

    #[test]
    fn a_line_of_any_length_is_read() {
        let long = "x".repeat(3 << 20);
        let line = TOOL_USE.replace("\"ls\"", &format!("\"{long}\""));
        assert_eq!(records(&format!("{line}\n{TOOL_USE}\n")).len(), 2);
    }

    /// Hands out one line per read, and counts them: what a pipe from `tail -f` does.
    struct Trickle {
        lines: Vec<Vec<u8>>,
        given: std::rc::Rc<std::cell::Cell<usize>>,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let given = self.given.get();
            let Some(line) = self.lines.get(given) else {
                return Ok(0);
            };
            buf[..line.len()].copy_from_slice(line);
            self.given.set(given + 1);
            Ok(line.len())
        }
    }

    #[test]
    fn each_call_is_handed_over_before_the_next_line_is_read() {
        let given = std::rc::Rc::new(std::cell::Cell::new(0));
        let lines = (1..=3)
            .map(|n| format!("{}\n", TOOL_USE.replace("t1", &format!("t{n}"))).into_bytes())
            .collect();
        let input = io::BufReader::with_capacity(
            1 << 16,
            Trickle {
                lines,
                given: given.clone(),
            },
        );
        let mut seen = Vec::new();
        read_log("-", input, &ReadOptions::default(), &mut |event| {
            if let Event::Call(record) = event {
                seen.push((record.line, given.get()));
            }
            Ok(())
        })
        .expect("read");
        assert_eq!(seen, [(1, 1), (2, 2), (3, 3)]);
    }

    #[test]
    fn a_sink_error_stops_reading_and_is_returned() {
        let text = format!("{TOOL_USE}\n{}\n", TOOL_USE.replace("t1", "t2"));
        let mut calls = 0;
        let result = read_log("-", text.as_bytes(), &ReadOptions::default(), &mut |_| {
            calls += 1;
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        });
        assert_eq!(
            result.map_err(|error| error.kind()),
            Err(io::ErrorKind::BrokenPipe)
        );
        assert_eq!(calls, 1);
    }

    #[test]
    fn within_one_event_every_call_counts_even_when_ids_repeat() {
        let text = r#"{"history":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}]}"#;
        assert_eq!(records(text).len(), 2);
    }

    #[test]
    fn a_later_event_recording_the_same_call_counts_it_once_at_its_first_place() {
        let first = r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}]}]}"#;
        // The next request repeats the history, with the arguments re-encoded.
        let second = r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"ls","arguments":"{ \"path\": \".\" }"}}]},{"role":"tool","tool_call_id":"c1","content":"a b"},{"role":"assistant","tool_calls":[{"id":"c2","function":{"name":"cat","arguments":"{}"}}]}]}"#;
        let (calls, _, summary) =
            read_with(&format!("{first}\n{second}\n"), &ReadOptions::default());
        let places: Vec<_> = calls
            .iter()
            .map(|c| (c.line, c.call_id.as_deref()))
            .collect();
        assert_eq!(places, [(1, Some("c1")), (2, Some("c2"))]);
        assert_eq!(summary.repeats, 1);
    }

    #[test]
    fn a_streamed_call_counts_with_the_event_that_started_it() {
        let text = [
            r#"[{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"x","name":"n","input":{}}},{"type":"tool_use","id":"x","name":"n","input":{}}]"#,
            r#"{"type":"user"}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"tool_use","id":"x","name":"n","input":{}}"#,
        ]
        .join("\n");
        // The block and the call are in one event, so both count; a later event's copy does not.
        let (calls, _, summary) = read_with(&text, &ReadOptions::default());
        assert_eq!(calls.iter().map(|c| c.line).collect::<Vec<_>>(), [1, 1]);
        assert_eq!(summary.repeats, 1);
    }

    #[test]
    fn a_later_call_with_the_same_id_but_other_arguments_counts_again() {
        let line = |command: &str| {
            format!(
                r#"{{"type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":\"{command}\"}}","call_id":"c"}}}}"#
            )
        };
        let text = format!("{}\n{}\n", line("ls"), line("pwd"));
        assert_eq!(records(&text).len(), 2);
    }

    #[test]
    fn calls_without_an_id_are_never_taken_for_repeats() {
        let line = r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"take_snapshot","args":{}}}]}}]}"#;
        assert_eq!(records(&format!("{line}\n{line}\n")).len(), 2);
    }

    #[test]
    fn a_catalogue_later_in_the_event_decides_declared_for_the_whole_event() {
        let text = r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"cancel","input":{"job":1,"reason":"stale"}},{"type":"tool_use","id":"b","name":"ls","input":{"reason":"look"}}]}],"tools":[{"name":"cancel","input_schema":{"type":"object","properties":{"reason":{"type":"string"}}}},{"name":"ls","input_schema":{"type":"object","properties":{"reason":{"type":"string","description":"One short sentence: why this call. Shown to the human reviewing the session."}}}}]}"#;
        assert_eq!(
            brief(text),
            expect(&[(1, "cancel", Declared), (1, "ls", Present)])
        );
    }

    #[test]
    fn a_catalogue_declares_the_calls_of_later_events() {
        let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"close","inputSchema":{"type":"object","required":["reason"]}}]}}"#;
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"close","arguments":{"reason":"done"}}}"#;
        assert_eq!(
            brief(&format!("{list}\n{call}\n")),
            expect(&[(2, "close", Declared)])
        );
    }

    #[test]
    fn a_catalogue_repeated_word_for_word_declares_the_same_and_a_changed_one_anew() {
        let body = |id: usize, properties: &str| {
            format!(
                r#"{{"messages":[{{"role":"assistant","tool_calls":[{{"id":"c{id}","function":{{"name":"cancel","arguments":"{{\"reason\":\"r\"}}"}}}}]}}],"tools":[{{"type":"function","function":{{"name":"cancel","parameters":{{"type":"object","properties":{properties}}}}}}}]}}"#
            )
        };
        let (own, none) = (r#"{"reason":{"type":"string"}}"#, "{}");
        let lines: Vec<String> = [own, own, none, none, own]
            .iter()
            .enumerate()
            .map(|(id, properties)| body(id, properties))
            .collect();
        assert_eq!(
            brief(&lines.join("\n")),
            expect(&[
                (1, "cancel", Declared),
                (2, "cancel", Declared),
                (3, "cancel", Present),
                (4, "cancel", Present),
                (5, "cancel", Declared)
            ])
        );
    }

    #[test]
    fn audit_declared_audits_the_declared_tools_too() {
        let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"close","inputSchema":{"type":"object","required":["reason"]}}]}}"#;
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"close","arguments":{"reason":"done"}}}"#;
        let options = ReadOptions {
            audit_declared: true,
            ..ReadOptions::default()
        };
        let (calls, _, _) = read_with(&format!("{list}\n{call}\n"), &options);
        assert_eq!(calls[0].status, Present);
        assert_eq!(calls[0].reason.as_deref(), Some("done"));
    }

    #[test]
    fn a_forced_format_labels_every_record() {
        let options = ReadOptions {
            format: Some(Format::Anthropic),
            ..ReadOptions::default()
        };
        let (calls, _, summary) = read_with(&format!("{TOOL_USE}\n"), &options);
        assert_eq!(calls[0].format, Format::Anthropic);
        assert_eq!(summary.format, Some(Format::Anthropic));
    }

    #[test]
    fn a_stream_mixing_shapes_yields_every_call() {
        // Transcript event lines come between the others: the prefilter searches them for
        // fewer tokens, and must not carry that over to the lines after them.
        let transcript = r#"{"parentUuid":"p","type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Read","input":{}}]}}"#;
        let text = [
            transcript,
            transcript,
            TOOL_USE,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"[\"ls\"]","call_id":"c"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get","arguments":{}}}"#,
            transcript,
            transcript,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"grep","args":{"reason":""}}}]}}]}"#,
            r#"{"type":"context.append_loop_event","event":{"type":"tool.call","toolCallId":"k","name":"Read","args":{"reason":1}}}"#,
        ]
        .join("\n");
        let formats: Vec<_> = records(&text)
            .into_iter()
            .map(|r| (r.format, r.status))
            .collect();
        assert_eq!(
            formats,
            [
                (Format::ClaudeCode, Missing),
                (Format::ClaudeCode, Present),
                (Format::Codex, Freeform),
                (Format::Mcp, Missing),
                (Format::Gemini, crate::record::Status::Blank),
                (Format::Kimi, Invalid),
            ]
        );
    }

    #[test]
    fn claude_code_stream_json_keeps_its_snake_case_session() {
        let line = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Read","input":{}}]},"session_id":"s-1"}"#;
        let sessions: Vec<_> = records(line)
            .into_iter()
            .map(|record| (record.format, record.session))
            .collect();
        assert_eq!(sessions, [(Format::ClaudeCode, Some("s-1".to_owned()))]);
    }

    #[test]
    fn a_transcript_event_holds_calls_only_as_tool_use_blocks() {
        // A tool's structured output can look like any payload: it is not this session's call,
        // whether or not the line also holds a call of its own.
        let output = r#""toolUseResult":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c","tools":[{"name":"Read","input_schema":{"properties":{"reason":{"type":"string"}}}}]}"#;
        let result = format!(
            r#"{{"parentUuid":"p","type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"t0","content":"x"}}]}},{output}}}"#
        );
        let call = format!(
            r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"t1","name":"Read","input":{{}}}}]}},{output}}}"#
        );
        assert_eq!(
            brief(&format!("{result}\n{call}\n")),
            expect(&[(2, "Read", Missing)])
        );
    }

    #[test]
    fn kept_arguments_are_decoded_from_their_json_string() {
        let text = r#"{"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"ls","arguments":"{\"path\":\"src\"}"}}]}}]}"#;
        let options = ReadOptions {
            keep_arguments: true,
            ..ReadOptions::default()
        };
        let (calls, _, _) = read_with(text, &options);
        assert_eq!(calls[0].arguments, Some(serde_json::json!({"path": "src"})));
        assert_eq!(records(text)[0].arguments, None);
    }

    /// Every event, with the line a record or a malformed line names, as text to compare.
    fn events_through_buffer(bytes: &[u8], capacity: usize) -> Vec<String> {
        let mut events = Vec::new();
        let input = io::BufReader::with_capacity(capacity, bytes);
        read_log("t", input, &ReadOptions::default(), &mut |event| {
            events.push(format!("{event:?}"));
            Ok(())
        })
        .expect("read");
        events
    }

    #[test]
    fn any_input_buffer_size_yields_the_same_events() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut inputs = vec![format!(
            "{TOOL_USE}\r\n{{\"type\":\"user\",\"x\":\"tool_use_id\"}}\n\n{{\"cut\": \"li\n{}\n{{\"type\":\"tool_use\",\"id\":\"q\",\"name\":\"n\",\"input\":{{\"reason\":1}}}}\n{{\"type\":\"tool_use\",",
            TOOL_USE.replace("t1", "t2")
        )
        .into_bytes()];
        for sample in [
            "claude-code.jsonl",
            "codex.jsonl",
            "gemini.jsonl",
            "mcp.jsonl",
            "kimi.jsonl",
        ] {
            inputs.push(std::fs::read(root.join("samples").join(sample)).expect("sample"));
        }
        // Found by fuzzing: a transcript line indented by whitespace was searched for one
        // token when read on its own and for every format's in a block.
        inputs.push(
            format!(
                "{TOOL_USE}\n  {{\"parentUuid\":\":  \"tool_calls\",\n{}\n{}\n",
                TOOL_USE.replace("t1", "t2"),
                TOOL_USE.replace("t1", "t3")
            )
            .into_bytes(),
        );
        for input in inputs {
            let whole = events_through_buffer(&input, 1 << 20);
            assert!(whole.len() > 2, "{whole:?}");
            for capacity in [1, 2, 7, 64, 333, 4096] {
                assert_eq!(
                    events_through_buffer(&input, capacity),
                    whole,
                    "capacity {capacity}"
                );
            }
        }
    }

    #[test]
    fn prefilter_never_skips_a_line_holding_a_call() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<_> = std::fs::read_dir(root.join("samples"))
            .expect("samples/")
            .map(|entry| entry.expect("entry").path())
            .collect();
        let corpus = root.join("../shared/corpus");
        for folder in std::fs::read_dir(&corpus).into_iter().flatten().flatten() {
            files.extend(
                std::fs::read_dir(folder.path())
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|f| f.path()),
            );
        }
        let prefilter = Prefilter::new(None);
        for file in files {
            let Ok(input) = std::fs::File::open(&file) else {
                continue;
            };
            for (number, line) in io::BufReader::new(input).split(b'\n').enumerate() {
                let line = line.expect("line");
                let mut parser = Parser::default();
                let Ok(text) = std::str::from_utf8(&line) else {
                    continue;
                };
                let Ok(event) = parser.parse(text) else {
                    continue;
                };
                if first_call_format(event).is_some() {
                    assert!(
                        prefilter.may_hold_call(&line, false),
                        "{}:{}",
                        file.display(),
                        number + 1
                    );
                }
            }
        }
    }

    #[test]
    fn detect_tells_a_transcript_from_an_api_payload() {
        let line: Value = serde_json::from_str(TOOL_USE).expect("json");
        assert_eq!(crate::formats::detect(&line), Some(Format::ClaudeCode));
        let payload: Value = serde_json::from_str(r#"{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"n","input":{}}]}"#).expect("json");
        assert_eq!(crate::formats::detect(&payload), Some(Format::Anthropic));
        assert_eq!(crate::formats::detect(&Value::from(3)), None);
    }

    fn malformed_lines(log: &str) -> Vec<(u64, String)> {
        let mut found = Vec::new();
        read_log("t", log.as_bytes(), &ReadOptions::default(), &mut |event| {
            if let Event::Malformed { line, message } = event {
                found.push((line, message));
            }
            Ok(())
        })
        .unwrap();
        found
    }

    #[test]
    fn a_text_line_the_prefilter_skips_is_still_malformed() {
        let log = "{\"type\":\"user\"}\nnot json\n{\"type\":\"user\"}\n";
        assert_eq!(
            malformed_lines(log),
            [(2, "invalid JSON: not a JSON value".to_owned())]
        );
    }

    #[test]
    fn skipped_lines_that_are_whole_values_pass() {
        assert!(malformed_lines("{}\n[1]\n\"text\"\n-12\n3\ntrue\nnull\n\n").is_empty());
    }

    /// `--strict` let `{"a": oops}` pass: the prefilter skipped the line, and a skipped line
    /// was only checked to look like one whole value.
    #[test]
    fn check_every_line_reports_json_wrong_inside_a_line_the_prefilter_skips() {
        let log = "{\"a\": oops}\n{\"type\":\"user\"}\n[1,]\n\"caf\\u00e9\"\n";
        let options = ReadOptions {
            check_every_line: true,
            ..ReadOptions::default()
        };
        let (_, malformed, _) = read_with(log, &options);
        let lines: Vec<u64> = malformed.iter().map(|(line, _)| *line).collect();
        assert_eq!(lines, [1, 3], "{malformed:?}");
        assert!(
            malformed[0].1.starts_with("invalid JSON: expected value"),
            "{malformed:?}"
        );
        assert!(malformed_lines(log).is_empty());
    }

    #[test]
    fn a_skipped_line_cut_short_is_malformed() {
        let found = malformed_lines("{\"a\":1}\n{\"type\":\"user\",\"x\":\n{\"b\":2}\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, 2);
    }
}
