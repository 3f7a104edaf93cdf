//! Agents that keep their sessions in a SQLite database: OpenCode (`opencode.db`), Kilo
//! (`kilo.db`), Crush (`.crush/crush.db`) and Goose (`sessions.db`).
//!
//! A store is told by the file's header (`SQLite format 3`), then by its tables and columns,
//! never by its name. Each row of the table that holds the calls is read as one event, the
//! object of its columns with its JSON column inline, through the same reading loop and shapes
//! as a JSONL log: a row is a line, numbered by its rowid. Records name the table after the
//! path (`source` is `path:table`), so a call's place reads `path:table:rowid`.
//!
//! The agent may be writing while we read. The database is opened read-only (no write to the
//! file, ever, and its `-wal` is read, so what the agent committed a moment ago is seen), and
//! read in short transactions of a few thousand rows: in WAL mode (which these agents use) a
//! reader never holds up a writer; in rollback mode no shared lock outlives one batch, so the
//! agent's next write waits milliseconds at most.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
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

/// The first 16 bytes of every SQLite database.
const HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Rows read in one transaction.
const BATCH: i64 = 4096;

/// How long to wait for a lock the agent holds while it writes (rollback mode only).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Where one agent's store keeps its calls, and how a row becomes an event.
struct Layout {
    format: Format,
    /// The table whose rows hold the calls.
    table: &'static str,
    /// Scalar columns, and the key each goes under in the event.
    columns: &'static [(&'static str, &'static str)],
    /// The JSON column, and the key it goes under; `None`: it is an object whose members join
    /// the event's (OpenCode's `data` is the part itself).
    json: (&'static str, Option<&'static str>),
    /// Whether a table is one only this agent's store has, when another agent shares its
    /// schema.
    marked_by: Option<fn(&str) -> bool>,
}

/// Kilo's own tables beside OpenCode's: `kilo_board…` (7.7), `custom_llm2`.
fn is_kilos_table(table: &str) -> bool {
    table.starts_with("kilo_") || table.starts_with("custom_llm")
}

/// The columns of OpenCode's `part` table beside its JSON, which Kilo's store shares.
const OPENCODE_PART_COLUMNS: &[(&str, &str)] = &[
    ("id", "id"),
    ("message_id", "messageID"),
    ("session_id", "sessionID"),
];

/// Most specific first: Kilo's store is OpenCode's plus tables of its own.
const LAYOUTS: [Layout; 4] = [
    Layout {
        format: Format::Kilo,
        table: "part",
        columns: OPENCODE_PART_COLUMNS,
        json: ("data", None),
        marked_by: Some(is_kilos_table),
    },
    Layout {
        format: Format::Opencode,
        table: "part",
        columns: OPENCODE_PART_COLUMNS,
        json: ("data", None),
        marked_by: None,
    },
    Layout {
        format: Format::Crush,
        table: "messages",
        columns: &[
            ("id", "id"),
            ("session_id", "session_id"),
            ("role", "role"),
            ("created_at", "created_at"),
        ],
        json: ("parts", Some("parts")),
        marked_by: None,
    },
    Layout {
        format: Format::Goose,
        table: "messages",
        columns: &[
            ("message_id", "message_id"),
            ("session_id", "session_id"),
            ("role", "role"),
            ("created_timestamp", "created_timestamp"),
        ],
        json: ("content_json", Some("content_json")),
        marked_by: None,
    },
];

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
                 (OpenCode, Kilo, Crush, Goose): skipped",
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
        Ok(Store { connection, layout })
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
        let json_column = layout.json.0;
        let mut apply = |item: Item| {
            let item = match item {
                Item::Malformed { line, message } => Item::Malformed {
                    line,
                    message: rows
                        .borrow()
                        .column(current.get(), layout)
                        .and_then(|text| why_not_json(json_column, &text, JsonHolds::of(layout)))
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
        let connection = self.connection;
        let events = std::thread::scope(|scope| -> io::Result<u64> {
            scope.spawn(move || {
                if let Err(error) = produce(&connection, layout, &batches_out) {
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
}

impl Rows {
    /// The JSON column of the row at `index`, as its event holds it (line breaks in it made
    /// spaces); an object's braces put back where its members joined the event's.
    fn column(&self, index: usize, layout: &Layout) -> Option<Vec<u8>> {
        let written = self.rows.get(index)?.event.as_ref().ok()?;
        let json = &self.events[written.json.clone()];
        Some(match layout.json.1 {
            Some(_) => json.to_vec(),
            None => [b"{".as_slice(), json].concat(),
        })
    }
}

/// The events of a few MiB of rows go over at once.
const CHUNK: usize = 1 << 20;

/// Reads every row of the calls' table, in rowid order, in transactions of [`BATCH`] rows, and
/// sends their events on in chunks.
fn produce(
    connection: &Connection,
    layout: &Layout,
    out: &mpsc::SyncSender<io::Result<Rows>>,
) -> io::Result<()> {
    let json_column = layout.json.0;
    let mut statement = connection
        .prepare(&select(layout))
        .map_err(io::Error::other)?;
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
            let json = row
                .get_ref(layout.columns.len() + 1)
                .map_err(io::Error::other)?;
            // A column the event cannot be made of is said so here: the reader would see an
            // event that does not even hold the JSON's words.
            let event = match json {
                ValueRef::Text(text)
                    if layout.json.1.is_some() || text.trim_ascii_start().starts_with(b"{") =>
                {
                    let start = chunk.events.len();
                    let json =
                        compose(layout, row, text, &mut chunk.events).map_err(io::Error::other)?;
                    Ok(Written {
                        text: start..chunk.events.len(),
                        json,
                    })
                }
                ValueRef::Text(text) => Err(why_not_json(json_column, text, JsonHolds::Object)
                    .unwrap_or_else(|| format!("`{json_column}` is not JSON"))),
                ValueRef::Null => Err(format!("`{json_column}` is null")),
                ValueRef::Blob(_) => Err(format!("`{json_column}` is not text but a blob")),
                ValueRef::Integer(_) | ValueRef::Real(_) => {
                    Err(format!("`{json_column}` is not text but a number"))
                }
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

fn fits(layout: &Layout, tables: &HashMap<String, HashSet<String>>) -> bool {
    let Some(columns) = tables.get(layout.table) else {
        return false;
    };
    layout
        .columns
        .iter()
        .map(|(column, _)| *column)
        .chain([layout.json.0])
        .all(|column| columns.contains(column))
        && layout
            .marked_by
            .is_none_or(|is_marked| tables.keys().any(|table| is_marked(table)))
}

/// One batch of rows after a rowid, in rowid order: the rowid, the scalar columns, the JSON.
fn select(layout: &Layout) -> String {
    let columns: Vec<&str> = layout.columns.iter().map(|(column, _)| *column).collect();
    format!(
        "SELECT rowid, {}, {} FROM {} WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
        columns.join(", "),
        layout.json.0,
        layout.table
    )
}

/// Writes the event of one row: `{"key": column, …, "json key": <the JSON as stored>}`, or the
/// columns followed by the members of a JSON object. Raw line breaks in the JSON can only be
/// whitespace between its tokens (JSON strings escape theirs): they become spaces, so the
/// event is one line.
fn compose(
    layout: &Layout,
    row: &rusqlite::Row<'_>,
    json: &[u8],
    event: &mut Vec<u8>,
) -> rusqlite::Result<Range<usize>> {
    event.push(b'{');
    for (index, (_, key)) in layout.columns.iter().enumerate() {
        if index > 0 {
            event.push(b',');
        }
        write_key(event, key);
        match row.get_ref(index + 1)? {
            ValueRef::Null | ValueRef::Blob(_) => event.extend_from_slice(b"null"),
            // Writing into a Vec cannot fail.
            ValueRef::Integer(number) => {
                let _ = write!(event, "{number}");
            }
            ValueRef::Real(number) => match serde_json::Number::from_f64(number) {
                Some(number) => {
                    let _ = write!(event, "{number}");
                }
                None => event.extend_from_slice(b"null"),
            },
            ValueRef::Text(text) => write_text(event, text),
        }
    }
    let start = event.len();
    let json_at;
    match layout.json.1 {
        Some(key) => {
            event.push(b',');
            write_key(event, key);
            json_at = event.len();
            event.extend_from_slice(json);
            event.push(b'}');
        }
        None => {
            let members = json.trim_ascii();
            match members.strip_prefix(b"{") {
                Some(members) => {
                    if !members.trim_ascii_start().starts_with(b"}") {
                        event.push(b',');
                    }
                    json_at = event.len();
                    event.extend_from_slice(members);
                }
                // Not an object: `produce` says so before it comes here.
                None => {
                    json_at = event.len();
                    event.push(b'}');
                }
            }
        }
    }
    let json_end = match layout.json.1 {
        Some(_) => event.len() - 1,
        None => event.len(),
    };
    let mut from = start;
    while let Some(at) = memchr::memchr2(b'\n', b'\r', &event[from..]) {
        event[from + at] = b' ';
        from += at + 1;
    }
    event.push(b'\n');
    Ok(json_at..json_end)
}

fn write_key(event: &mut Vec<u8>, key: &str) {
    write_string(event, key);
    event.push(b':');
}

/// A text column as a JSON string: ids and roles need no escape, and are copied as they are.
fn write_text(event: &mut Vec<u8>, text: &[u8]) {
    let plain = text
        .iter()
        .all(|&byte| (0x20..0x80).contains(&byte) && byte != b'"' && byte != b'\\');
    if plain {
        event.push(b'"');
        event.extend_from_slice(text);
        event.push(b'"');
    } else {
        write_string(event, &String::from_utf8_lossy(text));
    }
}

fn write_string(event: &mut Vec<u8>, text: &str) {
    // Writing a string into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *event, text);
}

/// What is wrong with the JSON column's text, said of the column rather than of the event the
/// reader saw; `None` when the column is fine (then what the reader said stands).
fn why_not_json(column: &str, text: &[u8], holds: JsonHolds) -> Option<String> {
    let object_only = holds == JsonHolds::Object;
    let error = match serde_json::from_slice::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => return None,
        Ok(serde_json::Value::Array(_)) if !object_only => return None,
        Ok(_) if object_only => return Some(format!("`{column}` holds JSON, but not an object")),
        Ok(_) => {
            return Some(format!(
                "`{column}` holds JSON, but neither an object nor a list"
            ))
        }
        Err(error) => error,
    };
    Some(format!("`{column}` is not JSON: {error}"))
}

/// What a store's JSON column must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonHolds {
    /// An object only.
    Object,
    /// An object or a list.
    ObjectOrList,
}

impl JsonHolds {
    /// A column whose members join the event's must be an object; one that goes under a key
    /// may be a list too.
    fn of(layout: &Layout) -> JsonHolds {
        match layout.json.1 {
            None => JsonHolds::Object,
            Some(_) => JsonHolds::ObjectOrList,
        }
    }
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

    #[test]
    fn the_json_column_is_said_to_be_wrong_and_nothing_else() {
        assert_eq!(why_not_json("data", br#"{"a":1}"#, JsonHolds::Object), None);
        assert_eq!(why_not_json("parts", b"[]", JsonHolds::ObjectOrList), None);
        let cut = why_not_json("data", br#"{"a":"#, JsonHolds::Object).unwrap();
        assert!(cut.starts_with("`data` is not JSON: EOF"), "{cut}");
        assert_eq!(
            why_not_json("parts", b"3", JsonHolds::ObjectOrList).unwrap(),
            "`parts` holds JSON, but neither an object nor a list"
        );
        assert_eq!(
            why_not_json("data", b"[]", JsonHolds::Object).unwrap(),
            "`data` holds JSON, but not an object"
        );
    }
}
