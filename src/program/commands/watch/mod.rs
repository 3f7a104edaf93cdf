//! `reasons watch`: the live view for the person beside a running agent.
//!
//! It follows the reasons log from its last lines on ([`reasons_log::Tail`]) and the agents'
//! session logs with the readers and the follower `extract --follow` uses, each on a thread of
//! its own, and joins what they send into one entry per call ([`calls::Calls`]). On a terminal the
//! calls are a full-screen view ([`screen`]); in a pipe or with `--plain`, one line per call,
//! flushed at once.

mod calls;
mod screen;

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant, SystemTime};

use reasons::formats::ReadOptions;
use reasons::masking::Masking;
use reasons::reasons_log::{self, Logged};
use reasons::record::CallRecord;
use reasons::visible::visible;

use crate::program::exit_codes::ExitCode;
use crate::program::read::schedule::{read_one, Cores, SourceOptions};
use crate::program::read::sources::{self, Source};
pub use calls::{Call, Calls, Change};

/// What `watch` follows, and how it shows it.
pub struct Options {
    /// The reasons log, when there is one to follow.
    pub reasons_log: Option<PathBuf>,
    /// The session logs' PATH arguments; `None` when none are followed.
    pub sessions: Option<Vec<String>>,
    /// One line per call instead of the full-screen view.
    pub plain: bool,
    /// Whether reasons, what calls touched and their arguments are shown masked (`--mask`).
    pub masking: Masking,
}

/// What the followers send.
pub enum Arrival {
    /// A record of the reasons log.
    Logged(Logged),
    /// A call of a session log.
    Call(CallRecord),
    /// Something to tell the person (a log truncated, a file that cannot be read).
    Note(String),
}

/// How often the reasons log is looked at for new lines: a call is shown well within 100 ms of
/// its line being written, for one `stat` each time.
const LOG_POLL: Duration = Duration::from_millis(10);

/// How often the session logs' folders are looked at again for new sessions.
const RESCAN: Duration = Duration::from_secs(2);

/// Session logs found in folders are followed when written to this recently: a folder of old
/// sessions is not read back to its first call.
const RECENT: Duration = Duration::from_secs(3600);

/// How long a session call without a reason waits, in plain mode, for its reason to come from
/// the reasons log, before it is written as having none: the gateway logs a reason before the
/// agent sees the call, but the two files are followed apart.
const GRACE: Duration = Duration::from_millis(300);

/// How many of the reasons log's last lines are shown at the start.
const PLAIN_START_LINES: usize = 10;
const SCREEN_START_LINES: usize = 1000;

/// How many calls are kept: the view's scrollback; memory stays flat beyond it.
const SCREEN_CAPACITY: usize = 10_000;
const PLAIN_CAPACITY: usize = 4_096;

/// How many arrivals wait at most for the view to take them.
const ARRIVALS_WAITING: usize = 1_024;

pub fn run(options: Options, stdout_is_terminal: bool) -> anyhow::Result<ExitCode> {
    let plain = options.plain || !stdout_is_terminal;
    // Bounded: when the view falls behind a burst of writes, the followers wait (the logs keep
    // what is not read yet) instead of holding every call in memory.
    let (sender, arrivals) = mpsc::sync_channel(ARRIVALS_WAITING);
    if let Some(log) = &options.reasons_log {
        let start = if plain {
            PLAIN_START_LINES
        } else {
            SCREEN_START_LINES
        };
        follow_reasons_log(log, start, sender.clone())?;
    }
    if let Some(paths) = options.sessions {
        follow_sessions(paths, sender.clone());
    }
    drop(sender);
    if plain {
        let stdout = io::stdout();
        let calls = Calls::new(PLAIN_CAPACITY).masked(options.masking);
        plain_lines(arrivals, calls, &mut stdout.lock())
    } else {
        let calls = Calls::new(SCREEN_CAPACITY).masked(options.masking);
        screen::run(arrivals, calls, options.reasons_log.as_deref())
    }
}

/// Follows the reasons log on a thread of its own, from its last `start` lines on.
fn follow_reasons_log(
    path: &Path,
    start: usize,
    sender: SyncSender<Arrival>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut tail = reasons_log::Tail::from_last_lines(path, start)
        .with_context(|| format!("cannot read the reasons log {}", path.display()))?;
    std::thread::spawn(move || loop {
        let mut gone = false;
        let read = tail.read_new(&mut |line| {
            if let Some(logged) = Logged::parse(line) {
                gone |= sender.send(Arrival::Logged(logged)).is_err();
            }
        });
        if let Err(error) = read {
            let note = format!("{}: {error}", tail.path().display());
            gone |= sender.send(Arrival::Note(note)).is_err();
        }
        if gone {
            return;
        }
        std::thread::sleep(LOG_POLL);
    });
    Ok(())
}

/// Follows the session logs the PATHs name (the usual local folders when there are none), each
/// on a thread of its own, and the new ones that appear in their folders.
fn follow_sessions(paths: Vec<String>, sender: SyncSender<Arrival>) {
    let started = SystemTime::now();
    let named_files: HashSet<PathBuf> = paths
        .iter()
        .map(PathBuf::from)
        .filter(|path| path.is_file())
        .collect();
    std::thread::spawn(move || {
        let mut followed: HashSet<PathBuf> = HashSet::new();
        loop {
            let found = match sources::expand(&paths, &mut |_| {}) {
                Ok(found) => found,
                Err(error) => {
                    let _ = sender.send(Arrival::Note(format!("{error:#}")));
                    return;
                }
            };
            for source in found.sources {
                let Some(path) = source.path().map(Path::to_path_buf) else {
                    continue;
                };
                if followed.contains(&path) {
                    continue;
                }
                let recent = std::fs::metadata(&path)
                    .and_then(|meta| meta.modified())
                    .is_ok_and(|modified| {
                        started
                            .duration_since(modified)
                            .map_or(true, |age| age < RECENT)
                    });
                if named_files.contains(&path) || recent {
                    followed.insert(path);
                    follow_session(source, sender.clone());
                }
            }
            // The thread lives as long as `watch`: it ends with the process.
            std::thread::sleep(RESCAN);
        }
    });
}

/// Follows one session log from its start (its first lines name its session) as it grows.
fn follow_session(source: Source, sender: SyncSender<Arrival>) {
    std::thread::spawn(move || {
        let options = SourceOptions {
            read: ReadOptions {
                keep_arguments: true,
                ..ReadOptions::default()
            },
            follow: true,
            ..SourceOptions::default()
        };
        let gone = || io::Error::new(io::ErrorKind::BrokenPipe, "watch ended");
        let result = read_one(
            &source,
            &options,
            Cores::One,
            &mut || Ok(()),
            &mut |record| sender.send(Arrival::Call(record)).map_err(|_| gone()),
            &mut |warning| {
                let _ = sender.send(Arrival::Note(warning));
            },
        );
        if let Err(error) = result {
            let _ = sender.send(Arrival::Note(format!("{error:#}")));
        }
    });
}

/// One call as one line: time, agent and session, tool, what it touched, then the reason as the
/// model's claim, or `no reason`.
pub fn plain_line(call: &Call) -> String {
    let reason = if call.status == reasons::record::Status::Present {
        format!("model's reason: {}", call.reason_text())
    } else {
        call.reason_text()
    };
    format!(
        "{}  {}  {}  {}  — {}",
        call.clock(),
        call.origin(),
        visible(&call.tool),
        call.touched_text(),
        reason
    )
}

/// The plain view: a line per call, written and flushed as it arrives. A session call without a
/// reason waits up to [`GRACE`] for its reason from the reasons log, so it is written once, as it
/// is.
fn plain_lines(
    arrivals: Receiver<Arrival>,
    mut calls: Calls,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let mut waiting: Vec<(u64, Instant)> = Vec::new();
    let write = |calls: &Calls, seq: u64, out: &mut dyn Write| -> io::Result<()> {
        if let Some(call) = calls.get(seq) {
            writeln!(out, "{}", plain_line(call))?;
            out.flush()?;
        }
        Ok(())
    };
    loop {
        let timeout = waiting
            .iter()
            .map(|(_, until)| until.saturating_duration_since(Instant::now()))
            .min()
            .unwrap_or(Duration::from_secs(3600));
        match arrivals.recv_timeout(timeout) {
            Ok(Arrival::Note(note)) => crate::program::messages::message!("{}", visible(&note)),
            Ok(arrival) => {
                let change = match arrival {
                    Arrival::Logged(logged) => calls.add_logged(logged),
                    Arrival::Call(record) => calls.add_record(record),
                    Arrival::Note(_) => unreachable!("handled above"),
                };
                match change {
                    Change::Added(seq) => {
                        let call = calls.get(seq).expect("just added");
                        if call.lacks_reason() && !call.logged {
                            waiting.push((seq, Instant::now() + GRACE));
                        } else {
                            write(&calls, seq, out)?;
                        }
                    }
                    Change::Updated(seq) => {
                        if let Some(at) = waiting.iter().position(|(waiting, _)| *waiting == seq) {
                            if !calls.get(seq).is_some_and(Call::lacks_reason) {
                                waiting.remove(at);
                                write(&calls, seq, out)?;
                            }
                        }
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                for (seq, _) in waiting.drain(..) {
                    write(&calls, seq, out)?;
                }
                return Ok(ExitCode::Success);
            }
        }
        let now = Instant::now();
        let mut index = 0;
        while index < waiting.len() {
            if waiting[index].1 <= now {
                let (seq, _) = waiting.remove(index);
                write(&calls, seq, out)?;
            } else {
                index += 1;
            }
        }
    }
}
