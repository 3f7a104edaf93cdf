//! What `filter` and `proxy` share: moving lines from a reader to a writer through one half of the
//! layer, and telling the human about each reason taken off.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use reasons::stream::{Line, TakenReason};

/// Large enough that a bulk stream moves in few system calls.
const BUFFER: usize = 1 << 16;

/// Which side of a [`pump`] failed.
#[derive(Debug)]
pub enum PumpError {
    /// Reading the input.
    Read(io::Error),
    /// Writing the output.
    Write(io::Error),
    /// Reporting a reason.
    Report(io::Error),
}

impl fmt::Display for PumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PumpError::Read(error) => write!(f, "cannot read: {error}"),
            PumpError::Write(error) => write!(f, "cannot write: {error}"),
            PumpError::Report(error) => write!(f, "cannot report a reason: {error}"),
        }
    }
}

/// Passes every line of `input` through `transform` to `output`, in order, one line out per line
/// in, until `input` ends.
///
/// Output is flushed whenever no complete line is left to read without waiting: the peer may be
/// waiting for this answer before it sends anything more, while a bulk stream still moves in
/// large writes.
pub fn pump<R: Read, W: Write>(
    input: R,
    output: W,
    mut transform: impl FnMut(&[u8]) -> Line<'_>,
    mut report: impl FnMut(&TakenReason) -> io::Result<()>,
) -> Result<(), PumpError> {
    let mut input = BufReader::with_capacity(BUFFER, input);
    let mut output = BufWriter::with_capacity(BUFFER, output);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(error) => {
                // What was answered so far still goes out.
                let _ = output.flush();
                return Err(PumpError::Read(error));
            }
        }
        let out = transform(&line);
        for reason in &out.reasons {
            report(reason).map_err(PumpError::Report)?;
        }
        output.write_all(&out.bytes).map_err(PumpError::Write)?;
        if memchr::memchr(b'\n', input.buffer()).is_none() {
            output.flush().map_err(PumpError::Write)?;
        }
    }
    output.flush().map_err(PumpError::Write)
}

/// Where the reasons taken off calls go: stderr as `tool: reason` for the human watching, or a
/// JSON-lines file.
pub enum ReasonSink {
    /// One `tool: reason` line on stderr per reason.
    Stderr,
    /// One `{"tool","call_id","reason"}` record per line, appended.
    Log {
        /// The open file.
        file: File,
        /// Its path, for messages.
        path: PathBuf,
    },
}

impl ReasonSink {
    /// Opens the log, when there is one, for appending.
    pub fn open(path: Option<&Path>) -> anyhow::Result<ReasonSink> {
        let Some(path) = path else {
            return Ok(ReasonSink::Stderr);
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open the reasons log {}", path.display()))?;
        Ok(ReasonSink::Log {
            file,
            path: path.to_owned(),
        })
    }

    /// The log's path, when reasons go to one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ReasonSink::Stderr => None,
            ReasonSink::Log { path, .. } => Some(path),
        }
    }

    /// Reports one reason, in a single write so that lines from other writers (a proxied
    /// server's stderr, another process appending to the same log) never cut through it.
    pub fn report(&mut self, reason: &TakenReason) -> io::Result<()> {
        match self {
            // The human channel failing is no reason to stop the stream.
            ReasonSink::Stderr => {
                let _ = io::stderr().write_all(format!("{reason}\n").as_bytes());
                Ok(())
            }
            ReasonSink::Log { file, .. } => {
                let mut record = reason.to_json().to_string().into_bytes();
                record.push(b'\n');
                file.write_all(&record)
            }
        }
    }
}
