//! The reading loop: JSONL or single document, malformed lines, and the rules that need the
//! whole source (catalogues, repeated calls, statuses).

use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{self, BufRead};

use serde::de::IgnoredAny;
use serde_json::Value;

use super::prefilter::Prefilter;
use super::walk::{container_format, Found, Lines, SourceState, Walker};
use super::{anthropic, openai_chat, Event, Format, ReadOptions, ReadSummary};
use crate::envelope::{decode_arguments, Arguments};
use crate::record::{CallRecord, Status};

/// A JSONL line this long keeps its buffer; a longer one is let go once read.
const KEPT_BUFFER: usize = 1 << 20;

pub(crate) struct Reader<'a> {
    source: &'a str,
    options: &'a ReadOptions,
    sink: &'a mut dyn FnMut(Event) -> io::Result<()>,
    state: SourceState,
    /// Hash of (call id, tool, arguments) → the event that first recorded the call.
    seen: HashMap<u64, u64>,
    summary: ReadSummary,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(
        source: &'a str,
        options: &'a ReadOptions,
        sink: &'a mut dyn FnMut(Event) -> io::Result<()>,
    ) -> Reader<'a> {
        Reader {
            source,
            options,
            sink,
            state: SourceState::default(),
            seen: HashMap::new(),
            summary: ReadSummary::default(),
        }
    }

    pub(crate) fn read<R: BufRead>(mut self, mut input: R) -> io::Result<ReadSummary> {
        let mut buffer = Vec::new();
        let mut line = 0u64;
        loop {
            buffer.clear();
            if input.read_until(b'\n', &mut buffer)? == 0 {
                return self.finish();
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
            return self.finish();
        }
        let prefilter = Prefilter::new(self.options.format);
        loop {
            self.jsonl_line(line, &buffer, &prefilter)?;
            if buffer.capacity() > KEPT_BUFFER {
                buffer = Vec::new();
            }
            buffer.clear();
            if input.read_until(b'\n', &mut buffer)? == 0 {
                return self.finish();
            }
            line += 1;
        }
    }

    fn jsonl_line(&mut self, line: u64, bytes: &[u8], prefilter: &Prefilter) -> io::Result<()> {
        let cut_short = !bytes.ends_with(b"\n");
        let text = trim(bytes);
        if text.is_empty() {
            return Ok(());
        }
        if !prefilter.may_hold_call(text) {
            // Not parsed, but a line whose brackets do not even close is reported: it is what
            // a writer killed mid-line leaves.
            return match (text.first(), text.last()) {
                (Some(b'{'), Some(&last)) if last != b'}' => self.malformed(line, cut(cut_short)),
                (Some(b'['), Some(&last)) if last != b']' => self.malformed(line, cut(cut_short)),
                _ => Ok(()),
            };
        }
        let text = match std::str::from_utf8(text) {
            Ok(text) => text,
            Err(error) => {
                let message = format!("invalid UTF-8 at byte {}", error.valid_up_to() + 1);
                return self.malformed(line, message);
            }
        };
        match serde_json::from_str::<Value>(text) {
            Ok(value) => self.event(&value, &Lines::Fixed(line), &mut 0),
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
        for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
            match value {
                Ok(value) => self.event(&value, &lines, &mut ordinal)?,
                Err(error) => {
                    // Past a syntax error there is no telling where the next value starts.
                    let line = before + error.line() as u64;
                    return self.malformed(line, format!("invalid JSON: {error}"));
                }
            }
        }
        Ok(())
    }

    fn event(&mut self, value: &Value, lines: &Lines, ordinal: &mut usize) -> io::Result<()> {
        self.summary.events += 1;
        let container = container_format(value);
        let mut walker = Walker::new(&mut self.state, lines, *ordinal, self.summary.events);
        walker.walk(value, None);
        *ordinal = walker.next_ordinal();
        let (found, catalogue) = walker.into_found();
        // A request body lists its tools after the messages that call them: the event's
        // catalogue applies to the whole event.
        let mut listing: HashMap<String, bool> = HashMap::new();
        for (name, declares_own) in catalogue {
            // When in doubt, do not strip: one declaration of a name with its own reason is
            // enough for the name to be declared.
            *listing.entry(name).or_default() |= declares_own;
        }
        self.state.declared.extend(listing);
        found
            .into_iter()
            .try_for_each(|found| self.emit(found, container))
    }

    fn finish(mut self) -> io::Result<ReadSummary> {
        let lines = Lines::Fixed(1);
        let mut walker = Walker::new(&mut self.state, &lines, 0, self.summary.events);
        openai_chat::flush(&mut walker);
        anthropic::flush(&mut walker);
        let (found, _) = walker.into_found();
        for found in found {
            self.emit(found, None)?;
        }
        Ok(self.summary)
    }

    fn emit(&mut self, found: Found, container: Option<Format>) -> io::Result<()> {
        if let Some(call_id) = &found.call_id {
            let key = call_key(call_id, &found.tool, &found.arguments);
            match self.seen.entry(key) {
                Entry::Occupied(first) if *first.get() != found.event => {
                    self.summary.repeats += 1;
                    return Ok(());
                }
                Entry::Occupied(_) => {}
                Entry::Vacant(entry) => {
                    entry.insert(found.event);
                }
            }
        }
        let format = self.options.format.or(container).unwrap_or(found.format);
        let declared = self.state.declared.get(&found.tool) == Some(&true);
        let (status, reason) = if found.freeform {
            (Status::Freeform, None)
        } else if declared && !self.options.audit_declared {
            (Status::Declared, None)
        } else {
            Status::of_arguments(&found.arguments)
        };
        let arguments = self
            .options
            .keep_arguments
            .then(|| decoded(found.arguments));
        let record = CallRecord {
            source: self.source.to_owned(),
            line: found.line,
            format,
            session: found.session.or_else(|| self.state.session.clone()),
            timestamp: found.timestamp,
            call_id: found.call_id,
            tool: found.tool,
            reason,
            status,
            arguments,
        };
        self.summary.calls += 1;
        self.summary.format.get_or_insert(format);
        (self.sink)(Event::Call(record))
    }

    fn malformed(&mut self, line: u64, message: String) -> io::Result<()> {
        self.summary.malformed_lines += 1;
        (self.sink)(Event::Malformed { line, message })
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
pub(crate) fn first_call_format(event: &Value) -> Option<Format> {
    let mut state = SourceState::default();
    let lines = Lines::Fixed(1);
    let mut walker = Walker::new(&mut state, &lines, 0, 1);
    walker.walk(event, None);
    openai_chat::flush(&mut walker);
    anthropic::flush(&mut walker);
    let (found, _) = walker.into_found();
    found.first().map(|found| found.format)
}

/// Whether the first line opens a pretty-printed document rather than being a JSONL event.
fn starts_document(first_line: &[u8]) -> bool {
    let line = trim(first_line);
    if serde_json::from_slice::<IgnoredAny>(line).is_ok() {
        return false;
    }
    matches!(line.last(), Some(b'{' | b'[' | b',' | b':'))
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

/// Arguments as a reviewer wants them: a JSON-encoded object decoded, anything else as recorded.
fn decoded(arguments: Value) -> Value {
    match decode_arguments(&arguments) {
        Arguments::Object(std::borrow::Cow::Owned(map)) => Value::Object(map),
        _ => arguments,
    }
}

/// Identifies a call across events: the same id, tool and arguments, however the arguments were
/// encoded (a JSON string in one event, an object in the next; keys in any order).
fn call_key(call_id: &str, tool: &str, arguments: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    call_id.hash(&mut hasher);
    tool.hash(&mut hasher);
    match decode_arguments(arguments) {
        Arguments::Object(map) => hash_object(&map, &mut hasher),
        Arguments::Empty => 0u8.hash(&mut hasher),
        Arguments::NotAnObject => hash_value(arguments, &mut hasher),
    }
    hasher.finish()
}

fn hash_value(value: &Value, hasher: &mut DefaultHasher) {
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(flag) => (1u8, flag).hash(hasher),
        Value::Number(number) => (2u8, number.to_string()).hash(hasher),
        Value::String(text) => (3u8, text).hash(hasher),
        Value::Array(items) => {
            (4u8, items.len()).hash(hasher);
            items.iter().for_each(|item| hash_value(item, hasher));
        }
        Value::Object(map) => hash_object(map, hasher),
    }
}

fn hash_object(map: &serde_json::Map<String, Value>, hasher: &mut DefaultHasher) {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    (5u8, entries.len()).hash(hasher);
    for (key, value) in entries {
        key.hash(hasher);
        hash_value(value, hasher);
    }
}
