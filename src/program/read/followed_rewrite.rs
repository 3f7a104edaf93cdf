//! Following a log that its agent rewrites rather than appends to: one JSON document (Cline's
//! `messages.json`, VS Code's chat sessions, Gemini CLI's older `.json` chats) or an agent's
//! SQLite store (OpenCode, Kilo, Goose, Crush, Hermes Agent, OpenClaw). A document can only be
//! read whole, and a store's rows can change anywhere, so `tail -f`'s way (read on from where the
//! last read ended) does not apply: the log is read again whenever it changes, and the calls
//! after those already handed over are handed over, in order.
//!
//! A log read while it is being written may be cut short; such a read is taken back, and the
//! log read again once it has stayed the same for one look. A log that comes back with fewer
//! calls than were handed over is a new one (a session replaced, a store reset): it is said,
//! and its calls are handed over from its first.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use reasons::formats::{self, Event, Opened, ReadOptions, ReadSummary};

/// What is looked at to tell that a log changed: the length and time of the file, and of the
/// write-ahead log beside it where SQLite keeps what is not checkpointed yet.
type Signature = [Option<(u64, SystemTime)>; 2];

fn signature(path: &Path) -> Signature {
    let of = |path: &Path| {
        std::fs::metadata(path).ok().map(|meta| {
            (
                meta.len(),
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            )
        })
    };
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    [of(path), of(&PathBuf::from(wal))]
}

/// A log followed by reading it again whenever it changes.
pub struct Rewritten<'a> {
    pub path: &'a Path,
    /// Its name in messages (a store's with its table).
    pub name: &'a str,
    pub read: &'a ReadOptions,
    /// How often it is looked at for a change.
    pub poll: Duration,
}

impl Rewritten<'_> {
    /// Follows the log (opened once already as `first`) for ever: each time it changes, reads it
    /// whole and hands `sink` the calls after the ones handed before, and the malformed parts a
    /// settled read finds; a log that cannot be read is said once for each state of the file.
    /// `before_wait` runs before each wait. Returns only when `sink` or `before_wait` fails (the
    /// reader is gone).
    pub fn follow(
        &self,
        first: Opened,
        before_wait: &mut dyn FnMut() -> io::Result<()>,
        sink: &mut dyn FnMut(Event) -> io::Result<()>,
        on_warning: &mut dyn FnMut(String),
    ) -> io::Result<ReadSummary> {
        let mut handed = 0_usize;
        let mut next = Some(first);
        let mut wait = |poll: Duration| -> io::Result<()> {
            before_wait()?;
            std::thread::sleep(poll);
            Ok(())
        };
        loop {
            let before = signature(self.path);
            let mut events = Vec::new();
            let read = self.read_whole(next.take(), &mut events);
            let same = || signature(self.path) == before;
            if !same() {
                // Written while it was read: read again.
                wait(self.poll)?;
                continue;
            }
            if let Err(error) = read {
                on_warning(format!("{}: cannot read: {error}", self.name));
            } else {
                // A malformed part is believed once the log has stayed the same for one more
                // look: a writer may have been half way through it.
                let malformed = events
                    .iter()
                    .any(|event| matches!(event, Event::Malformed { .. }));
                if malformed {
                    wait(self.poll)?;
                    if !same() {
                        continue;
                    }
                }
                handed = self.hand_over(events, handed, sink, on_warning)?;
            }
            while same() {
                wait(self.poll)?;
            }
        }
    }

    /// Reads the log whole (`opened`, else opened again) into `events`.
    fn read_whole(&self, opened: Option<Opened>, events: &mut Vec<Event>) -> io::Result<()> {
        let opened = match opened {
            Some(opened) => opened,
            None => formats::open(self.path).map_err(|error| match error {
                formats::OpenError::Cannot(error) => error,
                formats::OpenError::Store(error) => io::Error::other(error.to_string()),
            })?,
        };
        let mut keep = |event: Event| {
            events.push(event);
            Ok(())
        };
        match opened {
            Opened::Store(store) => store.read(self.name, self.read, &mut keep),
            Opened::Log(log) => log.read(self.name, self.read, &mut keep),
        }
        .map(drop)
    }

    /// Hands `sink` the calls of one settled read after the first `handed`, and its malformed
    /// parts; returns how many calls have been handed over now.
    fn hand_over(
        &self,
        events: Vec<Event>,
        mut handed: usize,
        sink: &mut dyn FnMut(Event) -> io::Result<()>,
        on_warning: &mut dyn FnMut(String),
    ) -> io::Result<usize> {
        let calls = events
            .iter()
            .filter(|event| matches!(event, Event::Call(_)))
            .count();
        if calls < handed {
            on_warning(format!(
                "{}: rewritten with fewer calls than were read: read again from its first call",
                self.name
            ));
            handed = 0;
        }
        let mut index = 0;
        for event in events {
            match event {
                Event::Call(record) => {
                    if index >= handed {
                        sink(Event::Call(record))?;
                    }
                    index += 1;
                }
                malformed => sink(malformed)?,
            }
        }
        Ok(handed.max(calls))
    }
}
