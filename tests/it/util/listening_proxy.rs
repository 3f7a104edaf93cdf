//! `reasons proxy --listen 127.0.0.1:0 …` started for a test, and what a client configured with
//! its URL sends it: one Streamable HTTP POST at a time, over [`upstream::request`].

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::Value;

use crate::util::upstream::{listening_address, request, Reply};
use crate::util::{eventually, reasons};

/// The path the proxy names in the URL it prints.
pub const ENDPOINT: &str = "/mcp";

/// What a Streamable HTTP client accepts for the answer to a POST.
pub const ACCEPT: &str = "application/json, text/event-stream";

/// A running `reasons proxy --listen`, ended when dropped.
pub struct ListeningProxy {
    child: Child,
    pub address: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl ListeningProxy {
    /// `reasons proxy --listen 127.0.0.1:0 ARGS`, once it says where it listens.
    pub fn start(args: &[&str]) -> ListeningProxy {
        ListeningProxy::start_with(args, &[])
    }

    /// [`ListeningProxy::start`] with these environment variables besides.
    pub fn start_with(args: &[&str], env: &[(&str, &OsStr)]) -> ListeningProxy {
        let mut child = reasons()
            .args(["proxy", "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("reasons proxy starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut before = String::new();
        let address = loop {
            let mut line = String::new();
            let read = stderr
                .read_line(&mut line)
                .expect("the proxy writes on stderr");
            assert!(read > 0, "the proxy ended before listening: {before}");
            match listening_address(&line) {
                Some(address) => break address,
                None => before.push_str(&line),
            }
        };
        let collected = Arc::new(Mutex::new(before));
        {
            let collected = Arc::clone(&collected);
            thread::spawn(move || {
                let mut line = String::new();
                while stderr.read_line(&mut line).is_ok_and(|n| n > 0) {
                    collected.lock().unwrap().push_str(&line);
                    line.clear();
                }
            });
        }
        ListeningProxy {
            child,
            address,
            stderr: collected,
        }
    }

    /// Its URL, as a client is configured with it.
    pub fn url(&self) -> String {
        format!("http://{}{ENDPOINT}", self.address)
    }

    /// What it wrote on stderr besides where it listens, once `expected` is among it.
    pub fn stderr_once(&self, expected: &str) -> String {
        eventually(&format!("the proxy says {expected:?}"), || {
            let text = self.stderr.lock().unwrap().clone();
            text.contains(expected).then_some(text)
        })
    }

    /// POSTs one message, in the session named (if any), with these headers besides.
    pub fn post(&self, session: Option<&str>, message: &Value, headers: &[(&str, &str)]) -> Reply {
        let mut all = vec![("content-type", "application/json"), ("accept", ACCEPT)];
        if let Some(session) = session {
            all.push(("mcp-session-id", session));
        }
        all.extend_from_slice(headers);
        request(
            self.address,
            "POST",
            ENDPOINT,
            &all,
            message.to_string().as_bytes(),
        )
    }

    /// Sends a request in a session and returns the answer to it, whether it came as JSON or as
    /// an event stream.
    #[track_caller]
    pub fn request(&self, session: &str, message: &Value) -> Value {
        let reply = self.post(Some(session), message, &[]);
        assert_eq!(reply.status, 200, "{reply:?}");
        answer_to(&reply, &message["id"])
    }

    /// Starts a session: `initialize`, then `notifications/initialized`; returns its id and the
    /// server's answer.
    #[track_caller]
    pub fn initialize(&self, protocol_version: &str) -> (String, Value) {
        let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": protocol_version, "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}});
        let reply = self.post(None, &initialize, &[]);
        assert_eq!(reply.status, 200, "{reply:?}");
        let session = reply
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("a session id: {reply:?}"))
            .to_owned();
        let answer = answer_to(&reply, &initialize["id"]);
        let initialized =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let taken = self.post(Some(&session), &initialized, &[]);
        assert_eq!(taken.status, 202, "{taken:?}");
        (session, answer)
    }
}

impl Drop for ListeningProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The answer to request `id` in a reply: its JSON body, or the event that carries it.
#[track_caller]
pub fn answer_to(reply: &Reply, id: &Value) -> Value {
    let events = reply
        .header("content-type")
        .is_some_and(|kind| kind.starts_with("text/event-stream"));
    if !events {
        return reply.json();
    }
    reply
        .events()
        .into_iter()
        .find(|event| event["id"] == *id && event.get("method").is_none())
        .unwrap_or_else(|| panic!("no answer to {id} among the events: {reply:?}"))
}
