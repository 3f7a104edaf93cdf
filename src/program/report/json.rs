//! A call's full arguments as pretty-printed JSON, with long strings folded: their opening is
//! shown, and one click opens the rest.

use maud::{html, Render};
use reasons::visible::opening_within;
use serde_json::Value;

use super::{Text, MAX_SHOWN};

/// Strings longer than this many characters, or of more than one line, are folded.
const FOLD: usize = 120;

/// How many columns of a folded text's opening its summary shows, cut by the crate's one rule
/// ([`opening_within`]); the `…` after it says the rest is folded.
const OPENING: usize = 60;

/// How deep the tree is drawn; deeper values are written on one line. The readers refuse JSON
/// nested past serde_json's limit of 128, so this is about what a person can read.
const MAX_DEPTH: usize = 24;

/// A JSON value as a person reads it.
pub struct Pretty<'a>(pub &'a Value);

impl Render for Pretty<'_> {
    fn render_to(&self, buffer: &mut String) {
        value(self.0, 0, buffer);
    }
}

fn value(json: &Value, depth: usize, out: &mut String) {
    match json {
        Value::String(text) => string(text, out),
        Value::Array(items) if !items.is_empty() && depth < MAX_DEPTH => {
            out.push('[');
            for (at, item) in items.iter().enumerate() {
                separator(at, depth + 1, out);
                value(item, depth + 1, out);
            }
            close(']', depth, out);
        }
        Value::Object(map) if !map.is_empty() && depth < MAX_DEPTH => {
            out.push('{');
            for (at, (key, item)) in map.iter().enumerate() {
                separator(at, depth + 1, out);
                span_quoted("k", key, out);
                out.push_str(": ");
                value(item, depth + 1, out);
            }
            close('}', depth, out);
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => span("n", &json.to_string(), out),
        // Empty containers, and anything past MAX_DEPTH: on one line, folded when long.
        other => compact(&other.to_string(), out),
    }
}

fn compact(json: &str, out: &mut String) {
    let chars = json.chars().count();
    if chars <= FOLD {
        return span("n", json, out);
    }
    let opening = opening_within(json, OPENING);
    html! {
        details.fold {
            summary { span.n { (Text(opening)) "…" } " " span.size { (size(chars, 1)) } }
            (Long(json))
        }
    }
    .render_to(out);
}

/// `<span class="CLASS">TEXT</span>`, TEXT escaped, written in place: the one element the
/// arguments of 100,000 calls hold a million of, where a `html!` block, which makes a string of
/// its own each time, cost the page a fifth of its time.
fn span(class: &'static str, text: &str, out: &mut String) {
    out.push_str("<span class=\"");
    out.push_str(class);
    out.push_str("\">");
    Text(text).render_to(out);
    out.push_str("</span>");
}

/// `<span class="CLASS">"TEXT"</span>`, TEXT as a JSON string, escaped.
fn span_quoted(class: &'static str, text: &str, out: &mut String) {
    if text
        .bytes()
        .any(|byte| byte < b' ' || byte == b'"' || byte == b'\\')
    {
        return span(class, &quoted(text), out);
    }
    // Nothing to escape for JSON: the quotes go around it as they are, no string made.
    out.push_str("<span class=\"");
    out.push_str(class);
    out.push_str("\">&quot;");
    Text(text).render_to(out);
    out.push_str("&quot;</span>");
}

fn separator(at: usize, depth: usize, out: &mut String) {
    if at > 0 {
        out.push(',');
    }
    out.push('\n');
    indent(depth, out);
}

fn close(bracket: char, depth: usize, out: &mut String) {
    out.push('\n');
    indent(depth, out);
    out.push(bracket);
}

fn indent(depth: usize, out: &mut String) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn quoted(text: &str) -> String {
    // Serialising a string cannot fail.
    serde_json::to_string(text).unwrap_or_default()
}

fn string(text: &str, out: &mut String) {
    let chars = text.chars().count();
    let lines = text.lines().count();
    if chars <= FOLD && lines <= 1 {
        return span_quoted("s", text, out);
    }
    let opening = opening_within(text.lines().next().unwrap_or(""), OPENING);
    html! {
        details.fold {
            summary {
                span.s { (Text(&quoted(opening))) "…" }
                " " span.size { (size(chars, lines)) }
            }
            (Long(text))
        }
    }
    .render_to(out);
}

/// How long a text is, as the fold says it.
pub fn size(chars: usize, lines: usize) -> String {
    let chars = thousands(chars);
    match lines {
        0 | 1 => format!("{chars} characters"),
        lines => format!("{chars} characters, {} lines", thousands(lines)),
    }
}

/// A number with thin groups of three digits: 52,428,800.
pub fn thousands(number: usize) -> String {
    let digits = number.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// A long text as it is, line breaks and all, up to [`MAX_SHOWN`] characters.
pub struct Long<'a>(pub &'a str);

impl Render for Long<'_> {
    fn render_to(&self, out: &mut String) {
        let (shown, left_out) = super::cut(self.0, MAX_SHOWN);
        html! {
            span.raw { (Text(shown)) }
            @if left_out > 0 {
                span.cut { "… " (thousands(left_out)) " more characters, not shown here" }
            }
        }
        .render_to(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(json: &Value) -> String {
        Pretty(json).render().into_string()
    }

    #[test]
    fn objects_are_indented_and_every_text_escaped() {
        let html = render(&json!({"a<b": [1, "x\"<y>"], "c": {}}));
        assert_eq!(
            html,
            "{\n  <span class=\"k\">&quot;a&lt;b&quot;</span>: [\n    <span class=\"n\">1</span>,\n    \
             <span class=\"s\">&quot;x\\&quot;&lt;y&gt;&quot;</span>\n  ],\n  \
             <span class=\"k\">&quot;c&quot;</span>: <span class=\"n\">{}</span>\n}"
        );
    }

    #[test]
    fn a_long_string_is_folded_behind_its_opening_and_size() {
        let html = render(&json!({"content": "line one\nline two"}));
        assert!(
            html.contains(
                "<details class=\"fold\"><summary><span class=\"s\">&quot;line one&quot;…</span> "
            ),
            "{html}"
        );
        assert!(html.contains("17 characters, 2 lines"), "{html}");
        assert!(
            html.contains("<span class=\"raw\">line one\nline two</span>"),
            "{html}"
        );
    }

    #[test]
    fn a_folded_texts_opening_is_cut_by_the_one_rule_in_columns() {
        let html = render(&json!("日".repeat(200)));
        let opening = format!("<span class=\"s\">&quot;{}&quot;…</span>", "日".repeat(30));
        assert!(html.contains(&opening), "{html}");
        // Past MAX_DEPTH a value is written on one line, folded behind its opening too.
        let deep = (0..=MAX_DEPTH).fold(json!("x".repeat(200)), |inner, _| json!([inner]));
        let html = render(&deep);
        let opening = format!("<span class=\"n\">[&quot;{}…</span>", "x".repeat(58));
        assert!(html.contains(&opening), "{html}");
    }

    #[test]
    fn a_huge_string_is_cut_and_says_how_much_is_left_out() {
        let huge = "x".repeat(MAX_SHOWN + 1234);
        let html = render(&json!(huge));
        assert!(
            html.contains("… 1,234 more characters, not shown here"),
            "{}",
            &html[html.len() - 200..]
        );
        assert!(html.len() < MAX_SHOWN + 1000);
    }

    #[test]
    fn numbers_are_grouped_in_threes() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(52_428_800), "52,428,800");
    }
}
