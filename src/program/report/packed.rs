//! A page of many calls holds their rows packed: each run of [`CALLS`] calls is its rows'
//! markup — written by the same code, escaped by the same rule, as a page of a few calls shows
//! them — deflated and in base64, beside the status and tool of each call. The page's script
//! inflates and draws the runs near the screen and leaves the others packed: a browser opens
//! 100,000 calls in seconds, where it took minutes to lay out 100,000 drawn rows, and the page
//! weighs a fifth of what the rows do.
//!
//! Nothing from a log reaches the packed element as text: base64 has no character markup could
//! be made of, and the tools are named by their place in the page's own tool filter.

use std::fmt::Write as _;

use reasons::record::{CallRecord, Status};
use reasons::stats::Report;

use super::csp::base64_into;

/// From this many calls on, the page holds its calls packed and needs its script to show them.
/// Below, every call is drawn, and the page reads as well with scripts off. Drawn, 5,000 calls
/// opened in Chromium in 1.4 s, 10,000 in 3 s and 30,000 in 12.5 s (the time grows faster than
/// the page).
pub const FROM_CALLS: usize = 5_000;

/// How many calls one packed run holds, inflated and drawn together: a screen's worth many
/// times over, and few enough to draw at once without a pause.
pub const CALLS: usize = 200;

/// How hard the rows are deflated. The rows of 100,000 calls, in runs of 200, deflated on one
/// core of the shared 2-core machine: level 1 to 121 bytes a call (in base64) in 1.0 s, level 3
/// to 66 bytes in 2.4 s, level 6 to 56 bytes in 3.3 s. The page is built in about the time
/// `extract` takes, and well under 300 bytes a call, only at level 1.
const LEVEL: u8 = 1;

/// Each call's status and tool, as the filters read them: a call's code is its tool's place
/// among the page's tools times the number of statuses, plus its status's place in
/// [`Status::ALL`].
pub struct Codes<'a> {
    tools: foldhash::HashMap<&'a str, usize>,
}

impl<'a> Codes<'a> {
    /// The codes of the calls counted in `by_tool`, whose groups are the page's tools.
    pub fn new(by_tool: &'a Report) -> Self {
        let tools = by_tool
            .groups
            .iter()
            .enumerate()
            .map(|(at, group)| (group.key.as_str(), at))
            .collect();
        Codes { tools }
    }

    fn code(&self, record: &CallRecord) -> usize {
        let status = Status::ALL
            .iter()
            .position(|status| *status == record.status)
            .unwrap_or(0);
        // Every call's tool is one of the page's: they are counted from the same calls.
        let tool = self.tools.get(record.tool.as_str()).copied().unwrap_or(0);
        tool * Status::ALL.len() + status
    }

    /// Writes the packed element of `calls`, the first of them numbered `first` on the page,
    /// whose rows are `rows`.
    pub fn write(&self, first: usize, calls: &[&CallRecord], rows: &str, out: &mut String) {
        let _ = write!(
            out,
            "<li class=\"packed\" data-first=\"{first}\" data-calls=\""
        );
        for (at, record) in calls.iter().enumerate() {
            if at > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}", self.code(record));
        }
        out.push_str("\"><script type=\"application/x-reasons-rows\">");
        let deflated = miniz_oxide::deflate::compress_to_vec(rows.as_bytes(), LEVEL);
        base64_into(&deflated, out);
        out.push_str("</script></li>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_run_inflates_to_its_rows_and_holds_nothing_a_browser_would_parse() {
        let rows = "<li class=\"call\">&lt;/script&gt;</li>\n".repeat(50);
        let report = reasons::stats::Tally::new(reasons::stats::GroupBy::Tool).report();
        let mut out = String::new();
        Codes::new(&report).write(7, &[], &rows, &mut out);
        let body = &out[out.find("rows\">").unwrap() + 6..out.find("</script>").unwrap()];
        assert!(body
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"+/=".contains(&byte)));
        let deflated = base64_decode(body);
        let inflated = miniz_oxide::inflate::decompress_to_vec(&deflated).unwrap();
        assert_eq!(String::from_utf8(inflated).unwrap(), rows);
        assert!(out.starts_with("<li class=\"packed\" data-first=\"7\" data-calls=\"\">"));
    }

    fn base64_decode(text: &str) -> Vec<u8> {
        let value = |byte: u8| match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            _ => 63,
        };
        let mut bytes = Vec::new();
        for quad in text.as_bytes().chunks(4) {
            let sextets: Vec<u8> = quad
                .iter()
                .filter(|b| **b != b'=')
                .map(|b| value(*b))
                .collect();
            let word = sextets
                .iter()
                .enumerate()
                .fold(0u32, |word, (at, s)| word | u32::from(*s) << (18 - 6 * at));
            bytes.extend(&word.to_be_bytes()[1..sextets.len()]);
        }
        bytes
    }
}
