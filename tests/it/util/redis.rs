//! A real Redis (Debian's `redis-server`, which `.ci/real-parts` installs), on a free loopback
//! port, without persistence, for the store's tests.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Debian's `redis-server` on a free loopback port, without persistence; stopped when dropped.
pub struct Redis {
    child: Option<Child>,
    port: u16,
    _dir: tempfile::TempDir,
}

const REDIS_SERVER: &str = "/usr/bin/redis-server";

impl Redis {
    pub fn start() -> Redis {
        assert!(
            Path::new(REDIS_SERVER).exists(),
            "{REDIS_SERVER} is missing: install the real parts with `.ci/real-parts target/real-parts` \
             (it runs `apt-get install -y redis-server`)"
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut redis = Redis {
            child: None,
            port,
            _dir: tempfile::tempdir().unwrap(),
        };
        redis.restart();
        redis
    }

    /// Starts it (again) on its port, and waits until it answers.
    pub fn restart(&mut self) {
        let child = crate::util::environment::clear(&mut Command::new(REDIS_SERVER))
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(self._dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.ping().is_none() {
            assert!(Instant::now() < deadline, "redis-server did not answer");
            thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn ping(&self) -> Option<()> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.write_all(b"PING\r\n").ok()?;
        let mut reply = String::new();
        std::io::BufRead::read_line(&mut BufReader::new(stream), &mut reply).ok()?;
        (reply.trim() == "+PONG").then_some(())
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Every value it holds under a key matching `pattern`, read with `redis-cli`.
    pub fn values(&self, pattern: &str) -> Vec<String> {
        let cli = |args: &[&str]| {
            let output = crate::util::environment::clear(&mut Command::new("redis-cli"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "--raw"])
                .args(args)
                .output()
                .expect("redis-cli runs (Debian's redis-tools, beside redis-server)");
            assert!(output.status.success(), "redis-cli {args:?}");
            String::from_utf8(output.stdout).unwrap()
        };
        cli(&["--scan", "--pattern", pattern])
            .lines()
            .map(|key| cli(&["GET", key]))
            .collect()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
