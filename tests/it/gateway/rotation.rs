//! A reasons log deleted, renamed away (logrotate's `create`) or replaced while a gateway, a proxy
//! or a filter writes it: the next reason goes to a new file at the path, private again, and no
//! reason is lost or written twice.

use std::fs;
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::gateway::Gateway;
use crate::util::upstream::{bash_tool, messages_request, Upstream};
use crate::util::{arg, lines_of, mcp_fixture, reasons};

/// What happens to the log between two reasons.
#[derive(Debug, Clone, Copy)]
enum Rotation {
    Deleted,
    Renamed,
    Replaced,
}

const ROTATIONS: [Rotation; 3] = [Rotation::Deleted, Rotation::Renamed, Rotation::Replaced];

impl Rotation {
    /// Does it to the log at `path`; a renamed log goes to `path.1`, a replacing file holds one
    /// record of its own, `replacing`.
    fn apply(self, path: &Path) {
        match self {
            Rotation::Deleted => fs::remove_file(path).unwrap(),
            Rotation::Renamed => fs::rename(path, rotated(path)).unwrap(),
            Rotation::Replaced => {
                let other = path.with_extension("new");
                fs::write(&other, format!("{}\n", record_line("replacing"))).unwrap();
                fs::rename(&other, path).unwrap();
            }
        }
    }
}

fn rotated(path: &Path) -> std::path::PathBuf {
    path.with_extension("jsonl.1")
}

fn record_line(call_id: &str) -> Value {
    json!({"time": "2026-12-01T10:11:12.000Z", "via": "gateway", "tool": "Bash",
        "call_id": call_id, "reason": "r", "touched": "ls"})
}

/// The call ids of a log's records, in order; none when it is not there.
fn ids_in(path: &Path) -> Vec<String> {
    let Ok(text) = fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .map(|line| {
            let record: Value = serde_json::from_str(line).expect("a whole JSON record");
            record["call_id"].as_str().expect("a call id").to_owned()
        })
        .collect()
}

/// Takes three reasons through `take` (each one's call id given, and logged by the time `take`
/// returns), rotating the log after the first: the path then holds the later two (after the
/// replacing file's own record), the renamed log the first, and the path's file is private.
fn follows_its_path(log: &Path, rotation: Rotation, take: &mut dyn FnMut(&str)) {
    take("before");
    assert_eq!(ids_in(log), ["before"], "{rotation:?}");
    rotation.apply(log);
    take("after");
    take("later");
    let (at_path, elsewhere): (&[&str], &[&str]) = match rotation {
        Rotation::Deleted => (&["after", "later"], &[]),
        Rotation::Renamed => (&["after", "later"], &["before"]),
        Rotation::Replaced => (&["replacing", "after", "later"], &[]),
    };
    assert_eq!(ids_in(log), at_path, "{rotation:?}");
    assert_eq!(ids_in(&rotated(log)), elsewhere, "{rotation:?}");
    #[cfg(unix)]
    if !matches!(rotation, Rotation::Replaced) {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(log).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{rotation:?}");
    }
}

/// A process that answers each line it is given with one line.
struct LineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl LineProcess {
    fn start(mut command: std::process::Command) -> LineProcess {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("reasons starts");
        let lines = lines_of(child.stdout.take().unwrap());
        LineProcess {
            stdin: child.stdin.take().unwrap(),
            child,
            lines,
        }
    }

    #[track_caller]
    fn exchange(&mut self, message: &Value) -> String {
        use std::io::Write;
        writeln!(self.stdin, "{message}").expect("reasons reads");
        self.stdin.flush().unwrap();
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("an answer in time")
    }
}

impl Drop for LineProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An MCP `tools/call` of `echo` with a reason, under Claude Code's tool-use id `call_id`.
fn echo_call(call_id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "t", "reason": "Say it"},
            "_meta": {"claudecode/toolUseId": call_id}}})
}

#[test]
fn the_filter_follows_its_log_through_each_rotation() {
    for rotation in ROTATIONS {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("reasons.jsonl");
        let mut command = reasons();
        command.args(["filter", "--reasons-log", arg(&log)]);
        let mut filter = LineProcess::start(command);
        filter.exchange(&json!({"jsonrpc": "2.0", "id": 1,
            "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}}));
        follows_its_path(&log, rotation, &mut |call_id| {
            let line = filter.exchange(&echo_call(call_id));
            assert!(!line.contains("Say it"), "{line}");
        });
    }
}

#[test]
fn the_proxy_follows_its_log_through_each_rotation() {
    for rotation in ROTATIONS {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("reasons.jsonl");
        let mut command = reasons();
        command
            .args(["proxy", "--reasons-log", arg(&log), "--"])
            .arg(mcp_fixture());
        let mut proxy = LineProcess::start(command);
        proxy.exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        follows_its_path(&log, rotation, &mut |call_id| {
            let answer = proxy.exchange(&echo_call(call_id));
            assert!(answer.contains(call_id), "{answer}");
        });
    }
}

#[test]
fn the_gateway_follows_its_log_through_each_rotation() {
    // Each turn's Bash call has the id the test asks for, in the user's message.
    let upstream = Upstream::messages(|request: &Value| {
        let id = request["messages"][0]["content"].as_str().unwrap_or("none");
        vec![json!({"type": "tool_use", "id": id, "name": "Bash",
            "input": {"command": "ls", "reason": "Look around"}})]
    });
    let streamed = AtomicU64::new(0);
    for rotation in ROTATIONS {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("reasons.jsonl");
        let gateway = Gateway::start_logging_to(&upstream.url(), &log, &[]);
        follows_its_path(&log, rotation, &mut |call_id| {
            // Plain and streamed answers in turn: both log through the same writer.
            let stream = streamed.fetch_add(1, Ordering::Relaxed) % 2 == 1;
            let mut body: Value =
                serde_json::from_slice(&messages_request(&[bash_tool()], stream)).unwrap();
            body["messages"][0]["content"] = json!(call_id);
            let reply = gateway.post("/v1/messages", body.to_string().as_bytes());
            assert_eq!(reply.status, 200);
            assert!(!String::from_utf8_lossy(&reply.body).contains("Look around"));
        });
    }
}
