//! Server-sent events, as model APIs stream their answers: cut into events as the bytes arrive,
//! each kept as the very bytes it came as, so that an event nobody rewrites goes on unchanged.

use std::borrow::Cow;

/// Cuts a byte stream into complete events. An event ends at an empty line; lines end with `\n`
/// or `\r\n`.
#[derive(Debug, Default)]
pub struct Splitter {
    buffer: Vec<u8>,
    /// Where the line not yet ended begins: the buffer before it has been searched.
    line_start: usize,
    /// Whether the event being read has a line that is not empty.
    has_content: bool,
}

impl Splitter {
    /// A splitter that has seen nothing.
    pub fn new() -> Splitter {
        Splitter::default()
    }

    /// Takes the next bytes of the stream and hands each event they complete to `on_event`,
    /// terminating empty line included. Empty lines before an event (a stream may begin with
    /// one, or repeat them) are kept with its bytes.
    pub fn push(&mut self, bytes: &[u8], on_event: &mut dyn FnMut(&[u8])) {
        self.buffer.extend_from_slice(bytes);
        let mut event_start = 0;
        while let Some(offset) = memchr::memchr(b'\n', &self.buffer[self.line_start..]) {
            let end = self.line_start + offset;
            let line = &self.buffer[self.line_start..end];
            let empty = line.is_empty() || line == b"\r";
            self.line_start = end + 1;
            if !empty {
                self.has_content = true;
            } else if self.has_content {
                on_event(&self.buffer[event_start..self.line_start]);
                event_start = self.line_start;
                self.has_content = false;
            }
        }
        if event_start > 0 {
            self.buffer.drain(..event_start);
            self.line_start -= event_start;
        }
    }

    /// What is left when the stream ends: the bytes of an event that was never completed.
    pub fn rest(&mut self) -> Vec<u8> {
        self.line_start = 0;
        self.has_content = false;
        std::mem::take(&mut self.buffer)
    }
}

/// The fields of one event that a rewriter reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fields<'a> {
    /// The `event:` field, when there is one.
    pub name: Option<&'a str>,
    /// The `data:` lines, joined with `\n`.
    pub data: Cow<'a, str>,
}

impl<'a> Fields<'a> {
    /// Reads an event's fields. `None` when it is not UTF-8, which no JSON event is.
    pub fn parse(event: &'a [u8]) -> Option<Fields<'a>> {
        let text = std::str::from_utf8(event).ok()?;
        let mut name = None;
        let mut data: Option<Cow<'a, str>> = None;
        // Lines and fields are cut with `memchr`: every event of a held call is read twice, and
        // `str::split` on a character cost more than the rest of reading it.
        let mut start = 0;
        while start <= text.len() {
            let rest = &text.as_bytes()[start..];
            let end = memchr::memchr(b'\n', rest).map_or(text.len(), |at| start + at);
            let line = &text[start..end];
            start = end + 1;
            let line = line.strip_suffix('\r').unwrap_or(line);
            let (field, value) = match memchr::memchr(b':', line.as_bytes()) {
                Some(colon) => {
                    let value = &line[colon + 1..];
                    (&line[..colon], value.strip_prefix(' ').unwrap_or(value))
                }
                None => (line, ""),
            };
            match field {
                "event" => name = Some(value),
                "data" => {
                    data = Some(match data {
                        None => Cow::Borrowed(value),
                        Some(earlier) => Cow::Owned(format!("{earlier}\n{value}")),
                    })
                }
                _ => {}
            }
        }
        Some(Fields {
            name,
            data: data.unwrap_or_default(),
        })
    }
}

/// One event as a stream writes it: `event: NAME` (when named) and one `data:` line.
pub fn event(name: Option<&str>, data: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(data.len() + 32);
    if let Some(name) = name {
        bytes.extend_from_slice(b"event: ");
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(b'\n');
    }
    // JSON serialised compactly holds no line break, so one data line carries it.
    bytes.extend_from_slice(b"data: ");
    bytes.extend_from_slice(data.as_bytes());
    bytes.extend_from_slice(b"\n\n");
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events_of(chunks: &[&[u8]]) -> (Vec<Vec<u8>>, Vec<u8>) {
        let mut splitter = Splitter::new();
        let mut events = Vec::new();
        for chunk in chunks {
            splitter.push(chunk, &mut |event| events.push(event.to_vec()));
        }
        (events, splitter.rest())
    }

    #[test]
    fn events_end_at_an_empty_line_however_the_bytes_are_cut() {
        let stream = b"event: a\ndata: {\"x\":1}\n\nevent: b\r\ndata: 2\r\n\r\ndata: tail";
        let whole = events_of(&[stream]);
        assert_eq!(
            whole.0,
            [
                b"event: a\ndata: {\"x\":1}\n\n".to_vec(),
                b"event: b\r\ndata: 2\r\n\r\n".to_vec()
            ]
        );
        assert_eq!(whole.1, b"data: tail");
        for cut in 0..stream.len() {
            assert_eq!(
                events_of(&[&stream[..cut], &stream[cut..]]),
                whole,
                "cut at {cut}"
            );
        }
        let bytewise: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events_of(&bytewise), whole);
    }

    #[test]
    fn leading_empty_lines_stay_with_the_next_event() {
        let (events, rest) = events_of(&[b"\n\r\n\ndata: 1\n\n\n"]);
        assert_eq!(events, [b"\n\r\n\ndata: 1\n\n".to_vec()]);
        assert_eq!(rest, b"\n");
    }

    #[test]
    fn fields_are_read_as_the_spec_says() {
        let fields =
            Fields::parse(b"event: message\ndata: {\"a\":\ndata:1}\n: comment\nid: 7\n\n").unwrap();
        assert_eq!(fields.name, Some("message"));
        assert_eq!(fields.data, "{\"a\":\n1}");
        assert_eq!(Fields::parse(b"data: x\n\n").unwrap().name, None);
        assert!(Fields::parse(b"data: \xff\n\n").is_none());
    }

    /// The fields as the SSE specification reads them, line by line with `str::split`.
    fn fields_by_the_spec(event: &[u8]) -> Option<(Option<String>, String)> {
        let text = std::str::from_utf8(event).ok()?;
        let (mut name, mut data) = (None, None::<String>);
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "event" => name = Some(value.to_owned()),
                "data" => data = Some(data.map_or(value.to_owned(), |d| format!("{d}\n{value}"))),
                _ => {}
            }
        }
        Some((name, data.unwrap_or_default()))
    }

    proptest::proptest! {
        #[test]
        fn fields_read_as_line_by_line(
            lines in proptest::collection::vec(
                "(event|data|id|:|)(:| :|)[ a-z{}\":]{0,12}\r?",
                0..6,
            ),
            end in "(\n|\n\n|)",
        ) {
            let event = format!("{}{end}", lines.join("\n"));
            let read = Fields::parse(event.as_bytes())
                .map(|fields| (fields.name.map(str::to_owned), fields.data.into_owned()));
            proptest::prop_assert_eq!(read, fields_by_the_spec(event.as_bytes()));
        }
    }

    #[test]
    fn a_written_event_reads_back() {
        let written = event(Some("content_block_delta"), "{\"index\":0}");
        let fields = Fields::parse(&written).unwrap();
        assert_eq!(fields.name, Some("content_block_delta"));
        assert_eq!(fields.data, "{\"index\":0}");
        let (events, rest) = events_of(&[&written]);
        assert_eq!(events, [written]);
        assert!(rest.is_empty());
    }
}
