//! Readers: any bytes become call records or warnings, never a panic, and the same ones however
//! the input is cut into reads.
//!
//! The first byte picks the read options (format, then one bit for each switch), the second the size of the reads; the rest is the log.
//! It is read three ways: whole through a large buffer (detection decides JSONL or document),
//! through a small buffer (short reads, lines gathered across them), and behind a first line
//! that is a whole JSON value, which forces the JSONL path.
#![no_main]

use std::io::BufReader;

use libfuzzer_sys::fuzz_target;
use reasons::formats::{read_log, Event, ReadOptions};
use reasons::record::Format;

fn options(byte: u8) -> ReadOptions {
    let format = usize::from(byte >> 3);
    ReadOptions {
        format: Format::ALL.get(format).copied(),
        keep_arguments: byte & 1 == 1,
        audit_declared: byte & 2 == 2,
        check_every_line: byte & 4 == 4,
    }
}

fn events(log: &[u8], options: &ReadOptions, capacity: usize) -> Vec<Event> {
    let mut events = Vec::new();
    let input = BufReader::with_capacity(capacity, log);
    read_log("fuzz", input, options, &mut |event| {
        events.push(event);
        Ok(())
    })
    .expect("reading bytes from memory never fails");
    events
}

/// Every line a record or a warning names is a line of the input.
fn check_lines(log: &[u8], events: &[Event]) {
    let lines = memchr_count(log) + 1;
    for event in events {
        let line = match event {
            Event::Call(record) => record.line,
            Event::Malformed { line, .. } => *line,
        };
        assert!(
            line >= 1 && line <= lines,
            "line {line} of {lines}: {event:?}"
        );
    }
}

fn memchr_count(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&byte| byte == b'\n').count() as u64
}

fuzz_target!(|data: &[u8]| {
    let [options_byte, capacity_byte, log @ ..] = data else {
        return;
    };
    let options = options(*options_byte);
    let whole = events(log, &options, 1 << 16);
    check_lines(log, &whole);
    let chunked = events(log, &options, 1 + usize::from(*capacity_byte % 64));
    assert_eq!(whole, chunked, "short reads changed what was read");

    let mut jsonl = b"{}\n".to_vec();
    jsonl.extend_from_slice(log);
    let as_jsonl = events(&jsonl, &options, 1 << 16);
    check_lines(&jsonl, &as_jsonl);
    let chunked = events(&jsonl, &options, 1 + usize::from(*capacity_byte % 64));
    assert_eq!(as_jsonl, chunked, "short reads changed what was read");
});
