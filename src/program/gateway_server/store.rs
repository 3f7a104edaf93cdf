//! `--store redis://HOST:PORT[/DB]`: the reasons a gateway takes, kept in Redis (or Valkey) by
//! call id, so that replicas behind one load balancer share them.
//!
//! The store is never what a request waits for beyond [`BUDGET`]:
//! - a reason taken is queued ([`QUEUED`] at most; beyond, it is dropped and counted) and written
//!   by one task, many at once in one pipeline (`SET reasons:call:ID RECORD EX TTL NX`: the first
//!   reason logged for an id is the one kept, as restoration keeps it);
//! - a lookup (`MGET`) waits [`BUDGET`] at most, and is not even tried while the store is down;
//! - a store that fails (refused, reset, too slow) is down: said once on stderr; a task then asks
//!   it every [`PROBE_EVERY`], on a fresh connection, whether it is back, says so once when it
//!   is, and lookups and writes resume on that connection.
//!   What could not be written meanwhile is lost to the store (the reasons log still has it).
//!
//! The client is the `redis` crate's `ConnectionManager` (see the commit that added it), which
//! connects lazily and reconnects by itself after the server restarts.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::{bail, Context};
use reasons::gateway::{Lookup, Recall, Recalled};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde_json::Value;
use tokio::sync::mpsc;

/// The longest a request waits for the store.
pub const BUDGET: Duration = Duration::from_millis(25);

/// How many reasons wait to be written at most.
const QUEUED: usize = 10_000;

/// How many reasons one pipeline writes at most.
const BATCH: usize = 256;

/// How long a write or a probe may take before the store counts as down.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// How often a store that is down is asked whether it is back.
const PROBE_EVERY: Duration = Duration::from_millis(500);

/// Where a call's record lives.
const KEY_PREFIX: &str = "reasons:call:";

/// The key of a call id's record.
fn key(call_id: &str) -> String {
    format!("{KEY_PREFIX}{call_id}")
}

/// A Redis or Valkey store of reasons.
pub struct Store {
    queue: mpsc::Sender<(String, String)>,
    shared: Arc<Shared>,
}

/// What the requests, the writer and the probe share.
struct Shared {
    /// The URL as given but for a password, for messages.
    shown: String,
    client: redis::Client,
    /// The connection in use; replaced by a fresh one when the store is back after an outage.
    connection: RwLock<ConnectionManager>,
    down: AtomicBool,
    /// Reasons not written because the queue was full.
    dropped: AtomicU64,
}

impl Shared {
    /// A connection that connects when first used, and reconnects by itself after an error.
    fn connect(client: &redis::Client) -> redis::RedisResult<ConnectionManager> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(WRITE_TIMEOUT))
            .set_response_timeout(Some(WRITE_TIMEOUT))
            .set_number_of_retries(1)
            .set_max_delay(PROBE_EVERY);
        ConnectionManager::new_lazy_with_config(client.clone(), config)
    }

    fn connection(&self) -> ConnectionManager {
        self.connection
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn is_down(&self) -> bool {
        self.down.load(Ordering::SeqCst)
    }

    /// Notes a failure: the first of an outage is said, and starts asking the store, on a fresh
    /// connection each time, whether it is back; once it answers within the budget it is used
    /// again, and that is said once too.
    fn failed(self: &Arc<Self>, what: &str, error: &dyn std::fmt::Display) {
        if self.down.swap(true, Ordering::SeqCst) {
            return;
        }
        super::say(&format!(
            "the store {} {what}: {error}; serving on without it",
            self.shown
        ));
        let shared = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(PROBE_EVERY).await;
                let Ok(mut fresh) = Shared::connect(&shared.client) else {
                    continue;
                };
                // Connecting may take longer than a request's budget; answering may not.
                let connected = ping(&mut fresh, WRITE_TIMEOUT).await;
                if connected && ping(&mut fresh, BUDGET).await {
                    *shared.connection.write().unwrap_or_else(|e| e.into_inner()) = fresh;
                    shared.down.store(false, Ordering::SeqCst);
                    super::say(&format!("the store {} is back", shared.shown));
                    return;
                }
            }
        });
    }
}

/// Whether the store answers a `PING` within `limit`.
async fn ping(connection: &mut ConnectionManager, limit: Duration) -> bool {
    let command = redis::cmd("PING");
    let answered = command.query_async::<String>(connection);
    matches!(tokio::time::timeout(limit, answered).await, Ok(Ok(_)))
}

impl Store {
    /// A store at `url` (`redis://HOST:PORT[/DB]`), its records kept `ttl`; connects when first
    /// used. Must be called inside the gateway's runtime: it starts the writer.
    pub fn open(url: &str, ttl: Duration) -> anyhow::Result<Store> {
        if !url.starts_with("redis://") {
            bail!("--store {url}: give a redis://HOST:PORT[/DB] URL (Redis or Valkey)");
        }
        let client = redis::Client::open(url).with_context(|| format!("--store {url}"))?;
        let connection = Shared::connect(&client).with_context(|| format!("--store {url}"))?;
        let shared = Arc::new(Shared {
            shown: shown(url),
            client,
            connection: RwLock::new(connection),
            down: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
        });
        // Connected at once, in the background: the first request that asks the store is not
        // the one that waits for the connection.
        let warming = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut connection = warming.connection();
            if !ping(&mut connection, WRITE_TIMEOUT).await {
                warming.failed("cannot be reached", &"no answer to PING");
            }
        });
        let (queue, queued) = mpsc::channel(QUEUED);
        tokio::spawn(write(queued, Arc::clone(&shared), ttl.as_secs().max(1)));
        Ok(Store { queue, shared })
    }

    /// Where the store is, for the startup line.
    pub fn shown(&self) -> &str {
        &self.shared.shown
    }

    /// Keeps a call's record (the reasons log's line for it), in the background.
    pub fn keep(&self, call_id: &str, record: &Value) {
        let item = (key(call_id), record.to_string());
        if self.queue.try_send(item).is_err() {
            let dropped = self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            if dropped == 0 {
                super::say(&format!(
                    "the store {} does not keep up: reasons beyond {QUEUED} waiting are not kept there (the reasons log has them)",
                    self.shared.shown
                ));
            }
        }
    }

    /// The records kept for these call ids, in their order (`None` for one the store has no
    /// record of), within [`BUDGET`]; all `None` when the store is down or late.
    pub async fn records(&self, call_ids: &[&str]) -> Vec<Option<Value>> {
        let none = || vec![None; call_ids.len()];
        if call_ids.is_empty() || self.shared.is_down() {
            return none();
        }
        let keys: Vec<String> = call_ids.iter().map(|id| key(id)).collect();
        let mut connection = self.shared.connection();
        let mut mget = redis::cmd("MGET");
        mget.arg(&keys);
        let asked = mget.query_async::<Vec<Option<String>>>(&mut connection);
        let error: Box<dyn std::fmt::Display> = match tokio::time::timeout(BUDGET, asked).await {
            Ok(Ok(records)) => {
                return records
                    .into_iter()
                    .map(|record| serde_json::from_str(&record?).ok())
                    .collect()
            }
            Ok(Err(error)) => Box::new(error),
            Err(_) => Box::new(format!("took longer than {} ms", BUDGET.as_millis())),
        };
        self.shared.failed("cannot be read", &error);
        none()
    }
}

/// The writer: takes what is queued, up to [`BATCH`] at once, and writes it in one pipeline.
/// While the store is down, what is queued is dropped rather than held.
async fn write(
    mut queued: mpsc::Receiver<(String, String)>,
    shared: Arc<Shared>,
    ttl_seconds: u64,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while queued.recv_many(&mut batch, BATCH).await > 0 {
        if shared.is_down() {
            batch.clear();
            continue;
        }
        let mut pipeline = redis::pipe();
        for (key, record) in batch.drain(..) {
            pipeline
                .cmd("SET")
                .arg(key)
                .arg(record)
                .arg("EX")
                .arg(ttl_seconds)
                .arg("NX")
                .ignore();
        }
        let mut connection = shared.connection();
        let written = pipeline.query_async::<()>(&mut connection);
        let error: Box<dyn std::fmt::Display> =
            match tokio::time::timeout(WRITE_TIMEOUT, written).await {
                Ok(Ok(())) => continue,
                Ok(Err(error)) => Box::new(error),
                Err(_) => Box::new(format!("took longer than {} s", WRITE_TIMEOUT.as_secs())),
            };
        shared.failed("cannot be written", &error);
    }
}

/// The URL without a password, if it holds one.
fn shown(url: &str) -> String {
    let Some(rest) = url.strip_prefix("redis://") else {
        return url.to_owned();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((credentials, host)) => {
            let user = credentials.split(':').next().unwrap_or_default();
            format!("redis://{user}:…@{host}{path}")
        }
        None => url.to_owned(),
    }
}

/// The reasons another replica took, for the ids of a history this gateway does not remember:
/// the history is read once with `remembered`, noting the ids it asks for and does not find
/// (`read` makes the exchange with the lookup it is given); those are asked of the store
/// (within [`BUDGET`]) and noted in `recall`. Whether the store knew any, so that the history is
/// worth reading again.
pub async fn recall_missed<T>(
    store: &Store,
    recall: &RwLock<Recall>,
    read: impl FnOnce(&dyn Lookup) -> T,
) -> (T, bool) {
    let (made, missed) = {
        let remembered = recall.read().unwrap_or_else(|e| e.into_inner());
        let noting = NotingMisses {
            recall: &remembered,
            missed: RefCell::default(),
        };
        let made = read(&noting);
        (made, noting.missed.into_inner())
    };
    if missed.is_empty() {
        return (made, false);
    }
    let ids: Vec<&str> = missed.iter().map(String::as_str).collect();
    let found: Vec<(String, Value)> = store
        .records(&ids)
        .await
        .into_iter()
        .zip(&missed)
        .filter_map(|(record, id)| Some((id.clone(), record?)))
        .collect();
    let mut recall = recall.write().unwrap_or_else(|e| e.into_inner());
    for (call_id, record) in &found {
        if let (Some(tool), Some(reason)) = (record["tool"].as_str(), record.get("reason")) {
            recall.note(call_id, tool, reason);
        }
    }
    (made, !found.is_empty())
}

/// A recall that notes the ids it was asked for and does not hold.
struct NotingMisses<'a> {
    recall: &'a Recall,
    missed: RefCell<Vec<String>>,
}

impl Lookup for NotingMisses<'_> {
    fn get(&self, call_id: &str) -> Option<&Recalled> {
        let found = self.recall.get(call_id);
        if found.is_none() {
            self.missed.borrow_mut().push(call_id.to_owned());
        }
        found
    }

    /// The store may know any id.
    fn is_empty(&self) -> bool {
        false
    }
}

/// Reads `--store-ttl`: a number of seconds, or a number with `s`, `m`, `h` or `d`.
pub fn parse_ttl(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => bail!("--store-ttl {text}: give seconds, or a number with s, m, h or d (7d)"),
    };
    let number: u64 = number
        .parse()
        .ok()
        .filter(|number| *number > 0)
        .with_context(|| format!("--store-ttl {text}: give a positive number, such as 7d"))?;
    Ok(Duration::from_secs(number.saturating_mul(seconds)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ttl_is_seconds_or_a_number_with_its_unit() {
        assert_eq!(parse_ttl("7d").unwrap(), Duration::from_secs(7 * 86_400));
        assert_eq!(parse_ttl("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_ttl("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_ttl("15m").unwrap(), Duration::from_secs(900));
        for wrong in ["", "0", "7w", "d", "-1"] {
            assert!(parse_ttl(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_password_is_never_shown() {
        assert_eq!(
            shown("redis://user:secret@host:6379/2"),
            "redis://user:…@host:6379/2"
        );
        assert_eq!(shown("redis://:secret@host"), "redis://:…@host");
        assert_eq!(shown("redis://host:6379"), "redis://host:6379");
    }
}
