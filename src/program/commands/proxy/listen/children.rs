//! `reasons proxy --listen ADDR -- SERVER…`: a stdio server behind the HTTP face, one process a
//! session (as supergateway gives one): `initialize` starts it, `DELETE` or its own exit ends it.
//!
//! Each POSTed message is written to the process's stdin as one line. What it writes back is
//! matched to the POST waiting for it by JSON-RPC id, and answered as JSON or on that POST's event
//! stream. What it says meanwhile (progress, logging, its own requests) goes on the stream of the
//! request it is about (a progress notification names it by its token) or else of the oldest
//! request still open; with none open, on the client's GET stream, and with no GET stream either,
//! it is kept for the next one.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::io::{BufRead, BufReader, Write};
use std::pin::Pin;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;

use super::{
    error_answer, failed, full, json_answer, lock, no_session, takes_events, unknown_session,
    Answer, BoxError, Layers, Said, SessionLayer, GRACE, SESSION_ID,
};
use crate::program::commands::proxy::jsonrpc::{
    error_message, from_server, id_key, one_line, FromServer, Outgoing, TRANSPORT_ERROR,
};

/// How often to look whether a process has exited: the standard library cannot wait for a child
/// with a time limit.
const TICK: Duration = Duration::from_millis(10);

/// How many messages a stream may hold that its client has not read yet; beyond them the
/// process's output waits, as a pipe's writer does.
const STREAM_DEPTH: usize = 64;

/// How many lines may wait for the process to read them; beyond them the POSTs wait.
const INPUT_DEPTH: usize = 64;

/// How many messages the process sent unasked are kept while no GET stream is open for them.
const KEPT: usize = 1000;

/// The largest piece of an event stream written at once.
const FRAME: usize = 1 << 20;

/// The stdio server, and its processes, one a session.
pub(in crate::program::commands::proxy) struct Children {
    program: String,
    args: Vec<String>,
    layers: Arc<Layers>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    said: Said,
}

/// One session: its process, its layer, and where what the process says goes.
struct Session {
    id: String,
    layer: SessionLayer,
    /// The lines for the process, to the thread that writes them; taken when the session is
    /// ended, which closes its stdin once they are written.
    input: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    routes: Mutex<Routes>,
    process: Mutex<Child>,
    /// It is being ended on purpose (`DELETE`, the proxy stopping): its exit is no fault.
    ending: AtomicBool,
}

/// Where each message from the process goes.
#[derive(Default)]
struct Routes {
    /// The POSTs whose requests still wait for an answer, by number, oldest first.
    posts: BTreeMap<u64, Post>,
    next: u64,
    /// Each waiting request, by its id's key: its POST's number, and the id itself.
    requests: HashMap<String, (u64, Value)>,
    /// The progress tokens of the waiting requests of event-stream POSTs, by key.
    progress: HashMap<String, u64>,
    /// The client's GET stream, for what the process says unasked.
    listener: Option<mpsc::Sender<Vec<u8>>>,
    /// What the process said unasked while no stream was open, for the next GET stream.
    kept: VecDeque<Vec<u8>>,
    /// The process has ended: nothing more can be answered.
    ended: bool,
}

/// A POST waiting for its answers.
struct Post {
    stream: mpsc::Sender<Vec<u8>>,
    /// How many of its requests are not answered yet.
    waiting: usize,
    /// It is answered with an event stream, which takes what the process says meanwhile too.
    takes_others: bool,
    tokens: Vec<String>,
}

impl Routes {
    /// Where `message` goes: a stream to send it on, or `None` when it is kept for a GET stream
    /// (the flag then says whether an older one was dropped to make room) or answers nothing
    /// waited for.
    fn route(
        &mut self,
        about: &FromServer,
        message: Vec<u8>,
    ) -> Result<(mpsc::Sender<Vec<u8>>, Vec<u8>), bool> {
        if !about.answers.is_empty() {
            let keys: Vec<String> = about.answers.iter().map(id_key).collect();
            let Some(number) = keys
                .iter()
                .find_map(|key| self.requests.get(key).map(|(number, _)| *number))
            else {
                // Its POST is gone (the client went away): nobody to give it to.
                return Err(false);
            };
            let mut answered = 0;
            for key in &keys {
                if self
                    .requests
                    .get(key)
                    .is_some_and(|(waiting_in, _)| *waiting_in == number)
                {
                    self.requests.remove(key);
                    answered += 1;
                }
            }
            let Some(post) = self.posts.get_mut(&number) else {
                return Err(false);
            };
            post.waiting = post.waiting.saturating_sub(answered);
            let stream = post.stream.clone();
            if post.waiting == 0 {
                self.close(number);
            }
            return Ok((stream, message));
        }
        let about_request = about
            .progress_token
            .as_ref()
            .and_then(|token| self.progress.get(&id_key(token)))
            .and_then(|number| self.posts.get(number));
        let open = about_request.or_else(|| self.posts.values().find(|post| post.takes_others));
        if let Some(post) = open {
            return Ok((post.stream.clone(), message));
        }
        if let Some(listener) = &self.listener {
            return Ok((listener.clone(), message));
        }
        let dropped = self.kept.len() >= KEPT;
        if dropped {
            self.kept.pop_front();
        }
        self.kept.push_back(message);
        Err(dropped)
    }

    /// Forgets a POST: its requests are no longer waited for.
    fn close(&mut self, number: u64) {
        if let Some(post) = self.posts.remove(&number) {
            for token in post.tokens {
                if self.progress.get(&token) == Some(&number) {
                    self.progress.remove(&token);
                }
            }
        }
        self.requests
            .retain(|_, (waiting_in, _)| *waiting_in != number);
    }

    /// Forgets the streams whose client has gone.
    fn forget(&mut self, stream: &mpsc::Sender<Vec<u8>>) {
        if self
            .listener
            .as_ref()
            .is_some_and(|listener| listener.same_channel(stream))
        {
            self.listener = None;
        }
        let gone: Vec<u64> = self
            .posts
            .iter()
            .filter(|(_, post)| post.stream.same_channel(stream))
            .map(|(number, _)| *number)
            .collect();
        for number in gone {
            self.close(number);
        }
    }
}

impl Children {
    pub(in crate::program::commands::proxy) fn new(
        server: &[String],
        layers: Arc<Layers>,
    ) -> anyhow::Result<Children> {
        let (program, args) = server
            .split_first()
            .ok_or_else(|| anyhow::anyhow!("no server to run"))?;
        Ok(Children {
            program: program.clone(),
            args: args.to_vec(),
            layers,
            sessions: Mutex::new(HashMap::new()),
            said: Said::default(),
        })
    }

    /// The server as messages name it.
    pub(in crate::program::commands::proxy) fn shown(&self) -> &str {
        &self.program
    }

    fn find(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.sessions).get(id).cloned()
    }

    pub(in crate::program::commands::proxy) async fn post(
        self: &Arc<Self>,
        parts: &Parts,
        message: Outgoing,
        session: Option<&str>,
    ) -> Answer {
        let (session, started) = match session {
            Some(id) => match self.find(id) {
                Some(session) => (session, false),
                None => return unknown_session(id),
            },
            None if message.initialize.is_some() => match self.start() {
                Ok(session) => (session, true),
                Err(cause) => {
                    self.said.once(&format!("proxy: {cause}"));
                    return failed(&message.requests, &cause);
                }
            },
            None => return no_session(),
        };
        let events = takes_events(parts);
        let waiting = if message.requests.is_empty() {
            None
        } else {
            match session.expect(&message, events) {
                Some(waiting) => Some(waiting),
                None => return failed(&message.requests, &self.gone()),
            }
        };
        let mut line = session
            .layer
            .client_message(&one_line(message.body.to_vec()));
        line.push(b'\n');
        let input = lock(&session.input).clone();
        let written = match input {
            Some(input) => input.send(line).await.is_ok(),
            None => false,
        };
        if !written {
            if let Some((number, _)) = &waiting {
                lock(&session.routes).close(*number);
            }
            return failed(&message.requests, &self.gone());
        }
        let mut answer = match waiting {
            None => {
                let mut answer = Response::new(full(Bytes::new()));
                *answer.status_mut() = StatusCode::ACCEPTED;
                answer
            }
            Some((_, stream)) if events => event_stream(VecDeque::new(), stream),
            Some((_, mut stream)) => {
                let mut answers = Vec::new();
                while let Some(answer) = stream.recv().await {
                    answers.push(answer);
                }
                match answers.len() {
                    0 => return failed(&message.requests, &self.gone()),
                    1 => json_answer(StatusCode::OK, answers.remove(0)),
                    _ => json_answer(StatusCode::OK, json_array(&answers)),
                }
            }
        };
        if started {
            if let Ok(id) = HeaderValue::from_str(&session.id) {
                answer.headers_mut().insert(SESSION_ID, id);
            }
        }
        answer
    }

    /// The GET stream: what the process says unasked, what it said while none was open first.
    /// A new one takes the place of the one before.
    pub(in crate::program::commands::proxy) fn get(
        self: &Arc<Self>,
        parts: &Parts,
        session: Option<&str>,
    ) -> Answer {
        if !takes_events(parts) {
            return error_answer(
                StatusCode::NOT_ACCEPTABLE,
                &Value::Null,
                "the GET stream is text/event-stream, which the request does not accept",
            );
        }
        let Some(id) = session else {
            return no_session();
        };
        let Some(session) = self.find(id) else {
            return unknown_session(id);
        };
        let (listener, stream) = mpsc::channel(STREAM_DEPTH);
        let kept = {
            let mut routes = lock(&session.routes);
            if routes.ended {
                return unknown_session(id);
            }
            routes.listener = Some(listener);
            std::mem::take(&mut routes.kept)
        };
        event_stream(kept, stream)
    }

    /// Ends a session: the process's stdin closed, and the process killed if it has not exited
    /// 2 seconds later.
    pub(in crate::program::commands::proxy) fn delete(
        self: &Arc<Self>,
        session: Option<&str>,
    ) -> Answer {
        let Some(id) = session else {
            return no_session();
        };
        let Some(session) = lock(&self.sessions).remove(id) else {
            return unknown_session(id);
        };
        session.close();
        let _ = thread::Builder::new()
            .name("end-session".to_owned())
            .spawn(move || session.wait_until(Instant::now() + GRACE));
        Response::new(full(Bytes::new()))
    }

    /// Ends every session, as `DELETE` does, and waits for their processes.
    pub(in crate::program::commands::proxy) fn close_all(&self) {
        let sessions: Vec<Arc<Session>> = lock(&self.sessions)
            .drain()
            .map(|(_, session)| session)
            .collect();
        for session in &sessions {
            session.close();
        }
        let deadline = Instant::now() + GRACE;
        for session in &sessions {
            session.wait_until(deadline);
        }
    }

    fn gone(&self) -> String {
        format!("{} is no longer running for this session", self.program)
    }

    /// Starts a process for a new session, with a thread to write to it and one to read it.
    fn start(self: &Arc<Self>) -> Result<Arc<Session>, String> {
        let mut process = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", self.program))?;
        let (Some(stdin), Some(stdout)) = (process.stdin.take(), process.stdout.take()) else {
            let _ = process.kill();
            return Err(format!("cannot talk to {}", self.program));
        };
        let (input, lines) = mpsc::channel(INPUT_DEPTH);
        let session = Arc::new(Session {
            id: new_session_id(),
            layer: self.layers.session(),
            input: Mutex::new(Some(input)),
            routes: Mutex::new(Routes::default()),
            process: Mutex::new(process),
            ending: AtomicBool::new(false),
        });
        let started = thread::Builder::new()
            .name("to-server".to_owned())
            .spawn(move || write_input(stdin, lines))
            .and_then(|_| {
                let children = Arc::clone(self);
                let reading = Arc::clone(&session);
                thread::Builder::new()
                    .name("from-server".to_owned())
                    .spawn(move || children.read_output(&reading, stdout))
            });
        if let Err(error) = started {
            let _ = lock(&session.process).kill();
            return Err(format!("cannot start a thread: {error}"));
        }
        lock(&self.sessions).insert(session.id.clone(), Arc::clone(&session));
        Ok(session)
    }

    /// Reads the process's output until it ends, passing each line through the layer to where
    /// it goes; then ends the session.
    fn read_output(&self, session: &Arc<Session>, stdout: ChildStdout) {
        let mut output = BufReader::with_capacity(1 << 16, stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            match output.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let message = session
                .layer
                .server_message(&line)
                .trim_ascii_end()
                .to_vec();
            if session.deliver(message) {
                self.said.once(&format!(
                    "proxy: {} said more than {KEPT} messages while no client stream was open \
                     for them; the oldest were dropped",
                    self.program
                ));
            }
        }
        let status = session.wait_until(Instant::now() + GRACE);
        self.end(session, status);
    }

    /// After the process ended: the session forgotten, each request still waiting answered with
    /// an error naming why, every stream ended.
    fn end(&self, session: &Arc<Session>, status: Option<ExitStatus>) {
        {
            let mut sessions = lock(&self.sessions);
            if sessions
                .get(&session.id)
                .is_some_and(|known| Arc::ptr_eq(known, session))
            {
                sessions.remove(&session.id);
            }
        }
        let cause = match status {
            Some(status) => format!(
                "{} exited with status {}",
                self.program,
                crate::program::commands::proxy::exit_code(status)
            ),
            None => format!("{} closed its output", self.program),
        };
        if !session.ending.load(Ordering::SeqCst) {
            self.said
                .once(&format!("proxy: session {}: {cause}", session.id));
        }
        let owed: Vec<(mpsc::Sender<Vec<u8>>, Vec<u8>)> = {
            let mut routes = lock(&session.routes);
            routes.ended = true;
            routes.listener = None;
            let requests = std::mem::take(&mut routes.requests);
            let owed = requests
                .into_values()
                .filter_map(|(number, id)| {
                    let post = routes.posts.get(&number)?;
                    let error =
                        error_message(&id, TRANSPORT_ERROR, &format!("reasons: proxy: {cause}"));
                    Some((post.stream.clone(), error.trim_ascii_end().to_vec()))
                })
                .collect();
            routes.posts.clear();
            routes.progress.clear();
            owed
        };
        for (stream, error) in owed {
            let _ = stream.blocking_send(error);
        }
    }
}

impl Session {
    /// Notes what a POST waits for; `None` when the process has already ended.
    fn expect(&self, message: &Outgoing, events: bool) -> Option<(u64, mpsc::Receiver<Vec<u8>>)> {
        let mut routes = lock(&self.routes);
        if routes.ended {
            return None;
        }
        let (stream, receiver) = mpsc::channel(STREAM_DEPTH);
        let number = routes.next;
        routes.next += 1;
        for id in &message.requests {
            routes.requests.insert(id_key(id), (number, id.clone()));
        }
        // A JSON answer holds answers only: what the process says meanwhile goes elsewhere.
        let tokens: Vec<String> = if events {
            message.progress_tokens.iter().map(id_key).collect()
        } else {
            Vec::new()
        };
        for token in &tokens {
            routes.progress.insert(token.clone(), number);
        }
        routes.posts.insert(
            number,
            Post {
                stream,
                waiting: message.requests.len(),
                takes_others: events,
                tokens,
            },
        );
        Some((number, receiver))
    }

    /// Sends one message from the process where it goes; a stream whose client has gone is
    /// forgotten and the message goes to the next place (an answer has none). Whether a kept
    /// message had to be dropped to make room.
    fn deliver(&self, mut message: Vec<u8>) -> bool {
        let about = from_server(&message);
        loop {
            let routed = lock(&self.routes).route(&about, message);
            let (stream, routed) = match routed {
                Ok(routed) => routed,
                Err(dropped) => return dropped,
            };
            match stream.blocking_send(routed) {
                Ok(()) => return false,
                Err(mpsc::error::SendError(back)) => {
                    lock(&self.routes).forget(&stream);
                    if !about.answers.is_empty() {
                        return false;
                    }
                    message = back;
                }
            }
        }
    }

    /// Ends the session on purpose: the process's stdin is closed once what is queued for it is
    /// written.
    fn close(&self) {
        self.ending.store(true, Ordering::SeqCst);
        lock(&self.input).take();
    }

    /// Waits for the process to exit until `deadline`, then kills it; its status, when it can
    /// be had.
    fn wait_until(&self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            match lock(&self.process).try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => {}
                Err(_) => return None,
            }
            if Instant::now() >= deadline {
                let mut process = lock(&self.process);
                // It may have exited in the meantime: then there is nothing to kill.
                let _ = process.kill();
                return process.wait().ok();
            }
            thread::sleep(TICK);
        }
    }
}

/// Writes the lines for the process until the session is ended or the process stops reading;
/// returning drops its stdin, which is how the process learns the session is over.
fn write_input(mut stdin: ChildStdin, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.blocking_recv() {
        if stdin.write_all(&line).is_err() {
            return;
        }
    }
}

/// A session id no one can guess: 128 bits from SipHash under the standard library's random
/// keys (drawn from the system's randomness), over a counter and the time.
fn new_session_id() -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let high = RandomState::new().hash_one((count, now, 0u8));
    let low = RandomState::new().hash_one((count, now, 1u8));
    format!("{high:016x}{low:016x}")
}

/// Several JSON texts as one array.
fn json_array(texts: &[Vec<u8>]) -> Vec<u8> {
    let mut array = b"[".to_vec();
    for (n, text) in texts.iter().enumerate() {
        if n > 0 {
            array.push(b',');
        }
        array.extend_from_slice(text);
    }
    array.push(b']');
    array
}

/// An event stream of messages: `kept` first, then each from `stream` as it comes, until every
/// sender is gone.
fn event_stream(kept: VecDeque<Vec<u8>>, stream: mpsc::Receiver<Vec<u8>>) -> Answer {
    let mut answer = Response::new(MessagesBody { kept, stream }.boxed());
    let headers = answer.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    answer
}

struct MessagesBody {
    kept: VecDeque<Vec<u8>>,
    stream: mpsc::Receiver<Vec<u8>>,
}

impl Body for MessagesBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        let mut events = Vec::new();
        // Everything ready goes in one write.
        while events.len() < FRAME {
            let message = match this.kept.pop_front() {
                Some(message) => message,
                None => match this.stream.poll_recv(context) {
                    Poll::Ready(Some(message)) => message,
                    Poll::Ready(None) if events.is_empty() => return Poll::Ready(None),
                    Poll::Ready(None) | Poll::Pending => break,
                },
            };
            events.extend_from_slice(b"event: message\ndata: ");
            events.extend_from_slice(&message);
            events.extend_from_slice(b"\n\n");
        }
        if events.is_empty() {
            Poll::Pending
        } else {
            Poll::Ready(Some(Ok(Frame::data(Bytes::from(events)))))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn post(routes: &mut Routes, ids: &[Value], takes_others: bool) -> mpsc::Receiver<Vec<u8>> {
        let (stream, receiver) = mpsc::channel(8);
        let number = routes.next;
        routes.next += 1;
        for id in ids {
            routes.requests.insert(id_key(id), (number, id.clone()));
        }
        routes.posts.insert(
            number,
            Post {
                stream,
                waiting: ids.len(),
                takes_others,
                tokens: Vec::new(),
            },
        );
        receiver
    }

    fn route(routes: &mut Routes, message: &Value) -> Result<Vec<u8>, bool> {
        let bytes = message.to_string().into_bytes();
        let (stream, bytes) = routes.route(&from_server(&bytes), bytes)?;
        stream.try_send(bytes.clone()).expect("room");
        Ok(bytes)
    }

    #[test]
    fn an_answer_goes_to_its_post_and_the_last_one_ends_it() {
        let mut routes = Routes::default();
        let mut first = post(&mut routes, &[json!(1)], true);
        let mut second = post(&mut routes, &[json!("1")], false);
        route(
            &mut routes,
            &json!({"jsonrpc": "2.0", "id": "1", "result": {}}),
        )
        .expect("routed");
        assert!(second.try_recv().is_ok(), "\"1\" is not 1");
        assert!(first.try_recv().is_err());
        assert_eq!(routes.posts.len(), 1, "the answered POST is done");
        assert_eq!(
            route(
                &mut routes,
                &json!({"jsonrpc": "2.0", "id": 9, "result": {}})
            ),
            Err(false),
            "an answer nobody waits for is dropped"
        );
    }

    #[test]
    fn what_the_server_says_meanwhile_goes_on_the_oldest_open_stream_else_the_get_else_is_kept() {
        let mut routes = Routes::default();
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
        assert_eq!(route(&mut routes, &log), Err(false), "kept");
        let (listener, mut listening) = mpsc::channel(8);
        routes.listener = Some(listener);
        route(&mut routes, &log).expect("to the GET stream");
        assert!(listening.try_recv().is_ok());
        let _json = post(&mut routes, &[json!(1)], false);
        let mut open = post(&mut routes, &[json!(2)], true);
        route(&mut routes, &log).expect("to the open event stream");
        assert!(open.try_recv().is_ok(), "a JSON answer takes answers only");
        assert_eq!(routes.kept.len(), 1);
        for _ in routes.kept.len()..KEPT {
            routes.kept.push_back(Vec::new());
        }
        routes.listener = None;
        routes.posts.clear();
        assert_eq!(route(&mut routes, &log), Err(true), "the oldest dropped");
        assert_eq!(routes.kept.len(), KEPT);
    }

    #[test]
    fn progress_goes_with_the_request_it_names() {
        let mut routes = Routes::default();
        let _older = post(&mut routes, &[json!(1)], true);
        let mut named = post(&mut routes, &[json!(2)], true);
        routes.progress.insert(id_key(&json!("t")), 1);
        route(
            &mut routes,
            &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "t", "progress": 1}}),
        )
        .expect("routed");
        assert!(named.try_recv().is_ok());
    }

    #[test]
    fn session_ids_differ_and_are_long() {
        let (one, two) = (new_session_id(), new_session_id());
        assert_ne!(one, two);
        assert_eq!(one.len(), 32);
    }
}
