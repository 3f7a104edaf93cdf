//! The records at the log's end, oldest first: what a starting gateway remembers of the reasons
//! logged before it (its history's recall, the reasons it serves), so that a restart loses none.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::record::Logged;

/// Hands `on_record` each record of the last `bytes` bytes of the log at `path`, in the order
/// they were written. A line cut by the start of that stretch is skipped, as are lines that are
/// no record.
pub fn read_end(path: &Path, bytes: u64, on_record: &mut dyn FnMut(Logged)) -> io::Result<()> {
    let mut file = File::open(path)?;
    let end = file.seek(SeekFrom::End(0))?;
    let start = end.saturating_sub(bytes);
    file.seek(SeekFrom::Start(start))?;
    let mut lines = BufReader::new(file.take(end - start)).split(b'\n');
    if start > 0 {
        lines.next();
    }
    for line in lines {
        // A record is read the one way the reasons log reads its records back.
        if let Some(logged) = Logged::parse(&line?) {
            on_record(logged);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(path: &Path, bytes: u64) -> Vec<String> {
        let mut ids = Vec::new();
        read_end(path, bytes, &mut |logged| ids.extend(logged.call_id)).unwrap();
        ids
    }

    #[test]
    fn the_end_of_a_log_is_read_oldest_first_without_the_line_its_start_cuts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reasons.jsonl");
        let line = |id: &str| {
            format!(
                "{{\"time\":\"2026-12-02T10:00:00Z\",\"via\":\"gateway\",\"tool\":\"Bash\",\
                 \"call_id\":\"{id}\",\"reason\":\"r\",\"touched\":\"ls\"}}\n"
            )
        };
        let text = [line("a"), "not a record\n".to_owned(), line("b"), line("c")].concat();
        std::fs::write(&path, &text).unwrap();
        assert_eq!(ids(&path, u64::MAX), ["a", "b", "c"]);
        // The last bytes from inside b's line on: b is cut, c is whole.
        let from_inside_b = (line("c").len() + 5) as u64;
        assert_eq!(ids(&path, from_inside_b), ["c"]);
        assert!(read_end(&dir.path().join("absent"), 10, &mut |_| {}).is_err());
    }
}
