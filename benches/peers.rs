//! The Rust half of `benches/peers` (the script runs it; see its header and doc/internals.md,
//! "Peers"): a scripted model API fast enough never to be what is measured, and the load client
//! that measures what each gateway adds to it.
//!
//! - `peers upstream`: serves on a free loopback port (printed as `http://127.0.0.1:PORT` on
//!   stdout) until its stdin closes. `POST …/chat/completions` answers an OpenAI Chat completion
//!   with one tool call, streamed when the request asks for a stream (its body holds
//!   `"stream":true`) and plain otherwise; `POST …/messages` answers an Anthropic Messages stream
//!   with text and one `tool_use`. Every answer is rendered once at start and written from memory
//!   by hyper on a multi-threaded runtime: the upstream does no work per request but HTTP.
//! - `peers load KIND SECONDS ROUNDS CONCURRENCY,… NAME=URL[#MODEL] …`: for each concurrency,
//!   `ROUNDS` rounds; in each round every target in turn (the order rotating from round to
//!   round, so a slow spell of the machine falls on all alike) gets that many clients, each on a
//!   kept-alive connection of its own sending one request after another for `SECONDS`, after a
//!   warm-up of a fifth of that; what ends within the window counts. `KIND` is `chat-stream`, `chat-plain` or
//!   `messages-stream`; `#MODEL` sets the request's model (TensorZero names its models so).
//!   Prints one JSON object a line per target and concurrency: time to the first byte of the
//!   answer's body and to its end (median, p99, µs), requests a second, errors.
//!
//! The client is a plain HTTP/1.1 writer and reader on one thread (a current-thread tokio
//! runtime): at most one core's worth of its own work, and the same work for every target, so
//! what a gateway adds is its figure minus the direct one at the same concurrency.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Frame;
use hyper::{Request, Response};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[allow(dead_code)]
#[path = "../tests/it/util/upstream.rs"]
mod upstream;

use upstream::{bash_tool, chat_chunks, chat_completion, message_events};

/// What the scripted model answers: a call whose arguments carry a reason, so that the reasons
/// gateway has one to take off and log.
fn arguments() -> serde_json::Value {
    json!({"command": "ls -la", "reason": "See what the folder holds"})
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("upstream") => serve_upstream(),
        Some("load") if args.len() >= 6 => load(&args[1..]),
        _ => {
            eprintln!(
                "usage: peers upstream | peers load KIND SECONDS ROUNDS CONCURRENCY,… NAME=URL[#MODEL] …"
            );
            std::process::exit(2);
        }
    }
}

/// The answers, rendered once.
struct Answers {
    chat_events: Vec<Bytes>,
    chat_plain: Bytes,
    message_events: Vec<Bytes>,
}

fn serve_upstream() {
    let calls = [("call_peers", "shell", arguments())];
    let mut chat_events: Vec<Bytes> = chat_chunks(&calls).into_iter().map(Bytes::from).collect();
    // OpenAI ends a stream with its usage when asked (`stream_options`); some gateways want it.
    let usage = json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1,
        "model": "scripted", "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    chat_events.insert(
        chat_events.len() - 1,
        Bytes::from(format!("data: {usage}\n\n")),
    );
    let mut plain = chat_completion(&calls);
    plain["usage"] = usage["usage"].clone();
    let answers = Arc::new(Answers {
        chat_events,
        chat_plain: Bytes::from(plain.to_string()),
        message_events: message_events(&[
            json!({"type": "text", "text": "Let me look at the folder."}),
            json!({"type": "tool_use", "id": "toolu_peers", "name": "Bash", "input": arguments()}),
        ])
        .into_iter()
        .map(Bytes::from)
        .collect(),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        println!(
            "http://{}",
            listener.local_addr().expect("the bound address")
        );
        // Stops when the script closes our stdin (or goes away).
        std::thread::spawn(|| {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            std::process::exit(0);
        });
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let answers = Arc::clone(&answers);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    answer(Arc::clone(&answers), request)
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}

type AnswerBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

async fn answer(
    answers: Arc<Answers>,
    request: Request<hyper::body::Incoming>,
) -> Result<Response<AnswerBody>, Infallible> {
    let path = request.uri().path().to_owned();
    let body = request
        .into_body()
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    let streamed = memchr::memmem::find(&body, b"\"stream\":true").is_some()
        || memchr::memmem::find(&body, b"\"stream\": true").is_some();
    let events = |events: &[Bytes]| {
        let frames: Vec<Result<Frame<Bytes>, Infallible>> = events
            .iter()
            .map(|event| Ok(Frame::data(event.clone())))
            .collect();
        Response::builder()
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-cache")
            .body(ready_frames(frames).boxed())
            .expect("a response")
    };
    Ok(if path.ends_with("/chat/completions") && streamed {
        events(&answers.chat_events)
    } else if path.ends_with("/chat/completions") {
        Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(answers.chat_plain.clone()).boxed())
            .expect("a response")
    } else if path.ends_with("/messages") {
        events(&answers.message_events)
    } else {
        Response::builder()
            .status(404)
            .body(Full::new(Bytes::from_static(b"{\"error\":\"not scripted\"}")).boxed())
            .expect("a response")
    })
}

/// A body of frames all ready at once.
fn ready_frames(
    frames: Vec<Result<Frame<Bytes>, Infallible>>,
) -> impl hyper::body::Body<Data = Bytes, Error = Infallible> + Send + Sync {
    struct Ready(std::vec::IntoIter<Result<Frame<Bytes>, Infallible>>);
    impl hyper::body::Body for Ready {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            std::task::Poll::Ready(self.0.next())
        }
    }
    Ready(frames.into_iter())
}

/// One target of the load: a name, where it listens, the path and the request it is sent.
struct Target {
    name: String,
    address: SocketAddr,
    head: Vec<u8>,
}

/// What one client saw in one window.
#[derive(Default)]
struct Seen {
    first_byte: Vec<u32>,
    whole: Vec<u32>,
    errors: usize,
}

fn load(args: &[String]) {
    let kind = args[0].as_str();
    let seconds: f64 = args[1].parse().expect("SECONDS is a number");
    let rounds: usize = args[2].parse().expect("ROUNDS is a number");
    let concurrencies: Vec<usize> = args[3]
        .split(',')
        .map(|n| n.parse().expect("CONCURRENCY is numbers"))
        .collect();
    let targets: Vec<Target> = args[4..].iter().map(|spec| target(kind, spec)).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let window = Duration::from_secs_f64(seconds);
    for &clients in &concurrencies {
        let mut seen: Vec<Seen> = targets.iter().map(|_| Seen::default()).collect();
        for round in 0..rounds {
            for step in 0..targets.len() {
                let n = (round + step) % targets.len();
                let got = runtime.block_on(window_of(&targets[n], clients, window));
                seen[n].first_byte.extend(got.first_byte);
                seen[n].whole.extend(got.whole);
                seen[n].errors += got.errors;
            }
        }
        for (target, seen) in targets.iter().zip(&mut seen) {
            seen.first_byte.sort_unstable();
            seen.whole.sort_unstable();
            let at = |samples: &[u32], percent: usize| {
                samples
                    .get((samples.len().max(1) - 1) * percent / 100)
                    .copied()
                    .unwrap_or(0)
            };
            println!(
                "{}",
                json!({"kind": kind, "target": target.name, "clients": clients,
                    "requests": seen.whole.len(), "errors": seen.errors,
                    "per_second": seen.whole.len() as f64 / (seconds * rounds as f64),
                    "first_byte_us": {"median": at(&seen.first_byte, 50), "p99": at(&seen.first_byte, 99)},
                    "whole_us": {"median": at(&seen.whole, 50), "p99": at(&seen.whole, 99)}})
            );
        }
    }
}

fn target(kind: &str, spec: &str) -> Target {
    let (name, rest) = spec.split_once('=').expect("NAME=URL");
    let (url, model) = rest.split_once('#').unwrap_or((rest, "scripted-model"));
    let url = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = url.split_at(url.find('/').expect("a path in the URL"));
    let address: SocketAddr = host.parse().expect("an IP address and port");
    let body = match kind {
        "chat-stream" | "chat-plain" => json!({"model": model, "stream": kind == "chat-stream",
            "messages": [{"role": "user", "content": "Where is the config?"}],
            "tools": [{"type": "function", "function": {"name": "shell",
                "description": "Run a command",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                    "required": ["command"]}}}]}),
        "messages-stream" => json!({"model": model, "max_tokens": 1024, "stream": true,
            "messages": [{"role": "user", "content": "Where is the config?"}],
            "tools": [bash_tool()]}),
        other => panic!("unknown KIND {other}"),
    }
    .to_string();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n\
         authorization: Bearer peers\r\nx-api-key: peers\r\nanthropic-version: 2023-06-01\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    Target {
        name: name.to_owned(),
        address,
        head: head.into_bytes(),
    }
}

/// `clients` connections to one target for a warm-up and then `window`: what they saw.
async fn window_of(target: &Target, clients: usize, window: Duration) -> Seen {
    let start = Instant::now();
    let counted_from = start + window / 5;
    let end = counted_from + window;
    let local = tokio::task::LocalSet::new();
    let results = local
        .run_until(async {
            let tasks: Vec<_> = (0..clients)
                .map(|_| {
                    let head = target.head.clone();
                    let address = target.address;
                    tokio::task::spawn_local(async move {
                        client(address, &head, counted_from, end).await
                    })
                })
                .collect();
            let mut all = Seen::default();
            for task in tasks {
                let seen = task.await.expect("a client");
                all.first_byte.extend(seen.first_byte);
                all.whole.extend(seen.whole);
                all.errors += seen.errors;
            }
            all
        })
        .await;
    // Let the target settle (connections closing) before the next one is measured.
    tokio::time::sleep(Duration::from_millis(200)).await;
    results
}

/// One client: requests one after another on a kept-alive connection (a new one after an
/// error), counting those that end within the window.
async fn client(address: SocketAddr, head: &[u8], counted_from: Instant, end: Instant) -> Seen {
    let mut seen = Seen::default();
    let mut connection: Option<TcpStream> = None;
    let mut buffer = vec![0u8; 64 * 1024];
    // What ends within the window counts: at saturation on a slow gateway an answer can take
    // longer than the whole window, and its time is the figure.
    let within = |at: Instant| at >= counted_from && at <= end;
    while Instant::now() < end {
        let started = Instant::now();
        let stream = match connection.as_mut() {
            Some(stream) => stream,
            None => match TcpStream::connect(address).await {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    connection.insert(stream)
                }
                Err(_) => {
                    seen.errors += usize::from(within(Instant::now()));
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let exchange = tokio::time::timeout(
            Duration::from_secs(10),
            exchange(stream, head, &mut buffer, started),
        )
        .await;
        let ended = Instant::now();
        match exchange {
            Ok(Ok((first_byte, whole))) if within(ended) => {
                seen.first_byte.push(first_byte);
                seen.whole.push(whole);
            }
            Ok(Ok(_)) => {}
            _ => {
                seen.errors += usize::from(within(ended));
                connection = None;
            }
        }
    }
    seen
}

/// One request and its whole answer: µs to the first byte of the body and to its end. An
/// answer that is not a 200, or does not name the scripted call's tool, is an error.
async fn exchange(
    stream: &mut TcpStream,
    head: &[u8],
    buffer: &mut [u8],
    started: Instant,
) -> std::io::Result<(u32, u32)> {
    stream.write_all(head).await?;
    let mut received: Vec<u8> = Vec::with_capacity(8192);
    let mut first_byte = None;
    let mut header_end = None;
    loop {
        let read = stream.read(buffer).await?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        received.extend_from_slice(&buffer[..read]);
        if header_end.is_none() {
            header_end = memchr::memmem::find(&received, b"\r\n\r\n").map(|at| at + 4);
        }
        let Some(body_at) = header_end else { continue };
        if first_byte.is_none() && received.len() > body_at {
            first_byte = Some(started.elapsed());
        }
        if let Some(done) = answer_complete(&received, body_at)? {
            if !done {
                continue;
            }
            let whole = started.elapsed();
            let text = &received[body_at..];
            // The tool's name comes whole in every envelope (its arguments in pieces).
            let named = |name: &[u8]| memchr::memmem::find(text, name).is_some();
            if !received.starts_with(b"HTTP/1.1 200") || !(named(b"shell") || named(b"Bash")) {
                return Err(std::io::Error::other(
                    String::from_utf8_lossy(&received).into_owned(),
                ));
            }
            let micros = |at: Duration| at.as_micros().min(u32::MAX as u128) as u32;
            return Ok((micros(first_byte.unwrap_or(whole)), micros(whole)));
        }
    }
}

/// Whether the answer in `received` (its headers end at `body_at`) is complete: by its
/// `content-length`, or by the last chunk of a chunked body.
fn answer_complete(received: &[u8], body_at: usize) -> std::io::Result<Option<bool>> {
    let headers = String::from_utf8_lossy(&received[..body_at]).to_ascii_lowercase();
    if let Some(length) = headers
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
    {
        let length: usize = length
            .trim()
            .parse()
            .map_err(|_| std::io::Error::other("a bad content-length"))?;
        return Ok(Some(received.len() >= body_at + length));
    }
    if !headers.contains("transfer-encoding: chunked") {
        return Err(std::io::Error::other("neither a length nor chunks"));
    }
    // Walk the chunks from the start of the body (answers are small).
    let mut at = body_at;
    loop {
        let Some(line_end) = memchr::memmem::find(&received[at..], b"\r\n") else {
            return Ok(Some(false));
        };
        let size_text = std::str::from_utf8(&received[at..at + line_end]).unwrap_or("");
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| std::io::Error::other("a bad chunk size"))?;
        let data_at = at + line_end + 2;
        if size == 0 {
            return Ok(Some(received.len() >= data_at + 2));
        }
        if received.len() < data_at + size + 2 {
            return Ok(Some(false));
        }
        at = data_at + size + 2;
    }
}
