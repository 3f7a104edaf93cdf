//! A real language model on loopback: llama.cpp's OpenAI-compatible server (the `xllamacpp`
//! wheel) serving Qwen2.5-Coder-0.5B-Instruct, both installed by `.ci/real-parts`; and a relay in
//! front of it that keeps what the gateway sent the model and what the model answered.
//!
//! The machine's two cores are shared with other work: one server runs at a time (a second test
//! waits for the first to stop it), on one thread, with a small context.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use crate::util::real_parts::{part, LLAMA_PYTHON, QWEN_0_5B};
use crate::util::root;
use crate::util::upstream::{listening_address, request_within, Answer, Upstream};

/// Tokens of context: a few tools and two turns fit, and the cache stays small.
const CONTEXT: u32 = 4096;
/// Threads for prompt and generation. One, though the machine has two cores: they are shared with
/// other work, and llama.cpp's threads wait for each other at every step, so that one descheduled
/// thread stalls both. Measured beside six builds (load 12): a 32-token call took 111 s on two
/// threads, 16–23 s on one (0.3 against 3–5 tokens a second).
const THREADS: u32 = 1;
/// Loading the 0.5B model takes a few seconds; on a loaded machine, many more.
const LOAD_LIMIT: Duration = Duration::from_secs(180);
/// One answer of a few dozen tokens takes 1–3 s; beside six builds, up to a minute.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(240);

/// Held by the running server: two at once would halve each one's cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// llama.cpp's server with a model loaded; stopped when dropped.
pub struct LlamaServer {
    child: Child,
    pub address: std::net::SocketAddr,
    /// What the server wrote on stderr (its log), kept for a failing test to show.
    log: Arc<Mutex<String>>,
    _turn: MutexGuard<'static, ()>,
}

impl LlamaServer {
    /// The server with Qwen2.5-Coder-0.5B-Instruct (Q4_K_M).
    #[track_caller]
    pub fn start() -> LlamaServer {
        LlamaServer::start_with(&part(QWEN_0_5B))
    }

    /// The server with the GGUF model at `model`.
    #[track_caller]
    pub fn start_with(model: &std::path::Path) -> LlamaServer {
        let turn = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut command = Command::new(part(LLAMA_PYTHON));
        crate::util::environment::clear(&mut command)
            .arg(root().join("tests/it/python/llama_server.py"))
            .arg(model)
            .args([CONTEXT.to_string(), THREADS.to_string()])
            .process_group(0)
            // The server serves until this pipe closes: it never outlives the test.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|error| panic!("{command:?} does not start: {error}"));
        let log = Arc::new(Mutex::new(String::new()));
        {
            let log = Arc::clone(&log);
            let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
            thread::spawn(move || {
                let mut line = String::new();
                while stderr.read_line(&mut line).is_ok_and(|n| n > 0) {
                    log.lock().unwrap().push_str(&line);
                    line.clear();
                }
            });
        }
        let (said, listening) = mpsc::channel();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        thread::spawn(move || {
            let mut line = String::new();
            let _ = stdout.read_line(&mut line);
            let _ = said.send(line);
            // Whatever else it prints is read, so that it never blocks on a full pipe.
            let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        });
        let line = listening.recv_timeout(LOAD_LIMIT).unwrap_or_default();
        let mut server = LlamaServer {
            child,
            address: "127.0.0.1:0".parse().unwrap(),
            log,
            _turn: turn,
        };
        match listening_address(line.trim_end()) {
            Some(address) => server.address = address,
            None => panic!(
                "llama.cpp's server did not start ({line:?}):\n{}",
                server.log_tail()
            ),
        }
        server
    }

    /// The end of the server's log, for a failing test to show.
    pub fn log_tail(&self) -> String {
        let log = self.log.lock().unwrap();
        let start = log.len().saturating_sub(4000);
        let start = (start..log.len())
            .find(|&at| log.is_char_boundary(at))
            .unwrap_or(log.len());
        log[start..].to_owned()
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One exchange the relay passed on: what the gateway asked the model, and what it answered.
#[derive(Clone)]
pub struct Exchange {
    pub request: serde_json::Value,
    pub reply_status: u16,
    pub reply_body: Vec<u8>,
}

/// A relay between the gateway and the model that keeps every exchange; each answer goes back as
/// the model wrote it (a stream as its own events, byte for byte).
pub struct Relay {
    pub upstream: Upstream,
    exchanges: Arc<Mutex<Vec<Exchange>>>,
}

impl Relay {
    /// Passes every request on as the gateway sent it.
    pub fn start(model: &LlamaServer) -> Relay {
        Relay::start_with(model, false)
    }

    /// Passes every request on, but starts the model's answer to the user with Qwen's
    /// `<tool_call>` tag (`CALL_STARTED`) on a turn whose last message is the user's.
    ///
    /// Only for a client that cannot send that start itself (an agent): the 0.5B model answers
    /// most requests with the call as JSON in its text, which no agent runs, unless its turn is
    /// begun with the tag (doc/fill-rate.md; llama.cpp continues a final assistant message and
    /// parses the call out of it). The call, its arguments and its reason are still the model's
    /// own; the turn after a tool's result is passed on untouched. The exchanges keep the
    /// requests as the gateway sent them.
    pub fn start_starting_calls(model: &LlamaServer) -> Relay {
        Relay::start_with(model, true)
    }

    fn start_with(model: &LlamaServer, start_calls: bool) -> Relay {
        let exchanges: Arc<Mutex<Vec<Exchange>>> = Arc::default();
        let address = model.address;
        let kept = Arc::clone(&exchanges);
        let upstream = Upstream::start(move |received| {
            let request: serde_json::Value =
                serde_json::from_slice(&received.body).unwrap_or_default();
            let body = match start_calls {
                true => call_started(&request).map(|body| body.to_string().into_bytes()),
                false => None,
            };
            let reply = request_within(
                address,
                &received.method,
                &received.path,
                &[("content-type", "application/json")],
                body.as_deref().unwrap_or(&received.body),
                ANSWER_LIMIT,
            );
            kept.lock().unwrap().push(Exchange {
                request,
                reply_status: reply.status,
                reply_body: reply.body.clone(),
            });
            let streamed = reply
                .header("content-type")
                .is_some_and(|kind| kind.starts_with("text/event-stream"));
            if streamed && reply.status == 200 {
                Answer::Events(events_of(&reply.body))
            } else {
                let body = serde_json::from_slice(&reply.body).unwrap_or_else(
                    |_| serde_json::json!({"error": String::from_utf8_lossy(&reply.body)}),
                );
                Answer::Json(reply.status, body)
            }
        });
        Relay {
            upstream,
            exchanges,
        }
    }

    pub fn url(&self) -> String {
        self.upstream.url()
    }

    pub fn exchanges(&self) -> Vec<Exchange> {
        self.exchanges.lock().unwrap().clone()
    }
}

/// How Qwen's chat template begins a tool call, up to the tool's name.
pub const CALL_STARTED: &str = "<tool_call>\n{\"name\": \"";

/// `request` with the assistant's turn begun with `CALL_STARTED`, when its last message is the
/// user's; `None` otherwise.
fn call_started(request: &serde_json::Value) -> Option<serde_json::Value> {
    let messages = request["messages"].as_array()?;
    if messages.last()?["role"] != "user" {
        return None;
    }
    let mut request = request.clone();
    request["messages"]
        .as_array_mut()?
        .push(serde_json::json!({"role": "assistant", "content": CALL_STARTED}));
    Some(request)
}

/// A server-sent-event body split into its events, each with the blank line that ends it.
fn events_of(body: &[u8]) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let end = rest
            .windows(2)
            .position(|pair| pair == b"\n\n")
            .map_or(rest.len(), |at| at + 2);
        events.push(rest[..end].to_vec());
        rest = &rest[end..];
    }
    events
}

/// The tool calls a Chat Completions answer holds, plain or streamed, as `(id, name, arguments)`:
/// a stream's argument fragments are joined per index, as a client joins them.
pub fn chat_calls(status: u16, body: &[u8]) -> Vec<(String, String, String)> {
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(body));
    let text = String::from_utf8_lossy(body);
    let mut calls: Vec<(String, String, String)> = Vec::new();
    let mut add = |index: usize, call: &serde_json::Value| {
        if calls.len() <= index {
            calls.resize(index + 1, Default::default());
        }
        let slot = &mut calls[index];
        if let Some(id) = call["id"].as_str() {
            slot.0.push_str(id);
        }
        if let Some(name) = call["function"]["name"].as_str() {
            slot.1.push_str(name);
        }
        if let Some(arguments) = call["function"]["arguments"].as_str() {
            slot.2.push_str(arguments);
        }
    };
    if text.trim_start().starts_with('{') {
        let answer: serde_json::Value = serde_json::from_str(&text).expect("a JSON answer");
        let message = &answer["choices"][0]["message"];
        for (index, call) in message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            add(index, call);
        }
    } else {
        for data in text.lines().filter_map(|line| line.strip_prefix("data: ")) {
            if data == "[DONE]" {
                continue;
            }
            let chunk: serde_json::Value = serde_json::from_str(data).expect("JSON event data");
            for call in chunk["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                add(call["index"].as_u64().unwrap_or(0) as usize, call);
            }
        }
    }
    calls
}
