//! `reasons export --otlp URL [PATHS…]`: the calls of recorded logs, every status, as
//! OpenTelemetry spans, so that coverage can be charted where a team already looks.
//!
//! Each call is one span (`otlp`'s shape, with `reasons.status` and `reasons.reason_from`), its
//! ids derived from the call id (from its place in its log when it has none): exporting a log
//! again sends the same spans. Reasons and what calls touched are masked as `masking` says.

use reasons::masking::Masking;

use crate::program::exit_codes::ExitCode;
use crate::program::otlp::Exporter;
use crate::program::read::logs_to_read::{report_problems, LogsToRead};
use crate::program::read::schedule::read_each_in_order;

pub fn run(logs: LogsToRead, otlp: &str, masking: Masking) -> anyhow::Result<ExitCode> {
    let exporter = Exporter::start(otlp, masking)?;
    let mut failed = report_problems(&logs.problems);
    let mut calls = 0;
    let all_read = read_each_in_order(
        &logs.sources,
        &logs.source_options,
        Vec::new,
        |records, record| records.push(record),
        |_, records, summary| {
            calls += summary.calls;
            for record in &records {
                exporter.call_span(record);
            }
            Ok(())
        },
    )?;
    failed |= !all_read;
    exporter.flush();
    crate::program::read::logs_to_read::say_if_no_agent_log(&logs.sources, calls, failed);
    let dropped = exporter.dropped();
    if dropped > 0 {
        crate::program::messages::message!(
            "{dropped} of {calls} calls did not reach the collector {otlp}"
        );
        failed = true;
    }
    Ok(if failed {
        ExitCode::Error
    } else {
        ExitCode::Success
    })
}
