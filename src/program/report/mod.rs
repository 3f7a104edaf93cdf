//! The page `reasons report` writes: one self-contained HTML file for the person reviewing the
//! sessions read.
//!
//! Markup is written with maud: every value put into it goes through maud's escaping unless it
//! is one of this module's own constants, so no text from a log can become markup. The page
//! fetches nothing — its style, script and charts are inline — and its Content-Security-Policy
//! allows exactly that style and that script, by hash, and nothing else.

mod charts;
mod csp;
mod diff;
mod json;
mod packed;

use std::fmt::Write as _;
use std::io::{self, Write};

use maud::{html, Markup, PreEscaped, Render, DOCTYPE};
use reasons::call_arguments::{decode_arguments, Arguments};
use reasons::layer::REASON_PARAM;
use reasons::record::{CallRecord, ReasonFrom, Status};
use reasons::stats::Report;
use serde_json::Value;

use crate::program::output::Writer;
use csp::content_security_policy;
use json::{thousands, Long, Pretty};
use reasons::touched::{self, View};
use reasons::visible::{self, Mark};

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// The most characters of one text the page holds: a 50 MB argument is shown by its first
/// 64 Ki characters and a note saying how many more there are.
pub const MAX_SHOWN: usize = 64 * 1024;

/// A block of text longer than this many lines is shown by its opening, the rest one click away.
const BLOCK_LINES: usize = 14;
/// …or longer than this many characters.
const BLOCK_CHARS: usize = 2_000;
/// Diff lines shown for one edit before the rest is left to the arguments.
const DIFF_LINES: usize = 60;

/// What the page is made of: the calls, and the counts `stats` gives for them.
pub struct Page<'a> {
    /// Every call read, in input order, with its arguments.
    pub records: &'a [CallRecord],
    /// The counts per tool (with the files read and malformed lines skipped).
    pub by_tool: &'a Report,
    /// The counts per day.
    pub by_day: &'a Report,
}

/// One session: the calls that share a session id, or, without one, a log file.
#[derive(Debug)]
struct Session<'a> {
    id: Option<&'a str>,
    calls: Vec<&'a CallRecord>,
}

/// The calls grouped by session, each session where its first call was, its calls in order.
fn sessions(records: &[CallRecord]) -> Vec<Session<'_>> {
    let mut sessions: Vec<Session<'_>> = Vec::new();
    let mut index: foldhash::HashMap<(Option<&str>, &str), usize> = Default::default();
    for record in records {
        let id = record.session.as_deref();
        // Calls with no session id are a session per file.
        let key = (id, if id.is_some() { "" } else { &record.source });
        let at = *index.entry(key).or_insert_with(|| {
            sessions.push(Session {
                id,
                calls: Vec::new(),
            });
            sessions.len() - 1
        });
        sessions[at].calls.push(record);
    }
    sessions
}

/// A text from a log, escaped by maud, with what a browser would drop or act on shown as the
/// marks [`reasons::visible::mark`] gives: C0 controls and DEL as their pictures (␀, ␛), C1
/// controls and the bidirectional controls (embeddings, overrides, isolates and the marks
/// U+200E, U+200F, U+061C) as `⟦U+202E⟧`: applied, they would reorder the text after them, and
/// a reason could display something other than what it says. Line ends and tabs stay, for the
/// page lays out a multi-line reason as it was written.
pub struct Text<'a>(pub &'a str);

impl Render for Text<'_> {
    /// Escapes exactly as maud does (`&`, `<`, `>`, `"`; a test holds it to that), in runs
    /// rather than byte by byte: the text of 100,000 calls is most of what the page writes.
    fn render_to(&self, buffer: &mut String) {
        let text = self.0;
        let mut plain = 0;
        for (at, byte) in text.bytes().enumerate() {
            let replacement = match byte {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                b'\n' | b'\t' => continue,
                // Only a character's first byte can start a mark; most text is ASCII and never
                // decoded here.
                0x00..=0x1f | 0x7f | 0xc0.. => {
                    let Some(c) = text[at..].chars().next() else {
                        continue;
                    };
                    let Some(mark) = visible::mark(c) else {
                        continue;
                    };
                    buffer.push_str(&text[plain..at]);
                    match mark {
                        Mark::Picture(picture) => buffer.push(picture),
                        Mark::Code(code) => {
                            let _ = write!(buffer, "\u{27e6}U+{code:04X}\u{27e7}");
                        }
                    }
                    plain = at + c.len_utf8();
                    continue;
                }
                _ => continue,
            };
            buffer.push_str(&text[plain..at]);
            buffer.push_str(replacement);
            plain = at + 1;
        }
        buffer.push_str(&text[plain..]);
    }
}

/// The opening of `text` up to `max` characters, and how many characters were left out.
pub fn cut(text: &str, max: usize) -> (&str, usize) {
    match text.char_indices().nth(max) {
        None => (text, 0),
        Some((at, _)) => (&text[..at], text[at..].chars().count()),
    }
}

/// The page behind the one trait every command's output is behind: the page is one item.
pub struct PageWriter;

impl<'a> Writer<Page<'a>> for PageWriter {
    fn write(&mut self, out: &mut dyn Write, page: &Page<'a>) -> io::Result<()> {
        write_page(out, page)
    }
}

/// How many calls one chunk holds, rendered together on one thread: big enough that handing it
/// out costs little, small enough that the chunks in flight hold a few MB, never the whole
/// page.
const CHUNK_CALLS: usize = 1_000;

/// A run of one session's calls, rendered on its own.
struct SessionChunk<'a> {
    /// On a page of many calls, how its calls are packed (see [`packed`]).
    packed: Option<&'a packed::Codes<'a>>,
    /// The session's number on the page (from 1), and the session.
    session: (usize, &'a Session<'a>),
    /// Which of its calls, and the number on the page of the first.
    calls: std::ops::Range<usize>,
    first_number: usize,
}

impl Render for SessionChunk<'_> {
    fn render_to(&self, buffer: &mut String) {
        let (number, session) = self.session;
        if self.calls.start == 0 {
            session_head(number, session).render_to(buffer);
        }
        let calls = &session.calls[self.calls.clone()];
        let mut packed_rows = String::new();
        let rows = if self.packed.is_some() {
            &mut packed_rows
        } else {
            &mut *buffer
        };
        for (at, record) in calls.iter().enumerate() {
            call(self.first_number + at, record).render_to(rows);
            rows.push('\n');
        }
        if let Some(codes) = self.packed {
            codes.write(self.first_number, calls, &packed_rows, buffer);
        }
        if self.calls.end == session.calls.len() {
            buffer.push_str("</ol></details>\n");
        }
    }
}

/// Writes the page. The sessions are cut into chunks of [`CHUNK_CALLS`] calls, rendered on every
/// core a few at a time and written in order, so a page of 100,000 calls is built about as fast
/// as the logs are read, and never held whole. From [`packed::FROM_CALLS`] calls on, the chunks
/// are runs of [`packed::CALLS`] calls, each written packed: the same rows, deflated.
fn write_page(out: &mut dyn Write, page: &Page<'_>) -> io::Result<()> {
    use rayon::prelude::*;
    let sessions = sessions(page.records);
    let mut buffer = String::with_capacity(64 * 1024);
    head(page, sessions.len()).render_to(&mut buffer);
    overview(page, sessions.len()).render_to(&mut buffer);
    filters(page).render_to(&mut buffer);
    buffer.push_str("<main id=\"sessions\">\n");
    let codes = packed::Codes::new(page.by_tool);
    let (packed, chunk_calls) = if page.records.len() >= packed::FROM_CALLS {
        unpacked_without_script(page.records.len()).render_to(&mut buffer);
        (Some(&codes), packed::CALLS)
    } else {
        (None, CHUNK_CALLS)
    };
    out.write_all(buffer.as_bytes())?;
    let mut chunks = Vec::new();
    let mut number = 1;
    for (at, session) in sessions.iter().enumerate() {
        for start in (0..session.calls.len()).step_by(chunk_calls) {
            let end = (start + chunk_calls).min(session.calls.len());
            chunks.push(SessionChunk {
                packed,
                session: (at + 1, session),
                calls: start..end,
                first_number: number,
            });
            number += end - start;
        }
    }
    let in_flight = 4 * rayon::current_num_threads();
    for batch in chunks.chunks(in_flight) {
        let rendered: Vec<String> = batch
            .par_iter()
            .map(|chunk| chunk.render().into_string())
            .collect();
        for chunk in rendered {
            out.write_all(chunk.as_bytes())?;
        }
    }
    let end = html! {
        @if sessions.is_empty() {
            p.empty { "No tool calls were found in the logs read." }
        }
        (PreEscaped("</main>\n"))
        footer { "Written by reasons " (env!("CARGO_PKG_VERSION")) ". A reason is what the model said about its own call: read it beside the arguments, never instead of them." }
        script { (PreEscaped(SCRIPT)) }
        (PreEscaped("</body></html>\n"))
    };
    out.write_all(end.into_string().as_bytes())
}

/// What a page of packed calls says with scripts off, where its calls stay packed.
fn unpacked_without_script(calls: usize) -> Markup {
    html! {
        noscript {
            p.empty {
                "This page holds " (thousands(calls)) " calls, too many to draw at once: its script "
                "draws those in view as the page scrolls, and scripts are off. A page of fewer than "
                (thousands(packed::FROM_CALLS)) " calls (" code { "reasons report" } " on fewer logs) "
                "shows every call without a script."
            }
        }
    }
}

fn head(page: &Page<'_>, sessions: usize) -> Markup {
    let totals = &page.by_tool.totals;
    let title = format!(
        "reasons: {} calls in {} sessions, coverage {}",
        thousands(totals.calls as usize),
        thousands(sessions),
        charts::percent(totals)
    );
    // The document is opened here and closed by `write_page`, after the sessions.
    html! {
        (DOCTYPE)
        (PreEscaped("<html lang=\"en\">\n<head>\n"))
        meta charset="utf-8";
        meta http-equiv="Content-Security-Policy" content=(content_security_policy(STYLE, SCRIPT));
        meta name="viewport" content="width=device-width, initial-scale=1";
        meta name="generator" content={"reasons " (env!("CARGO_PKG_VERSION"))};
        title { (title) }
        style { (PreEscaped(STYLE)) }
        (PreEscaped("\n</head>\n<body>\n"))
    }
}

fn overview(page: &Page<'_>, sessions: usize) -> Markup {
    let by_tool = page.by_tool;
    let totals = &by_tool.totals;
    let days = charts::dated(page.by_day);
    html! {
        header {
            h1 { "Tool calls and their reasons" }
            p.lede {
                "Each call is shown with what it touched and its arguments; beside it, the "
                em { "reason" } " the model gave for it. A reason is the model's claim about its own call, "
                "not a verdict: weigh it against the arguments."
            }
        }
        section #overview {
            dl.totals {
                div { dt { "files" } dd { (thousands(by_tool.files as usize)) } }
                div { dt { "sessions" } dd { (thousands(sessions)) } }
                div { dt { "calls" } dd { (thousands(totals.calls as usize)) } }
                div.coverage { dt { "coverage" } dd { (charts::percent(totals)) } }
                div { dt { "audited" } dd { (thousands(totals.audited() as usize)) } }
                @if by_tool.malformed_lines > 0 {
                    div.warn { dt { "malformed lines skipped" } dd { (thousands(by_tool.malformed_lines as usize)) } }
                }
            }
            p.legend {
                @for status in Status::ALL {
                    span class={"chip st-" (status)} { (status) " " (totals.count(status)) }
                    " "
                }
            }
            p.note {
                "Coverage is present ÷ (present + blank + invalid + missing); "
                "calls to tools with a reason argument of their own (declared) and calls whose "
                "arguments cannot carry one (freeform) are counted, not audited."
            }
            @if !by_tool.groups.is_empty() {
                h2 { "Coverage per tool" }
                (charts::tools(by_tool))
            }
            @if days.len() > 1 {
                h2 { "Coverage per day" }
                (charts::days(&days))
            } @else if let [day] = days[..] {
                p.note { "Every dated call is from " (Text(&day.key)) "." }
            }
            details.numbers {
                summary { "The numbers, as " code { "reasons stats" } " counts them" }
                (numbers(by_tool, "tool"))
                @if !page.by_day.groups.is_empty() {
                    (numbers(page.by_day, "day"))
                }
            }
        }
    }
}

fn numbers(report: &Report, by: &str) -> Markup {
    let row = |key: &str, counts: &reasons::stats::Counts| {
        html! {
            tr {
                th scope="row" { (Text(key)) }
                td { (counts.calls) }
                @for status in Status::ALL { td { (counts.count(status)) } }
                td { (charts::percent(counts)) }
                td { (counts.median_reason_length.map(|median| median.to_string()).unwrap_or_else(|| "–".into())) }
            }
        }
    };
    html! {
        table.numbers {
            thead { tr {
                th scope="col" { (by) } th scope="col" { "calls" }
                @for status in Status::ALL { th scope="col" { (status) } }
                th scope="col" { "coverage" } th scope="col" { "median length" }
            } }
            tbody {
                @for group in &report.groups { (row(&group.key, &group.counts)) }
                (row("total", &report.totals))
            }
        }
    }
}

fn filters(page: &Page<'_>) -> Markup {
    let totals = &page.by_tool.totals;
    html! {
        // Shown by the script: without it there is nothing to filter with, and the page is
        // complete as it is.
        form #filters hidden {
            fieldset.statuses {
                legend { "status" }
                @for status in Status::ALL {
                    label class={"chip st-" (status)} {
                        input type="checkbox" name="status" value=(status) checked;
                        " " (status) " " (totals.count(status))
                    }
                }
            }
            label.tool {
                "tool "
                select name="tool" {
                    option value="" { "every tool" }
                    @for group in &page.by_tool.groups {
                        option value=(Text(&group.key)) { (Text(&group.key)) " (" (group.counts.calls) ")" }
                    }
                }
            }
            label.search {
                "search "
                input type="search" name="q" placeholder="command, path, reason…";
            }
            output #shown { (totals.calls) " of " (totals.calls) " calls" }
        }
    }
}

fn session_head(number: usize, session: &Session<'_>) -> Markup {
    let mut counts = reasons::stats::Counts::default();
    for record in &session.calls {
        counts.add(record);
    }
    let mut files: Vec<&str> = session.calls.iter().map(|r| r.source.as_str()).collect();
    files.dedup();
    files.sort_unstable();
    files.dedup();
    let first = session.calls.iter().find_map(|r| r.timestamp.as_deref());
    let last = session
        .calls
        .iter()
        .rev()
        .find_map(|r| r.timestamp.as_deref());
    let lacking = counts.blank + counts.invalid + counts.missing;
    html! {
        (PreEscaped("<details class=\"session\" open id=\"session-"))
        (number)
        (PreEscaped("\">"))
        summary {
            span.sid {
                @match session.id {
                    Some(id) => { "session " code { (Text(id)) } }
                    None => { "no session id: " code { (Text(files[0])) } }
                }
            }
            span.meta {
                (counts.calls) " calls · coverage " (charts::percent(&counts))
                @if lacking > 0 { " · " span.lacking { (lacking) " without a reason" } }
                @if let (Some(first), Some(last)) = (first, last) {
                    " · " (Text(&when(first))) " – " (Text(&when(last)))
                }
            }
            @if session.id.is_some() || files.len() > 1 {
                span.files { @for (at, file) in files.iter().enumerate() { @if at > 0 { ", " } (Text(file)) } }
            }
        }
        (PreEscaped("<ol class=\"calls\">\n"))
    }
}

/// A timestamp as a person reads it ([`reasons::dates::shown`]), else as written.
fn when(timestamp: &str) -> String {
    match reasons::dates::shown(timestamp) {
        Some(shown) => shown.to_string(),
        None => timestamp.to_owned(),
    }
}

fn call(number: usize, record: &CallRecord) -> Markup {
    let status = record.status;
    // Arguments in a JSON string are shown decoded: the reviewer reads the object the tool got.
    let decoded = match &record.arguments {
        Some(Value::String(text)) => match decode_arguments(&Value::String(text.clone())) {
            Arguments::Object(map) => Some(Value::Object(map.into_owned())),
            _ => None,
        },
        _ => None,
    };
    let arguments = decoded.as_ref().or(record.arguments.as_ref());
    html! {
        li class={"call st-" (status)} id={"call-" (number)} data-status=(status) data-tool=(Text(&record.tool)) {
            div.what {
                div.where {
                    a.anchor href={"#call-" (number)} title="link to this call" { "#" (number) }
                    @if let Some(timestamp) = &record.timestamp {
                        " " span.time { (Text(&when(timestamp))) }
                    }
                    " " span.loc { (Text(&record.source)) ":" (record.line) }
                    " " span.tool { (Text(&record.tool)) }
                }
                div.touched { (view(arguments)) }
                @if let Some(arguments) = arguments {
                    details.args {
                        summary {
                            "arguments"
                            @if decoded.is_some() { " (sent as a JSON string)" }
                            @if let Some(id) = &record.call_id { " · id " (Text(id)) }
                        }
                        div.json { (Pretty(arguments)) }
                    }
                }
            }
            (why(record, arguments))
        }
    }
}

fn view(arguments: Option<&Value>) -> Markup {
    let Some(arguments) = arguments else {
        return html! { span.none { "arguments not recorded" } };
    };
    match touched::view(arguments) {
        View::Command { command, workdir } => html! {
            (block("cmd", &command))
            @if let Some(workdir) = workdir { span.cwd { "in " (Text(workdir)) } }
        },
        View::Edit { path, changes } => html! {
            @if let Some(path) = path { code.path { (Text(path)) } }
            @for (old, new) in changes { (edit(old, new)) }
        },
        View::Write { path, content } => html! {
            @if let Some(path) = path { code.path { (Text(path)) } " " }
            span.size { "writes " (json::size(content.chars().count(), content.lines().count())) }
            (block("content", content))
        },
        View::Patch(patch) => block("patch", patch),
        View::Search { pattern, scope } => html! {
            span.kind { "search " } code.pattern { (Text(cut(&pattern, BLOCK_CHARS).0)) }
            @if let Some(scope) = scope { " in " code.path { (Text(scope)) } }
        },
        View::Path(path) => html! { code.path { (Text(cut(path, BLOCK_CHARS).0)) } },
        View::Url(url) => html! { code.url { (Text(cut(url, BLOCK_CHARS).0)) } },
        View::Summary(summary) => html! { code.summary { (Text(&summary)) } },
        View::Nothing => html! { span.none { "no arguments" } },
    }
}

/// A text as a block: whole when short, else its opening and the rest one click away.
fn block(class: &str, text: &str) -> Markup {
    let lines = text.lines().count();
    let chars = text.chars().count();
    if lines <= BLOCK_LINES && chars <= BLOCK_CHARS {
        return html! { pre class=(class) { (Text(text)) } };
    }
    let opening_end = text
        .match_indices('\n')
        .nth(BLOCK_LINES - 1)
        .map_or(text.len(), |(at, _)| at);
    let opening = cut(&text[..opening_end], BLOCK_CHARS).0;
    html! {
        pre class=(class) { (Text(opening)) }
        details.fold {
            summary { "all of it: " (json::size(chars, lines)) }
            pre class=(class) { (Long(text)) }
        }
    }
}

fn edit(old: &str, new: &str) -> Markup {
    let (old, _) = cut(old, MAX_SHOWN);
    let (new, _) = cut(new, MAX_SHOWN);
    let lines = diff::lines(old, new);
    let shown = &lines[..lines.len().min(DIFF_LINES)];
    html! {
        pre.diff {
            @for (kind, line) in shown {
                @let (class, sign) = match kind {
                    diff::Line::Kept => ("ctx", ' '),
                    diff::Line::Removed => ("del", '-'),
                    diff::Line::Added => ("add", '+'),
                };
                span class=(class) { (sign) (Text(cut(line, 400).0)) "\n" }
            }
        }
        @if lines.len() > shown.len() {
            span.more { (lines.len() - shown.len()) " more lines of this edit in its arguments" }
        }
    }
}

/// The reason, as the model's claim, and its status; or, standing out, that there is none.
fn why(record: &CallRecord, arguments: Option<&Value>) -> Markup {
    let status = record.status;
    let raw_reason = || match arguments.map(decode_arguments) {
        Some(Arguments::Object(map)) => map.get(REASON_PARAM).map(Value::to_string),
        _ => None,
    };
    html! {
        aside.why {
            span class={"status st-" (status)} { (status) }
            @if record.reason_from == ReasonFrom::Log {
                span.from title="The layer took this reason off the call before the agent recorded it; a reasons log kept it under the call's id." {
                    "from the reasons log "
                }
            }
            @match (status, record.reason.as_deref()) {
                (Status::Present, Some(reason)) => {
                    span.claim { "the model's claim" }
                    blockquote { (Text(cut(reason.trim(), MAX_SHOWN).0)) }
                }
                (Status::Blank, reason) => {
                    span.lack { "blank reason" }
                    @if let Some(reason) = reason {
                        " " code { (Text(&serde_json::to_string(reason).unwrap_or_default())) }
                    }
                }
                (Status::Invalid, _) => {
                    span.lack { "reason is not a string" }
                    @if let Some(raw) = raw_reason() { " " code { (Text(cut(&raw, 400).0)) } }
                }
                (Status::Declared, reason) => {
                    span.aside { "the tool's own reason argument, not audited" }
                    @if let Some(reason) = reason { blockquote { (Text(cut(reason.trim(), MAX_SHOWN).0)) } }
                }
                (Status::Freeform, _) => { span.aside { "these arguments cannot carry a reason" } }
                _ => { span.lack { "no reason given" } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_as_their_pictures_and_markup_is_escaped() {
        let html = Text("a\u{0}b\u{1b}[31m<i>\n\t\u{7f}")
            .render()
            .into_string();
        assert_eq!(html, "a\u{2400}b\u{241b}[31m&lt;i&gt;\n\t\u{2421}");
    }

    #[test]
    fn the_bidirectional_marks_and_c1_controls_are_shown_as_marks_as_on_a_terminal() {
        let text = "a\u{200e}b\u{200f}c\u{61c}d\u{85}e\u{9b}31m";
        let html = Text(text).render().into_string();
        assert_eq!(html, "a⟦U+200E⟧b⟦U+200F⟧c⟦U+061C⟧d⟦U+0085⟧e⟦U+009B⟧31m");
        // The same characters the terminal marks, by the same rule.
        assert_eq!(
            reasons::visible::visible(text),
            "a<U+200E>b<U+200F>c<U+061C>d<U+0085>e<U+009B>31m"
        );
    }

    #[test]
    fn bidirectional_overrides_are_shown_as_marks_never_applied() {
        let html = Text("ok \u{202e}txt.exe\u{202c} \u{2066}a\u{2069} \u{202a}\u{202b}\u{202d}\u{2067}\u{2068} é…")
            .render()
            .into_string();
        assert_eq!(
            html,
            "ok ⟦U+202E⟧txt.exe⟦U+202C⟧ ⟦U+2066⟧a⟦U+2069⟧ \
             ⟦U+202A⟧⟦U+202B⟧⟦U+202D⟧⟦U+2067⟧⟦U+2068⟧ é…"
        );
        for code in (0x202a..=0x202e).chain(0x2066..=0x2069) {
            let character = char::from_u32(code).unwrap();
            assert!(!html.contains(character));
            assert!(!html.contains(&format!("&#x{code:x}")));
        }
    }

    proptest::proptest! {
        /// Text is escaped in runs, by this module: it must agree with maud's own escaping on
        /// every text without control characters, which it shows as pictures instead.
        #[test]
        fn text_is_escaped_exactly_as_maud_escapes_it(text in "[a-z&<>\"' \n\té\u{1f600}]{0,40}") {
            let mut ours = String::new();
            Text(&text).render_to(&mut ours);
            proptest::prop_assert_eq!(ours, text.as_str().render().into_string());
        }
    }

    #[test]
    fn cut_counts_what_it_leaves_out_in_characters() {
        assert_eq!(cut("héllo", 2), ("hé", 3));
        assert_eq!(cut("hi", 5), ("hi", 0));
    }

    #[test]
    fn a_timestamp_is_shown_to_the_second_and_other_text_as_written() {
        assert_eq!(when("2026-11-30T09:00:12.345Z"), "2026-11-30 09:00:12");
        assert_eq!(when("1764493200"), "2025-11-30 09:00:00 UTC");
        assert_eq!(when("2026-11-30Té0:00:00"), "2026-11-30Té0:00:00");
    }
}
