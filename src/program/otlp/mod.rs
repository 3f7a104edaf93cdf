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
//! What a span says about a reason and what its call touched is masked first
//! ([`reasons::masking`]) unless the command was given `--no-mask`: a collector is elsewhere.
//!
//! OTLP/HTTP protobuf (Phoenix refuses JSON bodies): the official messages as prost types
//! ([`proto`]), encoded by prost.

mod proto;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Uri};
use prost::Message;
use proto::{
    any_value, AnyValue, ExportTraceServiceRequest, InstrumentationScope, KeyValue, Resource,
    ResourceSpans, ScopeSpans, Span, SpanKind,
};
use reasons::masking::Masking;
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
    queue: Option<SyncSender<Span>>,
    /// Whether a span's reason and touched are masked: decided once, for every span.
    masking: Masking,
    dropped: Arc<AtomicU64>,
    /// Spans queued and not yet sent (or given up on).
    pending: Arc<AtomicU64>,
    sender: Option<JoinHandle<()>>,
}

impl Exporter {
    /// An exporter to the collector at `url` (its traces path `/v1/traces` added unless given),
    /// its spans' texts masked as `masking` says.
    pub fn start(url: &str, masking: Masking) -> anyhow::Result<Exporter> {
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
            masking,
            dropped,
            pending,
            sender: Some(sender),
        })
    }

    /// Queues the span of a reason taken; dropped and counted when the queue is full.
    pub fn span(&self, record: &Record) {
        self.queue(span(record, SystemTime::now(), self.masking));
    }

    /// Queues the span of a recorded call (`reasons export`), waiting for room: a recorded log
    /// is sent whole, however slowly the collector takes it.
    pub fn call_span(&self, call: &CallRecord) {
        let Some(queue) = &self.queue else { return };
        self.pending.fetch_add(1, Ordering::SeqCst);
        if queue.send(call_span(call, self.masking)).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Spans not sent: the queue was full, or the collector did not take them.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn queue(&self, span: Span) {
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
    queued: mpsc::Receiver<Span>,
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
        let sent_spans = batch.len() as u64;
        let body = export_request(batch).encode_to_vec();
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
        pending.fetch_sub(sent_spans, Ordering::SeqCst);
        match sent {
            Some(status) if status.is_success() => {
                if away {
                    away = false;
                    crate::program::messages::message!("the collector {traces} answers again");
                }
            }
            failed => {
                dropped.fetch_add(sent_spans, Ordering::Relaxed);
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

/// The `Span` of a reason taken at `now`.
fn span(record: &Record, now: SystemTime, masking: Masking) -> Span {
    let taken = &record.taken;
    let reason = match &taken.reason {
        Value::String(text) => masking.text(text).into_owned(),
        other => {
            let mut other = other.clone();
            masking.json(&mut other);
            other.to_string()
        }
    };
    let touched = masking.text(&record.touched).into_owned();
    // Without a call id, the span's identity is made of what it shows, masked as it is shown: a
    // hash of a password in its context is a way to confirm a guess.
    let identity = match &taken.call_id {
        Some(call_id) => format!("call:{call_id}"),
        None => format!("{}:{}:{}:{}", record.time, taken.tool, touched, reason),
    };
    let mut attributes = vec![
        ("reasons.reason", reason),
        ("reasons.touched", touched),
        ("reasons.via", record.via.as_str().to_owned()),
    ];
    if let Some(session) = &record.session {
        attributes.push(("session.id", session.clone()));
    }
    tool_span(
        &identity,
        &taken.tool,
        taken.call_id.as_deref(),
        unix_nanos(now),
        attributes,
    )
}

/// The `Span` of a recorded call: every status, with where its reason came from, at the time
/// its log gives it.
fn call_span(call: &CallRecord, masking: Masking) -> Span {
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
        attributes.push(("reasons.reason", masking.text(reason).into_owned()));
    }
    if let Some(arguments) = &call.arguments {
        let touched = reasons::touched::summary(arguments);
        attributes.push(("reasons.touched", masking.text(&touched).into_owned()));
    }
    if let Some(session) = &call.session {
        attributes.push(("session.id", session.clone()));
    }
    tool_span(
        &identity,
        &call.tool,
        call.call_id.as_deref(),
        nanos,
        attributes,
    )
}

fn unix_nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

/// A string attribute.
fn attribute(key: &str, value: String) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value)),
        }),
    }
}

/// A span in the GenAI conventions' shape: `execute_tool {tool}`, its ids derived from
/// `identity`, at `nanos`, with `attributes` after the conventions' own.
fn tool_span(
    identity: &str,
    tool: &str,
    call_id: Option<&str>,
    nanos: u64,
    attributes: Vec<(&str, String)>,
) -> Span {
    let digest = Sha256::digest(identity.as_bytes());
    let mut all = vec![
        attribute("gen_ai.operation.name", "execute_tool".to_owned()),
        attribute("gen_ai.tool.name", tool.to_owned()),
    ];
    if let Some(call_id) = call_id {
        all.push(attribute("gen_ai.tool.call.id", call_id.to_owned()));
    }
    all.extend(
        attributes
            .into_iter()
            .map(|(key, value)| attribute(key, value)),
    );
    Span {
        trace_id: digest[..16].to_vec(),
        span_id: digest[16..24].to_vec(),
        name: format!("execute_tool {tool}"),
        kind: SpanKind::Internal as i32,
        start_time_unix_nano: nanos,
        end_time_unix_nano: nanos,
        attributes: all,
        ..Span::default()
    }
}

/// The `ExportTraceServiceRequest` holding these spans, from service `reasons`.
fn export_request(spans: Vec<Span>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![attribute("service.name", "reasons".to_owned())],
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "reasons".to_owned(),
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                }),
                spans,
            }],
        }],
    }
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

    /// What a collector receives for these spans, decoded with the same messages.
    fn received(spans: Vec<Span>) -> ExportTraceServiceRequest {
        let body = export_request(spans).encode_to_vec();
        ExportTraceServiceRequest::decode(&body[..]).expect("a valid ExportTraceServiceRequest")
    }

    fn attributes(span: &Span) -> Vec<(String, String)> {
        span.attributes
            .iter()
            .map(|pair| {
                let value = match pair.value.as_ref().and_then(|any| any.value.as_ref()) {
                    Some(any_value::Value::StringValue(text)) => text.clone(),
                    other => panic!("{}: not a string value: {other:?}", pair.key),
                };
                (pair.key.clone(), value)
            })
            .collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn a_reason_taken_is_sent_as_one_span_with_every_attribute() {
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
        let sent = span(&record, at, Masking::Masked);
        assert_eq!(sent, span(&record, at, Masking::Masked));
        let request = received(vec![sent]);
        let [resource_spans] = &request.resource_spans[..] else {
            panic!("one resource: {request:?}")
        };
        let resource = resource_spans.resource.as_ref().unwrap();
        assert_eq!(
            resource.attributes,
            vec![attribute("service.name", "reasons".to_owned())]
        );
        let [scope_spans] = &resource_spans.scope_spans[..] else {
            panic!("one scope")
        };
        let scope = scope_spans.scope.as_ref().unwrap();
        assert_eq!(
            (scope.name.as_str(), scope.version.as_str()),
            ("reasons", env!("CARGO_PKG_VERSION"))
        );
        let [span] = &scope_spans.spans[..] else {
            panic!("one span")
        };
        assert_eq!(span.name, "execute_tool Bash");
        assert_eq!(span.kind, SpanKind::Internal as i32);
        let digest = Sha256::digest(b"call:toolu_1");
        assert_eq!(span.trace_id, digest[..16]);
        assert_eq!(span.span_id, digest[16..24]);
        assert!(span.parent_span_id.is_empty());
        assert_eq!(span.start_time_unix_nano, 1_800_000_000_000_000_000);
        assert_eq!(span.end_time_unix_nano, span.start_time_unix_nano);
        assert_eq!(
            attributes(span),
            pairs(&[
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.name", "Bash"),
                ("gen_ai.tool.call.id", "toolu_1"),
                ("reasons.reason", "Look around"),
                ("reasons.touched", "ls"),
                ("reasons.via", "gateway"),
                ("session.id", "s1"),
            ])
        );
    }

    #[test]
    fn a_recorded_call_is_sent_at_its_time_with_its_status_and_place() {
        let call = CallRecord {
            source: "logs/a.jsonl".into(),
            line: 7,
            format: reasons::record::Format::ClaudeCode,
            session: Some("s2".into()),
            timestamp: Some("2026-12-01T11:11:12.5+01:00".into()),
            call_id: Some("toolu_2".into()),
            tool: "Bash".into(),
            reason: Some("Run the tests".into()),
            status: reasons::record::Status::Present,
            reason_from: ReasonFrom::Call,
            arguments: Some(json!({"command": "cargo test", "reason": "Run the tests"})),
        };
        let request = received(vec![call_span(&call, Masking::Masked)]);
        let span = &request.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(span.name, "execute_tool Bash");
        assert_eq!(span.start_time_unix_nano, 1_796_119_872_500_000_000);
        assert_eq!(span.trace_id, Sha256::digest(b"call:toolu_2")[..16]);
        assert_eq!(
            attributes(span),
            pairs(&[
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.name", "Bash"),
                ("gen_ai.tool.call.id", "toolu_2"),
                ("reasons.status", "present"),
                ("reasons.reason_from", "call"),
                ("reasons.format", "claude-code"),
                ("reasons.source", "logs/a.jsonl:7"),
                ("reasons.reason", "Run the tests"),
                ("reasons.touched", "cargo test"),
                ("session.id", "s2"),
            ])
        );
    }

    #[test]
    fn a_span_masks_its_reason_and_touched_unless_told_not_to() {
        let record = Record::now(
            Via::Proxy,
            TakenReason::new(
                "Bash".into(),
                None,
                None,
                json!("Use DB_PASSWORD=hunter2 for the dump"),
                json!({"command": "PGPASSWORD=hunter2 pg_dump app"}),
            ),
            None,
        );
        let at = UNIX_EPOCH;
        let masked = attributes(&span(&record, at, Masking::Masked));
        assert!(masked.contains(&(
            "reasons.reason".into(),
            "Use DB_PASSWORD=[masked: password] for the dump".into()
        )));
        assert!(masked.contains(&(
            "reasons.touched".into(),
            "PGPASSWORD=[masked: password] pg_dump app".into()
        )));
        let as_written = attributes(&span(&record, at, Masking::AsWritten));
        assert!(as_written.contains(&(
            "reasons.touched".into(),
            "PGPASSWORD=hunter2 pg_dump app".into()
        )));
        // Without a call id the span's ids come from what it shows, masked.
        let masked_id = span(&record, at, Masking::Masked).trace_id;
        let identity = format!(
            "{}:Bash:PGPASSWORD=[masked: password] pg_dump app:Use DB_PASSWORD=[masked: password] for the dump",
            record.time
        );
        assert_eq!(masked_id, Sha256::digest(identity.as_bytes())[..16]);
    }
}
