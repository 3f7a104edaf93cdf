//! A real Arize Phoenix (`.ci/real-parts` installs it in a venv of its own), the OpenTelemetry
//! collector the span tests read back from.

use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::free_port;
use super::real_parts::part;
use super::upstream::request;

/// Phoenix serving on free loopback ports, its data in a temporary folder; stopped when dropped.
pub struct Phoenix {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Phoenix {
    pub fn start() -> Phoenix {
        // Its own python runs it, not the `phoenix` script, whose first line names the folder
        // the venv was made in: the venv keeps working wherever the real parts are.
        let python = part("phoenix-venv/bin/python");
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = crate::util::environment::clear(&mut Command::new(python))
            .args(["-m", "phoenix.server.main", "serve"])
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("phoenix starts");
        let phoenix = Phoenix {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "phoenix did not listen");
            thread::sleep(Duration::from_millis(200));
        }
        phoenix
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans Phoenix holds in its default project.
    pub fn spans(&self) -> Vec<Value> {
        let address = format!("127.0.0.1:{}", self.port).parse().unwrap();
        let reply = request(address, "GET", "/v1/projects/default/spans", &[], b"");
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        reply.json()["data"].as_array().cloned().unwrap_or_default()
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
