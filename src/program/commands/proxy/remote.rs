//! `reasons proxy --url URL`: the layer in front of a remote MCP server, stdio to the client and
//! the Streamable HTTP transport to the server (what `mcp-remote` does, plus the reason).
//!
//! The client's lines are read by one thread and its answers written by another, as in the stdio
//! proxy; each message from the client is POSTed on its own task, so that a long call never holds
//! up the next message. What the server says (a JSON answer, the events of an answer's stream or
//! of its own GET stream) is written to the client as it comes, one line a message, the bytes as
//! they came but for the line ends inside a JSON text (whitespace there, and a line end is what
//! frames a message on stdio).

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::sync::{mpsc as std_mpsc, Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{
    HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE,
};
use hyper::{Method, Request, Response, StatusCode, Uri};
use reasons::layer::ReasonPosition;
use reasons::masking::Masking;
use reasons::reasons_log::Via;
use reasons::stream::{proxy_halves, ClientToServer, ServerToClient};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::jsonrpc::{error_message, one_line, outgoing, Outgoing, TRANSPORT_ERROR};
use super::oauth::OAuth;
use super::sse::EventReader;
use crate::program::exit_codes::ExitCode;
use crate::program::http::{error_chain, HttpsClient};
use crate::program::relay::ReasonSink;

/// How long a connection to the server may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the answers still coming may take once the client has closed stdin, and how long the
/// `DELETE` that ends the session may take.
const GRACE: Duration = Duration::from_secs(2);

/// How many times a broken stream is resumed from its last event id before the requests still
/// waiting on it are answered with an error.
const RESUMPTIONS: usize = 3;

/// How long to wait before resuming when the server named no time (its `retry:` field).
const RESUME_AFTER: Duration = Duration::from_millis(100);

pub(super) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// What the threads at the client's ends tell the task that talks to the server.
enum FromClient {
    /// A message to POST.
    Message(Outgoing),
    /// The client closed stdin (or it failed): the session is over.
    InputEnded,
    /// The client stopped reading stdout: nothing more can reach it.
    OutputGone,
}

/// The server, and what the session with it holds.
struct Remote {
    client: HttpsClient<Full<Bytes>>,
    url: Uri,
    /// The URL as shown in messages: without its query, which may carry a key.
    shown: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Signing in as the MCP spec's authorization says; none when the person gave an
    /// `Authorization` header of their own.
    oauth: Option<Arc<OAuth>>,
    session: Mutex<Session>,
    /// The messages for the client, to the thread that writes them.
    to_client: std_mpsc::Sender<Vec<u8>>,
    /// The faults already told on stderr: each is said once, however often it happens.
    said: Mutex<HashSet<String>>,
}

#[derive(Default)]
struct Session {
    id: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
    initialize: Option<Value>,
    listening: bool,
}

/// Runs the proxy until the client closes stdin or stops reading; ends the session with a
/// `DELETE` and exits 0. `url` and the header list have been checked when this returns an error.
#[allow(clippy::too_many_arguments)]
pub fn run(
    url: &str,
    headers: &[String],
    reasons_log: Option<&Path>,
    reasons_in_meta: bool,
    position: ReasonPosition,
    otlp: Option<&str>,
    masking: Masking,
) -> anyhow::Result<ExitCode> {
    let uri = server_url(url)?;
    let headers = super::headers::parse(headers, |name| std::env::var(name).ok())?;
    let mut sink = ReasonSink::open(reasons_log, Via::Proxy, otlp, masking)?;
    let spans = sink.spans();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the proxy's runtime")?;

    let (client_half, server_half) = proxy_halves(position);
    let client_half = if reasons_in_meta {
        client_half.forward_reasons_in_meta()
    } else {
        client_half
    };
    let (events, mut from_client) = mpsc::unbounded_channel();
    let (to_client, for_client) = std_mpsc::channel();
    let writer = {
        let events = events.clone();
        thread::Builder::new()
            .name("to-client".to_owned())
            .spawn(move || {
                if write_to_client(for_client, server_half).is_err() {
                    let _ = events.send(FromClient::OutputGone);
                }
            })
            .context("cannot start a thread")?
    };
    {
        let to_client = to_client.clone();
        let mut client_half = client_half;
        thread::Builder::new()
            .name("from-client".to_owned())
            .spawn(move || {
                read_from_client(&mut client_half, &mut sink, &to_client, &events);
                let _ = events.send(FromClient::InputEnded);
            })
            .context("cannot start a thread")?;
    }

    let shown = shown_url(&uri);
    let client = crate::program::http::client(CONNECT_TIMEOUT);
    let oauth = OAuth::unless_given(client.clone(), uri.clone(), shown.clone(), &headers);
    let remote = Arc::new(Remote {
        client,
        url: uri,
        shown,
        headers,
        oauth,
        session: Mutex::new(Session::default()),
        to_client,
        said: Mutex::new(HashSet::new()),
    });
    runtime.block_on(async {
        let mut posts = JoinSet::new();
        // The answer to `initialize` gives the session id everything after it needs: what the
        // client sends meanwhile is held until it has come, while the client's leaving is
        // still noticed at once.
        let mut initializing: Option<tokio::task::JoinHandle<()>> = None;
        let mut held = Vec::new();
        let output_gone = loop {
            let next = match &mut initializing {
                Some(initialize) => tokio::select! {
                    _ = initialize => None,
                    event = from_client.recv() => Some(event),
                },
                None => Some(from_client.recv().await),
            };
            let Some(event) = next else {
                initializing = None;
                for message in held.drain(..) {
                    posts.spawn(Arc::clone(&remote).post(message));
                }
                continue;
            };
            match event {
                None | Some(FromClient::InputEnded) => break false,
                Some(FromClient::OutputGone) => break true,
                Some(FromClient::Message(message)) if initializing.is_some() => {
                    held.push(message);
                }
                Some(FromClient::Message(message)) if message.initialize.is_some() => {
                    initializing = Some(tokio::spawn(Arc::clone(&remote).post(message)));
                }
                Some(FromClient::Message(message)) => {
                    posts.spawn(Arc::clone(&remote).post(message));
                }
            }
            while posts.try_join_next().is_some() {}
        };
        if !output_gone {
            let _ = tokio::time::timeout(GRACE, async {
                if let Some(initialize) = initializing {
                    let _ = initialize.await;
                }
                for message in held {
                    posts.spawn(Arc::clone(&remote).post(message));
                }
                while posts.join_next().await.is_some() {}
            })
            .await;
        }
        posts.abort_all();
        remote.close().await;
    });
    // The writer ends once every sender is gone: the tasks still holding one go with the runtime.
    runtime.shutdown_timeout(Duration::ZERO);
    drop(remote);
    let _ = writer.join();
    if let Some(spans) = spans {
        spans.flush();
    }
    Ok(ExitCode::Success)
}

/// `reasons proxy --url URL --sign-out`: deletes the tokens a sign-in kept for the server and
/// says which file that was, or that there was none.
pub fn sign_out(url: &str, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let server = server_url(url)?;
    let shown = shown_url(&server);
    match super::oauth::sign_out(&server)? {
        (file, true) => writeln!(out, "Signed out of {shown}: removed {}", file.display())?,
        (file, false) => writeln!(
            out,
            "No sign-in kept for {shown}: {} does not exist",
            file.display()
        )?,
    }
    Ok(ExitCode::Success)
}

/// The remote server's URL, checked: http:// or https://, with a host.
pub(super) fn server_url(url: &str) -> anyhow::Result<Uri> {
    let uri: Uri = url
        .parse()
        .with_context(|| format!("--url {url}: not a URL"))?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.host().is_some() => Ok(uri),
        _ => anyhow::bail!("--url {url}: expected an http:// or https:// URL"),
    }
}

/// Reads the client's lines, passes each through the layer, reports the reasons taken, and
/// hands each message on; a line that is not JSON is answered with a parse error here.
fn read_from_client(
    layer: &mut ClientToServer,
    sink: &mut ReasonSink,
    to_client: &std_mpsc::Sender<Vec<u8>>,
    events: &mpsc::UnboundedSender<FromClient>,
) {
    let mut input = BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let out = layer.line(&line);
        for reason in &out.reasons {
            // A log that cannot be written must not break the client's session.
            sink.report_or_say_once(reason);
        }
        let body = out.bytes.trim_ascii_end();
        match outgoing(body) {
            Some(message) => {
                if events.send(FromClient::Message(message)).is_err() {
                    return;
                }
            }
            None => {
                crate::program::messages::message!(
                    "proxy: a line from the client is not JSON; answered with a parse error"
                );
                let error = error_message(&Value::Null, -32700, "Parse error: not JSON");
                if to_client.send(error).is_err() {
                    return;
                }
            }
        }
    }
}

/// Writes each message to stdout as one line, through the layer's server→client half (which
/// augments tool listings), flushing when no other is waiting. Ends when every sender is gone,
/// or with the error when the client stops reading.
fn write_to_client(
    messages: std_mpsc::Receiver<Vec<u8>>,
    mut layer: ServerToClient,
) -> io::Result<()> {
    let mut output = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    while let Ok(mut message) = messages.recv() {
        if message.last() != Some(&b'\n') {
            message.push(b'\n');
        }
        let out = layer.line(&message);
        output.write_all(&out.bytes)?;
        if let Ok(mut message) = messages.try_recv() {
            // More is ready: written in the same flush.
            loop {
                if message.last() != Some(&b'\n') {
                    message.push(b'\n');
                }
                output.write_all(&layer.line(&message).bytes)?;
                match messages.try_recv() {
                    Ok(next) => message = next,
                    Err(_) => break,
                }
            }
        }
        output.flush()?;
    }
    output.flush()
}

/// The URL without its query or user information, which may carry a credential.
pub(super) fn shown_url(url: &Uri) -> String {
    let scheme = url.scheme_str().unwrap_or("http");
    let host = url.host().unwrap_or_default();
    let port = url
        .port()
        .map(|port| format!(":{port}"))
        .unwrap_or_default();
    format!("{scheme}://{host}{port}{}", url.path())
}

/// Why an exchange failed, in words for the person and for the client's error answer.
type Cause = String;

impl Remote {
    /// POSTs one message and relays the answer; each request in it that the server did not
    /// answer gets an error answer naming the cause.
    async fn post(self: Arc<Self>, message: Outgoing) {
        if let Some(id) = &message.initialize {
            self.lock().initialize = Some(id.clone());
        }
        let mut waiting = message.requests.clone();
        let outcome = self.exchange(&message, &mut waiting).await;
        match outcome {
            Ok(()) if waiting.is_empty() => {
                if message.initialized {
                    self.listen();
                }
            }
            Ok(()) => {
                let cause = format!(
                    "{} ended its answer without a response to the request",
                    self.shown
                );
                self.fail(&waiting, &cause);
            }
            Err(cause) => self.fail(&waiting, &cause),
        }
    }

    /// Tells the fault on stderr (once) and answers each waiting request with it.
    fn fail(&self, waiting: &[Value], cause: &str) {
        self.say(cause);
        for id in waiting {
            let error = error_message(id, TRANSPORT_ERROR, &format!("reasons: proxy: {cause}"));
            let _ = self.to_client.send(error);
        }
    }

    fn say(&self, cause: &str) {
        let first = self
            .said
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(cause.to_owned());
        if first {
            crate::program::messages::message!("proxy: {cause}");
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn exchange(&self, message: &Outgoing, waiting: &mut Vec<Value>) -> Result<(), Cause> {
        let response = self
            .send(Method::POST, Some(message.body.clone()), None)
            .await?;
        self.keep_session_id(&response);
        let response = self.successful(response).await?;
        if response.status() == StatusCode::ACCEPTED {
            // A notification or a response, taken; whatever body comes with it says nothing.
            return Ok(());
        }
        match content_type(response.headers()).as_deref() {
            Some("text/event-stream") => {
                let mut events = EventReader::default();
                let read = self
                    .relay_events(response.into_body(), &mut events, waiting)
                    .await;
                self.resume(read, events, waiting).await
            }
            Some("application/json") => {
                let body = response
                    .into_body()
                    .collect()
                    .await
                    .map_err(|error| {
                        format!(
                            "{}: the answer broke off: {}",
                            self.shown,
                            error_chain(&error)
                        )
                    })?
                    .to_bytes();
                if !body.iter().all(u8::is_ascii_whitespace) {
                    self.relay(body.to_vec(), waiting);
                }
                Ok(())
            }
            // No answer in the body: the requests in the message are still owed one.
            _ => Ok(()),
        }
    }

    /// After an answer's stream ended (`read`): while requests still wait and the server gave
    /// event ids, asks it for the rest of the stream from the last one.
    async fn resume(
        &self,
        mut read: Result<(), Cause>,
        mut events: EventReader,
        waiting: &mut Vec<Value>,
    ) -> Result<(), Cause> {
        for _ in 0..RESUMPTIONS {
            if waiting.is_empty() {
                return Ok(());
            }
            let Some(last) = events.last_event_id().map(str::to_owned) else {
                break;
            };
            let pause = events
                .retry_ms()
                .map_or(RESUME_AFTER, Duration::from_millis);
            tokio::time::sleep(pause).await;
            let response = match self.send(Method::GET, None, Some(&last)).await {
                Ok(response) => response,
                Err(cause) => {
                    read = Err(cause);
                    continue;
                }
            };
            let response = match self.successful(response).await {
                Ok(response) => response,
                Err(cause) => {
                    read = Err(cause);
                    break;
                }
            };
            read = self
                .relay_events(response.into_body(), &mut events, waiting)
                .await;
        }
        read
    }

    /// Relays each event of a stream to the client, until it ends or breaks.
    async fn relay_events(
        &self,
        mut body: Incoming,
        events: &mut EventReader,
        waiting: &mut Vec<Value>,
    ) -> Result<(), Cause> {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|error| {
                format!(
                    "{}: the answer's stream broke off: {}",
                    self.shown,
                    error_chain(&error)
                )
            })?;
            if let Ok(data) = frame.into_data() {
                let mut messages = Vec::new();
                events.push(&data, |event| messages.push(event.data));
                for message in messages {
                    if !message.iter().all(u8::is_ascii_whitespace) {
                        self.relay(message, waiting);
                    }
                }
            }
        }
        Ok(())
    }

    /// Passes one message from the server to the client, noting the answers it holds.
    fn relay(&self, message: Vec<u8>, waiting: &mut Vec<Value>) {
        let message = one_line(message);
        if let Ok(parsed) = serde_json::from_slice::<Value>(&message) {
            let each: Vec<&Value> = match &parsed {
                Value::Array(batch) => batch.iter().collect(),
                single => vec![single],
            };
            for one in each {
                if one.get("method").is_some() {
                    continue;
                }
                let Some(id) = one.get("id") else { continue };
                waiting.retain(|waiting| waiting != id);
                let mut session = self.lock();
                if session.initialize.as_ref() == Some(id) {
                    session.initialize = None;
                    session.protocol_version = one
                        .pointer("/result/protocolVersion")
                        .and_then(Value::as_str)
                        .and_then(|version| HeaderValue::from_str(version).ok());
                }
            }
        }
        let _ = self.to_client.send(message);
    }

    /// Opens the server's own stream (a GET), once, for the requests and notifications it sends
    /// unasked; a server that offers none answers 405.
    fn listen(self: &Arc<Self>) {
        {
            let mut session = self.lock();
            if session.listening {
                return;
            }
            session.listening = true;
        }
        let remote = Arc::clone(self);
        tokio::spawn(async move {
            let mut events = EventReader::default();
            let mut failures = 0;
            while failures < RESUMPTIONS {
                let last = events.last_event_id().map(str::to_owned);
                let response = match remote.send(Method::GET, None, last.as_deref()).await {
                    Ok(response) => response,
                    Err(cause) => {
                        remote.say(&cause);
                        failures += 1;
                        tokio::time::sleep(RESUME_AFTER).await;
                        continue;
                    }
                };
                if response.status() == StatusCode::METHOD_NOT_ALLOWED {
                    return;
                }
                let response = match remote.successful(response).await {
                    Ok(response) => response,
                    Err(cause) => {
                        remote.say(&format!("its own stream: {cause}"));
                        return;
                    }
                };
                match remote
                    .relay_events(response.into_body(), &mut events, &mut Vec::new())
                    .await
                {
                    // A server may end its stream when it likes: it is asked for again.
                    Ok(()) => failures = 0,
                    Err(_) => failures += 1,
                }
                let pause = events
                    .retry_ms()
                    .map_or(RESUME_AFTER, Duration::from_millis);
                tokio::time::sleep(pause).await;
            }
        });
    }

    /// Ends the session at the server, when it gave one.
    async fn close(&self) {
        if self.lock().id.is_none() {
            return;
        }
        // A server that does not let clients end sessions answers 405: nothing to say then.
        let _ = tokio::time::timeout(GRACE, self.send(Method::DELETE, None, None)).await;
    }

    /// One request to the server, signed in when it asks for that.
    async fn send(
        &self,
        method: Method,
        body: Option<Bytes>,
        last_event_id: Option<&str>,
    ) -> Result<Response<Incoming>, Cause> {
        match &self.oauth {
            Some(oauth) => {
                oauth
                    .send(|bearer| {
                        self.send_once(method.clone(), body.clone(), last_event_id, bearer)
                    })
                    .await
            }
            None => self.send_once(method, body, last_event_id, None).await,
        }
    }

    /// One request to the server, with the session's headers, the token and the person's.
    async fn send_once(
        &self,
        method: Method,
        body: Option<Bytes>,
        last_event_id: Option<&str>,
        bearer: Option<HeaderValue>,
    ) -> Result<Response<Incoming>, Cause> {
        let mut request = Request::builder()
            .method(method.clone())
            .uri(self.url.clone());
        let headers = request.headers_mut().expect("a request being built");
        if method == Method::POST {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            headers.insert(
                ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            );
        } else if method == Method::GET {
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        }
        {
            let session = self.lock();
            if let Some(id) = &session.id {
                headers.insert(SESSION_ID, id.clone());
            }
            if let Some(version) = &session.protocol_version {
                headers.insert(PROTOCOL_VERSION, version.clone());
            }
        }
        if let Some(last) = last_event_id.and_then(|last| HeaderValue::from_str(last).ok()) {
            headers.insert(LAST_EVENT_ID, last);
        }
        if let Some(bearer) = bearer {
            headers.insert(AUTHORIZATION, bearer);
        }
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        let request = request
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|error| format!("{}: cannot make the request: {error}", self.shown))?;
        self.client
            .request(request)
            .await
            .map_err(|error| format!("cannot reach {}: {}", self.shown, error_chain(&error)))
    }

    /// The session id the server gave, kept for every request after.
    fn keep_session_id(&self, response: &Response<Incoming>) {
        if let Some(id) = response.headers().get(SESSION_ID) {
            let mut session = self.lock();
            if session.id.is_none() {
                session.id = Some(id.clone());
            }
        }
    }

    /// The response when it is a success; otherwise what the server said, as a cause.
    async fn successful(&self, response: Response<Incoming>) -> Result<Response<Incoming>, Cause> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if status == StatusCode::UNAUTHORIZED {
            let asks = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|value| value.to_str().ok())
                .map(|value| format!(" (WWW-Authenticate: {value})"))
                .unwrap_or_default();
            return Err(format!(
                "{} answered 401 Unauthorized: it wants authorization{asks}; \
                 give it with --header 'Authorization: Bearer …' (a ${{VARIABLE}} in the value \
                 is taken from the environment)",
                self.shown
            ));
        }
        // A little of the body says why, in the server's words.
        let body = tokio::time::timeout(GRACE, response.into_body().collect())
            .await
            .ok()
            .and_then(Result::ok)
            .map(|body| body.to_bytes())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&body[..body.len().min(300)]);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let said = if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        };
        Err(format!("{} answered {status}{said}", self.shown))
    }
}

/// The media type of a message, without its parameters, in lower case.
pub(super) fn content_type(headers: &hyper::HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    Some(
        value
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_url_leaves_out_the_query_and_user() {
        let url: Uri = "https://user:pw@example.com:8443/mcp?key=secret"
            .parse()
            .expect("a URL");
        assert_eq!(shown_url(&url), "https://example.com:8443/mcp");
    }
}
