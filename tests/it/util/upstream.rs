//! A scripted model API on loopback, for the gateway's tests: it records every request it gets
//! and answers each from a script, like the Messages API does (plain JSON, or server-sent events
//! when the request asks for a stream). Also a small HTTP/1.1 client to talk to either.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

/// One request as the upstream received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header names lower-cased, in the order they came.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find_map(|(key, value)| (key == name).then_some(value.as_str()))
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON request body")
    }
}

/// What the upstream does with one request.
pub enum Answer {
    /// A complete answer with this status and JSON body.
    Json(u16, Value),
    /// A stream of server-sent events, each written (and flushed) on its own.
    Events(Vec<Vec<u8>>),
    /// The same, one event every so often, as a model writes them while it samples (the
    /// benchmark's).
    #[allow(dead_code)]
    Paced(Vec<Vec<u8>>, Duration),
    /// The first events, then the rest once the test says so: what was sent must reach the
    /// client while the upstream is still waiting.
    Gated(Vec<Vec<u8>>, std::sync::mpsc::Receiver<()>, Vec<Vec<u8>>),
    /// These bytes as the whole answer, headers included, and the connection closed.
    Raw(Vec<u8>),
    /// Stream these events, then drop the connection without ending the stream.
    CutAfter(Vec<Vec<u8>>),
    /// The first `at` bytes of this stream, then the fault: a stream of the faults' suite.
    Faulty(Vec<u8>, usize, Fault),
}

/// How a [`Answer::Faulty`] stream breaks at its byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The connection closes mid-body (chunked): the HTTP layer sees the body fail.
    Close,
    /// The connection is reset (linger 0: a TCP RST).
    Reset,
    /// The chunked body is ended as it should be: a clean end, without the API's own.
    CleanEnd,
    /// The body said its whole `content-length`, and the connection closes short of it.
    ShortLength,
    /// The connection closes, the body delimited by the close (no length, not chunked): a cut
    /// that looks like an end.
    CloseDelimited,
    /// Nothing more is sent, for this long, then the connection closes.
    Stall(Duration),
}

type Script = dyn Fn(&Received) -> Answer + Send + Sync;

/// The scripted upstream. It stops when dropped.
pub struct Upstream {
    pub address: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    stopped: Arc<AtomicBool>,
}

impl Upstream {
    pub fn start(script: impl Fn(&Received) -> Answer + Send + Sync + 'static) -> Upstream {
        Upstream::keeping(usize::MAX, script)
    }

    /// The same, keeping only the first `kept` requests for [`Upstream::received`]: a benchmark
    /// sends thousands, and holding every body would make the benchmark's own memory, and the
    /// pages it faults in for each, part of what it measures.
    pub fn keeping(
        kept: usize,
        script: impl Fn(&Received) -> Answer + Send + Sync + 'static,
    ) -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let address = listener.local_addr().expect("its address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let stopped = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        {
            let received = Arc::clone(&received);
            let stopped = Arc::clone(&stopped);
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stopped.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    // Each event is written as it is ready, as a model API does: Nagle's
                    // algorithm would hold small writes back for the client's acknowledgement.
                    let _ = stream.set_nodelay(true);
                    let received = Arc::clone(&received);
                    let script = Arc::clone(&script);
                    thread::spawn(move || serve(stream, &received, kept, &*script));
                }
            });
        }
        Upstream {
            address,
            received,
            stopped,
        }
    }

    /// A Messages API whose answers `model` decides from each request. Any other path is a
    /// 404, as the API answers Claude Code's `HEAD /` before a session.
    pub fn messages(model: impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static) -> Upstream {
        Upstream::start(move |request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            if request.path.contains("count_tokens") {
                return Answer::Json(200, json!({"input_tokens": 42}));
            }
            if !request.path.starts_with("/v1/messages") {
                return Answer::Json(
                    404,
                    json!({"type": "error", "error": {"type": "not_found_error",
                        "message": "Not found"}}),
                );
            }
            let content = model(&body);
            if body["stream"] == true {
                Answer::Events(message_events(&content))
            } else {
                Answer::Json(200, message(&content))
            }
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// An agent's main requests, in order: the bodies of the POSTs to `endpoint` (which the path
    /// ends with, its query aside) that declare tools. What declares none is a side request (a
    /// title, a summary, a check of the key).
    pub fn tool_requests(&self, endpoint: &str) -> Vec<Value> {
        self.received()
            .iter()
            .filter(|request| {
                let path = request.path.split('?').next().unwrap_or_default();
                request.method == "POST" && path.ends_with(endpoint)
            })
            .map(Received::json)
            .filter(declares_tools)
            .collect()
    }
}

/// Whether a request body declares tools: a scripted model answers one without any in text.
pub fn declares_tools(body: &Value) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty())
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so that it sees it is stopped.
        let _ = TcpStream::connect(self.address);
    }
}

fn serve(stream: TcpStream, received: &Mutex<Vec<Received>>, kept: usize, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
    let mut writer = stream;
    while let Some(request) = read_request(&mut reader) {
        {
            let mut received = received.lock().unwrap();
            if received.len() < kept {
                received.push(request.clone());
            }
        }
        let keep_open = match script(&request) {
            Answer::Json(status, body) => {
                let body = body.to_string();
                let head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nrequest-id: req_test\r\n\r\n",
                    body.len()
                );
                // An answer to HEAD has the headers of the body it does not send: bytes after
                // them would be read as the next answer on this connection.
                writer.write_all(head.as_bytes()).is_ok()
                    && (request.method == "HEAD" || writer.write_all(body.as_bytes()).is_ok())
            }
            Answer::Events(events) => write_events(&mut writer, &events, true, Duration::ZERO),
            Answer::Paced(events, pause) => write_events(&mut writer, &events, true, pause),
            Answer::Gated(first, gate, rest) => {
                write_events(&mut writer, &first, false, Duration::ZERO);
                let _ = gate.recv();
                write_chunks(&mut writer, &rest) && writer.write_all(b"0\r\n\r\n").is_ok()
            }
            Answer::CutAfter(events) => {
                write_events(&mut writer, &events, false, Duration::ZERO);
                false
            }
            Answer::Raw(bytes) => {
                let _ = writer.write_all(&bytes);
                false
            }
            Answer::Faulty(bytes, at, fault) => {
                write_faulty(&mut writer, &bytes, at, fault);
                if fault == Fault::Reset {
                    // Closed here, without a FIN first: the linger turns the close into a RST.
                    return;
                }
                false
            }
        };
        if !keep_open {
            let _ = writer.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// Writes the first `at` bytes of `bytes` as an event stream, then breaks it as `fault` says.
fn write_faulty(writer: &mut TcpStream, bytes: &[u8], at: usize, fault: Fault) {
    let prefix = &bytes[..at.min(bytes.len())];
    let head = match fault {
        Fault::ShortLength => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
            bytes.len()
        ),
        Fault::CloseDelimited => {
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                .to_owned()
        }
        // The connection is closed after each: said, so that no client keeps it for the next.
        _ => "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_owned(),
    };
    if writer.write_all(head.as_bytes()).is_err() {
        return;
    }
    let written = match fault {
        Fault::ShortLength | Fault::CloseDelimited => writer.write_all(prefix).is_ok(),
        _ => prefix.is_empty() || write_chunks(writer, &[prefix.to_vec()]),
    };
    let _ = writer.flush();
    if !written {
        return;
    }
    match fault {
        Fault::CleanEnd => {
            let _ = writer.write_all(b"0\r\n\r\n");
        }
        Fault::Stall(pause) => thread::sleep(pause),
        Fault::Reset => reset(writer),
        _ => {}
    }
}

/// Sets a linger of zero, so that the connection's close is a reset (RST), not a FIN.
fn reset(writer: &TcpStream) {
    let Ok(own) = writer.try_clone() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("a runtime to set the linger");
    runtime.block_on(async move {
        let _ = own.set_nonblocking(true);
        if let Ok(stream) = tokio::net::TcpStream::from_std(own) {
            // Deprecated because a lingering close blocks; a linger of zero does not: it resets.
            #[allow(deprecated)]
            let _ = stream.set_linger(Some(Duration::ZERO));
            // Back to a std handle, so that dropping this one closes nothing yet.
            let _ = stream.into_std();
        }
    });
}

/// Writes a chunked event stream, one chunk per event, `pause` apart; ends it when `complete`.
fn write_events(
    writer: &mut TcpStream,
    events: &[Vec<u8>],
    complete: bool,
    pause: Duration,
) -> bool {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
    if writer.write_all(head.as_bytes()).is_err() {
        return false;
    }
    // Each event is due at its own time from the start, so that late wake-ups do not add up.
    let start = std::time::Instant::now();
    for (n, event) in events.iter().enumerate() {
        let due = start + pause * u32::try_from(n).unwrap_or(u32::MAX);
        if let Some(wait) = due.checked_duration_since(std::time::Instant::now()) {
            thread::sleep(wait);
        }
        if !write_chunks(writer, std::slice::from_ref(event)) {
            return false;
        }
    }
    complete && writer.write_all(b"0\r\n\r\n").is_ok()
}

pub fn read_request(reader: &mut impl BufRead) -> Option<Received> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let headers = read_headers(reader)?;
    let body = read_body(reader, &headers)?;
    Some(Received {
        method,
        path,
        headers,
        body,
    })
}

pub fn read_headers(reader: &mut impl BufRead) -> Option<Vec<(String, String)>> {
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Some(headers);
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
}

fn read_body(reader: &mut impl BufRead, headers: &[(String, String)]) -> Option<Vec<u8>> {
    let header = |name: &str| {
        headers
            .iter()
            .find_map(|(key, value)| (key == name).then_some(value.as_str()))
    };
    if header("transfer-encoding").is_some_and(|value| value.contains("chunked")) {
        let mut body = Vec::new();
        return read_chunks(reader, &mut body).map(|()| body);
    }
    let length: usize = header("content-length").map_or(Some(0), |value| value.parse().ok())?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// Writes each event as one chunk, flushed.
fn write_chunks(writer: &mut TcpStream, events: &[Vec<u8>]) -> bool {
    events.iter().all(|event| {
        let chunk = [format!("{:x}\r\n", event.len()).as_bytes(), event, b"\r\n"].concat();
        writer
            .write_all(&chunk)
            .and_then(|()| writer.flush())
            .is_ok()
    })
}

/// Reads a chunked body into `body`; `None` when it breaks off before its last chunk, with what
/// did arrive in `body`.
pub fn read_chunks(reader: &mut impl BufRead, body: &mut Vec<u8>) -> Option<()> {
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).ok()?;
        let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).ok()?;
        if size == 0 {
            return Some(());
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// The address in the line `reasons gateway` or `reasons proxy --listen` writes once it listens
/// (the proxy's names its endpoint's path after the address).
pub fn listening_address(line: &str) -> Option<SocketAddr> {
    line.split("listening on http://")
        .nth(1)?
        .split([',', '/'])
        .next()?
        .parse()
        .ok()
}

/// A complete Messages API answer holding these content blocks.
pub fn message(content: &[Value]) -> Value {
    let uses_tool = content.iter().any(|block| block["type"] == "tool_use");
    json!({
        "id": "msg_test", "type": "message", "role": "assistant", "model": "scripted",
        "content": content,
        "stop_reason": if uses_tool { "tool_use" } else { "end_turn" },
        "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    })
}

pub fn sse(name: &str, data: &Value) -> Vec<u8> {
    format!("event: {name}\ndata: {data}\n\n").into_bytes()
}

/// The Messages API's event stream for these content blocks: text in a few deltas, a tool's
/// input in fragments of 7 bytes, as the API cuts them anywhere.
pub fn message_events(content: &[Value]) -> Vec<Vec<u8>> {
    let mut start = message(&[]);
    start["stop_reason"] = Value::Null;
    let mut events = vec![sse(
        "message_start",
        &json!({"type": "message_start", "message": start}),
    )];
    for (index, block) in content.iter().enumerate() {
        let mut opened = block.clone();
        let deltas: Vec<Value> = match block["type"].as_str() {
            Some("text") => {
                opened["text"] = json!("");
                let text = block["text"].as_str().unwrap_or_default();
                let words: Vec<&str> = text.split_inclusive(' ').collect();
                words
                    .iter()
                    .map(|word| json!({"type": "text_delta", "text": word}))
                    .collect()
            }
            Some("tool_use") => {
                opened["input"] = json!({});
                let input = block["input"].to_string();
                let bytes: Vec<char> = input.chars().collect();
                bytes
                    .chunks(7)
                    .map(|piece| {
                        json!({"type": "input_json_delta",
                            "partial_json": piece.iter().collect::<String>()})
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        events.push(sse(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": opened}),
        ));
        for delta in deltas {
            events.push(sse(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push(sse(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let uses_tool = content.iter().any(|block| block["type"] == "tool_use");
    events.push(sse(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason":
            if uses_tool { "tool_use" } else { "end_turn" }, "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
    ));
    events.push(sse("message_stop", &json!({"type": "message_stop"})));
    events
}

/// The Messages stream for `content`, each call's input whole in its `content_block_start` and
/// no fragments after it, as some Messages-compatible servers send it.
pub fn whole_start_events(content: &[Value]) -> Vec<Vec<u8>> {
    let mut events = message_events(content);
    events.retain(|event| !String::from_utf8_lossy(event).contains("input_json_delta"));
    for (index, block) in content.iter().enumerate() {
        if block["type"] == "tool_use" {
            let opened = json!({"type": "content_block_start", "index": index,
                "content_block": block});
            let at = events
                .iter()
                .position(|event| {
                    let text = String::from_utf8_lossy(event);
                    text.contains("content_block_start")
                        && text.contains(&format!("\"index\":{index}"))
                })
                .expect("the block starts");
            events[at] = sse("content_block_start", &opened);
        }
    }
    events
}

/// An answer as a client saw it.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Whether the body ended as it should, rather than breaking off.
    pub complete: bool,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find_map(|(key, value)| (key == name).then_some(value.as_str()))
    }

    /// The data of each server-sent event, parsed (but a closing `[DONE]`).
    pub fn events(&self) -> Vec<Value> {
        String::from_utf8_lossy(&self.body)
            .split("\n\n")
            .filter_map(|event| {
                let data = event.lines().find_map(|line| line.strip_prefix("data: "))?;
                // Chat Completions ends its stream with `[DONE]`.
                (data != "[DONE]").then(|| serde_json::from_str(data).expect("JSON event data"))
            })
            .collect()
    }
}

/// Sends one request (HTTP/1.1, connection closed after it) and reads the whole answer.
pub fn request(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    request_within(
        address,
        method,
        path,
        headers,
        body,
        Duration::from_secs(30),
    )
}

/// The same, waiting up to `timeout` for each read (a real model takes its time).
pub fn request_within(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
) -> Reply {
    let mut stream = TcpStream::connect(address).expect("the server accepts");
    stream.set_read_timeout(Some(timeout)).expect("a timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    // A test may name a Host of its own (one the server must refuse).
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        head.push_str(&format!("host: {address}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .expect("the request is sent");
    stream.write_all(body).expect("the body is sent");
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).expect("a status line");
    let status = status
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {status:?}"));
    let headers = read_headers(&mut reader).expect("headers");
    let chunked = headers
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    let mut body = Vec::new();
    let complete = if chunked {
        read_chunks(&mut reader, &mut body).is_some()
    } else {
        reader.read_to_end(&mut body).is_ok()
    };
    Reply {
        status,
        headers,
        body,
        complete,
    }
}

/// A Messages API request body with these tools, asking for a stream or not.
pub fn messages_request(tools: &[Value], stream: bool) -> Vec<u8> {
    json!({
        "model": "claude-test", "max_tokens": 1024, "stream": stream,
        "messages": [{"role": "user", "content": "Where is the config?"}],
        "tools": tools,
    })
    .to_string()
    .into_bytes()
}

pub fn bash_tool() -> Value {
    json!({"name": "Bash", "description": "Run a command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
        "required": ["command"]}})
}

/// An OpenAI Chat Completions answer with these tool calls (`(id, name, arguments)`).
pub fn chat_completion(calls: &[(&str, &str, Value)]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    json!({"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "scripted",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
            "tool_calls": tool_calls}, "finish_reason": "tool_calls"}]})
}

/// The same answer as Chat Completions streams it: each call's arguments in 5-character pieces.
pub fn chat_chunks(calls: &[(&str, &str, Value)]) -> Vec<Vec<u8>> {
    let chunk = |delta: Value, finish: Value| {
        let data = json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1,
            "model": "scripted", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {data}\n\n").into_bytes()
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": null}),
        Value::Null,
    )];
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        events.push(chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        let text: Vec<char> = arguments.to_string().chars().collect();
        for piece in text.chunks(5) {
            events.push(chunk(
                json!({"tool_calls": [{"index": index,
                    "function": {"arguments": piece.iter().collect::<String>()}}]}),
                Value::Null,
            ));
        }
    }
    events.push(chunk(json!({}), json!("tool_calls")));
    events.push(b"data: [DONE]\n\n".to_vec());
    events
}

/// A Responses API stream with one function call, as the API sends it.
pub fn responses_events(call_id: &str, name: &str, arguments: &Value) -> Vec<Vec<u8>> {
    let text = arguments.to_string();
    let item = |arguments: &str, status: &str| {
        json!({"id": "fc_test", "type": "function_call", "status": status, "call_id": call_id,
            "name": name, "arguments": arguments})
    };
    let event = |data: Value| {
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap()
        )
        .into_bytes()
    };
    let mut events = vec![
        event(json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_test", "status": "in_progress", "output": []}})),
        event(
            json!({"type": "response.output_item.added", "sequence_number": 1,
            "output_index": 0, "item": item("", "in_progress")}),
        ),
    ];
    let chars: Vec<char> = text.chars().collect();
    for (n, piece) in chars.chunks(6).enumerate() {
        events.push(event(
            json!({"type": "response.function_call_arguments.delta",
            "sequence_number": 2 + n, "item_id": "fc_test", "output_index": 0,
            "delta": piece.iter().collect::<String>()}),
        ));
    }
    events.push(event(
        json!({"type": "response.function_call_arguments.done",
        "sequence_number": 100, "item_id": "fc_test", "output_index": 0, "arguments": text}),
    ));
    events.push(event(
        json!({"type": "response.output_item.done", "sequence_number": 101,
        "output_index": 0, "item": item(&text, "completed")}),
    ));
    events.push(event(
        json!({"type": "response.completed", "sequence_number": 102,
        "response": {"id": "resp_test", "status": "completed",
            "output": [item(&text, "completed")]}}),
    ));
    events
}

/// A Gemini answer chunk holding one function call.
pub fn gemini_chunk(name: &str, args: &Value) -> Value {
    json!({"candidates": [{"content": {"role": "model",
        "parts": [{"functionCall": {"name": name, "args": args}}]},
        "finishReason": "STOP", "index": 0}], "modelVersion": "scripted"})
}
