//! Times MCP round trips against a stdio server, for `benches/filter.sh`.
//!
//! ```text
//! mcp_roundtrip N -- SERVER [ARGS…]
//! ```
//!
//! Starts SERVER, lists its tools, then sends N `tools/call` requests to `echo` one after the
//! other, each waiting for its answer, and prints the median, mean and 99th percentile of a round
//! trip in microseconds. Run it once against a server and once against `reasons proxy -- SERVER`:
//! the difference is what the proxy adds.

use std::io::{BufRead, BufReader, Write};
use std::process::{self, Command, Stdio};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (count, server) = match args.as_slice() {
        [count, dashes, server @ ..] if dashes == "--" && !server.is_empty() => {
            match count.parse::<usize>() {
                Ok(count) if count > 0 => (count, server),
                _ => usage(),
            }
        }
        _ => usage(),
    };
    let mut child = Command::new(&server[0])
        .args(&server[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| fail(&format!("cannot start {}: {error}", server[0])));
    let mut to_server = child.stdin.take().unwrap_or_else(|| fail("no stdin"));
    let mut from_server = BufReader::new(child.stdout.take().unwrap_or_else(|| fail("no stdout")));
    let mut answer = String::new();
    let mut round_trip = |request: &str| {
        let started = Instant::now();
        to_server
            .write_all(request.as_bytes())
            .and_then(|()| to_server.flush())
            .unwrap_or_else(|error| fail(&format!("cannot write: {error}")));
        answer.clear();
        match from_server.read_line(&mut answer) {
            Ok(0) | Err(_) => fail("the server closed its output"),
            Ok(_) => started.elapsed(),
        }
    };
    round_trip("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/list\"}\n");
    let mut micros: Vec<f64> = (1..=count)
        .map(|id| {
            let request = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"round trip {id}\",\"reason\":\"Measure the proxy\"}}}}}}\n"
            );
            round_trip(&request).as_secs_f64() * 1e6
        })
        .collect();
    drop(to_server);
    let _ = child.wait();
    micros.sort_by(f64::total_cmp);
    let mean = micros.iter().sum::<f64>() / micros.len() as f64;
    let median = micros[micros.len() / 2];
    let p99 = micros[(micros.len() * 99 / 100).min(micros.len() - 1)];
    println!("round trips: {count}  median: {median:.1} us  mean: {mean:.1} us  p99: {p99:.1} us");
}

fn usage() -> ! {
    fail("usage: mcp_roundtrip N -- SERVER [ARGS...]")
}

fn fail(message: &str) -> ! {
    eprintln!("mcp_roundtrip: {message}");
    process::exit(2);
}
