//! Scheduling the reads of the sources a command was given: one source as a live stream (stdin,
//! a followed file, or one large file on every core, its calls still in file order), or many
//! files in parallel, one per core, their results handed on in the order the sources were
//! given. Here too what a command hears of each source: its calls, joined with the reasons
//! logs, and its malformed lines as warnings.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, Context};
use reasons::followed_file::{FollowedFile, StartOver, Step};
use reasons::formats::store::StoreError;
use reasons::formats::{
    self, read_log, Event, Layout, OpenError, Opened, ReadOptions, ReadSummary, READ_BUFFER,
};
use reasons::jsonl::AlignedBufReader;
use reasons::reasons_log;
use reasons::record::CallRecord;

use crate::program::read::followed_rewrite::Rewritten;
use crate::program::read::progress::Progress;
use crate::program::read::sources::Source;

/// How each source is read, whatever the command.
#[derive(Debug, Clone, Default)]
pub struct SourceOptions {
    /// What the readers are told.
    pub read: ReadOptions,
    /// Whether a malformed line is an error rather than a warning.
    pub strict: bool,
    /// Whether a file is followed as it grows, like `tail -f`.
    pub follow: bool,
    /// The reasons logs joined with the calls read (`--reasons-log`), when any.
    pub reasons: Option<Arc<reasons_log::Index>>,
}

/// How many cores one source may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cores {
    /// One large file is read on every core, in pieces (see [`formats::Log::read_on_every_core`]): the one source
    /// has the threads to itself.
    All,
    /// The source is read on the calling thread: other sources share the threads.
    One,
}

/// How often a followed file is looked at again once its end is reached.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

/// Reads one source, handing each call to `on_call` as soon as the line holding it is read.
///
/// `before_wait` runs before every read that may block (stdin, a followed file), so output is
/// flushed while the tool waits for more input. Malformed lines are reported through `on_warning`
/// (as `path:line: what`), or end the read when `strict`. A large file is read on several
/// threads with [`Cores::All`]; calls still come in file order.
pub fn read_one(
    source: &Source,
    options: &SourceOptions,
    cores: Cores,
    before_wait: &mut dyn FnMut() -> io::Result<()>,
    on_call: &mut dyn FnMut(CallRecord) -> io::Result<()>,
    on_warning: &mut dyn FnMut(String),
) -> anyhow::Result<ReadSummary> {
    // How a file is read is decided once, when it is opened (or, for a store a folder walk
    // found, when it was found).
    let opened = match source {
        Source::Stdin => None,
        Source::File(path) => Some(formats::open(path)),
        Source::Store(found) => Some(match found.take() {
            Some(store) => Ok(Opened::Store(store)),
            None => formats::open(found.path()),
        }),
    };
    let opened = match opened {
        None => None,
        Some(Ok(opened)) => Some(opened),
        Some(Err(OpenError::Store(StoreError::NotAStore))) => {
            on_warning(format!("{}: {}", source.name(), StoreError::NotAStore));
            return Ok(ReadSummary::default());
        }
        Some(Err(OpenError::Store(error))) => return Err(anyhow!("{}: {error}", source.name())),
        Some(Err(OpenError::Cannot(error))) => {
            return Err(anyhow::Error::new(error).context(format!("{}: cannot open", source.name())))
        }
    };
    // A store's records and messages name its table after its path.
    let name = match &opened {
        Some(Opened::Store(store)) => format!("{}:{}", source.name(), store.table()),
        _ => source.name(),
    };
    let mut strict_failure = None;
    // Warnings come from the lines read and from the follower, which reports a truncation or a
    // replacement.
    let on_warning = RefCell::new(on_warning);
    let mut malformed = MalformedLines::default();
    let mut sink = |event: Event| -> io::Result<()> {
        match event {
            Event::Call(mut record) => {
                malformed.log_seen(&mut *on_warning.borrow_mut());
                if let Some(reasons) = &options.reasons {
                    reasons.join(&mut record);
                }
                on_call(record)
            }
            Event::Malformed { line, message } => {
                let warning = format!("{name}:{line}: {message}");
                if options.strict {
                    strict_failure = Some(warning);
                    return Err(io::Error::other("malformed line"));
                }
                malformed.add(warning, &message, &mut *on_warning.borrow_mut());
                Ok(())
            }
        }
    };
    let result = match opened {
        // A followed store or document is rewritten, not appended to: only its whole can be read,
        // and it is read again at each change.
        Some(opened) if options.follow && is_rewritten_whole(&opened) => {
            let path = source.path().expect("a store or a regular file has a path");
            let rewritten = Rewritten {
                path,
                // Its records are named by the file; a store names its table itself.
                name: &source.name(),
                read: &options.read,
                poll: FOLLOW_POLL,
            };
            rewritten.follow(opened, before_wait, &mut sink, &mut |warning| {
                (on_warning.borrow_mut())(warning)
            })
        }
        Some(Opened::Store(store)) => store.read(&source.name(), &options.read, &mut sink),
        None => {
            let stdin = io::stdin().lock();
            let input =
                AlignedBufReader::with_capacity(READ_BUFFER, WaitHook::new(stdin, before_wait));
            read_log(&name, input, &options.read, &mut sink)
        }
        // A FIFO (`<(cmd)`) is no file that grows: it is read to its writer's end.
        Some(Opened::Log(log)) if options.follow && log.is_regular() => {
            let mut file = log.file().try_clone()?;
            let position = file.stream_position()?;
            let mut followed = FollowedFile::from(log.path(), file, position)
                .with_context(|| format!("{name}: cannot read"))?;
            let input = AlignedBufReader::with_capacity(
                READ_BUFFER,
                Following::new(&mut followed, &mut *before_wait),
            );
            let mut result = log.read_through(input, &name, &options.read, &mut sink);
            // Truncated or replaced: what is read now is a new log, its lines numbered from 1.
            while let Some(why) = result.as_ref().err().and_then(Following::started_over) {
                (on_warning.borrow_mut())(format!("{name}: {why}"));
                let input = AlignedBufReader::with_capacity(
                    READ_BUFFER,
                    Following::new(&mut followed, &mut *before_wait),
                );
                result = read_log(&name, input, &options.read, &mut sink);
            }
            result
        }
        Some(Opened::Log(log)) => match cores {
            Cores::All => log.read_on_every_core(&name, &options.read, &mut sink),
            Cores::One => log.read(&name, &options.read, &mut sink),
        },
    };
    if let Some(failure) = strict_failure {
        return Err(anyhow!("{failure} (--strict)"));
    }
    let on_warning = on_warning.into_inner();
    match &result {
        Ok(summary) => {
            let head = || source.path().and_then(file_head);
            malformed.end(&name, summary, head, on_warning);
        }
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {}
        Err(_) => malformed.log_seen(on_warning),
    }
    result.with_context(|| format!("{name}: cannot read"))
}

/// Whether a log is rewritten whole rather than appended to: an agent's store, or one JSON
/// document in a regular file (a FIFO's document is read to its writer's end).
fn is_rewritten_whole(opened: &Opened) -> bool {
    match opened {
        Opened::Store(_) => true,
        Opened::Log(log) => log.is_regular() && log.layout() == Layout::Document,
    }
}

/// How many malformed lines of one log are shown, each by its place; the rest are counted.
const MALFORMED_SHOWN: u64 = 3;

/// The malformed lines of one log, told so that a file that is no log at all (a binary, a
/// README) gets one warning rather than one per line. Until a call shows the source is a log,
/// the first few warnings are held back; at the end a source with no call whose lines are
/// mostly not JSON is named as what it looks like instead.
#[derive(Default)]
struct MalformedLines {
    /// Warnings held back until a call is seen or the source ends.
    held: Vec<String>,
    /// Whether a call was seen: then warnings are shown as they come.
    log: bool,
    /// Malformed lines so far.
    count: u64,
    /// Whether one was not UTF-8: a log is text, so such a file looks binary.
    not_text: bool,
}

impl MalformedLines {
    fn add(&mut self, warning: String, message: &str, on_warning: &mut dyn FnMut(String)) {
        self.count += 1;
        self.not_text |= message.starts_with("invalid UTF-8");
        if self.count > MALFORMED_SHOWN {
            return;
        }
        if self.log {
            on_warning(warning);
        } else {
            self.held.push(warning);
        }
    }

    /// A call was read: the source is a log, and what was held back is said.
    fn log_seen(&mut self, on_warning: &mut dyn FnMut(String)) {
        self.log = true;
        for warning in self.held.drain(..) {
            on_warning(warning);
        }
    }

    /// The source ended; `head` gives its first bytes, when they can be read again (read only
    /// when a source with no call is to be named as what it looks like).
    fn end(
        mut self,
        name: &str,
        summary: &ReadSummary,
        head: impl FnOnce() -> Option<Vec<u8>>,
        on_warning: &mut dyn FnMut(String),
    ) {
        if self.count == 0 {
            return;
        }
        if summary.calls == 0 && self.count * 2 > summary.lines {
            let looks = if self.not_text || head().is_some_and(|head| looks_binary(&head)) {
                "looks binary"
            } else {
                "not JSON lines"
            };
            on_warning(format!(
                "{name}: not an agent log: {looks} ({} of its {} lines are not JSON)",
                self.count, summary.lines
            ));
            return;
        }
        self.log_seen(on_warning);
        if self.count > MALFORMED_SHOWN {
            on_warning(format!(
                "{name}: {} more malformed lines skipped ({} in all)",
                self.count - MALFORMED_SHOWN,
                self.count
            ));
        }
    }
}

/// The first bytes of a file, to tell what it looks like; `None` when it cannot be read again
/// (a FIFO, say, whose opening would wait for a writer that never comes).
fn file_head(path: &std::path::Path) -> Option<Vec<u8>> {
    if !std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file()) {
        return None;
    }
    let mut head = Vec::new();
    File::open(path)
        .ok()?
        .take(8 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

/// Whether bytes look like a binary rather than text: a NUL byte, or bytes that are not UTF-8
/// (a character cut at the end of them aside).
fn looks_binary(head: &[u8]) -> bool {
    head.contains(&0) || std::str::from_utf8(head).is_err_and(|error| error.error_len().is_some())
}

/// Runs `before_wait` before each read of the inner reader: a buffered reader only reads when
/// its buffer is empty, which is exactly when the next read may block.
struct WaitHook<'a, R> {
    inner: R,
    before_wait: &'a mut dyn FnMut() -> io::Result<()>,
}

impl<'a, R> WaitHook<'a, R> {
    fn new(inner: R, before_wait: &'a mut dyn FnMut() -> io::Result<()>) -> Self {
        WaitHook { inner, before_wait }
    }
}

impl<R: Read> Read for WaitHook<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        (self.before_wait)()?;
        self.inner.read(buffer)
    }
}

/// A followed file read as a stream that never ends: at its end, wait for more to be written.
/// When the follower starts over (the file truncated under it, or replaced by another), the read
/// ends with its [`StartOver`]: the line loop begins again on what is read from then on, and a
/// line begun before is not joined to it.
struct Following<'a> {
    followed: &'a mut FollowedFile,
    before_wait: &'a mut dyn FnMut() -> io::Result<()>,
}

impl<'a> Following<'a> {
    fn new(
        followed: &'a mut FollowedFile,
        before_wait: &'a mut dyn FnMut() -> io::Result<()>,
    ) -> Self {
        Following {
            followed,
            before_wait,
        }
    }

    /// Why the follower started over, when that is what ended a read.
    fn started_over(error: &io::Error) -> Option<StartOver> {
        error.get_ref()?.downcast_ref::<StartOver>().copied()
    }
}

impl Read for Following<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.followed.read(buffer)? {
                Step::Read(read) => return Ok(read),
                Step::StartedOver(why) => return Err(io::Error::other(why)),
                Step::AtEnd => {
                    (self.before_wait)()?;
                    std::thread::sleep(FOLLOW_POLL);
                }
            }
        }
    }
}

/// What reading one file in the background produced.
pub struct FileResult<T> {
    /// The command's own result for the file.
    pub value: T,
    /// Warnings about malformed lines, in line order.
    pub warnings: Vec<String>,
    /// What the reader counted, or why the file could not be read.
    pub summary: anyhow::Result<ReadSummary>,
}

/// Reads every source in parallel, folding each one's calls with `fold` into a fresh `T`, and
/// hands each file's result and summary to `emit` in the order of `sources`, as soon as it and
/// all before it are done. `emit` runs on whichever reading thread that is, one call at a time.
///
/// Warnings about malformed lines, and files that could not be read, are reported on stderr as
/// they are handed on; returns whether every file was read.
pub fn read_each_in_order<T: Send>(
    sources: &[Source],
    options: &SourceOptions,
    init: impl Fn() -> T + Sync,
    fold: impl Fn(&mut T, CallRecord) + Sync,
    mut emit: impl FnMut(&Source, T, &ReadSummary) -> anyhow::Result<()> + Send,
) -> anyhow::Result<bool> {
    let stop = AtomicBool::new(false);
    // One file gets the threads to itself; many share them, one file each.
    let cores = if sources.len() == 1 {
        Cores::All
    } else {
        Cores::One
    };
    let work = |source: &Source| {
        let mut value = init();
        let mut warnings = Vec::new();
        let summary = read_one(
            source,
            options,
            cores,
            &mut || Ok(()),
            &mut |record| {
                if stop.load(Ordering::Relaxed) {
                    return Err(io::Error::new(io::ErrorKind::Interrupted, "stopped"));
                }
                fold(&mut value, record);
                Ok(())
            },
            &mut |warning| warnings.push(warning),
        );
        FileResult {
            value,
            warnings,
            summary,
        }
    };
    let mut progress = Progress::new(sources.len());
    let mut all_read = true;
    let mut hand_on = |source: &Source, result: FileResult<T>| {
        for warning in result.warnings {
            progress.message(&format!("reasons: {warning}"));
        }
        progress.file_done();
        match result.summary {
            Ok(summary) => emit(source, result.value, &summary),
            Err(error) => {
                progress.message(&format!("reasons: {error:#}"));
                all_read = false;
                Ok(())
            }
        }
    };
    if sources.len() <= 1 {
        for source in sources {
            hand_on(source, work(source))?;
        }
        return Ok(all_read);
    }
    // Whichever thread finishes the file next in order hands on every file ready after it,
    // while the others go on reading: no thread waits to be woken for it. (A thread of its own
    // for it, woken for each batch of small files, cost the readers several percent of a run.)
    let order = Mutex::new(Order {
        waiting: BTreeMap::new(),
        next: 0,
        handing: false,
    });
    let handing_on = Mutex::new((hand_on, None::<anyhow::Error>));
    // First in, first read: results come back nearly in order, so few wait to be handed on.
    // (A parallel iterator splits the list in halves, and the second half's results would
    // wait for all of the first's.)
    rayon::scope_fifo(|tasks| {
        for (index, source) in sources.iter().enumerate() {
            let (work, stop, order, handing_on) = (&work, &stop, &order, &handing_on);
            tasks.spawn_fifo(move |_| {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let result = work(source);
                let Ok(mut waiting) = order.lock() else {
                    return;
                };
                waiting.waiting.insert(index, result);
                if waiting.handing {
                    // The thread handing on takes this one too before it stops.
                    return;
                }
                waiting.handing = true;
                loop {
                    let ready = waiting.take_ready();
                    if ready.is_empty() {
                        waiting.handing = false;
                        return;
                    }
                    drop(waiting);
                    if let Ok(mut handing_on) = handing_on.lock() {
                        let (hand_on, failure) = &mut *handing_on;
                        for (index, result) in ready {
                            if failure.is_some() {
                                break;
                            }
                            if let Err(error) = hand_on(&sources[index], result) {
                                stop.store(true, Ordering::Relaxed);
                                *failure = Some(error);
                            }
                        }
                    }
                    waiting = match order.lock() {
                        Ok(waiting) => waiting,
                        Err(_) => return,
                    };
                }
            });
        }
    });
    let (_, failure) = handing_on
        .into_inner()
        .map_err(|_| anyhow!("a reading thread failed"))?;
    if let Some(error) = failure {
        return Err(error);
    }
    let handed_on = order
        .into_inner()
        .map_err(|_| anyhow!("a reading thread failed"))?
        .next;
    if handed_on != sources.len() {
        return Err(anyhow!("a reading thread failed"));
    }
    Ok(all_read)
}

/// Files read and not yet handed on, by their place in the input.
struct Order<T> {
    waiting: BTreeMap<usize, FileResult<T>>,
    /// The place of the next file to hand on.
    next: usize,
    /// Whether a thread is handing files on: then it also takes those that arrive meanwhile.
    handing: bool,
}

impl<T> Order<T> {
    /// The files that can be handed on now, with their places: the next one and each read one
    /// right after it.
    fn take_ready(&mut self) -> Vec<(usize, FileResult<T>)> {
        let mut ready = Vec::new();
        while let Some(result) = self.waiting.remove(&self.next) {
            ready.push((self.next, result));
            self.next += 1;
        }
        ready
    }
}
