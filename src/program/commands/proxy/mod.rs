//! `reasons proxy -- SERVER [ARGS…]`: an MCP stdio server behind the reasons layer.
//!
//! One thread per direction, so that no message ever waits for one going the other way; the
//! server's stderr is its own, inherited, so it reaches ours as it comes. Messages are framed by
//! hand as JSON lines: whatever the layer does not rewrite goes on as the very bytes that came.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use reasons::layer::ReasonPosition;
use reasons::masking::Masking;
use reasons::reasons_log::Via;
use reasons::stream::proxy_halves;

use crate::program::exit_codes::ExitCode;
use crate::program::relay::{pump, PumpError, ReasonSink};

mod headers;
mod jsonrpc;
pub mod listen;
mod oauth;
pub mod remote;
mod sse;

/// How long a server may take to exit once its client has gone and its stdin is closed.
const GRACE: Duration = Duration::from_secs(2);

/// How often to look whether the server has exited: the standard library cannot wait for a child
/// and for a message at once.
const TICK: Duration = Duration::from_millis(10);

/// How much of the client's messages may wait for a server that is not reading them. Beyond it
/// the client is held back, as a pipe holds back its writer, so memory stays flat however long
/// the server does not read; below it a client that gives up and leaves is still noticed.
const QUEUED_BYTES: usize = 8 << 20;

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
/// or 128 + the number of the signal that ended it. With `reasons_in_meta` (`--meta`) each
/// reason taken off a call goes on to the server in the call's `params._meta` (as the model wrote
/// it: the server is the one the call is for); with `otlp`, to that collector too, masked as
/// `masking` says. The server's catalogues get the parameter at `position`.
pub fn run(
    server: &[String],
    reasons_log: Option<&Path>,
    reasons_in_meta: bool,
    position: ReasonPosition,
    otlp: Option<&str>,
    masking: Masking,
) -> anyhow::Result<ExitCode> {
    let (program, args) = server.split_first().context("no server to run")?;
    let mut sink = ReasonSink::open(reasons_log, Via::Proxy, otlp, masking)?;
    let spans = sink.spans();
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

    let (mut client_half, mut server_half) = proxy_halves(position);
    if reasons_in_meta {
        client_half = client_half.forward_reasons_in_meta();
    }
    let (ended, events) = mpsc::channel();

    // The client's lines are read by one thread and written to the server by another, through a
    // queue: a server that stops reading its stdin must not stop us from reading ours at once,
    // or a client that gives up and leaves would never be noticed and the proxy would hang with
    // it. The queue is bounded, so a client that keeps writing is held back in the end.
    let (queue, queued) = queue(QUEUED_BYTES);
    let written = Arc::new(AtomicU64::new(0));
    let to_server = ended.clone();
    thread::Builder::new()
        .name("client-to-server".to_owned())
        .spawn(move || {
            let pumped = pump(
                io::stdin().lock(),
                queue,
                |line| client_half.line(line),
                |reason| {
                    // A log that cannot be written must not break the client's session.
                    sink.report_or_say_once(reason);
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
            crate::program::messages::message!(
                "{program} still running {}s after its client left; ending it",
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
    // The last spans leave before the proxy does (the thread holding the sink may still be
    // waiting on a client that never closes).
    if let Some(spans) = spans {
        spans.flush();
    }
    Ok(ExitCode::Child(exit_code(status)))
}

/// Writes on their way from the client→server half to the thread that writes to the server,
/// at most `limit` bytes of them (a single write longer than that still goes, alone).
struct Queue {
    state: Mutex<Queued>,
    /// Signalled whenever a write is queued or taken, or a side goes.
    changed: Condvar,
    limit: usize,
}

#[derive(Default)]
struct Queued {
    writes: VecDeque<Vec<u8>>,
    bytes: usize,
    /// The client→server half has finished: once the queue is empty, so is the server's input.
    writer_gone: bool,
    /// The server stopped reading: what is written now can never reach it.
    reader_gone: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Queued> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A queue of `limit` bytes: the end the client→server half writes to, and the writes in order.
fn queue(limit: usize) -> (QueueWriter, QueueReader) {
    let queue = Arc::new(Queue {
        state: Mutex::new(Queued::default()),
        changed: Condvar::new(),
        limit,
    });
    (QueueWriter(Arc::clone(&queue)), QueueReader(queue))
}

/// The client→server half's output: a write waits while the queue is full.
struct QueueWriter(Arc<Queue>);

impl Write for QueueWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let queue = &self.0;
        let mut state = queue.lock();
        while !state.reader_gone && state.bytes > 0 && state.bytes + bytes.len() > queue.limit {
            state = queue
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if state.reader_gone {
            return Err(io::Error::from(io::ErrorKind::BrokenPipe));
        }
        state.bytes += bytes.len();
        state.writes.push_back(bytes.to_vec());
        queue.changed.notify_all();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for QueueWriter {
    fn drop(&mut self) {
        self.0.lock().writer_gone = true;
        self.0.changed.notify_all();
    }
}

/// The writes for the server, in order, until the client→server half has finished.
struct QueueReader(Arc<Queue>);

impl Iterator for QueueReader {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        let queue = &self.0;
        let mut state = queue.lock();
        loop {
            if let Some(write) = state.writes.pop_front() {
                state.bytes -= write.len();
                queue.changed.notify_all();
                return Some(write);
            }
            if state.writer_gone {
                return None;
            }
            state = queue
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for QueueReader {
    fn drop(&mut self) {
        self.0.lock().reader_gone = true;
        self.0.changed.notify_all();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_holds_the_writer_back_until_the_reader_takes_a_write() {
        let (mut writer, mut reader) = queue(10);
        writer.write_all(b"0123456").expect("room");
        let (wrote, waited) = mpsc::channel();
        let held = thread::spawn(move || {
            writer
                .write_all(b"789abc")
                .expect("room, once the first write is taken");
            wrote.send(()).expect("the test waits");
        });
        // Nothing wakes the writer until the reader takes something: the first write comes
        // back whole, then the second.
        assert_eq!(reader.next().as_deref(), Some(&b"0123456"[..]));
        waited.recv().expect("the writer goes on");
        assert_eq!(reader.next().as_deref(), Some(&b"789abc"[..]));
        held.join().expect("the writer ends");
        assert_eq!(reader.next(), None, "the writer is gone");
    }

    #[test]
    fn a_write_longer_than_the_queue_still_goes_alone() {
        let (mut writer, mut reader) = queue(4);
        writer
            .write_all(b"longer than four")
            .expect("an empty queue takes it");
        drop(writer);
        assert_eq!(reader.next().as_deref(), Some(&b"longer than four"[..]));
        assert_eq!(reader.next(), None);
    }

    #[test]
    fn a_reader_that_goes_fails_the_writer_even_when_it_waits() {
        let (mut writer, reader) = queue(4);
        writer.write_all(b"full").expect("room");
        let held = thread::spawn(move || writer.write_all(b"more"));
        drop(reader);
        let error = held
            .join()
            .expect("the writer ends")
            .expect_err("no reader");
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
    }
}
