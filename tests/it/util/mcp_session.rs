//! An MCP client's side of a stdio session with `reasons proxy`: JSON lines to it, lines back
//! (each waited for with a deadline), its stderr collected.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a line or the end of the session may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(15);

pub struct McpSession {
    /// The process, for a test that signals or ends it itself.
    pub child: Child,
    /// Its standard input, for a test that writes to it from another thread.
    pub stdin: Option<ChildStdin>,
    /// Its lines as they come, for a test that waits on them itself.
    pub lines: Receiver<Vec<u8>>,
    stderr: Option<JoinHandle<String>>,
}

/// How a session ended.
pub struct Ended {
    pub code: Option<i32>,
    pub stderr: String,
    /// Lines the client had not read yet.
    pub unread: Vec<Vec<u8>>,
}

impl McpSession {
    pub fn start(mut command: Command) -> McpSession {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the session starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if sender.send(line).is_err() => break,
                    Ok(_) => {}
                }
            }
        });
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        McpSession {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("the session reads");
        stdin.flush().expect("the session reads");
    }

    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("JSON");
        line.push(b'\n');
        self.send_raw(&line);
    }

    #[track_caller]
    pub fn recv_raw(&mut self) -> Vec<u8> {
        self.lines
            .recv_timeout(WAIT)
            .expect("a line from the proxy in time")
    }

    #[track_caller]
    pub fn recv(&mut self) -> Value {
        let line = self.recv_raw();
        assert!(line.ends_with(b"\n"), "one message a line");
        serde_json::from_slice(&line).expect("a JSON line")
    }

    /// The next message that is not a notification (a server's progress or log line may come
    /// before the answer).
    #[track_caller]
    pub fn recv_skipping_notifications(&mut self, notifications: &mut Vec<Value>) -> Value {
        loop {
            let message = self.recv();
            if message.get("id").is_some() {
                return message;
            }
            notifications.push(message);
        }
    }

    #[track_caller]
    pub fn request(&mut self, message: &Value) -> Value {
        self.send(message);
        self.recv_skipping_notifications(&mut Vec::new())
    }

    /// Sends a request and returns the next line, raw.
    #[track_caller]
    pub fn request_raw(&mut self, message: &Value) -> Vec<u8> {
        self.send(message);
        self.recv_raw()
    }

    /// Closes stdin, as a client does to end the session, and waits for the end.
    pub fn close(mut self) -> Ended {
        drop(self.stdin.take());
        self.finish()
    }

    /// Waits for the process to end by itself.
    pub fn finish(mut self) -> Ended {
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(status) = self
                .child
                .try_wait()
                .expect("the session can be waited for")
            {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the session did not end in time");
            }
            thread::sleep(Duration::from_millis(10));
        };
        let stderr = self
            .stderr
            .take()
            .map(|stderr| stderr.join().expect("stderr is read"))
            .unwrap_or_default();
        drop(self.stdin.take());
        Ended {
            code: status.code(),
            stderr,
            unread: self.lines.try_iter().collect(),
        }
    }
}

impl Drop for McpSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
