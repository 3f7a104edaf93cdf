//! The reasons log: one JSON object per line for each reason the layer took off a call.
//!
//! `filter`, `proxy` and `gateway` write it; `hook`, `watch` and the audit commands read it. A
//! line is `{"time","via","tool","call_id","reason","touched","request_id"?,"session"?}`:
//! `call_id` is the id the agent's own transcript records for the call, so a transcript and a
//! reasons log join on it; `touched` says what the call does, so the log alone shows each reason
//! beside its call.
//!
//! Which log: the one a command is given, else the one `REASONS_LOG` names, else the default,
//! as the command's [`Purpose`] allows; [`which`] is the one place that decides it.
//!
//! Each record is appended with a single `write` to a file opened for appending, so that several
//! writers (a gateway per provider, a proxy per MCP server) can share one log without cutting
//! through each other's lines.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Map, Value};

use crate::dates;
use crate::layer::TakenReason;
use crate::record::{CallRecord, ReasonField, ReasonFrom, Status};
use crate::touched;

/// Which part of the layer took the reason off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `reasons gateway`, at the model's API.
    Gateway,
    /// `reasons proxy`, in front of an MCP server.
    Proxy,
    /// `reasons filter`, on a JSON-lines stream.
    Filter,
}

impl Via {
    /// The name written in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Gateway => "gateway",
            Via::Proxy => "proxy",
            Via::Filter => "filter",
        }
    }
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// When the reason was taken off, as RFC 3339 UTC.
    pub time: String,
    /// Which part of the layer took it.
    pub via: Via,
    /// The reason as it was taken off, with the tool and the ids it came with.
    pub taken: TakenReason,
    /// The session the call belongs to, when the request said.
    pub session: Option<String>,
}

impl Record {
    /// A record stamped with the current time.
    pub fn now(via: Via, taken: TakenReason, session: Option<String>) -> Record {
        Record {
            time: dates::rfc3339(SystemTime::now()),
            via,
            taken,
            session,
        }
    }

    /// What the call touched: the one summary the log, the spans and every view show.
    pub fn touched(&self) -> String {
        touched::summary(&self.taken.arguments)
    }

    /// The record as one JSON object, keys in the documented order; `request_id` and `session`
    /// only when known.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("time".into(), Value::from(self.time.as_str()));
        object.insert("via".into(), Value::from(self.via.as_str()));
        object.insert("tool".into(), Value::from(self.taken.tool.as_str()));
        object.insert("call_id".into(), self.taken.call_id.clone().into());
        object.insert("reason".into(), self.taken.reason.clone());
        object.insert("touched".into(), Value::from(self.touched()));
        if let Some(request_id) = &self.taken.request_id {
            object.insert("request_id".into(), Value::from(request_id.as_str()));
        }
        if let Some(session) = &self.session {
            object.insert("session".into(), Value::from(session.as_str()));
        }
        Value::Object(object)
    }

    /// The record as the line that is appended, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = self.to_json().to_string().into_bytes();
        line.push(b'\n');
        line
    }
}

/// The environment variable that names the reasons log for every command at once.
pub const ENVIRONMENT: &str = "REASONS_LOG";

/// What a command wants the reasons log for, which decides where it looks when none is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The gateway and `run` log every reason, `watch` and the hooks read them: the log named,
    /// else the default one ([`which`]).
    Always,
    /// `filter` and `proxy` log only when asked: the log named, else the one `REASONS_LOG` names,
    /// else none.
    WhenNamed,
    /// The audits join a log with the calls they read: the log named, else the default one when
    /// it exists and either `REASONS_LOG` names it or the usual local folders are read (whose
    /// sessions it may hold: a log is never joined with logs it cannot be about by chance).
    Join {
        /// Whether the command reads the usual local folders (no path given).
        usual_folders: bool,
    },
}

/// The reasons log a command uses: the one it is given, else the one `REASONS_LOG` names, else
/// `$XDG_STATE_HOME/reasons/reasons.jsonl`, else `~/.local/state/reasons/reasons.jsonl`, as its
/// [`Purpose`] allows. `None` when it uses none (or, for [`Purpose::Always`], when none of those
/// variables is set). Every command asks here.
pub fn which(named: Option<PathBuf>, purpose: Purpose) -> Option<PathBuf> {
    if named.is_some() {
        return named;
    }
    match purpose {
        Purpose::Always => default_path(),
        Purpose::WhenNamed => named_by_environment(),
        Purpose::Join { usual_folders } => {
            if !usual_folders && named_by_environment().is_none() {
                return None;
            }
            // Named by the variable before any gateway wrote to it: nothing to join yet.
            default_path().filter(|path| path.is_file())
        }
    }
}

/// The log `REASONS_LOG` names, when it names one.
fn named_by_environment() -> Option<PathBuf> {
    std::env::var_os(ENVIRONMENT)
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
}

/// The log used when none is named on the command line: the one `REASONS_LOG` names, else
/// `$XDG_STATE_HOME/reasons/reasons.jsonl`, else `~/.local/state/reasons/reasons.jsonl`. `None`
/// when none of those variables is set.
fn default_path() -> Option<PathBuf> {
    if let Some(named) = named_by_environment() {
        return Some(named);
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            let home = std::env::var_os("HOME").filter(|dir| !dir.is_empty())?;
            Some(Path::new(&home).join(".local/state"))
        })?;
    Some(state.join("reasons").join("reasons.jsonl"))
}

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

/// Notes `reason` for `call_id` unless the id has one already: the one policy for a call id
/// logged more than once, which the audit's join ([`Index`]), the gateway's restoration of a
/// history (`gateway::Recall`) and `watch` all follow. The first reason stands: it is what the
/// model wrote when it made the call; a later line with the same id is a replay (a history sent
/// again through a layer, a log appended twice), never a better answer. Keeping the first also
/// keeps a restored history the same bytes turn after turn. Returns whether it was noted.
pub fn note_first<V>(
    reasons: &mut HashMap<String, V>,
    call_id: &str,
    reason: impl FnOnce() -> V,
) -> bool {
    if reasons.contains_key(call_id) {
        return false;
    }
    reasons.insert(call_id.to_owned(), reason());
    true
}

/// The reasons of a log by call id, for joining with transcripts. For an id logged more than
/// once the first reason stands ([`note_first`]).
///
/// Lines that are not records ([`Logged::parse`]), or records without a call id, are counted and
/// skipped: a log is written by several processes, and a torn last line must not hide the rest.
#[derive(Debug, Default)]
pub struct Index {
    reasons: HashMap<String, Value>,
    /// Lines that were not records.
    pub skipped: u64,
}

impl Index {
    /// Reads a whole log.
    pub fn read(path: &Path) -> io::Result<Index> {
        let mut index = Index::default();
        index.add(BufReader::new(File::open(path)?))?;
        Ok(index)
    }

    /// Adds the records of another log.
    pub fn add(&mut self, input: impl BufRead) -> io::Result<()> {
        for line in input.split(b'\n') {
            let line = line?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match Logged::parse(&line) {
                Some(Logged {
                    call_id: Some(call_id),
                    reason,
                    ..
                }) => {
                    note_first(&mut self.reasons, &call_id, || reason);
                }
                _ => self.skipped += 1,
            }
        }
        Ok(())
    }

    /// The reason logged for a call id.
    pub fn get(&self, call_id: &str) -> Option<&Value> {
        self.reasons.get(call_id)
    }

    /// Gives a call whose own arguments carry no reason the reason logged for its id, with the
    /// status that reason gives it. Returns whether it did.
    pub fn join(&self, record: &mut CallRecord) -> bool {
        if record.status != Status::Missing {
            return false;
        }
        let Some(reason) = record
            .call_id
            .as_deref()
            .and_then(|id| self.get_for(record, id))
        else {
            return false;
        };
        (record.status, record.reason) = match reason {
            Value::String(text) => Status::of_reason_field(ReasonField::Text(text)),
            other => (
                Status::of_reason_field(ReasonField::NotText).0,
                Some(other.to_string()),
            ),
        };
        record.reason_from = ReasonFrom::Log;
        true
    }

    /// The reason logged for a record's call id. Gemini CLI records a call under
    /// `<tool>__<id>`, the API's `functionCall.id` behind its tool's name, where the gateway
    /// logged the API's id: either is looked up.
    fn get_for(&self, record: &CallRecord, call_id: &str) -> Option<&Value> {
        self.get(call_id).or_else(|| {
            let api_id = gemini_api_id(&record.tool, call_id)
                .filter(|_| record.format == crate::formats::Format::GeminiCli)?;
            self.get(api_id)
        })
    }

    /// How many call ids have a reason.
    pub fn len(&self) -> usize {
        self.reasons.len()
    }

    /// Whether no call id has a reason.
    pub fn is_empty(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// The API's id within an id Gemini CLI records: it records a call under `<tool>__<id>`, the
/// API's `functionCall.id` behind its tool's name, where the layer logged the API's id. `None`
/// for an id not of that form. The one rule by which the audit's join and `watch` match the two.
pub fn gemini_api_id<'a>(tool: &str, call_id: &'a str) -> Option<&'a str> {
    call_id.strip_prefix(tool)?.strip_prefix("__")
}

/// Whether a call known without an id is the call a record was logged for: the same tool, and
/// the same thing touched (an empty summary says nothing, and matches nothing). The one rule by
/// which a hook finds the reason of a call that arrives without an id and `watch` puts a logged
/// reason beside the call an agent's log records.
pub fn same_tool_same_touched(
    tool: &str,
    touched: &str,
    other_tool: &str,
    other_touched: &str,
) -> bool {
    tool == other_tool && !touched.is_empty() && touched == other_touched
}

/// How far back from its end a hook looks ([`find_from_end`]): it asks about a call the gateway
/// logged a moment ago, so it is among the last lines, and a log of any length is answered at
/// once. 1 MiB is some 4,000 records: that many other reasons would have to be logged between the
/// gateway taking the call's and the agent's hook running for it to be missed. It is what a hook
/// reads, whatever it finds (benches/watch.sh).
pub const SEARCH_FROM_END: u64 = 1 << 20;

/// How far back [`Tail::from_last_lines`] looks for the lines it starts at.
pub const TAIL_FROM_END: u64 = 8 << 20;

/// One line of a log as it is read back: what [`Record`] wrote, with its fields as text. Every
/// reader (the [`Index`], the backward search, `watch`, the gateway's history and its team
/// answers) reads a line with [`Logged::parse`], so a line is a record to all of them or to none.
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    /// When the reason was taken off, as written.
    pub time: Option<String>,
    /// Which part of the layer took it (`gateway`, `proxy`, `filter`), as written.
    pub via: Option<String>,
    /// The tool the call was for.
    pub tool: String,
    /// The call's id, when the layer knew it.
    pub call_id: Option<String>,
    /// The reason, whatever its value.
    pub reason: Value,
    /// What the call touched; logs written before it was recorded have none.
    pub touched: Option<String>,
    /// The session, when the request said.
    pub session: Option<String>,
}

impl Logged {
    /// A line of the log; `None` when it is no record (malformed, torn, without a tool or a
    /// reason).
    pub fn parse(line: &[u8]) -> Option<Logged> {
        let Value::Object(mut record) = serde_json::from_slice::<Value>(line).ok()? else {
            return None;
        };
        let mut text = |key: &str| match record.shift_remove(key) {
            Some(Value::String(text)) => Some(text),
            _ => None,
        };
        let (time, via, tool, call_id, touched, session) = (
            text("time"),
            text("via"),
            text("tool")?,
            text("call_id"),
            text("touched"),
            text("session"),
        );
        Some(Logged {
            reason: record.shift_remove("reason")?,
            time,
            via,
            tool,
            call_id,
            touched,
            session,
        })
    }
}

/// The reason logged for `call_id`, looked for in the last [`SEARCH_FROM_END`] bytes of the log:
/// the first record for the id among them, as everywhere else ([`note_first`]).
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
    /// The first written: one id, one reason ([`note_first`]).
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

/// A reasons log followed as it grows, from its last lines on: what `watch` reads.
///
/// It reads only what is new at each [`Tail::read_new`], never the whole log, so starting on a log
/// of any length costs the same. Lines are handed on whole: several writers append one line per
/// write, and a line not yet ended waits for its end. A log truncated under it (rotated by
/// copying and truncating) is read again from its start, even when it has grown past the old end
/// before it is looked at again (the last bytes read are no longer where they were); a log
/// replaced by another file (rotated by renaming) is read to its end, then the new file from its
/// start: no line is lost or read twice.
#[derive(Debug)]
pub struct Tail {
    path: PathBuf,
    file: Option<File>,
    /// How far the open file has been read.
    position: u64,
    /// The start of a line whose end has not been written yet.
    partial: Vec<u8>,
    /// The last bytes before `position`, as they were read: a file that no longer holds them
    /// there was truncated and written again.
    seen: Vec<u8>,
}

/// How many of the last bytes read a [`Tail`] checks are still in place.
const SEEN: usize = 64;

/// How much a [`Tail`] reads at once.
const READ_AT_ONCE: u64 = 1 << 20;

/// The longest line a [`Tail`] waits for the end of: a longer one is no record, and is dropped.
const LONGEST_LINE: usize = 16 << 20;

impl Tail {
    /// Follows `path` from the start of its last `lines` lines (looking back at most
    /// [`TAIL_FROM_END`] bytes). A log that does not exist yet is followed from when it appears.
    pub fn from_last_lines(path: &Path, lines: usize) -> io::Result<Tail> {
        let mut tail = Tail {
            path: path.to_owned(),
            file: None,
            position: 0,
            partial: Vec::new(),
            seen: Vec::new(),
        };
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(tail),
            Err(error) => return Err(error),
        };
        tail.position = start_of_last_lines(&mut file, lines)?;
        let before = tail.position.saturating_sub(SEEN as u64);
        file.seek(SeekFrom::Start(before))?;
        (&mut file)
            .take(tail.position - before)
            .read_to_end(&mut tail.seen)?;
        tail.file = Some(file);
        Ok(tail)
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Hands each complete line written since the last call to `on_line` (without its line end),
    /// and returns how many there were.
    pub fn read_new(&mut self, on_line: &mut dyn FnMut(&[u8])) -> io::Result<usize> {
        let mut count = 0;
        loop {
            let Some(file) = &mut self.file else {
                match File::open(&self.path) {
                    Ok(file) => {
                        self.file = Some(file);
                        self.position = 0;
                        self.seen.clear();
                        continue;
                    }
                    Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(count),
                    Err(error) => return Err(error),
                }
            };
            let length = file.metadata()?.len();
            if length < self.position {
                // Truncated: what is there now was written after the truncation.
                self.position = 0;
                self.partial.clear();
                self.seen.clear();
            }
            if length > self.position {
                let checked = self.seen.len() as u64;
                file.seek(SeekFrom::Start(self.position - checked))?;
                let mut block = Vec::new();
                // A burst of writes is read a piece at a time: memory stays flat however much
                // was written since the last look.
                let new = (length - self.position).min(READ_AT_ONCE);
                (&mut *file).take(new + checked).read_to_end(&mut block)?;
                if block.get(..self.seen.len()) != Some(&self.seen[..]) {
                    // Truncated and written again past the old end: all of it is new.
                    self.position = 0;
                    self.partial.clear();
                    self.seen.clear();
                    continue;
                }
                let block = &block[self.seen.len()..];
                self.position += block.len() as u64;
                self.seen.extend_from_slice(block);
                let keep_from = self.seen.len().saturating_sub(SEEN);
                self.seen.drain(..keep_from);
                count += self.split_lines(block, on_line);
                if self.position < length {
                    continue;
                }
            }
            // Renamed away and replaced: this file is read to its end (above), then the new one.
            if self.replaced()? {
                self.file = None;
                self.partial.clear();
                self.seen.clear();
                continue;
            }
            return Ok(count);
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

    /// Whether the path now names another file than the one open.
    fn replaced(&self) -> io::Result<bool> {
        let Some(file) = &self.file else {
            return Ok(false);
        };
        let open = file.metadata()?;
        let named = match fs::metadata(&self.path) {
            Ok(named) => named,
            // Renamed away and not yet replaced: keep reading the open one.
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(error),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Ok((open.dev(), open.ino()) != (named.dev(), named.ino()))
        }
        #[cfg(not(unix))]
        {
            Ok(named.len() < open.len())
        }
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
    use serde_json::json;

    use super::*;

    fn taken(tool: &str, call_id: &str, reason: Value) -> TakenReason {
        TakenReason::new(
            tool.into(),
            Some(call_id.into()),
            None,
            reason,
            json!({"command": "ls"}),
        )
    }

    #[test]
    fn a_record_has_the_documented_keys_in_order() {
        let mut record = Record::now(
            Via::Proxy,
            TakenReason {
                request_id: Some("7".into()),
                ..taken("fs_write", "toolu_1", json!("Save it"))
            },
            Some("s1".into()),
        );
        record.time = "2026-12-01T00:00:00.000Z".into();
        assert_eq!(
            String::from_utf8(record.to_line()).unwrap(),
            "{\"time\":\"2026-12-01T00:00:00.000Z\",\"via\":\"proxy\",\"tool\":\"fs_write\",\
             \"call_id\":\"toolu_1\",\"reason\":\"Save it\",\"touched\":\"ls\",\"request_id\":\"7\",\"session\":\"s1\"}\n"
        );
    }

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

    fn logged_line(id: &str) -> String {
        let mut record = Record::now(Via::Gateway, taken("Bash", id, json!("r")), None);
        record.time = "2026-12-01T00:00:00.000Z".into();
        String::from_utf8(record.to_line()).unwrap()
    }

    #[test]
    fn the_index_skips_torn_lines_and_keeps_the_first_reason() {
        let log = b"{\"tool\":\"Bash\",\"call_id\":\"a\",\"reason\":\"first\"}\nnot json\n\n{\"tool\":\"Bash\",\"call_id\":\"a\",\"reason\":\"second\"}\n{\"tool\":\"Bash\",\"call_id\":null,\"reason\":\"x\"}\n{\"tool\":\"Bash\",\"call_id\":\"b\",\"rea";
        let mut index = Index::default();
        index.add(&log[..]).unwrap();
        assert_eq!(index.get("a"), Some(&json!("first")));
        assert_eq!(index.get("b"), None);
        assert_eq!(index.skipped, 3);
    }

    #[test]
    fn a_call_without_a_reason_takes_the_logged_one() {
        let mut index = Index::default();
        index
            .add(&b"{\"tool\":\"Bash\",\"call_id\":\"t1\",\"reason\":\"Look\"}\n{\"tool\":\"Bash\",\"call_id\":\"t2\",\"reason\":\" \"}\n{\"tool\":\"Bash\",\"call_id\":\"t3\",\"reason\":7}\n"[..])
            .unwrap();
        let record = |id: &str, status: Status| CallRecord {
            source: "s".into(),
            line: 1,
            format: crate::formats::Format::ClaudeCode,
            session: None,
            timestamp: None,
            call_id: Some(id.into()),
            tool: "Bash".into(),
            reason: None,
            status,
            reason_from: ReasonFrom::Call,
            arguments: None,
        };
        let joined = |id: &str, status: Status| {
            let mut record = record(id, status);
            index.join(&mut record);
            (record.status, record.reason, record.reason_from)
        };
        assert_eq!(
            joined("t1", Status::Missing),
            (Status::Present, Some("Look".into()), ReasonFrom::Log)
        );
        assert_eq!(
            joined("t2", Status::Missing),
            (Status::Blank, Some(" ".into()), ReasonFrom::Log)
        );
        assert_eq!(
            joined("t3", Status::Missing),
            (Status::Invalid, Some("7".into()), ReasonFrom::Log)
        );
        let mut gemini = record("Bash__t1", Status::Missing);
        gemini.format = crate::formats::Format::GeminiCli;
        assert!(
            index.join(&mut gemini),
            "Gemini CLI's `<tool>__<id>` joins on the id"
        );
        assert_eq!(gemini.reason.as_deref(), Some("Look"));
        for (format, id) in [
            (crate::formats::Format::ClaudeCode, "Bash__t1"),
            (crate::formats::Format::GeminiCli, "Read__t1"),
        ] {
            let mut other = record(id, Status::Missing);
            other.format = format;
            assert!(!index.join(&mut other), "{id} in {format:?}");
        }
        assert_eq!(
            joined("t9", Status::Missing),
            (Status::Missing, None, ReasonFrom::Call)
        );
        // A call that carries a reason of its own, or cannot carry one, keeps what it has.
        for status in [Status::Blank, Status::Declared, Status::Freeform] {
            assert_eq!(joined("t1", status), (status, None, ReasonFrom::Call));
        }
    }

    #[test]
    fn a_call_without_an_id_is_matched_by_tool_and_what_it_touched_never_by_nothing() {
        assert!(same_tool_same_touched("Bash", "ls", "Bash", "ls"));
        assert!(!same_tool_same_touched("Bash", "ls", "Read", "ls"));
        assert!(!same_tool_same_touched("Bash", "ls", "Bash", "ls -l"));
        assert!(!same_tool_same_touched("Bash", "", "Bash", ""));
        assert_eq!(gemini_api_id("Bash", "Bash__c1"), Some("c1"));
        assert_eq!(gemini_api_id("Bash", "Read__c1"), None);
        assert_eq!(gemini_api_id("Bash", "c1"), None);
    }

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
        assert!(text.len() as u64 > 3 * READ_AT_ONCE);
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
