//! The reasons log followed from its last lines on, line by line: what `watch` reads.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::followed_file::{FollowedFile, Step};

/// How far back [`Tail::from_last_lines`] looks for the lines it starts at.
pub const TAIL_FROM_END: u64 = 8 << 20;

/// A reasons log followed as it grows, from its last lines on: what `watch` reads.
///
/// It reads only what is new at each [`Tail::read_new`], never the whole log, so starting on a log
/// of any length costs the same. Lines are handed on whole: several writers append one line per
/// write, and a line not yet ended waits for its end. The file is followed by the crate's one
/// follower ([`FollowedFile`]): truncated, it is read again from its start; replaced, it is read
/// to its end, then the new file from its start. A line begun before either never ends, and is
/// dropped.
#[derive(Debug)]
pub struct Tail {
    followed: FollowedFile,
    /// The start of a line whose end has not been written yet.
    partial: Vec<u8>,
}

/// How much a [`Tail`] reads at once: memory stays flat however much was written since the last
/// look.
const READ_AT_ONCE: usize = 1 << 20;

/// The longest line a [`Tail`] waits for the end of: a longer one is no record, and is dropped.
const LONGEST_LINE: usize = 16 << 20;

impl Tail {
    /// Follows `path` from the start of its last `lines` lines (looking back at most
    /// [`TAIL_FROM_END`] bytes). A log that does not exist yet is followed from when it appears.
    pub fn from_last_lines(path: &Path, lines: usize) -> io::Result<Tail> {
        let followed = match File::open(path) {
            Ok(mut file) => {
                let start = start_of_last_lines(&mut file, lines)?;
                FollowedFile::from(path, file, start)?
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                FollowedFile::not_there_yet(path)
            }
            Err(error) => return Err(error),
        };
        Ok(Tail {
            followed,
            partial: Vec::new(),
        })
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        self.followed.path()
    }

    /// Hands each complete line written since the last call to `on_line` (without its line end),
    /// and returns how many there were.
    pub fn read_new(&mut self, on_line: &mut dyn FnMut(&[u8])) -> io::Result<usize> {
        let mut count = 0;
        // Allocated zeroed for each look (fresh pages, touched only where a read writes) and
        // dropped after it: a burst's buffer is not kept resident while the log is quiet.
        let mut buffer = vec![0; READ_AT_ONCE];
        loop {
            match self.followed.read(&mut buffer)? {
                Step::Read(read) => count += self.split_lines(&buffer[..read], on_line),
                Step::StartedOver(_) => self.partial.clear(),
                Step::AtEnd => return Ok(count),
            }
        }
    }

    fn split_lines(&mut self, block: &[u8], on_line: &mut dyn FnMut(&[u8])) -> usize {
        let mut count = 0;
        let mut rest = block;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            if self.partial.is_empty() {
                on_line(&rest[..end]);
            } else {
                self.partial.extend_from_slice(&rest[..end]);
                on_line(&self.partial);
                self.partial.clear();
            }
            count += 1;
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        if self.partial.len() > LONGEST_LINE {
            self.partial.clear();
        }
        count
    }
}

/// The offset where the last `lines` complete lines of a file start, looking back at most
/// [`TAIL_FROM_END`] bytes: reading a log's end costs the same however long the log is.
fn start_of_last_lines(file: &mut File, lines: usize) -> io::Result<u64> {
    const BLOCK: u64 = 64 * 1024;
    let end = file.seek(SeekFrom::End(0))?;
    let floor = end.saturating_sub(TAIL_FROM_END);
    // The last line end ends the last complete line: the one before it starts that line. (A
    // torn line after it is read from there too, and waited for.)
    let mut ends_seen: usize = 0;
    let mut last_end_seen = false;
    let mut position = end;
    let mut block = Vec::new();
    while position > floor {
        let start = position.saturating_sub(BLOCK).max(floor);
        block.resize((position - start) as usize, 0);
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block)?;
        for at in memchr::memrchr_iter(b'\n', &block) {
            let offset = start + at as u64;
            if !last_end_seen {
                last_end_seen = true;
                continue;
            }
            ends_seen += 1;
            if ends_seen == lines {
                return Ok(offset + 1);
            }
        }
        position = start;
    }
    // Fewer lines than asked for: all of them, from the first line that starts in the window.
    if floor == 0 {
        return Ok(0);
    }
    file.seek(SeekFrom::Start(floor))?;
    let mut window = Vec::new();
    file.take(BLOCK).read_to_end(&mut window)?;
    Ok(memchr::memchr(b'\n', &window).map_or(end, |at| floor + at as u64 + 1))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use serde_json::json;

    use super::*;
    use crate::reasons_log::test_records::{logged_line, taken};
    use crate::reasons_log::{Logged, Record, Via, Writer};

    #[test]
    fn a_tail_follows_a_writer_through_each_rotation_nothing_lost_nothing_twice() {
        for case in ["deleted", "renamed", "replaced"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("reasons.jsonl");
            let writer = Writer::open(&path).unwrap();
            let append = |id: &str| {
                writer
                    .append(&Record::now(
                        Via::Proxy,
                        taken("Bash", id, json!("r")),
                        None,
                    ))
                    .unwrap()
            };
            let mut tail = Tail::from_last_lines(&path, 10).unwrap();
            let mut seen = Vec::new();
            let mut read = |tail: &mut Tail| {
                tail.read_new(&mut |line| seen.push(Logged::parse(line).unwrap().call_id.unwrap()))
                    .unwrap();
            };
            append("1");
            read(&mut tail);
            // Written to the old file after the tail's last look, then rotated before its next.
            append("2");
            match case {
                "deleted" => fs::remove_file(&path).unwrap(),
                "renamed" => fs::rename(&path, dir.path().join("reasons.jsonl.1")).unwrap(),
                _ => {
                    let other = dir.path().join("new");
                    fs::write(&other, logged_line("3")).unwrap();
                    fs::rename(&other, &path).unwrap();
                }
            }
            read(&mut tail);
            append("4");
            read(&mut tail);
            append("5");
            read(&mut tail);
            let expected: &[&str] = match case {
                "replaced" => &["1", "2", "3", "4", "5"],
                _ => &["1", "2", "4", "5"],
            };
            assert_eq!(seen, expected, "{case}");
        }
    }

    #[test]
    fn a_tail_reads_a_burst_larger_than_it_reads_at_once_whole_and_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        fs::write(&path, "").unwrap();
        let mut tail = Tail::from_last_lines(&path, 10).unwrap();
        // Lines of many lengths, so that the pieces end anywhere in them; the last one not ended.
        let lines: Vec<String> = (0..4000)
            .map(|n| format!("{{\"n\":{n},\"pad\":\"{}\"}}", "p".repeat((n * 131) % 2000)))
            .collect();
        let mut text = lines.join("\n");
        assert!(text.len() > 3 * READ_AT_ONCE);
        fs::write(&path, &text).unwrap();
        let mut seen = Vec::new();
        let mut read = |tail: &mut Tail| {
            tail.read_new(&mut |line| seen.push(String::from_utf8(line.to_vec()).unwrap()))
                .unwrap()
        };
        assert_eq!(read(&mut tail), lines.len() - 1);
        text.push('\n');
        fs::write(&path, &text).unwrap();
        assert_eq!(read(&mut tail), 1);
        assert_eq!(seen, lines);
    }
}
