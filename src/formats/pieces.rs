//! One large JSONL file read on several threads: in pieces of a few MiB cut at line ends, each
//! piece read on its own, their findings handed to the rules of the source in file order.
//!
//! What a line means depends on the lines before it in two ways. The rules of the source
//! (catalogues, the Codex session, streamed snapshots, repeated calls) run on the findings, in
//! order, on the calling thread, so they come out exactly as from one read. A call streamed in
//! fragments over several lines is the other: a piece is read as if no stream were open at its
//! start, and when the piece before it did leave one open, that guess was wrong and the piece is
//! read again, on the calling thread, from the streams it was left. Streams are short and
//! pieces are long, so that is rare.
//!
//! The calling thread reads pieces too, between handing them over, so there is one busy thread
//! a core.
//!
//! Memory stays flat: a few pieces are read ahead of the one being handed over, never more.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};

use super::call_reader::CallReader;
use super::events::{Event, ReadSummary};
use super::fragments::Fragments;
use super::options::ReadOptions;
use super::reading::Reading;
use super::source_rules::{Item, Offset};
use crate::jsonl::aligned::AlignedBufReader;

/// How much of the file one piece is: large enough that the seams are few and the threads
/// rarely wait, small enough that the findings held back stay small.
pub(crate) const PIECE: u64 = 4 << 20;

/// Files smaller than this are read on one thread: they take milliseconds.
const SPLIT_FROM: u64 = 2 * PIECE;

/// The size from which a file is read in pieces of `piece` bytes.
pub(crate) fn split_from(piece: u64) -> u64 {
    SPLIT_FROM.min(2 * piece)
}

/// How much of a file read whole on one thread one read takes: large reads mean fewer calls
/// into the kernel and fewer lines cut by a read's end (`doc/internals.md`, "Benchmarks", has
/// the measurements). A `BufReader`'s buffer of that size sat just past a page boundary, where
/// the copy is slow, and hid the gain: hence the aligned reader.
pub(crate) const WHOLE_FILE_READ_BUFFER: usize = 1 << 20;

/// How much of a piece one read takes. Threads reading pieces were no faster with larger reads,
/// and each thread holds a buffer of this size, which shows in the peak memory.
const PIECE_READ_BUFFER: usize = 128 << 10;

/// Reads the file of JSON lines at `path`, `size` bytes long, in pieces of `piece` bytes on
/// `threads` threads, and hands each event to `sink` in file order, as [`super::read_log`]
/// does. Whether a file is worth reading so, and is JSON lines at all, its opening decided
/// (`super::open::Log::read_on_every_core`).
pub(crate) fn read_in_pieces(
    source: &str,
    path: &Path,
    size: u64,
    options: &ReadOptions,
    piece: u64,
    threads: usize,
    sink: &mut dyn FnMut(Event) -> io::Result<()>,
) -> io::Result<ReadSummary> {
    let pieces = size.div_ceil(piece);
    let mut reading = Reading::new(source, options, sink);
    // Lines and events before the piece being handed over; the streams open after it, their
    // places counted from the file's start.
    let mut offset = Offset::default();
    let mut left_open = Fragments::default();
    let next = AtomicU64::new(0);
    // Each piece read ahead of the one handed over holds a ticket, given back when it is.
    let ahead = threads + 1;
    let (tickets, ticket) = mpsc::sync_channel::<()>(ahead);
    for _ in 0..ahead {
        let _ = tickets.send(());
    }
    let ticket = Mutex::new(ticket);
    // A ticket and the next piece to read, if one is left. A reading thread waits for the
    // ticket; this thread only takes one that is free (while a reader waits for one, holding
    // the lock, none is).
    let claim = |how: Claim| -> Option<u64> {
        let got = match how {
            Claim::Wait => ticket.lock().ok()?.recv().is_ok(),
            Claim::IfFree => ticket.try_lock().ok()?.try_recv().is_ok(),
        };
        let index = got.then(|| next.fetch_add(1, Ordering::Relaxed))?;
        (index < pieces).then_some(index)
    };
    let read_at = |index: u64| {
        let bounds = Bounds::of(index, pieces, piece);
        read_piece(
            path,
            bounds,
            options,
            Fragments::default(),
            Offset::default(),
        )
    };
    let (done, finished) = mpsc::channel::<(u64, io::Result<Piece>)>();
    std::thread::scope(|scope| {
        // This thread reads too, whenever it has nothing to hand over: one thread a core, and
        // none of them waits while there is work. (A thread that only handed over, beside one
        // reader a core, took a core's time slices from the readers.)
        for _ in 1..threads {
            let done = done.clone();
            let (claim, read_at) = (&claim, &read_at);
            scope.spawn(move || {
                while let Some(index) = claim(Claim::Wait) {
                    if done.send((index, read_at(index))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done);
        let mut apply = |items: Vec<Item>, offset: Offset| {
            items
                .into_iter()
                .try_for_each(|item| reading.apply(item, offset))
        };
        let mut waiting: BTreeMap<u64, io::Result<Piece>> = BTreeMap::new();
        let mut handed = 0;
        let outcome = (|| {
            while handed < pieces {
                while let Some(read) = waiting.remove(&handed) {
                    let read = read?;
                    let (read, at) = if left_open.is_idle() {
                        (read, offset)
                    } else {
                        // The piece began inside a stream: read it again from where the
                        // stream stood, counting lines and events from the file's start.
                        let streams = std::mem::take(&mut left_open);
                        let read = read_piece(path, read.bounds, options, streams, offset)?;
                        (read, Offset::default())
                    };
                    apply(read.items, at)?;
                    left_open = read.streams;
                    left_open.rebase(at.lines, at.events);
                    offset.lines += read.lines;
                    offset.events += read.events;
                    handed += 1;
                    let _ = tickets.send(());
                }
                if handed == pieces {
                    break;
                }
                let (index, read) = match finished.try_recv() {
                    Ok(finished) => finished,
                    Err(_) => match claim(Claim::IfFree) {
                        Some(index) => (index, read_at(index)),
                        // No ticket is free, or no piece is left: the piece to hand over next
                        // is being read on another thread.
                        None => finished
                            .recv()
                            .map_err(|_| io::Error::other("a reading thread stopped"))?,
                    },
                };
                waiting.insert(index, read);
            }
            // Calls still open at the end of the file are handed over as one read would.
            let mut items = Vec::new();
            let mut collect = |item| {
                items.push(item);
                Ok(())
            };
            let streams = std::mem::take(&mut left_open);
            CallReader::continuing(options, &mut collect, streams, offset.events).finish()?;
            apply(items, Offset::default())
        })();
        // Threads waiting for a ticket see the channel close and end.
        drop(tickets);
        outcome
    })?;
    Ok(reading.finish(offset.events, offset.lines))
}

/// How a thread claims a ticket to read a piece.
#[derive(Clone, Copy)]
enum Claim {
    /// Waits until one is given back: a thread that only reads.
    Wait,
    /// Takes one only if it is free now: the thread that hands pieces over, which must not
    /// wait while a piece is ready.
    IfFree,
}

/// The byte range a piece covers: from the start of the first line that starts at or after
/// `index * piece` to the end of the first line that ends at or after `(index + 1) * piece`
/// (or the end of the file for the last piece). Neighbours agree on the line between them.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    index: u64,
    /// Where to look for the piece's first line start.
    from: u64,
    /// The piece ends with the first line end at or after this byte.
    until: Option<u64>,
}

impl Bounds {
    fn of(index: u64, pieces: u64, piece: u64) -> Bounds {
        Bounds {
            index,
            from: index * piece,
            until: (index + 1 < pieces).then(|| (index + 1) * piece - 1),
        }
    }
}

/// What reading one piece found.
struct Piece {
    bounds: Bounds,
    items: Vec<Item>,
    /// Lines in the piece.
    lines: u64,
    /// Events parsed in it.
    events: u64,
    /// Streams open at its end.
    streams: Fragments,
}

/// Reads one piece with the streams open at its start; lines and events are numbered from
/// `start` on.
fn read_piece(
    path: &Path,
    bounds: Bounds,
    options: &ReadOptions,
    streams: Fragments,
    start: Offset,
) -> io::Result<Piece> {
    let mut file = File::open(path)?;
    let mut items = Vec::new();
    let mut collect = |item| {
        items.push(item);
        Ok(())
    };
    let mut reader = CallReader::continuing(options, &mut collect, streams, start.events);
    let lines = if bounds.index == 0 {
        reader.read_lines_from_start(AlignedBufReader::with_capacity(
            PIECE_READ_BUFFER,
            PieceReader::new(file, 0, bounds.until),
        ))?
    } else {
        match line_start_after(&mut file, bounds.from - 1, bounds.until)? {
            Some(first) => {
                file.seek(SeekFrom::Start(first))?;
                let input = PieceReader::new(file, first, bounds.until);
                reader.read_more(
                    AlignedBufReader::with_capacity(PIECE_READ_BUFFER, input),
                    start.lines + 1,
                )?
            }
            None => 0,
        }
    };
    let (streams, parsed) = reader.into_state();
    Ok(Piece {
        bounds,
        items,
        lines,
        events: parsed - start.events,
        streams,
    })
}

/// Where the first line after the line end at or after `at` starts; `None` when that line end
/// is at or past `until` (the piece before owns the line) or there is none.
fn line_start_after(file: &mut File, at: u64, until: Option<u64>) -> io::Result<Option<u64>> {
    file.seek(SeekFrom::Start(at))?;
    let mut buffer = vec![0; 64 << 10];
    let mut position = at;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => return Ok(None),
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if let Some(end) = memchr::memchr(b'\n', &buffer[..read]) {
            let line_end = position + end as u64;
            return Ok(until
                .is_none_or(|until| line_end < until)
                .then_some(line_end + 1));
        }
        position += read as u64;
        // A line that runs past the piece belongs to a piece before: looking further for its
        // end would read it once for every piece it covers.
        if until.is_some_and(|until| position > until) {
            return Ok(None);
        }
    }
}

/// A file from `position` on, up to and with the first line end at or after `until`.
struct PieceReader {
    file: File,
    position: u64,
    until: Option<u64>,
    done: bool,
}

impl PieceReader {
    fn new(file: File, position: u64, until: Option<u64>) -> PieceReader {
        PieceReader {
            file,
            position,
            until,
            done: false,
        }
    }
}

impl Read for PieceReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        let read = self.file.read(buffer)?;
        let start = self.position;
        self.position += read as u64;
        if let Some(until) = self.until {
            if self.position > until {
                let from = usize::try_from(until.saturating_sub(start)).unwrap_or(read);
                if let Some(end) = memchr::memchr(b'\n', &buffer[from.min(read)..read]) {
                    self.done = true;
                    return Ok(from + end + 1);
                }
            }
        }
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::formats::reading::read_whole as read_log;
    use crate::record::Format;

    /// Every event (as text, to compare) and the summary.
    fn read(bytes: &[u8], piece: Option<(u64, usize)>, options: &ReadOptions) -> Vec<String> {
        let mut file = tempfile::NamedTempFile::new().expect("temporary file");
        file.write_all(bytes).expect("write");
        let mut events = Vec::new();
        let mut sink = |event: Event| {
            events.push(format!("{event:?}").replace(&*file.path().to_string_lossy(), "t"));
            Ok(())
        };
        let summary = match piece {
            Some((piece, threads)) => match crate::formats::open(file.path()) {
                Ok(crate::formats::Opened::Log(log)) => {
                    log.read_in_pieces("t", options, piece, threads, &mut sink)
                }
                _ => panic!("a log"),
            },
            None => read_log("t", bytes, options, &mut sink),
        }
        .expect("read");
        events.push(format!("{summary:?}"));
        events
    }

    fn samples() -> Vec<u8> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let mut log = Vec::new();
        for sample in [
            "codex.jsonl",
            "claude-code.jsonl",
            "mcp.jsonl",
            "kimi.jsonl",
        ] {
            log.extend(std::fs::read(root.join(sample)).expect("sample"));
        }
        log
    }

    fn chat_chunk(id: &str, delta: &str, finish: &str) -> String {
        format!(
            r#"{{"id":"{id}","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
        )
    }

    /// A log where every rule that needs the lines before meets a seam somewhere: a session
    /// named once, a catalogue, calls repeated later, streams over several lines, malformed and
    /// blank lines, a line longer than a piece, CRLF, and no newline at the end.
    fn seams() -> Vec<u8> {
        let mut lines = vec![
            r#"{"timestamp":"t0","type":"session_meta","payload":{"id":"sess-1"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"close","inputSchema":{"type":"object","required":["reason"]}}]}}"#.to_owned(),
        ];
        for n in 0..6 {
            lines.push(format!(
                r#"{{"type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":\"ls {n}\"}}","call_id":"c{n}"}}}}"#
            ));
            lines.push(format!(
                r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"close","arguments":{{"reason":"done"}}}}}}"#
            ));
            lines.push(format!(r#"{{"type":"user","x":"{}"}}"#, "y".repeat(n * 40)));
            // Transcript event lines, which the prefilter searches for fewer tokens: runs of
            // them and of other lines meet seams too.
            lines.push(format!(
                r#"{{"parentUuid":"p{n}","type":"assistant","message":{{"content":[{{"type":"tool_use","id":"pt{n}","name":"Read","input":{{}}}}]}}}}"#
            ));
            lines.push(format!(
                r#"  {{"parentUuid":"q{n}","toolUseResult":{{"type":"function_call","name":"x","call_id":"q{n}"}}}}"#
            ));
            let call = format!(
                r#"{{"tool_calls":[{{"index":0,"id":"s{n}","function":{{"name":"stream{n}","arguments":"{{\"a\":"}}}}]}}"#
            );
            lines.push(chat_chunk(&format!("cc{n}"), &call, "null"));
            lines.push(r#"{"type":"user","x":"between"}"#.to_owned());
            let more = r#"{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}"#;
            lines.push(chat_chunk(&format!("cc{n}"), more, "null"));
            lines.push(chat_chunk(&format!("cc{n}"), "{}", r#""stop""#));
            lines.push(format!(
                r#"{{"type":"content_block_start","index":0,"content_block":{{"type":"tool_use","id":"b{n}","name":"block{n}","input":{{}}}}}}"#
            ));
            lines.push(r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"reason\":"}}"#.to_owned());
            lines.push(String::new());
            lines.push(r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"why\"}"}}"#.to_owned());
            lines.push(r#"{"type":"content_block_stop","index":0}"#.to_owned());
            lines.push(r#"{"type":"tool_use", oops}"#.to_owned());
            lines.push("not json".to_owned());
        }
        // The first calls again, later: each counts once, at its first place.
        lines.extend(lines.clone().into_iter().skip(2).take(6));
        lines.push(format!(
            r#"{{"type":"tool_use","id":"long","name":"Read","input":{{"file_path":"{}"}}}}"#,
            "z".repeat(5000)
        ));
        // A stream the log never finishes.
        lines.push(chat_chunk(
            "open",
            r#"{"tool_calls":[{"index":0,"id":"o","function":{"name":"unfinished","arguments":"{}"}}]}"#,
            "null",
        ));
        let mut log = lines.join("\r\n").into_bytes();
        log.extend_from_slice(b"\r\n");
        log.extend_from_slice(br#"{"type":"tool_use","id":"cut","name":"Bash","input":{"com"#);
        log
    }

    #[test]
    fn a_file_read_in_pieces_gives_exactly_the_events_of_one_read() {
        let inputs = [seams(), samples(), [samples(), samples()].concat()];
        for options in [
            ReadOptions::default(),
            ReadOptions {
                keep_arguments: true,
                audit_declared: true,
                ..ReadOptions::default()
            },
            ReadOptions {
                format: Some(Format::OpenaiChat),
                ..ReadOptions::default()
            },
        ] {
            for input in &inputs {
                let whole = read(input, None, &options);
                if options.format.is_none() {
                    assert!(whole.len() > 15, "{whole:?}");
                }
                for piece in [1, 7, 64, 333, 1000, 4096] {
                    for threads in [2, 3] {
                        assert_eq!(
                            read(input, Some((piece, threads)), &options),
                            whole,
                            "pieces of {piece} bytes on {threads} threads"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_call_repeated_across_a_seam_counts_once() {
        let line = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}}"#;
        let filler = format!(r#"{{"type":"user","x":"{}"}}"#, "y".repeat(200));
        let log = format!("{line}\n{filler}\n{filler}\n{line}\n");
        let events = read(log.as_bytes(), Some((100, 2)), &ReadOptions::default());
        assert_eq!(events.iter().filter(|e| e.starts_with("Call")).count(), 1);
        assert!(events
            .last()
            .is_some_and(|summary| summary.contains("repeats: 1")));
    }

    #[test]
    fn a_line_longer_than_many_pieces_is_read_once_by_the_piece_it_starts_in() {
        let call = r#"{"type":"tool_use","id":"a","name":"Read","input":{}}"#;
        let long = format!(r#"{{"type":"user","x":"{}"}}"#, "y".repeat(100_000));
        let log = format!("{call}\n{long}\n{}\n", call.replace("\"a\"", "\"b\""));
        let whole = read(log.as_bytes(), None, &ReadOptions::default());
        assert_eq!(
            read(log.as_bytes(), Some((100, 2)), &ReadOptions::default()),
            whole
        );
    }

    #[test]
    fn documents_and_small_files_are_read_whole() {
        let document = "{\n  \"messages\": [\n    {\"role\": \"assistant\", \"tool_calls\": [{\"id\": \"c\", \"function\": {\"name\": \"ls\", \"arguments\": \"{}\"}}]}\n  ]\n}\n";
        let whole = read(document.as_bytes(), None, &ReadOptions::default());
        assert_eq!(
            read(document.as_bytes(), Some((8, 2)), &ReadOptions::default()),
            whole
        );
    }
}
