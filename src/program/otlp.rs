//! `--otlp URL`: one OpenTelemetry span per reason taken, sent to a collector (any OTLP/HTTP
//! receiver: an OpenTelemetry Collector, Jaeger, Arize Phoenix, Langfuse) as protobuf.
//!
//! Each span is `execute_tool {tool}` with the GenAI conventions' `gen_ai.operation.name`,
//! `gen_ai.tool.name` and `gen_ai.tool.call.id`, and `reasons.reason`, `reasons.touched`,
//! `reasons.via`, `session.id` when known: a backend joins it with the agent's own telemetry on
//! the call id. Its trace and span ids are derived from the call id, so a span sent twice is the
//! same span.
//!
//! Nothing waits for the collector: a span is encoded and handed to a queue of [`QUEUED`] at
//! most (beyond, it is dropped and counted), and one thread sends them in batches, each request
//! given [`SEND_TIMEOUT`]. A collector that cannot be reached is said once (with how many spans
//! were dropped so far), and again when it answers.
//!
//! OTLP/HTTP protobuf, encoded by hand: the few messages of `ExportTraceServiceRequest` need no
//! protobuf crate (Phoenix refuses JSON bodies).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Uri};
use reasons::reasons_log::Record;
use reasons::record::{CallRecord, ReasonFrom};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::program::http;

/// How many spans wait to be sent at most.
pub const QUEUED: usize = 10_000;

/// How many spans go in one request at most.
const BATCH: usize = 512;

/// How long a batch waits for more spans once it has one.
const LINGER: Duration = Duration::from_millis(200);

/// How long the collector has to answer one request.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// How long what is left is given to leave when the command ends.
const LAST_SEND: Duration = Duration::from_secs(3);

/// The environment variable that names a collector for every command at once (the base URL:
/// `/v1/traces` is added, as OpenTelemetry's exporters do).
pub const ENVIRONMENT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The collector named on the command line, else by [`ENVIRONMENT`].
pub fn endpoint(named: Option<String>) -> Option<String> {
    named.or_else(|| {
        std::env::var(ENVIRONMENT)
            .ok()
            .filter(|url| !url.is_empty())
    })
}

/// Sends spans to a collector.
pub struct Exporter {
    queue: Option<SyncSender<Vec<u8>>>,
    dropped: Arc<AtomicU64>,
    /// Spans queued and not yet sent (or given up on).
    pending: Arc<AtomicU64>,
    sender: Option<JoinHandle<()>>,
}

impl Exporter {
    /// An exporter to the collector at `url` (its traces path `/v1/traces` added unless given).
    pub fn start(url: &str) -> anyhow::Result<Exporter> {
        let traces = traces_url(url)?;
        let (queue, queued) = mpsc::sync_channel(QUEUED);
        let dropped = Arc::new(AtomicU64::new(0));
        let pending = Arc::new(AtomicU64::new(0));
        let counted = (Arc::clone(&dropped), Arc::clone(&pending));
        let sender = std::thread::Builder::new()
            .name("otlp".to_owned())
            .spawn(move || send(traces, queued, counted))
            .context("cannot start the OTLP exporter")?;
        Ok(Exporter {
            queue: Some(queue),
            dropped,
            pending,
            sender: Some(sender),
        })
    }

    /// Queues the span of a reason taken; dropped and counted when the queue is full.
    pub fn span(&self, record: &Record) {
        self.queue(span(record, SystemTime::now()));
    }

    /// Queues the span of a recorded call (`reasons export`), waiting for room: a recorded log
    /// is sent whole, however slowly the collector takes it.
    pub fn call_span(&self, call: &CallRecord) {
        let Some(queue) = &self.queue else { return };
        self.pending.fetch_add(1, Ordering::SeqCst);
        if queue.send(call_span(call)).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Spans not sent: the queue was full, or the collector did not take them.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn queue(&self, span: Vec<u8>) {
        let Some(queue) = &self.queue else { return };
        self.pending.fetch_add(1, Ordering::SeqCst);
        if queue.try_send(span).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Waits, [`LAST_SEND`] at most, until every span queued so far has been sent (or given up
    /// on): what a command that ends calls, so that its last spans are not lost with it.
    pub fn flush(&self) {
        let deadline = Instant::now() + LAST_SEND;
        while self.pending.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Exporter {
    /// What is queued is given [`LAST_SEND`] to leave.
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(sender) = self.sender.take() {
            let deadline = Instant::now() + LAST_SEND;
            while !sender.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// The collector's traces URL: `URL` when it ends with `/v1/traces`, else `URL/v1/traces`.
fn traces_url(url: &str) -> anyhow::Result<Uri> {
    let full = match url.trim_end_matches('/') {
        ends if ends.ends_with("/v1/traces") => ends.to_owned(),
        base => format!("{base}/v1/traces"),
    };
    let uri: Uri = full
        .parse()
        .with_context(|| format!("--otlp {url}: not a URL"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.authority().is_none() {
        bail!("--otlp {url}: give an http:// or https:// URL");
    }
    Ok(uri)
}

/// The sending thread: batches, sends, says once when the collector is away and when it is back.
fn send(
    traces: Uri,
    queued: mpsc::Receiver<Vec<u8>>,
    (dropped, pending): (Arc<AtomicU64>, Arc<AtomicU64>),
) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let client = http::client::<Full<Bytes>>(SEND_TIMEOUT);
    let mut away = false;
    let mut ended = false;
    while !ended {
        let mut batch = match queued.recv() {
            Ok(span) => vec![span],
            Err(_) => return,
        };
        let until = Instant::now() + LINGER;
        while batch.len() < BATCH {
            match queued.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(span) => batch.push(span),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    ended = true;
                    break;
                }
            }
        }
        let body = export_request(&batch);
        let sent = runtime.block_on(async {
            let request = Request::post(traces.clone())
                .header(hyper::header::CONTENT_TYPE, "application/x-protobuf")
                .body(Full::new(Bytes::from(body)))
                .ok()?;
            let answer = tokio::time::timeout(SEND_TIMEOUT, client.request(request))
                .await
                .ok()?
                .ok()?;
            let status = answer.status();
            let _ = answer.into_body().collect().await;
            Some(status)
        });
        pending.fetch_sub(batch.len() as u64, Ordering::SeqCst);
        match sent {
            Some(status) if status.is_success() => {
                if away {
                    away = false;
                    crate::program::messages::message!("the collector {traces} answers again");
                }
            }
            failed => {
                dropped.fetch_add(batch.len() as u64, Ordering::Relaxed);
                if !away {
                    away = true;
                    let why = failed.map_or_else(
                        || "no answer".to_owned(),
                        |status| format!("answered {status}"),
                    );
                    crate::program::messages::message!(
                        "the collector {traces} {why}: spans are dropped ({} so far) until it takes them",
                        dropped.load(Ordering::Relaxed)
                    );
                }
            }
        }
    }
}

// Protobuf, as opentelemetry-proto's trace/v1, common/v1 and resource/v1 define it.

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn tag(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, (field << 3) | wire);
}

fn bytes_field(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    tag(out, field, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn fixed64_field(out: &mut Vec<u8>, field: u64, value: u64) {
    tag(out, field, 1);
    out.extend_from_slice(&value.to_le_bytes());
}

/// A `KeyValue` whose value is a string `AnyValue`.
fn attribute(out: &mut Vec<u8>, field: u64, key: &str, value: &str) {
    let mut any = Vec::new();
    bytes_field(&mut any, 1, value.as_bytes());
    let mut pair = Vec::new();
    bytes_field(&mut pair, 1, key.as_bytes());
    bytes_field(&mut pair, 2, &any);
    bytes_field(out, field, &pair);
}

/// One encoded `Span` for a reason taken at `now`.
fn span(record: &Record, now: SystemTime) -> Vec<u8> {
    let taken = &record.taken;
    let touched = record.touched();
    let identity = match &taken.call_id {
        Some(call_id) => format!("call:{call_id}"),
        None => format!(
            "{}:{}:{}:{}",
            record.time, taken.tool, touched, taken.reason
        ),
    };
    let reason = match &taken.reason {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let mut attributes = vec![
        ("reasons.reason", reason),
        ("reasons.touched", touched),
        ("reasons.via", record.via.as_str().to_owned()),
    ];
    if let Some(session) = &record.session {
        attributes.push(("session.id", session.clone()));
    }
    encode_span(
        &identity,
        &taken.tool,
        taken.call_id.as_deref(),
        unix_nanos(now),
        &attributes,
    )
}

/// One encoded `Span` for a recorded call: every status, with where its reason came from, at
/// the time its log gives it.
fn call_span(call: &CallRecord) -> Vec<u8> {
    let identity = match &call.call_id {
        Some(call_id) => format!("call:{call_id}"),
        None => format!("line:{}:{}", call.source, call.line),
    };
    let nanos = call
        .timestamp
        .as_deref()
        .and_then(reasons::dates::epoch_nanos)
        .and_then(|nanos| u64::try_from(nanos).ok())
        .unwrap_or_else(|| unix_nanos(SystemTime::now()));
    let mut attributes = vec![
        ("reasons.status", call.status.as_str().to_owned()),
        (
            "reasons.reason_from",
            match call.reason_from {
                ReasonFrom::Call => "call",
                ReasonFrom::Log => "log",
            }
            .to_owned(),
        ),
        ("reasons.format", call.format.as_str().to_owned()),
        ("reasons.source", format!("{}:{}", call.source, call.line)),
    ];
    if let Some(reason) = &call.reason {
        attributes.push(("reasons.reason", reason.clone()));
    }
    if let Some(arguments) = &call.arguments {
        attributes.push(("reasons.touched", reasons::touched::summary(arguments)));
    }
    if let Some(session) = &call.session {
        attributes.push(("session.id", session.clone()));
    }
    encode_span(
        &identity,
        &call.tool,
        call.call_id.as_deref(),
        nanos,
        &attributes,
    )
}

fn unix_nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

/// A span in the GenAI conventions' shape: `execute_tool {tool}`, its ids derived from
/// `identity`, at `nanos`, with `attributes` after the conventions' own.
fn encode_span(
    identity: &str,
    tool: &str,
    call_id: Option<&str>,
    nanos: u64,
    attributes: &[(&str, String)],
) -> Vec<u8> {
    let digest = Sha256::digest(identity.as_bytes());
    let mut out = Vec::new();
    bytes_field(&mut out, 1, &digest[..16]);
    bytes_field(&mut out, 2, &digest[16..24]);
    bytes_field(&mut out, 5, format!("execute_tool {tool}").as_bytes());
    // SPAN_KIND_INTERNAL.
    tag(&mut out, 6, 0);
    varint(&mut out, 1);
    fixed64_field(&mut out, 7, nanos);
    fixed64_field(&mut out, 8, nanos);
    attribute(&mut out, 9, "gen_ai.operation.name", "execute_tool");
    attribute(&mut out, 9, "gen_ai.tool.name", tool);
    if let Some(call_id) = call_id {
        attribute(&mut out, 9, "gen_ai.tool.call.id", call_id);
    }
    for (key, value) in attributes {
        attribute(&mut out, 9, key, value);
    }
    out
}

/// An `ExportTraceServiceRequest` holding these encoded spans, from service `reasons`.
fn export_request(spans: &[Vec<u8>]) -> Vec<u8> {
    let mut resource = Vec::new();
    attribute(&mut resource, 1, "service.name", "reasons");
    let mut scope = Vec::new();
    bytes_field(&mut scope, 1, b"reasons");
    bytes_field(&mut scope, 2, env!("CARGO_PKG_VERSION").as_bytes());
    let mut scope_spans = Vec::new();
    bytes_field(&mut scope_spans, 1, &scope);
    for span in spans {
        bytes_field(&mut scope_spans, 2, span);
    }
    let mut resource_spans = Vec::new();
    bytes_field(&mut resource_spans, 1, &resource);
    bytes_field(&mut resource_spans, 2, &scope_spans);
    let mut request = Vec::new();
    bytes_field(&mut request, 1, &resource_spans);
    request
}

#[cfg(test)]
mod tests {
    use reasons::layer::TakenReason;
    use reasons::reasons_log::Via;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_traces_path_is_added_to_a_base_url_only() {
        assert_eq!(
            traces_url("http://127.0.0.1:6006").unwrap().to_string(),
            "http://127.0.0.1:6006/v1/traces"
        );
        assert_eq!(
            traces_url("https://otel.example/v1/traces/")
                .unwrap()
                .to_string(),
            "https://otel.example/v1/traces"
        );
        assert!(traces_url("otel.example").is_err());
    }

    #[test]
    fn a_span_is_the_same_bytes_for_the_same_call_and_holds_its_attributes() {
        let record = Record::now(
            Via::Gateway,
            TakenReason::new(
                "Bash".into(),
                Some("toolu_1".into()),
                None,
                json!("Look around"),
                json!({"command": "ls"}),
            ),
            Some("s1".into()),
        );
        let at = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let encoded = span(&record, at);
        assert_eq!(encoded, span(&record, at));
        let text = String::from_utf8_lossy(&encoded);
        for needed in [
            "execute_tool Bash",
            "gen_ai.tool.call.id",
            "toolu_1",
            "reasons.reason",
            "Look around",
            "session.id",
        ] {
            assert!(text.contains(needed), "{needed}");
        }
        // A varint crosses its byte boundary as protobuf says.
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xAC, 0x02]);
    }
}
