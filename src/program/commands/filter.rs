//! `reasons filter`: the layer on a newline-delimited JSON stream, stdin to stdout.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::Context;
use reasons::masking::Masking;
use reasons::reasons_log::Via;
use reasons::stream::{Filter, Options};

use crate::program::exit_codes::ExitCode;
use crate::program::relay::{pump, PumpError, ReasonSink};

/// Passes `input` through the layer to `output`, one line out per line in, reporting each
/// reason taken off on stderr or, with a `reasons_log`, appending it there; with `otlp`, sending
/// it to that collector too, masked as `masking` says.
pub fn run(
    options: Options,
    reasons_log: Option<&Path>,
    otlp: Option<&str>,
    masking: Masking,
    input: impl Read,
    output: impl Write,
) -> anyhow::Result<ExitCode> {
    let mut sink = ReasonSink::open(reasons_log, Via::Filter, otlp, masking)?;
    let mut filter = Filter::new(options);
    let pumped = pump(
        input,
        output,
        |line| filter.line(line),
        |reason| sink.report(reason),
    );
    if let Some(spans) = sink.spans() {
        spans.flush();
    }
    match pumped {
        Ok(()) => Ok(ExitCode::Success),
        Err(PumpError::Read(error)) => Err(error).context("cannot read standard input"),
        Err(PumpError::Write(error)) => Err(error).context("cannot write standard output"),
        Err(PumpError::Report(error)) => {
            let path = sink.path().map(Path::display);
            Err(error).with_context(|| match path {
                Some(path) => format!("cannot write the reasons log {path}"),
                None => "cannot report a reason".to_owned(),
            })
        }
    }
}
