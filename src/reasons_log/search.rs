//! The backward search the hooks use: a reason among the log's last bytes, found by the call's
//! id or, for a call without one, by its tool and what it touched.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use super::matching::same_tool_same_touched;
use super::record::Logged;

/// How far back from its end a hook looks ([`find_from_end`]): it asks about a call the gateway
/// logged a moment ago, so it is among the last lines, and a log of any length is answered at
/// once. 1 MiB is some 4,000 records: that many other reasons would have to be logged between the
/// gateway taking the call's and the agent's hook running for it to be missed. It is what a hook
/// reads, whatever it finds (benches/watch.sh).
pub const SEARCH_FROM_END: u64 = 1 << 20;

/// The reason logged for `call_id`, looked for in the last [`SEARCH_FROM_END`] bytes of the log:
/// the first record for the id among them, as everywhere else ([`note_first`](super::note_first)).
pub fn find_from_end(path: &Path, call_id: &str) -> io::Result<Option<Value>> {
    // The quoted id as the log writes it, to skip lines that cannot match without parsing them.
    let needle = Value::from(call_id).to_string();
    let found = find_near_end(path, &needle, Wanted::First, |line| {
        Logged::parse(line).filter(|logged| logged.call_id.as_deref() == Some(call_id))
    })?;
    Ok(found.map(|logged| logged.reason))
}

/// The latest record, among the last [`SEARCH_FROM_END`] bytes of the log, of a call to `tool`
/// that touched `touched` ([`same_tool_same_touched`]): how a hook finds the reason for a call
/// that arrives without an id (Gemini CLI's `BeforeTool` sends none). The latest, not the
/// first: without an id, records of the same tool and touched are different calls (the same
/// command run again), and the call the hook is asked about is the one logged last.
pub fn find_touched_from_end(path: &Path, tool: &str, touched: &str) -> io::Result<Option<Logged>> {
    let needle = Value::from(touched).to_string();
    find_near_end(path, &needle, Wanted::Latest, |line| {
        Logged::parse(line).filter(|logged| {
            let logged_touched = logged.touched.as_deref().unwrap_or_default();
            same_tool_same_touched(tool, touched, &logged.tool, logged_touched)
        })
    })
}

/// Which of the matching lines a search near the log's end answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wanted {
    /// The first written: one id, one reason ([`note_first`](super::note_first)).
    First,
    /// The last written: the most recent of several calls known without an id.
    Latest,
}

/// The `wanted` one of the log's last lines that hold `needle` and that `matches`, over at most
/// [`SEARCH_FROM_END`] bytes from its end.
///
/// Settling on the first means reading all of those bytes, which the search did anyway for an
/// id the log does not hold, the case it is bounded by: one read of at most 1 MiB, for either.
/// The bytes are searched for the needle as a whole (memchr's forward search is vectorised, its
/// reverse search is not): only a line that holds it is cut out and looked at (a hook runs
/// before every call, and most of the log holds other ids: splitting every line and searching
/// each on its own took milliseconds).
fn find_near_end<T>(
    path: &Path,
    needle: &str,
    wanted: Wanted,
    mut matches: impl FnMut(&[u8]) -> Option<T>,
) -> io::Result<Option<T>> {
    let mut file = File::open(path)?;
    let end = file.seek(SeekFrom::End(0))?;
    let start = end.saturating_sub(SEARCH_FROM_END);
    file.seek(SeekFrom::Start(start))?;
    let mut window = Vec::with_capacity((end - start) as usize);
    // Only what was there when the search began: lines appended meanwhile are later ones.
    file.take(end - start).read_to_end(&mut window)?;
    // A line cut by the window's start is never looked at; at the log's start it is whole.
    let first_line = match start {
        0 => 0,
        _ => memchr::memchr(b'\n', &window).map_or(window.len(), |at| at + 1),
    };
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let hits = finder
        .find_iter(&window[first_line..])
        .map(|hit| first_line + hit);
    let line_around = |hit: usize| {
        let line_start = memchr::memrchr(b'\n', &window[..hit]).map_or(0, |at| at + 1);
        let line_end = memchr::memchr(b'\n', &window[hit..]).map_or(window.len(), |at| hit + at);
        (line_start, line_end)
    };
    match wanted {
        Wanted::First => {
            let mut looked_at = first_line;
            for hit in hits {
                if hit < looked_at {
                    continue;
                }
                let (line_start, line_end) = line_around(hit);
                if let Some(found) = matches(&window[line_start..line_end]) {
                    return Ok(Some(found));
                }
                looked_at = line_end;
            }
        }
        Wanted::Latest => {
            let hits: Vec<usize> = hits.collect();
            let mut looked_at = window.len();
            for &hit in hits.iter().rev() {
                if hit >= looked_at {
                    continue;
                }
                let (line_start, line_end) = line_around(hit);
                if let Some(found) = matches(&window[line_start..line_end]) {
                    return Ok(Some(found));
                }
                looked_at = line_start;
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use serde_json::json;

    use super::*;
    use crate::reasons_log::test_records::taken;
    use crate::reasons_log::{Index, Record, Via, Writer};

    #[test]
    fn find_from_end_finds_the_first_record_among_the_last_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let writer = Writer::open(&path).unwrap();
        for n in 0..20_000 {
            let reason = json!(format!("reason {n} {}", "x".repeat(n % 50)));
            let id = format!("toolu_{}", n % 5000);
            writer
                .append(&Record::now(Via::Gateway, taken("Bash", &id, reason), None))
                .unwrap();
        }
        let length = fs::metadata(&path).unwrap().len();
        assert!(length > 2 * SEARCH_FROM_END);
        // toolu_7 is logged at 7, 5007, 10007 and 15007: the first of those whose line lies
        // wholly within the last SEARCH_FROM_END bytes.
        let text = fs::read(&path).unwrap();
        let window_start = (length - SEARCH_FROM_END) as usize;
        let first_within = (0..4)
            .map(|k| 7 + 5000 * k)
            .find(|n| {
                let reason = format!("\"reason {n} {}\"", "x".repeat(n % 50));
                let at = memchr::memmem::find(&text, reason.as_bytes()).unwrap();
                let line_start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |at| at + 1);
                line_start >= window_start
            })
            .unwrap();
        assert!(
            first_within > 7,
            "the window holds no more than the log's end"
        );
        let found = find_from_end(&path, "toolu_7").unwrap();
        assert_eq!(
            found,
            Some(json!(format!("reason {first_within} {}", "x".repeat(7))))
        );
        // An id whose quoted form only appears inside another field is no match.
        assert_eq!(find_from_end(&path, "Bash").unwrap(), None);
        assert_eq!(find_from_end(&path, "toolu_missing").unwrap(), None);
    }

    #[test]
    fn find_from_end_reads_a_first_line_that_spans_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let long = "y".repeat(300 * 1024);
        let writer = Writer::open(&path).unwrap();
        writer
            .append(&Record::now(
                Via::Gateway,
                taken("Bash", "first", json!(long)),
                None,
            ))
            .unwrap();
        writer
            .append(&Record::now(
                Via::Gateway,
                taken("Bash", "second", json!("b")),
                None,
            ))
            .unwrap();
        assert_eq!(find_from_end(&path, "first").unwrap(), Some(json!(long)));
    }

    #[test]
    fn find_from_end_finds_each_ids_first_reason_like_the_index_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let writer = Writer::open(&path).unwrap();
        let mut first = std::collections::HashMap::new();
        // Lines of every length from 60 to 1,100 bytes: block ends fall anywhere in them.
        for n in 0..1500 {
            let id = format!("toolu_{}", (n * 7919) % 300);
            let reason = format!("{n} {}", "z".repeat((n * 37) % 1000));
            writer
                .append(&Record::now(
                    Via::Gateway,
                    taken("Bash", &id, json!(reason)),
                    None,
                ))
                .unwrap();
            first.entry(id).or_insert(reason);
        }
        let length = fs::metadata(&path).unwrap().len();
        assert!(length > 2 * 256 * 1024 && length < SEARCH_FROM_END);
        let index = Index::read(&path).unwrap();
        for (id, reason) in first {
            let found = find_from_end(&path, &id).unwrap();
            assert_eq!(found, Some(json!(reason)), "{id}");
            assert_eq!(found.as_ref(), index.get(&id), "{id}");
        }
    }
}
