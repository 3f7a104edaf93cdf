//! JSON events to calls: the readers for recorded agent sessions. The walk over each event, one
//! shape per format (`shapes/`), and the rules that need the whole source.
//!
//! [`read_log`] turns any log a reader understands into [`CallRecord`]s, streaming: a JSONL line
//! is read, its calls are handed over, then the next line is read. Which format a log is in is
//! decided from its content, event by event, so a stream that mixes shapes still yields every
//! call; [`ReadOptions::format`] forces one.
//!
//! [`open()`] (in `open.rs`) decides once how a file is read: an agent's SQLite store (`store`), JSON
//! lines or one JSON document ([`Layout`]); the open file carries the answer to the driver that
//! reads it. How the modules stand on each other, each only on those below it: `reading` (one
//! source from start to end on the calling thread), `pieces` (one large file in pieces, on
//! several threads) and `store` (an agent's store, row by row) drive `call_reader` (the line loop
//! of `crate::jsonl` with the walk hooked in) and `source_rules` (what needs the whole source);
//! the call reader asks the registry (`shapes`, with each shape's `Shape` in
//! `shapes/descriptor.rs`) for the prefilter, the looks and the outer record of each event; each
//! shape uses the walk (`event_walk`), which uses `fragments`, `audited_arguments` and
//! `catalogue`. What reading takes is `options`, what it gives `events`. The reader's tests are
//! in `tests/`.
//!
//! [`CallRecord`]: crate::record::CallRecord

use std::io::BufRead;

use serde_json::Value;

pub use crate::jsonl::start::Layout;
use crate::record::Format;
pub use events::{Event, ReadSummary};
pub use open::{open, Log, OpenError, Opened, READ_BUFFER};
pub use options::ReadOptions;

mod audited_arguments;
mod call_reader;
mod catalogue;
mod event_walk;
mod events;
mod fragments;
mod open;
mod options;
mod pieces;
mod reading;
mod shapes;
mod source_rules;
#[cfg(feature = "sqlite")]
pub mod store;
#[cfg(test)]
mod tests;

/// Reads one log and hands each event to `sink` as soon as the line holding it has been read.
///
/// `source` is the path as given (`-` for stdin); it goes into every record. A JSONL log is
/// streamed line by line and never held whole; a single JSON document (pretty-printed
/// trajectories, API payloads, cassettes) is read whole. Malformed lines become
/// [`Event::Malformed`] and reading goes on. Reading stops at the first error of `input` or
/// `sink` (a closed pipe, say), which is returned.
///
/// ```
/// use reasons::formats::{read_log, Event, ReadOptions};
/// use reasons::record::Status;
///
/// let log = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"],\"reason\":\"See what is here.\"}","call_id":"c1"}}"#;
/// let mut statuses = Vec::new();
/// read_log("-", log.as_bytes(), &ReadOptions::default(), &mut |event| {
///     if let Event::Call(call) = event {
///         statuses.push((call.format.as_str(), call.tool, call.status));
///     }
///     Ok(())
/// })?;
/// assert_eq!(statuses, [("codex", "shell".to_owned(), Status::Present)]);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_log<R: BufRead>(
    source: &str,
    input: R,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Event) -> std::io::Result<()>,
) -> std::io::Result<ReadSummary> {
    reading::read_whole(source, input, options, sink)
}

/// The format one event (a JSONL line, or a whole document) is in, decided from its content:
/// its outer record when that says (a Claude Code or Codex line, a SWE-agent trajectory…), else
/// the shape of the first call in it. `None` when it holds no call and says nothing.
pub fn detect(event: &Value) -> Option<Format> {
    let text = event.to_string();
    let mut parser = crate::json::Parser::default();
    let event = parser.parse(&text).ok()?;
    shapes::container_format(event).or_else(|| call_reader::first_call_format(event))
}
