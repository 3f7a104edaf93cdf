//! Agents that keep their sessions in a SQLite database: OpenCode (`opencode.db`), Kilo
//! (`kilo.db`), Crush (`.crush/crush.db`), Goose (`sessions.db`), Hermes Agent (`state.db`) and
//! OpenClaw (`openclaw-agent.sqlite`).
//!
//! A store is told by the file's header (`SQLite format 3`), then by its tables and columns,
//! never by its name. Each row of the table that holds the calls is read as one event, the
//! object of its columns with its JSON column inline, through the same reading loop and shapes
//! as a JSONL log: a row is a line, numbered by its rowid. A row whose event the agent
//! compressed (OpenClaw's longer ones) is decompressed first. Records name the table after the
//! path (`source` is `path:table`), so a call's place reads `path:table:rowid`.
//!
//! The agent may be writing while we read. The database is opened read-only (no write to the
//! file, ever, and its `-wal` is read, so what the agent committed a moment ago is seen), and
//! read in short transactions of a few thousand rows: in WAL mode (which these agents use) a
//! reader never holds up a writer; in rollback mode no shared lock outlives one batch, so the
//! agent's next write waits milliseconds at most.
//!
//! Here the reading, batch by batch; `layouts` says where each agent's store keeps its calls,
//! `row_event` writes a row as the event the readers read.

mod layouts;
mod row_event;

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::call_reader::CallReader;
use super::events::{Event, ReadSummary};
use super::options::ReadOptions;
use super::reading::Reading;
use super::source_rules::{Item, Offset};
use crate::record::Format;
use layouts::{fits, select, JsonHolds, Layout, NullJson, LAYOUTS};
use row_event::{compose, why_not_json};

/// The first 16 bytes of every SQLite database.
const HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Rows read in one transaction.
const BATCH: i64 = 4096;

/// How long to wait for a lock the agent holds while it writes (rollback mode only).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest compressed event decompressed: OpenClaw compresses none longer (4 MiB). A size
/// above it is the file's mistake, and no reason to take that much memory.
const LONGEST_COMPRESSED: usize = 4 << 20;

/// Whether the file at `path` starts as a SQLite database does. Reads 16 bytes, nothing more.
pub fn is_sqlite(path: &Path) -> bool {
    // Only a regular file can be a database: opening a FIFO to look would take the data its
    // writer sends, and leave the reading that follows waiting for a writer that never comes.
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file())
        && std::fs::File::open(path).is_ok_and(|file| starts_as_database(&file))
}

/// Whether an open file starts as a SQLite database does, read without moving its cursor: the
/// same handle goes on to be read as a log when it is none.
pub fn starts_as_database(file: &std::fs::File) -> bool {
    let mut start = [0u8; 16];
    read_start(file, &mut start).is_ok_and(|()| &start == HEADER)
}

#[cfg(unix)]
fn read_start(file: &std::fs::File, start: &mut [u8; 16]) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, start, 0)
}

#[cfg(not(unix))]
fn read_start(file: &std::fs::File, start: &mut [u8; 16]) -> io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut file = file.try_clone()?;
    let at = file.stream_position()?;
    let read = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read_exact(start));
    file.seek(SeekFrom::Start(at))?;
    read
}

/// Why a SQLite file cannot be read as a store.
#[derive(Debug)]
pub enum StoreError {
    /// A database, but not one of an agent this tool reads.
    NotAStore,
    /// SQLite could not open or read it (not a database after all, damaged, locked…).
    Sqlite(rusqlite::Error),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::NotAStore => f.write_str(
                "a SQLite database, but not the store of an agent reasons reads \
                 (OpenCode, Kilo, Crush, Goose, Hermes Agent, OpenClaw): skipped",
            ),
            StoreError::Sqlite(error) => write!(f, "cannot read this SQLite database: {error}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError::Sqlite(error)
    }
}

/// An agent's store, open for reading.
pub struct Store {
    connection: Connection,
    layout: &'static Layout,
    /// The query of one batch of rows, for the columns this store's table has.
    select: String,
}

impl Store {
    /// Opens the database at `path` read-only and finds which agent's store it is.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(path, flags)?;
        connection.busy_timeout(BUSY_TIMEOUT)?;
        let tables = tables(&connection)?;
        let layout = LAYOUTS
            .iter()
            .find(|layout| fits(layout, &tables))
            .ok_or(StoreError::NotAStore)?;
        let select = select(layout, &tables[layout.table]);
        Ok(Store {
            connection,
            layout,
            select,
        })
    }

    /// Which agent wrote it.
    pub fn format(&self) -> Format {
        self.layout.format
    }

    /// The table whose rows hold the calls.
    pub fn table(&self) -> &'static str {
        self.layout.table
    }

    /// Reads every row of the calls' table, in rowid order, and hands each event to `sink` as
    /// [`super::read_log`] does. `source` names the store in records and goes before the
    /// table's name (`path:table`); a record's line is its row's rowid. A row whose JSON column
    /// is not JSON is an [`Event::Malformed`] naming the column, and reading goes on.
    pub fn read(
        self,
        source: &str,
        options: &ReadOptions,
        sink: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> io::Result<ReadSummary> {
        let layout = self.layout;
        let mut options = options.clone();
        // Kilo's rows are OpenCode's parts: the store says whose they are.
        options.format = options.format.or(Some(layout.format));
        let place = format!("{source}:{}", layout.table);
        // The reading (the rules and the sink), shared by the reader and by what this loop says
        // of a row it cannot hand the reader.
        let state = RefCell::new(Reading::new(&place, &options, sink));
        // The rows being read, and which of them: what a malformed event says is said of
        // that row's JSON column.
        let rows = RefCell::new(Rows::default());
        let current = std::cell::Cell::new(0);
        let mut apply = |item: Item| {
            let item = match item {
                Item::Malformed { line, message } => Item::Malformed {
                    line,
                    message: rows
                        .borrow()
                        .column(current.get(), layout)
                        .and_then(|(column, text)| {
                            why_not_json(column, &text, JsonHolds::of(layout))
                        })
                        .unwrap_or(message),
                },
                item => item,
            };
            state.borrow_mut().apply(item, Offset::default())
        };
        let mut reader = CallReader::new(&options, &mut apply);
        // SQLite reads and writes the events on a thread of its own while this one reads
        // them: a few batches ahead at most.
        let (batches_out, batches_in) = mpsc::sync_channel::<io::Result<Rows>>(2);
        let (connection, select) = (self.connection, self.select);
        let events = std::thread::scope(|scope| -> io::Result<u64> {
            scope.spawn(move || {
                if let Err(error) = produce(&connection, layout, &select, &batches_out) {
                    let _ = batches_out.send(Err(error));
                }
            });
            // Leaving early drops `batches_in`: the thread's next send fails, and it stops.
            for batch in batches_in {
                *rows.borrow_mut() = batch?;
                let count = rows.borrow().rows.len();
                for index in 0..count {
                    current.set(index);
                    let row = rows.borrow().rows[index].clone();
                    let line = u64::try_from(row.rowid).unwrap_or(0);
                    match row.event {
                        Ok(event) => {
                            let batch = rows.borrow();
                            reader.read_more(&batch.events[event.text], line)?;
                        }
                        Err(message) => {
                            state
                                .borrow_mut()
                                .apply(Item::Malformed { line, message }, Offset::default())?;
                        }
                    }
                }
            }
            reader.finish()
        })?;
        // A store has rows, not lines: each row is read as one line of its log.
        Ok(state.into_inner().finish(events, events))
    }
}

/// Rows read from the store, each written as an event into one buffer.
#[derive(Default)]
struct Rows {
    events: Vec<u8>,
    rows: Vec<Row>,
}

#[derive(Clone)]
struct Row {
    rowid: i64,
    /// Where its event is, or what makes it none.
    event: Result<Written, String>,
}

/// Where a row's event, and the JSON column's text in it, are in the buffer.
#[derive(Clone)]
struct Written {
    text: Range<usize>,
    json: Range<usize>,
    /// The column the JSON came from: the JSON column, or the one it was compressed into.
    column: &'static str,
}

impl Rows {
    /// The JSON of the row at `index`, as its event holds it (line breaks in it made spaces),
    /// an object's braces put back where its members joined the event's; and the column it
    /// came from.
    fn column(&self, index: usize, layout: &Layout) -> Option<(&'static str, Vec<u8>)> {
        let written = self.rows.get(index)?.event.as_ref().ok()?;
        let json = &self.events[written.json.clone()];
        let text = match layout.json.1 {
            Some(_) => json.to_vec(),
            None => [b"{".as_slice(), json].concat(),
        };
        Some((written.column, text))
    }
}

/// The events of a few MiB of rows go over at once.
const CHUNK: usize = 1 << 20;

/// Reads every row of the calls' table, in rowid order, in transactions of [`BATCH`] rows, and
/// sends their events on in chunks.
fn produce(
    connection: &Connection,
    layout: &Layout,
    select: &str,
    out: &mpsc::SyncSender<io::Result<Rows>>,
) -> io::Result<()> {
    let mut statement = connection.prepare(select).map_err(io::Error::other)?;
    let mut chunk = Rows::default();
    let mut after = i64::MIN;
    loop {
        let mut rows = statement
            .query((after, BATCH))
            .map_err(|error| read_error(error, after))?;
        let mut read = 0;
        while let Some(row) = rows.next().map_err(|error| read_error(error, after))? {
            read += 1;
            let rowid: i64 = row.get(0).map_err(io::Error::other)?;
            after = rowid;
            // A column the event cannot be made of is said so here: the reader would see an
            // event that does not even hold the JSON's words.
            let event = match json_of(row, layout).map_err(io::Error::other)? {
                Ok(RowJson { column, text })
                    if layout.json.1.is_some() || text.trim_ascii_start().starts_with(b"{") =>
                {
                    let start = chunk.events.len();
                    let json =
                        compose(layout, row, &text, &mut chunk.events).map_err(io::Error::other)?;
                    Ok(Written {
                        text: start..chunk.events.len(),
                        json,
                        column,
                    })
                }
                Ok(RowJson { column, text }) => Err(why_not_json(column, &text, JsonHolds::Object)
                    .unwrap_or_else(|| format!("`{column}` is not JSON"))),
                Err(message) => Err(message),
            };
            chunk.rows.push(Row { rowid, event });
            if chunk.events.len() >= CHUNK && out.send(Ok(std::mem::take(&mut chunk))).is_err() {
                return Ok(());
            }
        }
        if read < BATCH {
            break;
        }
    }
    if !chunk.rows.is_empty() {
        let _ = out.send(Ok(chunk));
    }
    Ok(())
}

/// A row's JSON text, and the column it came from: the JSON column, or the one it was
/// compressed into.
struct RowJson<'r> {
    column: &'static str,
    text: Cow<'r, [u8]>,
}

/// A row's JSON, or what makes the row no event.
fn json_of<'r>(
    row: &'r rusqlite::Row<'_>,
    layout: &Layout,
) -> rusqlite::Result<Result<RowJson<'r>, String>> {
    let at = layout.columns.len() + 1;
    let column = layout.json.0;
    Ok(match row.get_ref(at)? {
        ValueRef::Text(text) => Ok(RowJson {
            column,
            text: Cow::Borrowed(text),
        }),
        ValueRef::Null => match layout.null_json {
            NullJson::Zstd { frame, size } => match row.get_ref(at + 1)? {
                ValueRef::Null => Err(format!("`{column}` is null, and so is `{frame}`")),
                stored => {
                    decompress(stored, row.get_ref(at + 2)?, frame, size).map(|text| RowJson {
                        column: frame,
                        text: Cow::Owned(text),
                    })
                }
            },
            NullJson::Malformed | NullJson::NoCalls => Err(format!("`{column}` is null")),
        },
        ValueRef::Blob(_) => Err(format!("`{column}` is not text but a blob")),
        ValueRef::Integer(_) | ValueRef::Real(_) => {
            Err(format!("`{column}` is not text but a number"))
        }
    })
}

/// The text a zstd frame holds, `size` bytes of it as the row says; the columns' names
/// (`frame_column`, `size_column`) for what is wrong.
fn decompress(
    frame: ValueRef<'_>,
    size: ValueRef<'_>,
    frame_column: &str,
    size_column: &str,
) -> Result<Vec<u8>, String> {
    let ValueRef::Blob(frame) = frame else {
        return Err(format!("`{frame_column}` is not a blob"));
    };
    let size = match size {
        ValueRef::Integer(size) => usize::try_from(size)
            .ok()
            .filter(|size| *size <= LONGEST_COMPRESSED),
        _ => None,
    }
    .ok_or_else(|| format!("`{size_column}` is not a size up to {LONGEST_COMPRESSED} bytes"))?;
    zstd::bulk::decompress(frame, size)
        .map_err(|error| format!("`{frame_column}` is not a zstd frame of {size} bytes: {error}"))
}

/// The tables of the database, with their columns.
fn tables(connection: &Connection) -> rusqlite::Result<HashMap<String, HashSet<String>>> {
    let mut statement = connection.prepare(
        "SELECT m.name, p.name FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p \
         WHERE m.type = 'table'",
    )?;
    let mut tables: HashMap<String, HashSet<String>> = HashMap::new();
    let mut rows = statement.query(())?;
    while let Some(row) = rows.next()? {
        let (table, column): (String, String) = (row.get(0)?, row.get(1)?);
        tables.entry(table).or_default().insert(column);
    }
    Ok(tables)
}

fn read_error(error: rusqlite::Error, after: i64) -> io::Error {
    if after == i64::MIN {
        return io::Error::other(error);
    }
    io::Error::other(format!("after rowid {after}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_only_starts_like_a_database_is_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        std::fs::write(&path, b"SQLite format 3\0rest").unwrap();
        assert!(is_sqlite(&path));
        std::fs::write(&path, b"{\"type\":\"tool_use\"}\n").unwrap();
        assert!(!is_sqlite(&path));
        std::fs::write(&path, b"SQLite").unwrap();
        assert!(!is_sqlite(&path));
    }
}
