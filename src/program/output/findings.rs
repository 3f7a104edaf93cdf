//! `check`'s findings: compiler-style lines, GitHub Actions annotations, or the flagged records
//! as JSON lines.

use std::io::{self, Write};

use reasons::record::CallRecord;

use super::writer::Writer;

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckFormat {
    /// `path:line: tool id: message`, like a compiler.
    Text,
    /// GitHub Actions `::warning` annotations.
    Github,
    /// The flagged call records, one JSON object per line.
    Jsonl,
}

/// One flagged call.
pub struct Finding {
    pub record: CallRecord,
    pub message: String,
    /// Whether it is a `--lint` hint rather than a missing reason.
    pub lint: bool,
}

/// Writes each finding as it comes, in one of `check`'s formats.
pub struct FindingWriter {
    pub format: CheckFormat,
}

impl Writer<Finding> for FindingWriter {
    fn write(&mut self, out: &mut dyn Write, finding: &Finding) -> io::Result<()> {
        write_finding(out, self.format, finding)
    }
}

fn write_finding(out: &mut dyn Write, format: CheckFormat, finding: &Finding) -> io::Result<()> {
    let record = &finding.record;
    let what = match &record.call_id {
        Some(id) => format!("{} {id}", record.tool),
        None => record.tool.clone(),
    };
    match format {
        CheckFormat::Text => writeln!(
            out,
            "{}:{}: {what}: {}",
            record.source, record.line, finding.message
        )?,
        CheckFormat::Github => writeln!(
            out,
            "::warning file={},line={},title={}::{}",
            github_property(&record.source),
            record.line,
            github_property(&format!("reasons: {}", finding.message)),
            github_data(&format!("{what}: {}", finding.message)),
        )?,
        CheckFormat::Jsonl => {
            let mut value = serde_json::to_value(record).map_err(io::Error::other)?;
            if let Some(object) = value.as_object_mut() {
                object.insert("finding".to_owned(), finding.message.clone().into());
            }
            writeln!(out, "{value}")?;
        }
    }
    Ok(())
}

/// GitHub's workflow-command escaping of a message.
fn github_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub's escaping of a property value (`file=`, `title=`), where `:` and `,` separate.
fn github_property(text: &str) -> String {
    github_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escaping_keeps_annotations_whole() {
        assert_eq!(github_data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(github_property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
