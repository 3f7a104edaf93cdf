//! `reasons proxy --listen ADDR`: the layer behind an HTTP face, MCP's Streamable HTTP transport
//! (2025-06-18, 2025-11-25), for clients configured with a URL. Behind it, a remote server
//! (`--url`: each client's session relayed to one of the server's, [`relayed`]) or a stdio server
//! (`-- SERVER…`: one process a session, [`children`]).
//!
//! Each session has its own pair of the layer's halves (`reasons::stream::proxy_halves`, as the
//! stdio proxy and `--url` have): the tools a session listed are those its calls are stripped
//! against, and JSON-RPC ids, which are a session's own, never meet another session's.
//!
//! It listens on loopback unless another address is named, and refuses (403) a request whose
//! `Host` is not one of its own names or whose `Origin` is a web page elsewhere: a page cannot
//! reach it through a name of the page's own that resolves to loopback (DNS rebinding), as the
//! transport asks of servers.

use std::collections::HashSet;
use std::error::Error;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue, ACCEPT, ALLOW, CONTENT_TYPE, HOST, ORIGIN};
use hyper::http::request::Parts;
use hyper::http::uri::Authority;
use hyper::{Method, Request, Response, StatusCode, Uri};
use reasons::layer::ReasonPosition;
use reasons::masking::Masking;
use reasons::reasons_log::Via;
use reasons::stream::{proxy_halves, ClientToServer, ServerToClient};
use serde_json::Value;

use super::jsonrpc::{error_message, outgoing, Outgoing, TRANSPORT_ERROR};
use super::remote::SESSION_ID;
use crate::program::exit_codes::ExitCode;
use crate::program::http;
use crate::program::relay::ReasonSink;

mod children;
mod relayed;

/// The path the printed URL names. Every path is served alike: a client configured with another
/// still reaches the server.
const ENDPOINT: &str = "/mcp";

/// The largest message a client may POST.
const MAX_MESSAGE: usize = 64 << 20;

/// How long the sessions still open are given to end once the proxy is stopped.
const GRACE: Duration = Duration::from_secs(2);

/// What stands behind the HTTP face.
pub enum Behind {
    /// A remote MCP server over Streamable HTTP, with these `--header`s.
    Url { url: String, headers: Vec<String> },
    /// A stdio server to run, one process a session: the program and its arguments.
    Server(Vec<String>),
}

/// How `proxy --listen` runs.
pub struct Options<'a> {
    /// `--listen`: `HOST:PORT`, or `PORT` / `:PORT` for loopback.
    pub listen: &'a str,
    pub behind: Behind,
    pub reasons_log: Option<&'a Path>,
    /// `--meta`: each reason goes on to the server in the call's `params._meta`.
    pub reasons_in_meta: bool,
    pub position: ReasonPosition,
    pub otlp: Option<&'a str>,
    pub masking: Masking,
}

type BoxError = Box<dyn Error + Send + Sync>;

/// An answer to the client, whole or streamed.
type Answer = Response<BoxBody<Bytes, BoxError>>;

/// Serves until Ctrl-C or SIGTERM, then ends the sessions still open and exits 0.
pub fn run(options: Options) -> anyhow::Result<ExitCode> {
    let (named, address) = listen_address(options.listen)?;
    let sink = ReasonSink::open(
        options.reasons_log,
        Via::Proxy,
        options.otlp,
        options.masking,
    )?;
    let spans = sink.spans();
    let layers = Arc::new(Layers {
        position: options.position,
        reasons_in_meta: options.reasons_in_meta,
        sink: Mutex::new(sink),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the proxy's runtime")?;
    let (backend, behind) = match options.behind {
        Behind::Url { url, headers } => {
            let relayed = relayed::Relayed::new(&url, &headers, Arc::clone(&layers))?;
            let behind = format!("in front of {}", relayed.shown());
            (Backend::Relayed(Arc::new(relayed)), behind)
        }
        Behind::Server(server) => {
            let children = children::Children::new(&server, Arc::clone(&layers))?;
            let behind = format!("in front of {}, one process a session", children.shown());
            (Backend::Children(Arc::new(children)), behind)
        }
    };
    runtime.block_on(async {
        let listener = http::bind(&address).await?;
        let bound = listener.local_addr()?;
        let face = Arc::new(Face {
            guard: Guard::new(&named, bound),
            backend,
            said: Said::default(),
        });
        let reasons_to = match options.reasons_log {
            Some(path) => path.display().to_string(),
            None => "stderr".to_owned(),
        };
        // Tests and scripts wait for this line: the port is open once it is written.
        crate::program::messages::message!(
            "proxy listening on http://{}{ENDPOINT} (MCP Streamable HTTP), {behind}, reasons to {reasons_to}",
            shown_address(bound)
        );
        let serving = Arc::clone(&face);
        http::serve_until(
            listener,
            http::shutdown_signal(),
            move |request| Arc::clone(&serving).handle(request),
            |_| {},
        )
        .await;
        face.backend.close_all().await;
        anyhow::Ok(())
    })?;
    runtime.shutdown_timeout(Duration::ZERO);
    if let Some(spans) = spans {
        spans.flush();
    }
    Ok(ExitCode::Success)
}

/// `--listen`'s address: the host as named (what a client's `Host` may say) and what to bind.
/// `PORT` and `:PORT` are loopback's, `127.0.0.1`.
fn listen_address(listen: &str) -> anyhow::Result<(String, String)> {
    let port_only = listen.strip_prefix(':').unwrap_or(listen);
    if !port_only.is_empty() && port_only.bytes().all(|byte| byte.is_ascii_digit()) {
        return Ok(("127.0.0.1".to_owned(), format!("127.0.0.1:{port_only}")));
    }
    let authority: Authority = listen
        .parse()
        .ok()
        .filter(|authority: &Authority| authority.port().is_some())
        .with_context(|| format!("--listen {listen}: expected HOST:PORT, or PORT for loopback"))?;
    Ok((bare_host(authority.host()), listen.to_owned()))
}

/// A host as compared: lower case, an IPv6 address without its brackets.
fn bare_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// An address as a URL names it, an IPv6 one in brackets.
fn shown_address(address: SocketAddr) -> String {
    match address.ip() {
        IpAddr::V6(ip) => format!("[{ip}]:{}", address.port()),
        IpAddr::V4(ip) => format!("{ip}:{}", address.port()),
    }
}

/// Whether `host` (bare) names this machine's loopback.
fn is_loopback_name(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The transport's rule against DNS rebinding: which `Host` and `Origin` are this server's.
#[derive(Debug)]
struct Guard {
    port: u16,
    /// The names it answers to besides loopback's: the host named in `--listen`, the address
    /// bound.
    names: Vec<String>,
    /// It listens on every address (`0.0.0.0`, `[::]`): the names others reach it by cannot be
    /// known, so any is taken.
    any_name: bool,
}

impl Guard {
    fn new(named: &str, bound: SocketAddr) -> Guard {
        Guard {
            port: bound.port(),
            names: vec![named.to_owned(), bare_host(&bound.ip().to_string())],
            any_name: bound.ip().is_unspecified(),
        }
    }

    /// Why a request to `uri` with these headers is refused; `None` when it is not.
    fn refusal(&self, headers: &HeaderMap, uri: &Uri) -> Option<String> {
        // HTTP/2 names the host in the request's authority, HTTP/1.1 in `Host`.
        let host = headers
            .get(HOST)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
            .or_else(|| uri.authority().map(ToString::to_string));
        let Some(host) = host else {
            return Some("a request without a Host".to_owned());
        };
        let named = host.parse::<Authority>().ok().is_some_and(|authority| {
            let name = bare_host(authority.host());
            authority.port_u16().unwrap_or(80) == self.port
                && (self.any_name || is_loopback_name(&name) || self.names.contains(&name))
        });
        if !named {
            return Some(format!("Host {host:?} is not this server's"));
        }
        let origin = headers.get(ORIGIN)?;
        let allowed = origin
            .to_str()
            .ok()
            .and_then(|origin| origin.parse::<Uri>().ok())
            .filter(|origin| matches!(origin.scheme_str(), Some("http" | "https")))
            .and_then(|origin| origin.host().map(bare_host))
            .is_some_and(|name| {
                is_loopback_name(&name) || (!self.any_name && self.names.contains(&name))
            });
        (!allowed).then(|| format!("Origin {origin:?} is not a page of this machine's"))
    }
}

/// The layer of every session: where each goes, and where the reasons go.
struct Layers {
    position: ReasonPosition,
    reasons_in_meta: bool,
    sink: Mutex<ReasonSink>,
}

impl Layers {
    /// The layer for a new session, which has listed nothing yet.
    fn session(self: &Arc<Self>) -> SessionLayer {
        let (to_server, to_client) = proxy_halves(self.position);
        let to_server = if self.reasons_in_meta {
            to_server.forward_reasons_in_meta()
        } else {
            to_server
        };
        SessionLayer {
            to_server: Mutex::new(to_server),
            to_client: Mutex::new(to_client),
            layers: Arc::clone(self),
        }
    }
}

/// One session's halves of the layer.
struct SessionLayer {
    to_server: Mutex<ClientToServer>,
    to_client: Mutex<ServerToClient>,
    layers: Arc<Layers>,
}

impl SessionLayer {
    /// A client's message through the layer, before it goes to the server: a `tools/list`
    /// noted, each call's reason taken off and reported.
    fn client_message(&self, message: &[u8]) -> Vec<u8> {
        let out = lock(&self.to_server).line(message);
        if !out.reasons.is_empty() {
            let mut sink = lock(&self.layers.sink);
            for reason in &out.reasons {
                sink.report_or_say_once(reason);
            }
        }
        out.bytes.into_owned()
    }

    /// A server's message through the layer, before it goes to the client: the answer to a
    /// `tools/list` gains the parameter.
    fn server_message<'a>(&self, message: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        lock(&self.to_client).line(message).bytes
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What stands behind the face.
enum Backend {
    Relayed(Arc<relayed::Relayed>),
    Children(Arc<children::Children>),
}

impl Backend {
    async fn post(&self, parts: &Parts, message: Outgoing, session: Option<&str>) -> Answer {
        match self {
            Backend::Relayed(relayed) => relayed.post(parts, message, session).await,
            Backend::Children(children) => children.post(parts, message, session).await,
        }
    }

    async fn get(&self, parts: &Parts, session: Option<&str>) -> Answer {
        match self {
            Backend::Relayed(relayed) => relayed.get(parts, session).await,
            Backend::Children(children) => children.get(parts, session),
        }
    }

    async fn delete(&self, parts: &Parts, session: Option<&str>) -> Answer {
        match self {
            Backend::Relayed(relayed) => relayed.delete(parts, session).await,
            Backend::Children(children) => children.delete(session),
        }
    }

    async fn close_all(&self) {
        match self {
            Backend::Relayed(relayed) => relayed.close_all().await,
            Backend::Children(children) => {
                let children = Arc::clone(children);
                let _ = tokio::task::spawn_blocking(move || children.close_all()).await;
            }
        }
    }
}

/// The HTTP face.
struct Face {
    guard: Guard,
    backend: Backend,
    said: Said,
}

impl Face {
    async fn handle(self: Arc<Self>, request: Request<Incoming>) -> Answer {
        if let Some(why) = self.guard.refusal(request.headers(), request.uri()) {
            self.said.once(&format!("proxy: refused a request: {why}"));
            return error_answer(
                StatusCode::FORBIDDEN,
                &Value::Null,
                &format!("{why}: refused (the transport's rule against DNS rebinding)"),
            );
        }
        let (parts, body) = request.into_parts();
        let session = parts
            .headers
            .get(SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let session = session.as_deref();
        match parts.method {
            Method::POST => {
                let body = match Limited::new(body, MAX_MESSAGE).collect().await {
                    Ok(body) => body.to_bytes(),
                    Err(error) if error.is::<http_body_util::LengthLimitError>() => {
                        return error_answer(
                            StatusCode::PAYLOAD_TOO_LARGE,
                            &Value::Null,
                            &format!("a message larger than {MAX_MESSAGE} bytes"),
                        );
                    }
                    Err(error) => {
                        return error_answer(
                            StatusCode::BAD_REQUEST,
                            &Value::Null,
                            &error.to_string(),
                        )
                    }
                };
                match outgoing(&body) {
                    Some(message) => self.backend.post(&parts, message, session).await,
                    None => json_answer(
                        StatusCode::BAD_REQUEST,
                        error_message(&Value::Null, -32700, "Parse error: not JSON"),
                    ),
                }
            }
            Method::GET => self.backend.get(&parts, session).await,
            Method::DELETE => self.backend.delete(&parts, session).await,
            _ => {
                let mut answer = error_answer(
                    StatusCode::METHOD_NOT_ALLOWED,
                    &Value::Null,
                    "the MCP endpoint takes POST, GET and DELETE",
                );
                answer
                    .headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
                answer
            }
        }
    }
}

/// Faults told on stderr once each, however often they happen.
#[derive(Default)]
struct Said(Mutex<HashSet<String>>);

impl Said {
    fn once(&self, text: &str) {
        if lock(&self.0).insert(text.to_owned()) {
            crate::program::messages::message!("{text}");
        }
    }
}

/// Whether the client takes an event stream for its answer.
fn takes_events(parts: &Parts) -> bool {
    parts
        .headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.to_ascii_lowercase().contains("text/event-stream"))
}

fn full(bytes: impl Into<Bytes>) -> BoxBody<Bytes, BoxError> {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

/// An answer with a JSON body.
fn json_answer(status: StatusCode, body: Vec<u8>) -> Answer {
    let mut answer = Response::new(full(body));
    *answer.status_mut() = status;
    answer
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    answer
}

/// An HTTP error whose body is a JSON-RPC error naming the cause.
fn error_answer(status: StatusCode, id: &Value, message: &str) -> Answer {
    json_answer(
        status,
        error_message(id, TRANSPORT_ERROR, &format!("reasons: proxy: {message}")),
    )
}

/// The answer to a message whose requests the server could not answer: each request's own error
/// naming the cause (a batch's as an array); a message without requests gets a 502.
fn failed(requests: &[Value], cause: &str) -> Answer {
    let message = format!("reasons: proxy: {cause}");
    match requests {
        [] => error_answer(StatusCode::BAD_GATEWAY, &Value::Null, cause),
        [id] => json_answer(StatusCode::OK, error_message(id, TRANSPORT_ERROR, &message)),
        ids => {
            let mut body = b"[".to_vec();
            for (n, id) in ids.iter().enumerate() {
                if n > 0 {
                    body.push(b',');
                }
                body.extend_from_slice(
                    error_message(id, TRANSPORT_ERROR, &message).trim_ascii_end(),
                );
            }
            body.push(b']');
            json_answer(StatusCode::OK, body)
        }
    }
}

/// The answer to a session id this proxy does not know (never given, ended, or given before a
/// restart): 404, which tells the client to initialize a new session.
fn unknown_session(id: &str) -> Answer {
    error_answer(
        StatusCode::NOT_FOUND,
        &Value::Null,
        &format!("no session {id:?}: initialize a new one"),
    )
}

/// The answer to a request that needs a session and names none.
fn no_session() -> Answer {
    error_answer(
        StatusCode::BAD_REQUEST,
        &Value::Null,
        "no Mcp-Session-Id: initialize a session first",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(listen: &str, bound: &str) -> Guard {
        let (named, _) = listen_address(listen).expect("an address");
        Guard::new(&named, bound.parse().expect("a socket address"))
    }

    fn refusal(guard: &Guard, headers: &[(&str, &str)]) -> Option<String> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(
                hyper::header::HeaderName::from_bytes(name.as_bytes()).expect("a name"),
                HeaderValue::from_str(value).expect("a value"),
            );
        }
        guard.refusal(&map, &Uri::from_static("/mcp"))
    }

    #[test]
    fn a_port_alone_listens_on_loopback() {
        assert_eq!(
            listen_address("8123").expect("valid"),
            ("127.0.0.1".to_owned(), "127.0.0.1:8123".to_owned())
        );
        assert_eq!(listen_address(":0").expect("valid").1, "127.0.0.1:0");
        assert_eq!(
            listen_address("[::1]:9").expect("valid"),
            ("::1".to_owned(), "[::1]:9".to_owned())
        );
        assert!(listen_address("localhost").is_err(), "no port");
        assert!(listen_address("").is_err());
    }

    #[test]
    fn loopback_names_pass_and_others_are_refused() {
        let guard = guard(":0", "127.0.0.1:4321");
        for host in [
            "127.0.0.1:4321",
            "localhost:4321",
            "[::1]:4321",
            "LocalHost:4321",
        ] {
            assert_eq!(refusal(&guard, &[("host", host)]), None, "{host}");
        }
        for host in [
            "evil.example:4321",
            "127.0.0.1:80",
            "localhost",
            "10.0.0.2:4321",
        ] {
            let why = refusal(&guard, &[("host", host)]).expect("refused");
            assert!(why.contains(host), "{why}");
        }
        assert!(refusal(&guard, &[]).is_some(), "no Host at all");
    }

    #[test]
    fn an_origin_must_be_a_page_of_this_machines() {
        let guard = guard(":0", "127.0.0.1:4321");
        let host = ("host", "127.0.0.1:4321");
        for origin in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:6274",
        ] {
            assert_eq!(
                refusal(&guard, &[host, ("origin", origin)]),
                None,
                "{origin}"
            );
        }
        for origin in [
            "https://evil.example",
            "null",
            "file://",
            "http://10.0.0.2:4321",
        ] {
            let why = refusal(&guard, &[host, ("origin", origin)]).expect("refused");
            assert!(why.contains("Origin"), "{why}");
        }
    }

    #[test]
    fn a_named_address_beyond_loopback_answers_to_its_name_and_every_address_to_any() {
        let named = guard("myhost.lan:8080", "192.168.1.5:8080");
        assert_eq!(refusal(&named, &[("host", "myhost.lan:8080")]), None);
        assert_eq!(refusal(&named, &[("host", "192.168.1.5:8080")]), None);
        assert!(refusal(&named, &[("host", "other.lan:8080")]).is_some());
        assert_eq!(
            refusal(
                &named,
                &[
                    ("host", "myhost.lan:8080"),
                    ("origin", "http://myhost.lan:3000")
                ]
            ),
            None
        );
        let anywhere = guard("0.0.0.0:8080", "0.0.0.0:8080");
        assert_eq!(refusal(&anywhere, &[("host", "whatever.lan:8080")]), None);
        assert!(refusal(&anywhere, &[("host", "whatever.lan:9")]).is_some());
        assert!(
            refusal(
                &anywhere,
                &[
                    ("host", "whatever.lan:8080"),
                    ("origin", "http://whatever.lan")
                ]
            )
            .is_some(),
            "only a loopback page when the names are not known"
        );
    }
}
