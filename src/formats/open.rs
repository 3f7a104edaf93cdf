//! The one door for reading a file: [`open()`] decides, once, whether it is an agent's SQLite
//! store, JSON lines or one JSON document, and what it opened carries the answer to the driver
//! that reads it.

use std::fs::File;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use super::events::{Event, ReadSummary};
use super::options::ReadOptions;
use super::pieces;
use super::reading::read_after;
#[cfg(feature = "sqlite")]
use super::store;
use crate::jsonl::aligned::AlignedBufReader;
use crate::jsonl::start::{Layout, Start};

/// The read size of a log read on the calling thread (stdin, a followed file, one of many
/// files), 64 KiB: the block is still in cache when the prefilter searches it, and a buffer
/// that size is not mapped and unmapped anew for every one of many small files.
pub const READ_BUFFER: usize = 64 * 1024;

/// A log file, opened, and how it is read: decided once, by [`open()`].
pub enum Opened {
    /// An agent's SQLite store, read row by row ([`store::Store::read`]).
    #[cfg(feature = "sqlite")]
    Store(store::Store),
    /// A log of JSON lines or one JSON document, its start read.
    Log(Log),
}

/// Why [`open()`] could not open a log.
#[derive(Debug)]
pub enum OpenError {
    /// The file could not be opened, or its start not read.
    Cannot(std::io::Error),
    /// A SQLite database that is not an agent's store, or that SQLite cannot read.
    #[cfg(feature = "sqlite")]
    Store(store::StoreError),
}

/// Opens the log at `path` and decides, once, how it is read: a regular file that starts as a
/// SQLite database is an agent's store (opened read-only, its layout found); anything else is
/// a log whose first line that is not blank tells whether it is JSON lines or one document. The
/// bytes read to tell are kept, so a FIFO loses none of them (and is never looked into for a
/// database: the bytes looked at there could not be read again).
pub fn open(path: &Path) -> Result<Opened, OpenError> {
    let mut file = File::open(path).map_err(OpenError::Cannot)?;
    let regular = file.metadata().is_ok_and(|metadata| metadata.is_file());
    #[cfg(feature = "sqlite")]
    if regular && store::starts_as_database(&file) {
        return store::Store::open(path)
            .map(Opened::Store)
            .map_err(OpenError::Store);
    }
    let start = Start::read(&mut file).map_err(OpenError::Cannot)?;
    Ok(Opened::Log(Log {
        path: path.to_path_buf(),
        file,
        start,
        regular,
    }))
}

/// A log opened by [`open()`], its start read and its layout told.
pub struct Log {
    path: PathBuf,
    /// Read up to where its start ends.
    file: File,
    start: Start,
    /// Whether it is a regular file, which can be opened again to be read in pieces (a FIFO,
    /// once its writer is gone, cannot).
    regular: bool,
}

impl Log {
    /// Whether it holds JSON lines or one document.
    pub fn layout(&self) -> Layout {
        self.start.layout()
    }

    /// The open file, read up to where its start ends.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The path it was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether it is a regular file (one that can grow, or be opened again), not a FIFO.
    pub fn is_regular(&self) -> bool {
        self.regular
    }

    /// Reads the log on this thread, handing each event to `sink` as [`super::read_log`] does.
    pub fn read(
        self,
        source: &str,
        options: &ReadOptions,
        sink: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> io::Result<ReadSummary> {
        let input = AlignedBufReader::with_capacity(READ_BUFFER, self.file);
        read_after(source, self.start, input, options, sink)
    }

    /// Reads the log through `input`, a reader that goes on from where the start ends (a handle
    /// of [`Log::file`], wrapped to follow the file as it grows, say).
    pub fn read_through<R: BufRead>(
        self,
        input: R,
        source: &str,
        options: &ReadOptions,
        sink: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> io::Result<ReadSummary> {
        read_after(source, self.start, input, options, sink)
    }

    /// Reads the log on as many threads as rayon's pool has when it is a large file of JSON
    /// lines, in pieces (see `pieces.rs`), and hands each event to `sink` in file order, as
    /// [`super::read_log`] does.
    pub fn read_on_every_core(
        self,
        source: &str,
        options: &ReadOptions,
        sink: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> io::Result<ReadSummary> {
        if !self.regular {
            return self.read(source, options, sink);
        }
        let threads = rayon::current_num_threads();
        self.read_in_pieces(source, options, pieces::PIECE, threads, sink)
    }

    pub(crate) fn read_in_pieces(
        self,
        source: &str,
        options: &ReadOptions,
        piece: u64,
        threads: usize,
        sink: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> io::Result<ReadSummary> {
        let size = self.file.metadata()?.len();
        // A file whose first line never ends is one line: there is nothing to split.
        let lines = self.layout() == Layout::Lines && self.start.is_whole();
        if threads < 2 || !lines || size < pieces::split_from(piece) {
            let input = AlignedBufReader::with_capacity(pieces::WHOLE_FILE_READ_BUFFER, self.file);
            return read_after(source, self.start, input, options, sink);
        }
        pieces::read_in_pieces(source, &self.path, size, options, piece, threads, sink)
    }
}
