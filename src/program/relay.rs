//! What `filter` and `proxy` share: moving lines from a reader to a writer through one half of the
//! layer, and telling the human about each reason taken off.

use std::fmt;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use reasons::layer::TakenReason;
use reasons::masking::Masking;
use reasons::reasons_log::{self, Record, Via};
use reasons::stream::Line;

/// Large enough that a bulk stream moves in few system calls.
const BUFFER: usize = 1 << 16;

/// Which side of a [`pump`] failed.
#[derive(Debug)]
pub enum PumpError {
    /// Reading the input.
    Read(io::Error),
    /// Writing the output.
    Write(io::Error),
    /// Reporting a reason.
    Report(io::Error),
}

impl fmt::Display for PumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PumpError::Read(error) => write!(f, "cannot read: {error}"),
            PumpError::Write(error) => write!(f, "cannot write: {error}"),
            PumpError::Report(error) => write!(f, "cannot report a reason: {error}"),
        }
    }
}

/// Passes every line of `input` through `transform` to `output`, in order, one line out per line
/// in, until `input` ends.
///
/// Output is flushed whenever no complete line is left to read without waiting: the peer may be
/// waiting for this answer before it sends anything more, while a bulk stream still moves in
/// large writes.
pub fn pump<R: Read, W: Write>(
    input: R,
    output: W,
    mut transform: impl FnMut(&[u8]) -> Line<'_>,
    mut report: impl FnMut(&TakenReason) -> io::Result<()>,
) -> Result<(), PumpError> {
    let mut input = BufReader::with_capacity(BUFFER, input);
    let mut output = BufWriter::with_capacity(BUFFER, output);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(error) => {
                // What was answered so far still goes out.
                let _ = output.flush();
                return Err(PumpError::Read(error));
            }
        }
        let out = transform(&line);
        for reason in &out.reasons {
            report(reason).map_err(PumpError::Report)?;
        }
        output.write_all(&out.bytes).map_err(PumpError::Write)?;
        if memchr::memchr(b'\n', input.buffer()).is_none() {
            output.flush().map_err(PumpError::Write)?;
        }
    }
    output.flush().map_err(PumpError::Write)
}

/// Where the reasons taken off calls go: stderr as `tool: reason` for the human watching, or a
/// reasons log; and with `--otlp`, a collector as spans too.
pub struct ReasonSink {
    to: Destination,
    via: Via,
    spans: Option<Arc<crate::program::otlp::Exporter>>,
    /// Whether [`ReasonSink::report_or_say_once`] has said that the log cannot be written.
    failure_said: bool,
}

enum Destination {
    /// One `tool: reason` line on stderr per reason.
    Stderr,
    /// One record per reason, appended to a reasons log.
    Log(reasons_log::Writer),
}

impl ReasonSink {
    /// Opens the log, when there is one, for appending, and starts the exporter to `otlp`, its
    /// spans masked as `masking` says (the log keeps what the model wrote).
    pub fn open(
        path: Option<&Path>,
        via: Via,
        otlp: Option<&str>,
        masking: Masking,
    ) -> anyhow::Result<ReasonSink> {
        let to = match path {
            None => Destination::Stderr,
            Some(path) => Destination::Log(
                reasons_log::Writer::open(path)
                    .with_context(|| format!("cannot open the reasons log {}", path.display()))?,
            ),
        };
        let spans = otlp
            .map(|url| crate::program::otlp::Exporter::start(url, masking))
            .transpose()?
            .map(Arc::new);
        Ok(ReasonSink {
            to,
            via,
            spans,
            failure_said: false,
        })
    }

    /// The exporter the spans go to, to wait for at the end.
    pub fn spans(&self) -> Option<Arc<crate::program::otlp::Exporter>> {
        self.spans.clone()
    }

    /// The log's path, when reasons go to one.
    pub fn path(&self) -> Option<&Path> {
        match &self.to {
            Destination::Stderr => None,
            Destination::Log(log) => Some(log.path()),
        }
    }

    /// Reports one reason, in a single write so that lines from other writers (a proxied
    /// server's stderr, another process appending to the same log) never cut through it.
    pub fn report(&mut self, reason: &TakenReason) -> io::Result<()> {
        let record = || Record::now(self.via, reason.clone(), None);
        if let Some(spans) = &self.spans {
            spans.span(&record());
        }
        match &self.to {
            // The human channel failing is no reason to stop the stream.
            Destination::Stderr => {
                crate::program::messages::line(&reason.to_string());
                Ok(())
            }
            Destination::Log(log) => log.append(&record()),
        }
    }

    /// Reports one reason for a session that goes on whatever becomes of the log (the proxy's):
    /// a log that cannot be written is said on stderr once, not for every reason.
    pub fn report_or_say_once(&mut self, reason: &TakenReason) {
        if let Err(error) = self.report(reason) {
            if !self.failure_said {
                self.failure_said = true;
                if let Some(path) = self.path() {
                    crate::program::messages::message!(
                        "cannot write the reasons log {}: {error}",
                        path.display()
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Read};

    use proptest::collection::vec as vec_of;
    use proptest::prelude::*;
    use proptest::sample::select;
    use reasons::stream::{Filter, Options};

    use super::pump;

    /// Hands out the input in the chunk sizes it is given, as a pipe does: short reads that cut
    /// lines anywhere.
    struct ShortReads<'a> {
        input: &'a [u8],
        sizes: Vec<usize>,
        next: usize,
    }

    impl Read for ShortReads<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            let size = self.sizes[self.next % self.sizes.len()];
            self.next += 1;
            let size = size.min(buffer.len()).min(self.input.len());
            buffer[..size].copy_from_slice(&self.input[..size]);
            self.input = &self.input[size..];
            Ok(size)
        }
    }

    /// A line of a stream, and whether the layer may rewrite it.
    fn line() -> impl Strategy<Value = (Vec<u8>, bool)> {
        let may_change = select(vec![
            &br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#[..],
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"a":1,"reason":"why"}}}"#,
            br#"{"type":"function","function":{"name":"echo","arguments":"{\"reason\":\"r\"}"},"id":"c"}"#,
            br#"[{"name":"echo","input_schema":{"type":"object"}}]"#,
        ])
        .prop_map(|line: &[u8]| (line.to_vec(), true));
        let untouched = select(vec![
            &br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}"#[..],
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"other","arguments":{"reason":"r"}}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"stop"}}"#,
            br#"{"role":"assistant","tool_calls":[{"id":"x","function":{"name":"echo","arguments":"{\"reason\":\"r\"}"}}]}"#,
            br#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"reason\":\"\xff\"}}}",
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","#,
            b"",
            b"   ",
            b"\0\0",
        ])
        .prop_map(|line: &[u8]| (line.to_vec(), false));
        let garbage = vec_of(any::<u8>(), 0..40).prop_map(|mut bytes| {
            // Not JSON: nothing that starts with `x` parses.
            bytes.retain(|&byte| byte != b'\n');
            bytes.insert(0, b'x');
            (bytes, false)
        });
        prop_oneof![2 => may_change, 3 => untouched, 1 => garbage]
    }

    fn config() -> ProptestConfig {
        ProptestConfig {
            cases: 128,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// For any stream, however it is cut into reads, `filter` writes exactly one line per
        /// line read, in order, and every line the layer may not rewrite comes out byte for byte.
        #[test]
        fn prop_filter_writes_one_line_per_line_and_untouched_lines_byte_for_byte(
            lines in vec_of((line(), select(vec!["\n", "\r\n"])), 0..40),
            last_without_ending in any::<bool>(),
            sizes in vec_of(1usize..300, 1..8),
        ) {
            let mut input = Vec::new();
            let mut expected = Vec::new();
            for (n, ((line, may_change), ending)) in lines.iter().enumerate() {
                let mut line = line.clone();
                if !(last_without_ending && n + 1 == lines.len()) {
                    line.extend_from_slice(ending.as_bytes());
                }
                if !line.is_empty() {
                    input.extend_from_slice(&line);
                    expected.push((line, *may_change));
                }
            }
            let mut output = Vec::new();
            let mut filter = Filter::new(Options::default());
            let reader = ShortReads { input: &input, sizes, next: 0 };
            pump(reader, &mut output, |line| filter.line(line), |_| Ok(()))
                .map_err(|error| TestCaseError::fail(error.to_string()))?;

            let written: Vec<&[u8]> = output.split_inclusive(|&byte| byte == b'\n').collect();
            prop_assert_eq!(written.len(), expected.len());
            for (line_out, (line_in, may_change)) in written.iter().zip(&expected) {
                if !may_change {
                    prop_assert_eq!(*line_out, &line_in[..]);
                }
                prop_assert_eq!(line_in.ends_with(b"\n"), line_out.ends_with(b"\n"));
                prop_assert_eq!(line_in.ends_with(b"\r\n"), line_out.ends_with(b"\r\n"));
            }
        }
    }
}
