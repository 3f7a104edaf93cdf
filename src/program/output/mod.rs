//! Every command's output: one writer per output format, all behind [`Writer`], so `extract`,
//! `check` and `stats` render the same way. The formats are the project's own types: the
//! command line's (`crate::program::cli`) are turned into them in `commands`.

mod cells;
mod coverage;
mod delimited;
mod findings;
mod jsonl;
mod records;
mod table;
mod writer;

use reasons::stats::Report;

pub use coverage::{StatsFormat, TableWidth};
pub use findings::{CheckFormat, Finding};
pub use records::{record_writer, ExtractFormat, WriterOptions};
pub use writer::Writer;

/// The writer of `check`'s findings for `format`.
pub fn finding_writer(format: CheckFormat) -> Box<dyn Writer<Finding>> {
    Box::new(findings::FindingWriter { format })
}

/// The writer of a `stats` report for `format`, a table laid out `width` characters wide.
pub fn report_writer(format: StatsFormat, width: TableWidth) -> Box<dyn Writer<Report>> {
    Box::new(coverage::ReportWriter { format, width })
}
