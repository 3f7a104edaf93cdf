//! The one way the gateway changes a request body: spans of the text it came as replaced by new
//! text, every other byte copied as it came, into one buffer the size of the result.
//!
//! The augmented `tools` and the reasons given back to the history are both splices into the
//! same body, so a body of megabytes is copied once, whatever changed in it.

use std::borrow::Cow;

/// Replacements in one text, each of a span `start..end` (an insertion when the two are equal).
/// Spans do not overlap; they may be noted in any order.
#[derive(Debug, Default)]
pub(crate) struct Splices<'a> {
    list: Vec<Splice<'a>>,
}

#[derive(Debug)]
struct Splice<'a> {
    start: usize,
    end: usize,
    text: Cow<'a, str>,
}

impl<'a> Splices<'a> {
    /// Notes that `start..end` of the text becomes `text`.
    pub(crate) fn replace(&mut self, start: usize, end: usize, text: impl Into<Cow<'a, str>>) {
        debug_assert!(start <= end);
        self.list.push(Splice {
            start,
            end,
            text: text.into(),
        });
    }

    /// Notes that `text` goes in at `at`.
    pub(crate) fn insert(&mut self, at: usize, text: impl Into<Cow<'a, str>>) {
        self.replace(at, at, text);
    }

    /// How many splices are noted.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Takes in the splices of a part of the text that starts at `offset`.
    pub(crate) fn append_at(&mut self, offset: usize, part: Splices<'a>) {
        self.list.extend(part.list.into_iter().map(|splice| Splice {
            start: splice.start + offset,
            end: splice.end + offset,
            text: splice.text,
        }));
    }

    /// `text` with every splice made.
    pub(crate) fn apply(mut self, text: &str) -> Vec<u8> {
        // Stable: insertions at one place stay in the order they were noted.
        self.list.sort_by_key(|splice| (splice.start, splice.end));
        let added: usize = self.list.iter().map(|splice| splice.text.len()).sum();
        let mut out = Vec::with_capacity(text.len() + added);
        let mut copied = 0;
        for splice in &self.list {
            debug_assert!(copied <= splice.start, "splices overlap");
            out.extend_from_slice(&text.as_bytes()[copied..splice.start]);
            out.extend_from_slice(splice.text.as_bytes());
            copied = splice.end;
        }
        out.extend_from_slice(&text.as_bytes()[copied..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splices_in_any_order_make_one_text() {
        let mut splices = Splices::default();
        splices.replace(6, 11, "there");
        splices.insert(0, "[");
        splices.insert(11, "!");
        splices.insert(11, "]");
        assert_eq!(splices.len(), 4);
        assert_eq!(splices.apply("hello world"), b"[hello there!]");
    }

    #[test]
    fn a_part_s_splices_are_moved_to_where_it_starts() {
        let mut part = Splices::default();
        part.replace(0, 1, "B");
        let mut splices = Splices::default();
        splices.append_at(3, part);
        assert_eq!(splices.apply("ab bc"), b"ab Bc");
        assert_eq!(Splices::default().apply("as it came"), b"as it came");
    }
}
