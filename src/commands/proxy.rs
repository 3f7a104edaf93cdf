//! `reasons proxy -- SERVER [ARGS…]`: an MCP stdio server behind the reasons layer.
//!
//! One thread per direction, so that no message ever waits for one going the other way; the
//! server's stderr is its own, inherited, so it reaches ours as it comes. Messages are framed by
//! hand as JSON lines: whatever the layer does not rewrite goes on as the very bytes that came.

use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use reasons::reasons_log::Via;
use reasons::stream::proxy_halves;

use super::relay::{pump, PumpError, ReasonSink};
use crate::exit_codes::ExitCode;

/// How long a server may take to exit once its client has gone and its stdin is closed.
const GRACE: Duration = Duration::from_secs(2);

/// How often to look whether the server has exited: the standard library cannot wait for a child
/// and for a message at once.
const TICK: Duration = Duration::from_millis(10);

/// Why a direction stopped.
enum Ended {
    /// The client closed our stdin (or it failed): the session is over.
    ClientInput,
    /// The client stopped reading our stdout: the session is over.
    ClientOutput,
    /// The server's stdout is closed and all of it has reached the client.
    ServerOutput,
    /// The server stopped reading its stdin: it is exiting, or will be noticed when it does.
    ServerInput,
}

/// Runs `server` behind the layer until it exits, and exits with its status: its own exit code,
/// or 128 + the number of the signal that ended it.
pub fn run(server: &[String], reasons_log: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (program, args) = server.split_first().context("no server to run")?;
    let mut sink = ReasonSink::open(reasons_log, Via::Proxy)?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let (Some(server_input), Some(server_output)) = (child.stdin.take(), child.stdout.take())
    else {
        anyhow::bail!("cannot talk to {program}: its stdin or stdout is missing");
    };

    let (mut client_half, mut server_half) = proxy_halves();
    let (ended, events) = mpsc::channel();

    // The client's lines are read by one thread and written to the server by another, through a
    // queue: a server that stops reading its stdin must not stop us from reading ours, or a
    // client that gives up and leaves would never be noticed and the proxy would hang with it.
    let (queue, queued) = mpsc::channel::<Vec<u8>>();
    let written = Arc::new(AtomicU64::new(0));
    let to_server = ended.clone();
    thread::Builder::new()
        .name("client-to-server".to_owned())
        .spawn(move || {
            let mut log_failed = false;
            let pumped = pump(
                io::stdin().lock(),
                Queue(queue),
                |line| client_half.line(line),
                |reason| {
                    // A log that cannot be written must not break the client's session: say so
                    // once, and keep forwarding.
                    if let Err(error) = sink.report(reason) {
                        if !log_failed {
                            log_failed = true;
                            let path = sink.path().map(Path::display);
                            if let Some(path) = path {
                                eprintln!("reasons: cannot write the reasons log {path}: {error}");
                            }
                        }
                    }
                    Ok(())
                },
            );
            // Returning drops the queue: once the writer has passed on what is in it, it closes
            // the server's stdin, which is how the server learns the client has gone.
            let _ = to_server.send(match pumped {
                Ok(()) | Err(PumpError::Read(_)) | Err(PumpError::Report(_)) => Ended::ClientInput,
                Err(PumpError::Write(_)) => Ended::ServerInput,
            });
        })
        .context("cannot start a thread")?;
    let progress = Arc::clone(&written);
    thread::Builder::new()
        .name("to-server".to_owned())
        .spawn(move || {
            let mut server_input = server_input;
            for chunk in queued {
                if server_input.write_all(&chunk).is_err() {
                    // The server stopped reading: dropping the queue tells the reading thread.
                    break;
                }
                progress.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            }
        })
        .context("cannot start a thread")?;

    let to_client = ended.clone();
    thread::Builder::new()
        .name("server-to-client".to_owned())
        .spawn(move || {
            let pumped = pump(
                server_output,
                io::stdout().lock(),
                |line| server_half.line(line),
                |_| Ok(()),
            );
            let _ = to_client.send(match pumped {
                Err(PumpError::Write(_)) => Ended::ClientOutput,
                _ => Ended::ServerOutput,
            });
        })
        .context("cannot start a thread")?;

    let mut output_delivered = false;
    let mut end_by: Option<Instant> = None;
    let mut last_written = 0;
    let status = loop {
        if let Some(status) = child.try_wait().context("cannot wait for the server")? {
            break status;
        }
        // The grace period runs from when the server last took something from us: one still
        // reading what the client sent before it left is not stuck.
        let now_written = written.load(Ordering::Relaxed);
        if now_written != last_written {
            last_written = now_written;
            if let Some(end_by) = &mut end_by {
                *end_by = Instant::now() + GRACE;
            }
        }
        if end_by.is_some_and(|end_by| Instant::now() >= end_by) {
            eprintln!(
                "reasons: {program} still running {}s after its client left; ending it",
                GRACE.as_secs()
            );
            // It may have exited in the meantime: then there is nothing to kill.
            let _ = child.kill();
            break child.wait().context("cannot wait for the server")?;
        }
        match events.recv_timeout(TICK) {
            Ok(Ended::ClientInput) => {
                end_by.get_or_insert_with(|| Instant::now() + GRACE);
            }
            Ok(Ended::ClientOutput) => {
                // Nothing more can be delivered.
                output_delivered = true;
                end_by.get_or_insert_with(|| Instant::now() + GRACE);
            }
            Ok(Ended::ServerOutput) => output_delivered = true,
            Ok(Ended::ServerInput) | Err(RecvTimeoutError::Timeout) => {}
            // Unreachable while `ended` lives; waiting on the child alone is still right.
            Err(RecvTimeoutError::Disconnected) => thread::sleep(TICK),
        }
    };

    // Everything the server wrote reaches the client before we go. A grandchild that kept the
    // server's stdout open could hold it forever, so this wait is bounded.
    let deadline = Instant::now() + GRACE;
    while !output_delivered {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(Ended::ServerOutput | Ended::ClientOutput) => output_delivered = true,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    drop(ended);
    Ok(ExitCode::Child(exit_code(status)))
}

/// The client→server half's output: each write goes to the thread that writes to the server.
struct Queue(Sender<Vec<u8>>);

impl Write for Queue {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0
            .send(bytes.to_vec())
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The status to exit with: the server's exit code, or 128 + the signal that ended it, as shells
/// report it.
fn exit_code(status: ExitStatus) -> i32 {
    if let Some(code) = status.code() {
        return code;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    2
}
