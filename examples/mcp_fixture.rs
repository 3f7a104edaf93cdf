//! A tiny MCP server on stdio, for driving `reasons proxy` in tests and benchmarks.
//!
//! ```text
//! mcp_fixture [--record FILE] [--pages] [--input-required] [--exit-code N] [--linger]
//!             [--chatty] [--flood-stderr BYTES] [--mute] [--deaf]
//! ```
//!
//! It frames newline-delimited JSON-RPC by hand, like the proxy, and speaks just enough of both
//! protocol generations: 2025's `initialize` and 2026's stateless `server/discover`. It lists
//! three tools: `echo` (plain), `note` (declares a `reason` of its own) and `clock` (a schema with
//! no `properties`); with `--pages`, over two pages joined by `nextCursor`. A `tools/call` is
//! answered with the arguments the server received, as text.
//!
//! - `--record FILE`: append every line received, as received, to FILE.
//! - `notifications/initialized` makes it send a `notifications/message` and a `roots/list`
//!   request of its own; the client's answer is recorded like any line.
//! - `--input-required`: a `tools/call` without `inputResponses` is answered with a 2026
//!   `input_required` result asking for a confirmation; the retry gets the real answer.
//! - `fixture/exit` (params `{"code": N}`): answers, sends a last notification, exits with N.
//! - `fixture/half`: writes the first half of its answer, with no line ending, and exits with 3:
//!   a server that dies mid-response.
//! - When stdin closes it exits with `--exit-code` (0 by default), or with `--linger` keeps
//!   running until it is killed.
//!
//! Failure modes and load, for the proxy's tests:
//!
//! - `--chatty`: before answering a `tools/call`, sends a `notifications/progress` naming the
//!   request's id; and every notification the client sends is answered by a
//!   `notifications/message` echoing its `params`.
//! - `--flood-stderr BYTES`: writes that many bytes to stderr before each answer.
//! - `--mute`: reads and records every line, and never answers any.
//! - `--deaf`: never reads stdin at all, and runs until it is killed.
//!
//! It says `mcp_fixture: ready` on stderr when it starts.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::process;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

struct Config {
    record: Option<File>,
    pages: bool,
    input_required: bool,
    exit_code: i32,
    linger: bool,
    chatty: bool,
    flood_stderr: usize,
    mute: bool,
    deaf: bool,
}

fn main() {
    let config = match parse_args() {
        Ok(config) => config,
        Err(message) => {
            eprintln!("mcp_fixture: {message}");
            process::exit(2);
        }
    };
    eprintln!("mcp_fixture: ready");
    serve(config);
}

fn parse_args() -> Result<Config, String> {
    let mut config = Config {
        record: None,
        pages: false,
        input_required: false,
        exit_code: 0,
        linger: false,
        chatty: false,
        flood_stderr: 0,
        mute: false,
        deaf: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--record" => {
                let path = args.next().ok_or("--record needs a file")?;
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map_err(|error| format!("cannot open {path}: {error}"))?;
                config.record = Some(file);
            }
            "--pages" => config.pages = true,
            "--input-required" => config.input_required = true,
            "--exit-code" => {
                let code = args.next().ok_or("--exit-code needs a number")?;
                config.exit_code = code.parse().map_err(|_| format!("bad exit code {code}"))?;
            }
            "--linger" => config.linger = true,
            "--chatty" => config.chatty = true,
            "--flood-stderr" => {
                let bytes = args.next().ok_or("--flood-stderr needs a number")?;
                config.flood_stderr = bytes.parse().map_err(|_| format!("bad size {bytes}"))?;
            }
            "--mute" => config.mute = true,
            "--deaf" => config.deaf = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(config)
}

fn serve(mut config: Config) {
    if config.deaf {
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut line = Vec::new();
    let mut input = stdin.lock();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Some(record) = &mut config.record {
            let _ = record.write_all(&line);
            if line.last() != Some(&b'\n') {
                let _ = record.write_all(b"\n");
            }
        }
        if config.mute {
            continue;
        }
        let Ok(message) = serde_json::from_slice::<Value>(&line) else {
            if !line.iter().all(u8::is_ascii_whitespace) {
                send(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": null,
                        "error": {"code": -32700, "message": "Parse error"}}),
                );
            }
            continue;
        };
        answer(&config, &message, &mut out);
    }
    if config.linger {
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
    process::exit(config.exit_code);
}

fn send(out: &mut impl Write, message: &Value) {
    let mut line = message.to_string().into_bytes();
    line.push(b'\n');
    // A client that has gone is not the fixture's problem: it exits when stdin closes.
    let _ = out.write_all(&line).and_then(|()| out.flush());
}

fn answer(config: &Config, message: &Value, out: &mut impl Write) {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        // A response to one of our requests: recorded, nothing to answer.
        return;
    };
    let id = message.get("id").cloned();
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    if config.flood_stderr > 0 {
        let flood = vec![b'x'; config.flood_stderr];
        let _ = io::stderr().lock().write_all(&flood);
    }
    if config.chatty
        && id.is_none()
        && method.starts_with("notifications/")
        && method != "notifications/initialized"
    {
        send(
            out,
            &json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "mcp_fixture", "data": params}}),
        );
        return;
    }
    if config.chatty && method == "tools/call" {
        if let Some(id) = &id {
            send(
                out,
                &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": id, "progress": 1}}),
            );
        }
    }
    let result = match method {
        "initialize" => Ok(json!({
            "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
            "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "serverInfo": {"name": "mcp_fixture", "version": "0.1.0"}
        })),
        "notifications/initialized" => {
            send(
                out,
                &json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "mcp_fixture", "data": "initialized"}}),
            );
            send(
                out,
                &json!({"jsonrpc": "2.0", "id": "fixture-roots-1", "method": "roots/list"}),
            );
            return;
        }
        "server/discover" => Ok(json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28", "2025-06-18"],
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "mcp_fixture", "version": "0.1.0"},
            "ttlMs": 60000,
            "cacheScope": "public"
        })),
        "tools/list" => list(config, &params),
        "tools/call" => call(config, &params),
        "ping" => Ok(json!({})),
        "fixture/exit" => {
            let code = params.get("code").and_then(Value::as_i64).unwrap_or(0);
            if let Some(id) = id {
                send(out, &json!({"jsonrpc": "2.0", "id": id, "result": {}}));
            }
            send(
                out,
                &json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "mcp_fixture", "data": "exiting"}}),
            );
            eprintln!("mcp_fixture: exiting with {code}");
            process::exit(i32::try_from(code).unwrap_or(2));
        }
        "fixture/half" => {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}).to_string();
            let _ = out.write_all(&answer.as_bytes()[..answer.len() / 2]);
            let _ = out.flush();
            process::exit(3);
        }
        _ => Err((-32601, format!("Method not found: {method}"))),
    };
    // Notifications are never answered.
    let Some(id) = id else { return };
    let response = match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    };
    send(out, &response);
}

fn tools() -> Vec<Value> {
    vec![
        json!({
            "name": "echo",
            "description": "Answers with the arguments it received.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            }
        }),
        json!({
            "name": "note",
            "description": "Files a note; its reason is a real argument.",
            "inputSchema": {
                "type": "object",
                "properties": {"body": {"type": "string"}, "reason": {"type": "string"}},
                "required": ["body", "reason"]
            }
        }),
        json!({
            "name": "clock",
            "description": "Tells the time; takes nothing.",
            "inputSchema": {"type": "object"}
        }),
    ]
}

fn list(config: &Config, params: &Value) -> Result<Value, (i64, String)> {
    let mut tools = tools();
    let cursor = params.get("cursor").and_then(Value::as_str);
    let result = match (config.pages, cursor) {
        (false, None) => json!({"tools": tools}),
        (true, None) => {
            tools.truncate(2);
            json!({"tools": tools, "nextCursor": "page-2"})
        }
        (true, Some("page-2")) => json!({"tools": tools.split_off(2)}),
        (_, Some(cursor)) => return Err((-32602, format!("Unknown cursor: {cursor}"))),
    };
    Ok(result)
}

fn call(config: &Config, params: &Value) -> Result<Value, (i64, String)> {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    if !tools().iter().any(|tool| tool["name"] == name) {
        return Err((-32602, format!("Unknown tool: {name}")));
    }
    if config.input_required && params.get("inputResponses").is_none() {
        return Ok(json!({
            "resultType": "input_required",
            "inputRequests": {
                "confirm": {
                    "method": "elicitation/create",
                    "params": {
                        "message": format!("Run {name}?"),
                        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
                    }
                }
            },
            "requestState": "fixture-state-1"
        }));
    }
    let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
    Ok(json!({
        "content": [{"type": "text", "text": arguments.to_string()}],
        "isError": false
    }))
}
