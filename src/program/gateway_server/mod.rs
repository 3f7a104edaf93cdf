//! The gateway's server (`reasons gateway`, and the one `reasons run` starts): HTTP in front of a
//! model's API that applies the layer to what passes (see `reasons::gateway` for the rewriting
//! itself), with what a team's gateway adds (`sharing`: `--serve-reasons`, `--store`, `--otlp`).
//!
//! hyper on both sides: the server speaks HTTP/1.1 and h2c to the agent, the client HTTP/1.1 or
//! HTTP/2 to the upstream, over rustls with the webpki roots, so TLS is verified the same way on
//! every machine. Bodies the layer does not read are streamed through, frame by frame.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Version};
use reasons::apis::{Api, ModelProvider};
use reasons::gateway::{
    Exchange, Lookup, Output, Recall, BETA_HEADER, RECALL_TAIL, SESSION_HEADERS,
};
use reasons::layer::ReasonPosition;
use reasons::layer::TakenReason;
use reasons::masking::Masking;
use reasons::reasons_log::{self, Record, Via};
use tokio::net::TcpListener;

use crate::program::exit_codes::ExitCode;
use crate::program::http;

mod decoded_body;
mod sharing;
mod store;
mod streamed_body;
mod upstreams;

use decoded_body::{DecodedBody, Encoding};
use streamed_body::StreamedBody;
pub use upstreams::named_upstream;
use upstreams::Upstreams;

/// How the gateway runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where it listens.
    pub listen: String,
    /// Where it forwards, as given: `URL` for every API, `API=URL` for one provider's.
    pub upstreams: Vec<String>,
    /// Where the reasons go.
    pub reasons_log: PathBuf,
    /// Whether calls lose their reason (`--no-strip` leaves them, and still logs).
    pub strip: bool,
    /// Whether each reason is printed on stderr as it is taken off (`-v`).
    pub verbose: bool,
    /// Whether the calls of a request's history get their logged reason back (`--no-restore`
    /// turns it off).
    pub restore: bool,
    /// Where the `reason` parameter goes among each declaration's properties, and a reason
    /// given back among a history call's arguments (`--reason-position`).
    pub position: ReasonPosition,
    /// The largest request body read whole (`--max-body`): a larger one is a 413.
    pub max_body: u64,
    /// Whether `GET /reasons/v1/calls/{call_id}` answers (`--serve-reasons`).
    pub serve_reasons: bool,
    /// The Redis or Valkey the replicas share (`--store`).
    pub store: Option<String>,
    /// How long a reason is kept there (`--store-ttl`; a store needs one).
    pub store_ttl: Option<String>,
    /// The OpenTelemetry collector each reason goes to as a span (`--otlp`).
    pub otlp: Option<String>,
    /// Whether what leaves the machine (spans, the store, the reasons route) is masked
    /// (`--no-mask` turns it off); the reasons log keeps what the model wrote.
    pub masking: Masking,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type ProxyBody = BoxBody<Bytes, BoxError>;
type UpstreamClient = http::HttpsClient<ProxyBody>;

/// What every connection shares.
struct Gateway {
    client: UpstreamClient,
    upstreams: Upstreams,
    log: Option<reasons_log::Writer>,
    log_path: PathBuf,
    /// Whether the log has failed once: said once, not for every call.
    log_failed: AtomicBool,
    strip: bool,
    /// Where the parameter goes (`--reason-position`).
    position: ReasonPosition,
    verbose: bool,
    /// The reasons given back to the history of requests (when restoring) and served (with
    /// `--serve-reasons`).
    recall: Option<std::sync::RwLock<Recall>>,
    /// Whether the history gets its reasons back.
    restore: bool,
    /// The upstreams that failed the last request sent to them: said once per outage.
    unreachable: std::sync::Mutex<std::collections::BTreeSet<&'static str>>,
    /// The largest request body read whole.
    max_body: u64,
    /// `--serve-reasons`, `--store` and `--otlp`.
    sharing: sharing::Sharing,
}

/// Runs the gateway until it is stopped (Ctrl-C or SIGTERM).
pub fn run(options: Options) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the gateway's runtime")?;
    runtime.block_on(serve(options))
}

async fn serve(options: Options) -> anyhow::Result<ExitCode> {
    serve_until(bind(&options).await?, http::shutdown_signal()).await;
    Ok(ExitCode::Success)
}

/// A gateway listening, announced, not yet serving: `reasons run` starts its agent between the
/// two, and stops the gateway when the agent ends rather than on Ctrl-C (which is the agent's).
pub struct Bound {
    listener: TcpListener,
    gateway: Arc<Gateway>,
}

/// Checks the options, listens and opens the log: every mistake is found here, before anything
/// is served.
pub async fn bind(options: &Options) -> anyhow::Result<Bound> {
    let upstreams = Upstreams::parse(&options.upstreams)?;
    let listener = http::bind(&options.listen).await?;
    let log = match reasons_log::Writer::open(&options.reasons_log) {
        Ok(log) => Some(log),
        Err(error) => {
            say(&format!(
                "cannot open the reasons log {}: {error}; calls go through, their reasons are lost (-v prints them)",
                options.reasons_log.display()
            ));
            None
        }
    };
    let ttl = options
        .store_ttl
        .as_deref()
        .map(store::parse_ttl)
        .transpose()?;
    let store = match (&options.store, ttl) {
        (Some(url), Some(ttl)) => Some(store::Store::open(url, ttl)?),
        _ => None,
    };
    let spans = match &options.otlp {
        Some(url) => Some(crate::program::otlp::Exporter::start(url, options.masking)?),
        None => None,
    };
    let sharing = sharing::Sharing::new(options.serve_reasons, store, spans, options.masking);
    let gateway = Arc::new(Gateway {
        client: upstream_client(),
        upstreams,
        log,
        log_path: options.reasons_log.clone(),
        log_failed: AtomicBool::new(false),
        strip: options.strip,
        position: options.position,
        verbose: options.verbose,
        // One cache of the reasons, read from the log's end once, for both that read it.
        recall: (options.restore || options.serve_reasons)
            .then(|| std::sync::RwLock::new(recall(&options.reasons_log))),
        restore: options.restore,
        unreachable: std::sync::Mutex::default(),
        max_body: options.max_body,
        sharing,
    });
    // Tests and scripts wait for this line: the port is open once it is written.
    say(&format!(
        "gateway listening on http://{}, {}, reasons to {}{}",
        listener.local_addr()?,
        gateway.upstreams.describe(),
        options.reasons_log.display(),
        gateway.sharing.describe()
    ));
    Ok(Bound { listener, gateway })
}

impl Bound {
    /// Where it listens.
    pub fn address(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// Serves until `shutdown` completes.
pub async fn serve_until(bound: Bound, shutdown: impl std::future::Future<Output = ()>) {
    let Bound { listener, gateway } = bound;
    let verbose = gateway.verbose;
    http::serve_until(
        listener,
        shutdown,
        move |request| Arc::clone(&gateway).handle(request),
        move |error| {
            if verbose {
                say(&format!("cannot accept a connection: {error}"));
            }
        },
    )
    .await;
}

fn upstream_client() -> UpstreamClient {
    http::client(Duration::from_secs(30))
}

fn full(bytes: impl Into<Bytes>) -> ProxyBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    content_type(headers).is_some_and(|kind| kind.starts_with("text/event-stream"))
}

fn is_json(headers: &HeaderMap) -> bool {
    content_type(headers).is_some_and(|kind| kind.starts_with("application/json"))
}

fn content_type(headers: &HeaderMap) -> Option<String> {
    let kind = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(kind.trim().to_ascii_lowercase())
}

impl Gateway {
    /// The request's exchange: its tools augmented and, when restoring, its history given back
    /// the reasons this gateway remembers and, with a store, those another replica took (the
    /// body is then read a second time, only when the store knew an id this gateway did not).
    async fn exchange(&self, api: Api, path: &str, body: &[u8]) -> (Exchange, Option<Vec<u8>>) {
        let new = |recall: Option<&dyn Lookup>| {
            Exchange::new(api, path, body, self.strip, recall, self.position)
        };
        let Some(recall) = self.recall.as_ref().filter(|_| self.restore) else {
            return new(None);
        };
        let remembered = || recall.read().unwrap_or_else(|e| e.into_inner());
        let Some(store) = &self.sharing.store else {
            return new(Some(&*remembered()));
        };
        let (made, store_knew_more) =
            store::recall_missed(store, recall, |lookup| new(Some(lookup))).await;
        if !store_knew_more {
            return made;
        }
        new(Some(&*remembered()))
    }

    async fn handle(self: Arc<Self>, request: Request<Incoming>) -> Response<ProxyBody> {
        let path = request.uri().path().to_owned();
        let path_and_query = request
            .uri()
            .path_and_query()
            .map_or_else(|| path.clone(), |value| value.as_str().to_owned());
        if let Some(answer) = self
            .sharing
            .answer(request.method(), &path, self.recall.as_ref())
            .await
        {
            return answer;
        }
        // The request's API is decided here, once, and carried along. A path of no
        // API's goes upstream untouched (SPEC §4.2), as does any method but POST.
        let api = Api::of_path(&path);
        let rewritten_as = api.filter(|_| request.method() == Method::POST);
        let provider =
            ModelProvider::of_request(api, &path, &|name| request.headers().contains_key(name))
                .unwrap_or_else(|| self.upstreams.for_unclaimed_paths());
        let upstream = self.upstreams.of(provider);
        let uri = match upstream.uri_for(&path_and_query) {
            Ok(uri) => uri,
            Err(error) => return error_answer(StatusCode::BAD_REQUEST, api, &error.to_string()),
        };
        let (mut parts, body) = request.into_parts();
        http::remove_hop_by_hop(&mut parts.headers);
        parts.headers.remove(header::HOST);
        parts.uri = uri;
        // The upstream is spoken to in the version it speaks (HTTP/2 where TLS offers it), not
        // in the client's: an HTTP/2 request sent on as one would be refused on a plain HTTP/1
        // connection.
        parts.version = Version::default();
        let (body, exchange) = match rewritten_as {
            None => (body.map_err(BoxError::from).boxed(), None),
            Some(rewritten_as) => {
                let bytes = match read_bounded(body, &parts.headers, self.max_body).await {
                    Ok(bytes) => bytes,
                    Err(refused) => return refused.answer(api, self.max_body),
                };
                let (mut exchange, augmented) = self.exchange(rewritten_as, &path, &bytes).await;
                // Agents name their session in a header, when they do, more reliably than in
                // the body.
                let named = SESSION_HEADERS.iter().find_map(|name| {
                    parts
                        .headers
                        .get(*name)
                        .and_then(|value| value.to_str().ok())
                });
                if let Some(session) = named {
                    exchange.session = Some(session.to_owned());
                }
                const BETA: HeaderName = HeaderName::from_static(BETA_HEADER);
                let values = parts
                    .headers
                    .get_all(&BETA)
                    .iter()
                    .map(HeaderValue::as_bytes);
                if let Some(kept) = exchange.beta_headers(values) {
                    parts.headers.remove(&BETA);
                    for value in kept {
                        // A part of a header value is a header value.
                        if let Ok(value) = HeaderValue::from_bytes(&value) {
                            parts.headers.append(&BETA, value);
                        }
                    }
                }
                if let Some(problem) = exchange.problem.as_ref().filter(|_| self.verbose) {
                    say(&format!("{path}: {problem}; forwarded as it came"));
                }
                let bytes = augmented.map_or(bytes, Bytes::from);
                parts.headers.remove(header::CONTENT_LENGTH);
                parts
                    .headers
                    .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
                // An answer the gateway reads must come uncompressed.
                parts.headers.insert(
                    header::ACCEPT_ENCODING,
                    HeaderValue::from_static("identity"),
                );
                (full(bytes), Some(exchange))
            }
        };
        let authority = upstream.authority.clone();
        let upstream = match self.client.request(Request::from_parts(parts, body)).await {
            Ok(answer) => {
                self.reached(provider);
                answer
            }
            Err(error) => {
                let message = format!(
                    "cannot reach the upstream {authority}: {}",
                    http::error_chain(&error)
                );
                if self.unreached(provider) {
                    say(&format!("{path}: {message}"));
                }
                return error_answer(StatusCode::BAD_GATEWAY, api, &message);
            }
        };
        let (mut parts, body) = upstream.into_parts();
        http::remove_hop_by_hop(&mut parts.headers);
        let Some(exchange) = exchange.filter(|_| parts.status.is_success()) else {
            return Response::from_parts(parts, body.map_err(BoxError::from).boxed());
        };
        // An answer it reads is decoded first, whatever the upstream compressed it with; one it
        // cannot decode is not passed on, since the reasons in it would go with it.
        let body = match Encoding::of(&parts.headers)
            .map_err(|name| {
                format!("it compressed its answer as `{name}`, which the gateway cannot read")
            })
            .and_then(|applied| DecodedBody::new(body, &applied).map_err(|error| error.to_string()))
        {
            Ok(body) => body,
            Err(why) => {
                let message = format!("the upstream's answer was held back: {why}");
                say(&format!("{path}: {message}"));
                return error_answer(StatusCode::BAD_GATEWAY, api, &message);
            }
        };
        if parts.headers.remove(header::CONTENT_ENCODING).is_some() {
            parts.headers.remove(header::CONTENT_LENGTH);
        }
        if is_event_stream(&parts.headers) {
            parts.headers.remove(header::CONTENT_LENGTH);
            let answer = exchange.streamed_answer();
            let session = exchange.session.clone();
            let body = StreamedBody::new(Arc::clone(&self), path, session, body, answer);
            return Response::from_parts(parts, body.boxed());
        }
        if !is_json(&parts.headers) {
            return Response::from_parts(parts, body.boxed());
        }
        let bytes = match body.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) => {
                let message = format!("the upstream's answer broke off: {error}");
                if self.verbose {
                    say(&format!("{path}: {message}"));
                }
                return error_answer(StatusCode::BAD_GATEWAY, api, &message);
            }
        };
        let answer = exchange.answer(&bytes);
        if answer.withheld {
            return self.withheld(api, &path, bytes.len());
        }
        self.log(&answer.reasons, exchange.session.as_deref());
        let bytes = answer.body.map_or(bytes, Bytes::from);
        parts
            .headers
            .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
        Response::from_parts(parts, full(bytes))
    }

    /// Says (with `-v`) that an answer broke off, and which calls it cut: their held fragments
    /// were dropped, and nothing of them was logged.
    fn said_cut(&self, path: &str, why: &str, out: &Output) {
        if !self.verbose {
            return;
        }
        let mut message = format!("{path}: the answer broke off ({why})");
        for call in &out.cut {
            message.push_str(&format!(
                "; the call to {call} was cut: nothing of it sent or logged"
            ));
        }
        say(&message);
    }

    /// The answer to a plain JSON answer that is not JSON, in an exchange that strips: a body
    /// cut off before its end may hold a reason the layer cannot take off, and the client
    /// could not have read it either.
    fn withheld(&self, api: Option<Api>, path: &str, length: usize) -> Response<ProxyBody> {
        let message = format!(
            "the upstream's answer is not complete JSON ({length} bytes); not passed on, as it may hold a reason"
        );
        if self.verbose {
            say(&format!("{path}: {message}"));
        }
        error_answer(StatusCode::BAD_GATEWAY, api, &message)
    }

    /// Notes that a provider's upstream answered: a later failure is news again.
    fn reached(&self, provider: ModelProvider) {
        let mut unreachable = self.unreachable.lock().unwrap_or_else(|e| e.into_inner());
        if !unreachable.is_empty() {
            unreachable.remove(provider.name);
        }
    }

    /// Notes that a provider's upstream could not be reached; true the first time in a row, when
    /// the person beside the gateway must hear of it (the agent only sees its request fail).
    fn unreached(&self, provider: ModelProvider) -> bool {
        let mut unreachable = self.unreachable.lock().unwrap_or_else(|e| e.into_inner());
        unreachable.insert(provider.name) || self.verbose
    }

    /// Writes each reason to the log (and with `-v` to stderr), before the call it came off is
    /// sent on.
    fn log(&self, reasons: &[TakenReason], session: Option<&str>) {
        for taken in reasons {
            if self.verbose {
                crate::program::messages::line(&taken.to_string());
            }
            let record = Record::now(Via::Gateway, taken.clone(), session.map(str::to_owned));
            if let Some(recall) = &self.recall {
                let mut recall = recall.write().unwrap_or_else(|e| e.into_inner());
                recall.note_logged(record.logged());
            }
            self.sharing.took(&record);
            let Some(log) = &self.log else { continue };
            if let Err(error) = log.append(&record) {
                if !self.log_failed.swap(true, Ordering::Relaxed) {
                    say(&format!(
                        "cannot write the reasons log {}: {error}; calls go through, their reasons are lost (-v prints them)",
                        self.log_path.display()
                    ));
                }
            }
        }
    }
}

/// What a starting gateway remembers: the records at the end of its reasons log, so that a
/// restarted gateway still gives back reasons logged before it started. A log it cannot read is
/// one it starts without.
fn recall(log: &std::path::Path) -> Recall {
    let mut recall = Recall::default();
    let _ = reasons_log::read_end(log, RECALL_TAIL, &mut |logged| recall.note_logged(logged));
    recall
}

/// Why a request body was not read.
enum Refused {
    /// It is larger than `--max-body`: said by its `content-length`, or found while reading.
    TooLarge,
    /// The agent went away while sending it.
    Broken(hyper::Error),
}

impl Refused {
    fn answer(&self, api: Option<Api>, max_body: u64) -> Response<ProxyBody> {
        match self {
            Refused::TooLarge => error_answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                api,
                &format!("the request body is larger than --max-body ({max_body} bytes)"),
            ),
            // Nobody is left to answer, but hyper wants an answer.
            Refused::Broken(error) => {
                error_answer(StatusCode::BAD_REQUEST, api, &error.to_string())
            }
        }
    }
}

/// Reads a request body whole into one buffer, refusing one larger than `max` before reading
/// it (by its `content-length`) or as soon as it grows past it (a chunked body). The buffer is
/// sized once from the `content-length`, so a body costs its own size, not twice it.
async fn read_bounded(mut body: Incoming, headers: &HeaderMap, max: u64) -> Result<Bytes, Refused> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > max) {
        return Err(Refused::TooLarge);
    }
    let mut bytes = Vec::with_capacity(declared.map_or(0, |length| length as usize));
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(Refused::Broken)?;
        if let Ok(data) = frame.into_data() {
            if (bytes.len() + data.len()) as u64 > max {
                return Err(Refused::TooLarge);
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(bytes))
}

/// An error answer in the envelope of the request's API (see [`Api::of_error_answer`]).
fn error_answer(status: StatusCode, api: Option<Api>, message: &str) -> Response<ProxyBody> {
    let body = Api::of_error_answer(api)
        .error_body(status.as_u16(), &format!("reasons gateway: {message}"));
    let mut answer = Response::new(full(body));
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    answer
}

/// One message on stderr, as `reasons: …`, in one write (see `crate::program::messages`), so that lines
/// from concurrent requests never cut through each other; a closed stderr is no reason to stop
/// serving.
fn say(message: &str) {
    crate::program::messages::message!("{message}");
}
