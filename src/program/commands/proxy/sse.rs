//! Reading a `text/event-stream` as it arrives: the events' data, and the last event id the
//! server gave, which a broken stream is resumed from; and writing an event again, for a stream
//! relayed to a client of our own.

/// One event. [`EventReader::push`] hands out those with data; [`EventReader::push_all`] those
/// without too (a server's priming event, a comment kept alive), which only a relay needs.
#[derive(Debug, PartialEq, Eq)]
pub struct Event {
    /// The data lines, joined by `\n`.
    pub data: Vec<u8>,
    /// Whether it had a data line at all (an empty one included).
    has_data: bool,
    /// Its lines other than data (`id`, `event`, `retry`, comments), each ended by `\n`.
    others: Vec<u8>,
}

impl Event {
    /// The event as a stream carries it, with `data` in place of its own: its other lines as
    /// they came, one data line for each line of `data`, and the empty line that ends it.
    pub fn written_with(&self, data: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.others.len() + data.len() + 16);
        bytes.extend_from_slice(&self.others);
        if self.has_data {
            for line in data.split(|&byte| byte == b'\n') {
                bytes.extend_from_slice(b"data: ");
                bytes.extend_from_slice(line);
                bytes.push(b'\n');
            }
        }
        bytes.push(b'\n');
        bytes
    }

    /// Whether it carries data to read (a relay passes the others on as they are).
    pub fn has_data(&self) -> bool {
        self.has_data
    }
}

/// Cuts a stream of bytes, in whatever pieces they come, into events (the WHATWG rules: lines
/// end with `\n`, `\r\n` or `\r`; an empty line ends an event; `:` starts a comment).
#[derive(Debug, Default)]
pub struct EventReader {
    /// Bytes of a line not yet ended.
    partial: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    /// The current event's lines other than data, for [`Event::written_with`].
    others: Vec<u8>,
    last_event_id: Option<String>,
    retry_ms: Option<u64>,
    /// The last piece ended with `\r`: a `\n` opening the next one belongs to that line end.
    after_cr: bool,
}

impl EventReader {
    /// Reads `bytes`, the next piece of the stream, and hands each event with data it completes
    /// to `each`.
    pub fn push(&mut self, bytes: &[u8], mut each: impl FnMut(Event)) {
        self.read(bytes, &mut |event: Event| {
            if event.has_data {
                each(event);
            }
        });
    }

    /// The same, handing out every event, those without data too.
    pub fn push_all(&mut self, bytes: &[u8], mut each: impl FnMut(Event)) {
        self.read(bytes, &mut each);
    }

    fn read(&mut self, mut bytes: &[u8], each: &mut impl FnMut(Event)) {
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        while let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) {
            if self.partial.is_empty() {
                self.field(&bytes[..end], each);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&bytes[..end]);
                self.field(&line, each);
            }
            let mut next = end + 1;
            if bytes[end] == b'\r' {
                match bytes.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            bytes = &bytes[next..];
        }
        self.partial.extend_from_slice(bytes);
    }

    /// The id of the last event that named one: what `Last-Event-ID` resumes from.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// How long the server asked a client to wait before it reconnects, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    fn field(&mut self, line: &[u8], each: &mut impl FnMut(Event)) {
        if line.is_empty() {
            if self.has_data || !self.others.is_empty() {
                if self.data.last() == Some(&b'\n') {
                    self.data.pop();
                }
                each(Event {
                    data: std::mem::take(&mut self.data),
                    has_data: std::mem::take(&mut self.has_data),
                    others: std::mem::take(&mut self.others),
                });
            }
            return;
        }
        let is_data = line
            .strip_prefix(b"data")
            .is_some_and(|rest| rest.first().is_none_or(|&byte| byte == b':'));
        if !is_data {
            self.others.extend_from_slice(line);
            self.others.push(b'\n');
        }
        if line[0] == b':' {
            return;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            // An id holding NUL is ignored, as the standard says; an empty one clears it.
            b"id" if !value.contains(&0) => {
                self.last_event_id =
                    (!value.is_empty()).then(|| String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry_ms = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(pieces: &[&[u8]]) -> (Vec<String>, EventReader) {
        let mut reader = EventReader::default();
        let mut seen = Vec::new();
        for piece in pieces {
            reader.push(piece, |event| {
                seen.push(String::from_utf8(event.data).expect("UTF-8"))
            });
        }
        (seen, reader)
    }

    #[test]
    fn events_cut_anywhere_come_out_whole() {
        let stream = b"id: 1\nevent: message\ndata: {\"a\":1}\n\n: a comment\nid: 2\ndata: {\"b\":\ndata: 2}\n\n";
        let whole = events(&[stream]).0;
        assert_eq!(whole, ["{\"a\":1}", "{\"b\":\n2}"]);
        for cut in 0..stream.len() {
            let (seen, reader) = events(&[&stream[..cut], &stream[cut..]]);
            assert_eq!(seen, whole, "cut at {cut}");
            assert_eq!(reader.last_event_id(), Some("2"));
        }
    }

    #[test]
    fn carriage_returns_end_lines_even_across_pieces() {
        let (seen, _) = events(&[b"data: x\r", b"\ndata: y\r\r", b"data: z\r\n\r\n"]);
        assert_eq!(seen, ["x\ny", "z"]);
    }

    #[test]
    fn a_priming_event_without_data_moves_only_the_id() {
        let (seen, reader) = events(&[b"id: abc\ndata:\n\nid: def\nretry: 500\n\n"]);
        assert_eq!(seen, [""], "an empty data line is an event with empty data");
        assert_eq!(reader.last_event_id(), Some("def"));
        assert_eq!(reader.retry_ms(), Some(500));
        let (seen, reader) = events(&[b"id: only\n\n"]);
        assert!(seen.is_empty());
        assert_eq!(reader.last_event_id(), Some("only"));
    }

    #[test]
    fn a_relay_writes_every_event_again_with_its_other_lines_and_new_data() {
        let mut reader = EventReader::default();
        let mut written = Vec::new();
        reader.push_all(
            b": keep-alive\n\nid: 1\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nid: 2\ndata:\n\n",
            |event| {
                let data = if event.data.starts_with(b"{") {
                    b"{\"a\":2}".to_vec()
                } else {
                    event.data.clone()
                };
                written.extend(event.written_with(&data));
            },
        );
        assert_eq!(
            String::from_utf8(written).expect("UTF-8"),
            ": keep-alive\n\nid: 1\nevent: message\ndata: {\"a\":2}\n\nid: 2\ndata: \n\n"
        );
        let (seen, _) = events(&[b": keep-alive\n\nid: 3\n\n"]);
        assert!(seen.is_empty(), "push hands out events with data only");
    }

    #[test]
    fn an_unfinished_event_is_not_handed_out() {
        let (seen, _) = events(&[b"data: {\"half\":"]);
        assert!(seen.is_empty());
    }
}
