//! Text from a log, made safe to put on a terminal: the one rule for every place that shows a
//! model's reason, a command or a path to a person (`watch`, `extract`'s table, the hooks'
//! messages, the layer's `tool: reason` lines).
//!
//! A model's reason is untrusted text (a poisoned document can make it anything), and so is what
//! a call touched. A terminal interprets escape sequences (`ESC [ 2 J` clears the screen, OSC 8
//! makes a link whose target is not its text), a carriage return lets a line overwrite itself,
//! and a bidirectional override shows characters in another order than they are. Each such
//! character is shown as a visible mark instead, so what the person reads is what the log holds.
//!
//! ```
//! use reasons::visible::visible;
//!
//! assert_eq!(visible("rm -rf /\u{1b}[2J\rls"), "rm -rf /␛[2J␍ls");
//! assert_eq!(visible("txt.\u{202e}exe"), "txt.<U+202E>exe");
//! assert_eq!(visible("plain text, ünïcode"), "plain text, ünïcode");
//! ```

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `text` with every character a terminal would interpret shown as a visible mark: C0 controls
/// (tab and line ends included, so the text stays on its line) and DEL as their Unicode control
/// pictures (`␛`, `␍`, `␊`, `␡`), C1 controls (a lone `U+009B` is a CSI on some terminals) and
/// bidirectional controls as `<U+XXXX>`. Other text is returned as it is, without a copy.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| mark(c).is_some()) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match mark(c) {
            Some(Mark::Picture(picture)) => shown.push(picture),
            Some(Mark::Code(code)) => {
                let _ = write!(shown, "<U+{code:04X}>");
            }
            None => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

/// What is shown in place of a character a terminal or a browser would act on rather than show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A C0 control or DEL: its Unicode control picture (`␛`, `␍`, `␊`, `␡`).
    Picture(char),
    /// A C1 control or a bidirectional control: its code point, which each medium brackets in
    /// its own way (`<U+202E>` on a terminal, `⟦U+202E⟧` on the report's page).
    Code(u32),
}

/// The mark shown for `c`, or `None` for a character shown as it is: the one rule of which
/// characters are marks, for the terminal ([`visible`]) and the report's page alike.
pub fn mark(c: char) -> Option<Mark> {
    match c {
        '\u{0}'..='\u{1f}' => Some(Mark::Picture(
            char::from_u32(0x2400 + u32::from(c)).unwrap_or('�'),
        )),
        '\u{7f}' => Some(Mark::Picture('␡')),
        c if c.is_control() || is_bidi_control(c) => Some(Mark::Code(u32::from(c))),
        _ => None,
    }
}

/// The explicit bidirectional formatting characters: embeddings and overrides (U+202A–U+202E),
/// isolates (U+2066–U+2069), and the marks (U+200E, U+200F, U+061C), which reorder text as well.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// `text` on one line at most `width` columns wide (a wide character counts two), with `…` in
/// the last column where something was left out: the one way every view cuts a text to fit
/// (`extract`'s table, what a call touched, the page's chart labels and its folded arguments).
pub fn cut_to(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let Some(room) = width.checked_sub(1) else {
        return String::from('…');
    };
    let mut cut = opening_within(text, room).to_owned();
    cut.push('…');
    cut
}

/// The longest opening of `text` at most `width` columns wide: what [`cut_to`] keeps before its
/// `…`, for a view that puts the mark itself (the page shows a folded string's opening quoted,
/// the mark after the quote).
pub fn opening_within(text: &str, width: usize) -> &str {
    let mut used = 0;
    for (at, character) in text.char_indices() {
        let wide = character.width().unwrap_or(0);
        if used + wide > width {
            return &text[..at];
        }
        used += wide;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_carriage_returns_and_line_ends_are_marks() {
        assert_eq!(visible("a\u{1b}[2Jb"), "a␛[2Jb");
        assert_eq!(
            visible("\u{1b}]8;;https://evil\u{1b}\\docs\u{1b}]8;;\u{1b}\\"),
            "␛]8;;https://evil␛\\docs␛]8;;␛\\"
        );
        assert_eq!(visible("safe\rrm -rf"), "safe␍rm -rf");
        assert_eq!(visible("one\ntwo\tthree\u{7}"), "one␊two␉three␇");
        assert_eq!(visible("\u{7f}\u{0}"), "␡␀");
    }

    #[test]
    fn c1_controls_and_bidirectional_controls_are_named() {
        assert_eq!(visible("a\u{9b}2Jb"), "a<U+009B>2Jb");
        for c in ('\u{202a}'..='\u{202e}').chain('\u{2066}'..='\u{2069}') {
            let shown = visible(&format!("x{c}y")).into_owned();
            assert_eq!(shown, format!("x<U+{:04X}>y", u32::from(c)));
        }
    }

    #[test]
    fn a_cut_fits_its_width_with_an_ellipsis() {
        assert_eq!(cut_to("abcdef", 6), "abcdef");
        assert_eq!(cut_to("abcdef", 4), "abc…");
        assert_eq!(cut_to("日本語のテキスト", 7), "日本語…");
        assert_eq!(cut_to("日本語のテキスト", 7).width(), 7);
        assert_eq!(cut_to("abc", 0), "…");
    }

    #[test]
    fn an_opening_is_what_a_cut_keeps() {
        assert_eq!(opening_within("abcdef", 3), "abc");
        assert_eq!(opening_within("abc", 9), "abc");
        assert_eq!(opening_within("日本語", 5), "日本");
        for (text, width) in [("abcdef", 4), ("日本語のテキスト", 7), ("a\u{301}bc", 2)] {
            assert_eq!(
                cut_to(text, width),
                format!("{}…", opening_within(text, width - 1)),
                "{text}"
            );
        }
    }

    #[test]
    fn ordinary_text_is_not_copied() {
        for text in ["", "ls -la", "Überprüfe die Datei", "日本語", "emoji 🦀"] {
            assert!(matches!(visible(text), Cow::Borrowed(same) if same == text));
        }
    }
}
