//! `reasons proxy --listen ADDR --url URL`: a remote server behind the HTTP face.
//!
//! Each request is relayed as it came (the session id the server gave, `MCP-Protocol-Version`,
//! `Last-Event-ID`, the client's own headers but this hop's), with the `--header`s; each answer
//! as it came, status and headers too: a JSON body as JSON, an event stream as one, event by
//! event. The server's session ids are the client's, each with a layer of its own; only the layer
//! changes what passes. A fault on the way (the server unreachable, an answer cut short) is each
//! waiting request's JSON-RPC error naming it.
//!
//! A client that sends no `Authorization` of its own has the proxy sign in for it, as `--url`
//! does (what `mcp-remote` does): a 401 that asks for OAuth is answered by the one sign-in of
//! [`OAuth`], shared by every session, its tokens kept where `--url` keeps them for the server,
//! and the request sent again with the token. A client that sends its own keeps it, and gets the
//! server's answers as they came, a 401 too.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_LENGTH, COOKIE,
    HOST, ORIGIN, REFERER,
};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode, Uri};
use serde_json::Value;

use super::{
    failed, full, lock, no_session, unknown_session, Answer, BoxError, Layers, Said, SessionLayer,
    GRACE, SESSION_ID,
};
use crate::program::commands::proxy::jsonrpc::{error_message, from_server, TRANSPORT_ERROR};
use crate::program::commands::proxy::oauth::OAuth;
use crate::program::commands::proxy::remote::{content_type, server_url, shown_url};
use crate::program::commands::proxy::sse::EventReader;

use crate::program::http::{self, error_chain, HttpsClient};

/// How long a connection to the server may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The remote server, and the layer of each session with it.
pub(in crate::program::commands::proxy) struct Relayed {
    client: HttpsClient<Full<Bytes>>,
    url: Uri,
    /// The URL as shown in messages: without its query, which may carry a key.
    shown: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Signing in for the clients that send no `Authorization`; none when the person gave one
    /// with `--header`.
    oauth: Option<Arc<OAuth>>,
    layers: Arc<Layers>,
    /// Each session's layer, by the id the server gave.
    sessions: Mutex<HashMap<String, Arc<SessionLayer>>>,
    /// The layer of a server that gives no session ids: one for every client.
    sessionless: Mutex<Option<Arc<SessionLayer>>>,
    said: Said,
}

impl Relayed {
    /// `url` and the headers checked, a `${VARIABLE}` in a header taken from the environment.
    pub(in crate::program::commands::proxy) fn new(
        url: &str,
        headers: &[String],
        layers: Arc<Layers>,
    ) -> anyhow::Result<Relayed> {
        let url = server_url(url)?;
        let headers = crate::program::commands::proxy::headers::parse(headers, |name| {
            std::env::var(name).ok()
        })?;
        let client = http::client(CONNECT_TIMEOUT);
        let shown = shown_url(&url);
        let oauth = OAuth::unless_given(client.clone(), url.clone(), shown.clone(), &headers);
        Ok(Relayed {
            client,
            shown,
            url,
            headers,
            oauth,
            layers,
            sessions: Mutex::new(HashMap::new()),
            sessionless: Mutex::new(None),
            said: Said::default(),
        })
    }

    pub(in crate::program::commands::proxy) fn shown(&self) -> &str {
        &self.shown
    }

    fn session(&self, id: &str) -> Option<Arc<SessionLayer>> {
        lock(&self.sessions).get(id).cloned()
    }

    fn sessionless(&self) -> Arc<SessionLayer> {
        Arc::clone(lock(&self.sessionless).get_or_insert_with(|| Arc::new(self.layers.session())))
    }

    pub(in crate::program::commands::proxy) async fn post(
        self: &Arc<Self>,
        parts: &Parts,
        message: crate::program::commands::proxy::jsonrpc::Outgoing,
        session: Option<&str>,
    ) -> Answer {
        let (layer, new) = match session {
            Some(id) => match self.session(id) {
                Some(layer) => (layer, false),
                None => return unknown_session(id),
            },
            None if message.initialize.is_some() => (Arc::new(self.layers.session()), true),
            None => (self.sessionless(), false),
        };
        // A new session of a client the proxy signs in for may try a sign-in that failed again;
        // one with its own Authorization neither needs that nor waits for a sign-in under way.
        if message.initialize.is_some() && !parts.headers.contains_key(AUTHORIZATION) {
            if let Some(oauth) = &self.oauth {
                oauth.start_over().await;
            }
        }
        let body = layer.client_message(&message.body);
        let response = match self
            .send(Method::POST, forwarded(&parts.headers), Bytes::from(body))
            .await
        {
            Ok(response) => response,
            Err(cause) => return failed(&message.requests, &cause),
        };
        if new {
            let given = response
                .headers()
                .get(SESSION_ID)
                .and_then(|id| id.to_str().ok());
            match given {
                Some(id) => {
                    lock(&self.sessions).insert(id.to_owned(), Arc::clone(&layer));
                }
                None if response.status().is_success() => {
                    *lock(&self.sessionless) = Some(Arc::clone(&layer));
                }
                None => {}
            }
        }
        self.forget_if_unknown(session, &response);
        self.answer(response, layer, message.requests).await
    }

    /// The server's own stream, for what it sends unasked (or the rest of an answer's, from its
    /// `Last-Event-ID`).
    pub(in crate::program::commands::proxy) async fn get(
        self: &Arc<Self>,
        parts: &Parts,
        session: Option<&str>,
    ) -> Answer {
        let layer = match session {
            Some(id) => match self.session(id) {
                Some(layer) => layer,
                None => return unknown_session(id),
            },
            None => self.sessionless(),
        };
        match self
            .send(Method::GET, forwarded(&parts.headers), Bytes::new())
            .await
        {
            Ok(response) => {
                self.forget_if_unknown(session, &response);
                self.answer(response, layer, Vec::new()).await
            }
            Err(cause) => failed(&[], &cause),
        }
    }

    /// Ends a session at the server; it is forgotten here once the server has (or never knew it).
    pub(in crate::program::commands::proxy) async fn delete(
        self: &Arc<Self>,
        parts: &Parts,
        session: Option<&str>,
    ) -> Answer {
        let Some(id) = session else {
            return no_session();
        };
        let Some(layer) = self.session(id) else {
            return unknown_session(id);
        };
        match self
            .send(Method::DELETE, forwarded(&parts.headers), Bytes::new())
            .await
        {
            Ok(response) => {
                let status = response.status();
                if status.is_success() || status == StatusCode::NOT_FOUND {
                    lock(&self.sessions).remove(id);
                }
                self.answer(response, layer, Vec::new()).await
            }
            Err(cause) => failed(&[], &cause),
        }
    }

    /// Ends every session still open at the server, within the grace period.
    pub(in crate::program::commands::proxy) async fn close_all(&self) {
        let ids: Vec<String> = lock(&self.sessions).drain().map(|(id, _)| id).collect();
        let _ = tokio::time::timeout(GRACE, async {
            for id in ids {
                let Ok(id) = HeaderValue::from_str(&id) else {
                    continue;
                };
                let mut headers = HeaderMap::new();
                headers.insert(SESSION_ID, id);
                // A server that does not let clients end sessions answers 405: nothing to do.
                let _ = self.send(Method::DELETE, headers, Bytes::new()).await;
            }
        })
        .await;
    }

    /// A 404 to a request in a session means the server no longer knows it: neither does the
    /// proxy then, and the client, told 404 too, starts a new one.
    fn forget_if_unknown(&self, session: Option<&str>, response: &Response<Incoming>) {
        if let Some(id) = session {
            if response.status() == StatusCode::NOT_FOUND {
                lock(&self.sessions).remove(id);
            }
        }
    }

    /// One request to the server, signed in for a client that sends no `Authorization` of its
    /// own; a fault is said once and returned as the cause.
    async fn send(
        &self,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response<Incoming>, String> {
        let oauth = match &self.oauth {
            Some(oauth) if !headers.contains_key(AUTHORIZATION) => oauth,
            _ => return self.send_once(method, headers, body).await,
        };
        let relayed = self;
        let (method, headers, body) = (&method, &headers, &body);
        oauth
            .send(move |bearer| {
                let mut headers = headers.clone();
                if let Some(bearer) = bearer {
                    headers.insert(AUTHORIZATION, bearer);
                }
                relayed.send_once(method.clone(), headers, body.clone())
            })
            .await
            .inspect_err(|cause| self.said.once(&format!("proxy: {cause}")))
    }

    /// One request to the server, with the `--header`s.
    async fn send_once(
        &self,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response<Incoming>, String> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = self.url.clone();
        *request.headers_mut() = headers;
        // The layer reads the answers: asked for as they are, not compressed.
        request
            .headers_mut()
            .insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        for (name, value) in &self.headers {
            request.headers_mut().insert(name.clone(), value.clone());
        }
        self.client.request(request).await.map_err(|error| {
            let cause = format!("cannot reach {}: {}", self.shown, error_chain(&error));
            self.said.once(&format!("proxy: {cause}"));
            cause
        })
    }

    /// The server's answer for the client, through the session's layer: an error status as it
    /// came, JSON read whole, an event stream event by event.
    async fn answer(
        self: &Arc<Self>,
        response: Response<Incoming>,
        layer: Arc<SessionLayer>,
        waiting: Vec<Value>,
    ) -> Answer {
        let (mut parts, body) = response.into_parts();
        http::remove_hop_by_hop(&mut parts.headers);
        if !parts.status.is_success() {
            return Response::from_parts(parts, body.map_err(Into::into).boxed());
        }
        match content_type(&parts.headers).as_deref() {
            Some("text/event-stream") => {
                parts.headers.remove(CONTENT_LENGTH);
                let events = RelayedEvents {
                    upstream: body,
                    events: EventReader::default(),
                    layer,
                    waiting,
                    relayed: Arc::clone(self),
                    ended: false,
                };
                Response::from_parts(parts, events.boxed())
            }
            Some("application/json") => {
                let body = match body.collect().await {
                    Ok(body) => body.to_bytes(),
                    Err(error) => {
                        let cause = format!(
                            "{}: the answer broke off: {}",
                            self.shown,
                            error_chain(&error)
                        );
                        self.said.once(&format!("proxy: {cause}"));
                        return failed(&waiting, &cause);
                    }
                };
                let body = layer.server_message(&body).into_owned();
                parts.headers.remove(CONTENT_LENGTH);
                Response::from_parts(parts, full(body))
            }
            _ => Response::from_parts(parts, body.map_err(Into::into).boxed()),
        }
    }
}

/// The client's headers that go on to the server: all but this hop's own (hop-by-hop, `Host`,
/// the length, which the layer may change), and what belongs to where the client runs
/// (`Origin`, `Referer`, `Cookie`: the server is another site).
fn forwarded(headers: &HeaderMap) -> HeaderMap {
    let mut headers = headers.clone();
    http::remove_hop_by_hop(&mut headers);
    for name in [
        HOST,
        CONTENT_LENGTH,
        ORIGIN,
        REFERER,
        COOKIE,
        ACCEPT_ENCODING,
    ] {
        headers.remove(name);
    }
    headers
}

/// A server's event stream on its way to the client, each event through the session's layer as
/// the client's connection asks for more. A stream that breaks off ends with an error event for
/// each request it still owed an answer.
struct RelayedEvents {
    upstream: Incoming,
    events: EventReader,
    layer: Arc<SessionLayer>,
    /// The ids of the requests whose answers are still to come on it.
    waiting: Vec<Value>,
    relayed: Arc<Relayed>,
    ended: bool,
}

impl RelayedEvents {
    fn relay(&mut self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let (layer, waiting) = (&self.layer, &mut self.waiting);
        self.events.push_all(data, |event| {
            if !event.has_data() {
                out.extend(event.written_with(&[]));
                return;
            }
            let message = layer.server_message(&event.data);
            let answered = from_server(&message).answers;
            waiting.retain(|id| !answered.contains(id));
            out.extend(event.written_with(&message));
        });
        out
    }

    /// An error event for each request still waiting, naming `cause`.
    fn fail(&mut self, cause: &str) -> Vec<u8> {
        self.relayed.said.once(&format!("proxy: {cause}"));
        let mut out = Vec::new();
        for id in self.waiting.drain(..) {
            let error = error_message(&id, TRANSPORT_ERROR, &format!("reasons: proxy: {cause}"));
            out.extend_from_slice(b"event: message\ndata: ");
            out.extend_from_slice(error.trim_ascii_end());
            out.extend_from_slice(b"\n\n");
        }
        out
    }
}

impl Body for RelayedEvents {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            let out = match ready!(Pin::new(&mut this.upstream).poll_frame(context)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => this.relay(&data),
                    Err(_) => continue,
                },
                Some(Err(error)) => {
                    this.ended = true;
                    let cause = format!(
                        "{}: the answer's stream broke off: {}",
                        this.relayed.shown,
                        error_chain(&error)
                    );
                    this.fail(&cause)
                }
                None => {
                    this.ended = true;
                    // With event ids the client can ask for the rest itself (GET with
                    // `Last-Event-ID`); without, nothing more can come.
                    if this.waiting.is_empty() || this.events.last_event_id().is_some() {
                        return Poll::Ready(None);
                    }
                    let cause = format!(
                        "{} ended its answer without a response to the request",
                        this.relayed.shown
                    );
                    this.fail(&cause)
                }
            };
            if !out.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))));
            }
        }
    }
}
