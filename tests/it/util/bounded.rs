//! The bounded runner: a program run to its end with a deadline, so that a real part that hangs
//! (an agent waiting for a prompt, a server never closing its pipes) fails its test with what it
//! printed instead of hanging the whole test binary.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How long any one real part may run before the test kills it and fails.
pub const LIMIT: Duration = Duration::from_secs(120);

/// Runs `command` to its end with nothing on stdin, killing it and everything it started when it
/// runs past `LIMIT`.
#[track_caller]
pub fn run_bounded(command: Command) -> Output {
    run_bounded_within(command, LIMIT)
}

/// `run_bounded` with a limit of the caller's.
#[track_caller]
pub fn run_bounded_within(mut command: Command, limit: Duration) -> Output {
    // Its own process group, so that a timeout ends what it started too (MCP servers, the proxy).
    command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|error| panic!("{command:?} does not start: {error}"));
    let read_all = |mut pipe: Box<dyn Read + Send>| {
        let (done, result) = mpsc::channel();
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = done.send(bytes);
        });
        result
    };
    let stdout = read_all(Box::new(child.stdout.take().expect("stdout")));
    let stderr = read_all(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    // What is left of the pipes once the child is gone; a grandchild holding them open is not
    // waited for past the deadline.
    let rest = |pipe: mpsc::Receiver<Vec<u8>>| {
        let wait = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(5);
        String::from_utf8_lossy(&pipe.recv_timeout(wait).unwrap_or_default()).into_owned()
    };
    let Some(status) = status else {
        // The group is still there: its leader is not reaped yet.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .status();
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "{command:?} ran past {limit:?}\nstdout: {}\nstderr: {}",
            rest(stdout),
            rest(stderr)
        );
    };
    Output {
        status,
        stdout: rest(stdout).into_bytes(),
        stderr: rest(stderr).into_bytes(),
    }
}
