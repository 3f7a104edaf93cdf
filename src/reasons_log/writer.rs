//! Appending to the reasons log: one record, one `write`, to the file the log's path names now.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::record::Record;

/// A reasons log open for appending, that follows its path rather than the file it first opened.
///
/// A log deleted, renamed away (logrotate's `create`) or replaced while a gateway, proxy or
/// filter runs would otherwise take every later reason into a file nobody reads any more: the
/// hook, `watch` and the audits look at the path. So each append first compares the file the path
/// names with the one open (one `stat` of the path against the device and inode noted when it was
/// opened) and opens the path again, creating it, when they differ. A log truncated in place
/// (`copytruncate`) needs nothing: appends go to its new end.
#[derive(Debug)]
pub struct Writer {
    path: PathBuf,
    open: std::sync::Mutex<OpenLog>,
}

/// The file a [`Writer`] appends to, and which file it is.
#[derive(Debug)]
struct OpenLog {
    file: File,
    identity: FileIdentity,
}

/// What tells two files apart: the device and inode where there are such things.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileIdentity {
    device: u64,
    inode: u64,
}

impl FileIdentity {
    #[cfg(unix)]
    fn of(metadata: &fs::Metadata) -> FileIdentity {
        use std::os::unix::fs::MetadataExt;
        FileIdentity {
            device: metadata.dev(),
            inode: metadata.ino(),
        }
    }

    /// Elsewhere a file is only told from another by its length: a path whose file is shorter
    /// than the one open was replaced.
    #[cfg(not(unix))]
    fn of(metadata: &fs::Metadata) -> FileIdentity {
        FileIdentity {
            device: 0,
            inode: metadata.len(),
        }
    }
}

impl OpenLog {
    /// Opens `path` for appending, creating it (mode 0600: reasons can quote what a person is
    /// working on) and its folder when they do not exist.
    fn open(path: &Path) -> io::Result<OpenLog> {
        if let Some(folder) = path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty())
        {
            fs::create_dir_all(folder)?;
        }
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        let identity = FileIdentity::of(&file.metadata()?);
        Ok(OpenLog { file, identity })
    }

    /// Whether the path still names the file open.
    fn still_at(&self, path: &Path) -> bool {
        match fs::metadata(path) {
            #[cfg(unix)]
            Ok(named) => FileIdentity::of(&named) == self.identity,
            #[cfg(not(unix))]
            Ok(named) => named.len() >= self.file.metadata().map_or(0, |open| open.len()),
            Err(_) => false,
        }
    }
}

impl Writer {
    /// Opens `path` for appending, creating it (mode 0600) and its folder when they do not exist.
    pub fn open(path: &Path) -> io::Result<Writer> {
        Ok(Writer {
            open: std::sync::Mutex::new(OpenLog::open(path)?),
            path: path.to_owned(),
        })
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record in a single write, to the file the path names now (see [`Writer`]).
    /// Takes `&self`: appends from several threads are as safe as appends from several processes.
    pub fn append(&self, record: &Record) -> io::Result<()> {
        let line = record.to_line();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if !open.still_at(&self.path) {
            // Opened again before the write, not after a failed one: the file open is still
            // there to write to, so a failed write would not tell.
            *open = OpenLog::open(&self.path)?;
        }
        (&open.file).write_all(&line)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::reasons_log::test_records::{logged_line, taken};
    use crate::reasons_log::{Index, Logged, Via};

    #[test]
    fn the_log_is_created_with_its_folder_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/reasons/reasons.jsonl");
        let writer = Writer::open(&path).unwrap();
        writer
            .append(&Record::now(
                Via::Gateway,
                taken("Bash", "a", json!("x")),
                None,
            ))
            .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(Index::read(&path).unwrap().get("a"), Some(&json!("x")));
    }

    /// The ids of a log's records, in order.
    fn ids_in(path: &Path) -> Vec<String> {
        fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|line| Logged::parse(line.as_bytes()).unwrap().call_id.unwrap())
            .collect()
    }

    #[cfg(unix)]
    fn mode_of(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_writer_follows_its_path_when_the_log_is_deleted_renamed_or_replaced() {
        for case in ["deleted", "renamed", "replaced", "folder deleted"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("state/reasons.jsonl");
            let writer = Writer::open(&path).unwrap();
            let append = |id: &str| {
                writer
                    .append(&Record::now(
                        Via::Gateway,
                        taken("Bash", id, json!("r")),
                        None,
                    ))
                    .unwrap()
            };
            append("before");
            let rotated = dir.path().join("reasons.jsonl.1");
            match case {
                "deleted" => fs::remove_file(&path).unwrap(),
                "renamed" => fs::rename(&path, &rotated).unwrap(),
                "replaced" => {
                    // Another file moved over the path, as an editor or a script saves one.
                    let other = dir.path().join("state/new");
                    fs::write(&other, logged_line("other")).unwrap();
                    fs::rename(&other, &path).unwrap();
                }
                _ => fs::remove_dir_all(dir.path().join("state")).unwrap(),
            }
            append("after");
            append("later");
            let expected: &[&str] = match case {
                "replaced" => &["other", "after", "later"],
                _ => &["after", "later"],
            };
            assert_eq!(ids_in(&path), expected, "{case}");
            if case == "renamed" {
                assert_eq!(ids_in(&rotated), ["before"], "{case}");
            }
            #[cfg(unix)]
            if case != "replaced" {
                assert_eq!(mode_of(&path), 0o600, "{case}");
            }
        }
    }

    #[test]
    fn the_writer_appends_to_a_log_truncated_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reasons.jsonl");
        let writer = Writer::open(&path).unwrap();
        let append = |id: &str| {
            writer
                .append(&Record::now(
                    Via::Filter,
                    taken("Bash", id, json!("r")),
                    None,
                ))
                .unwrap()
        };
        append("before");
        // logrotate's `copytruncate`.
        fs::File::create(&path).unwrap();
        append("after");
        assert_eq!(ids_in(&path), ["after"]);
    }
}
