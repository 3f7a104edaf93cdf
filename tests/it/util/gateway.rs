//! A running `reasons gateway` on a port it picks, in front of a scripted model
//! ([`crate::util::upstream`]): every gateway test, and every real agent, talks through one.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::util::upstream::{listening_address, request, Reply};
use crate::util::{arg, reasons};

/// A running gateway; killed when dropped.
pub struct Gateway {
    child: Child,
    pub address: SocketAddr,
    /// The line that says where it listens and where it forwards.
    pub startup: String,
    pub log: PathBuf,
    stderr: Arc<Mutex<String>>,
    _dir: Option<tempfile::TempDir>,
}

impl Gateway {
    pub fn start(upstream: &str, extra: &[&str]) -> Gateway {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let log = dir.path().join("reasons.jsonl");
        let mut gateway = Gateway::start_logging_to(upstream, &log, extra);
        gateway._dir = Some(dir);
        gateway
    }

    pub fn start_logging_to(upstream: &str, log: &Path, extra: &[&str]) -> Gateway {
        Gateway::start_with(&["--upstream", upstream], log, extra)
    }

    /// One gateway for every API, each `(api, url)` sent to its own upstream
    /// (`--upstream API=URL`, repeated).
    pub fn start_per_api(upstreams: &[(&str, &str)], log: &Path, extra: &[&str]) -> Gateway {
        let upstreams: Vec<String> = upstreams
            .iter()
            .map(|(api, url)| format!("{api}={url}"))
            .collect();
        let args: Vec<&str> = upstreams
            .iter()
            .flat_map(|upstream| ["--upstream", upstream.as_str()])
            .collect();
        Gateway::start_with(&args, log, extra)
    }

    /// A gateway with these `--upstream` arguments (none: each provider's own API).
    pub fn start_with(upstreams: &[&str], log: &Path, extra: &[&str]) -> Gateway {
        Gateway::start_with_env(upstreams, log, extra, &[])
    }

    /// The same, with these variables in its environment.
    pub fn start_with_env(
        upstreams: &[&str],
        log: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Gateway {
        let args = [upstreams, &["--reasons-log", arg(log)], extra].concat();
        let mut gateway = Gateway::spawn(&args, env);
        gateway.log = log.to_owned();
        gateway
    }

    /// A gateway in front of `upstream` with no reasons log named: it keeps them in its default
    /// log, in the HOME of its own that every command a test starts has (`log` is where it said).
    pub fn start_with_default_log(upstream: &str) -> Gateway {
        let mut gateway = Gateway::spawn(&["--upstream", upstream], &[]);
        let (_, log) = gateway
            .startup
            .trim_end()
            .rsplit_once(", reasons to ")
            .expect("the startup line names the reasons log");
        gateway.log = PathBuf::from(log);
        gateway
    }

    /// `reasons gateway ARGS` on a port it picks, once it listens.
    fn spawn(args: &[&str], env: &[(&str, &str)]) -> Gateway {
        let mut child = reasons()
            .envs(env.iter().copied())
            .args(["gateway", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("reasons gateway starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        // The gateway says where it listens once its port is open; warnings may come first.
        let mut before = String::new();
        let address = loop {
            let mut line = String::new();
            let read = stderr
                .read_line(&mut line)
                .expect("the gateway writes on stderr");
            assert!(read > 0, "the gateway ended before listening: {before}");
            match listening_address(&line) {
                Some(address) => break (address, line),
                None => before.push_str(&line),
            }
        };
        let (address, startup) = address;
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
        Gateway {
            child,
            address,
            startup,
            log: PathBuf::new(),
            stderr: collected,
            _dir: None,
        }
    }

    /// What the gateway wrote on stderr besides where it listens, once `expected` is among it.
    pub fn stderr_once(&self, expected: &str) -> String {
        self.stderr_until(|text| text.contains(expected))
    }

    /// What the gateway wrote on stderr, once `done` says it is all there (or after 10 seconds).
    pub fn stderr_until(&self, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = self.stderr.lock().unwrap().clone();
            if done(&text) || Instant::now() > deadline {
                return text;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The gateway's process id, to read its memory and descriptors.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn post(&self, path: &str, body: &[u8]) -> Reply {
        request(
            self.address,
            "POST",
            path,
            &[("content-type", "application/json"), ("x-api-key", SECRET)],
            body,
        )
    }
}

impl Gateway {
    /// Kills the gateway now, as a replica dies mid-request.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The credential every test sends: it must reach the upstream and nothing else.
pub const SECRET: &str = "sk-ant-test-0123456789-secret";
