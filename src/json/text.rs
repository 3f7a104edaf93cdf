//! What the parser and the tree both read of a JSON text: whitespace, a node's slice of the text,
//! a key's fingerprint and bytes, a string's escapes resolved.

use std::borrow::Cow;

use super::string::hex4;

/// The first position from `at` on that is not whitespace.
#[inline]
pub(super) fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// A piece of the text between ASCII delimiters, which are always character boundaries.
pub(super) fn slice(text: &str, start: usize, end: usize) -> &str {
    text.get(start..end).unwrap_or_default()
}

/// One bit of 64 that a key sets in its object's fingerprint, from its length and its first and
/// last bytes: looking up a key the object does not have mostly ends at that bit. A key with
/// escapes may equal any other once decoded, so it sets every bit.
pub(super) fn fingerprint(raw: &[u8], escaped: bool) -> u64 {
    if escaped {
        return u64::MAX;
    }
    let (Some(&first), Some(&last)) = (raw.first(), raw.last()) else {
        return 1;
    };
    let mix = raw.len() ^ usize::from(first) << 1 ^ usize::from(last) << 3;
    1u64 << (mix % 64)
}

/// Whether two keys are the same bytes. Keys are short and compared by the thousand in a
/// large body: a call to `memcmp` for each, after its lengths, costs more than the bytes.
#[inline]
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// A string's text with its escapes resolved. The parser has checked that it is UTF-8 and that
/// every escape is one JSON allows.
pub(super) fn decode(raw: &str, escaped: bool) -> Cow<'_, str> {
    if !escaped {
        return Cow::Borrowed(raw);
    }
    let raw = raw.as_bytes();
    let mut text = Vec::with_capacity(raw.len());
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'\\', &raw[at..]) {
        text.extend_from_slice(&raw[at..at + found]);
        at += found;
        let (code, length) = match raw.get(at + 1) {
            Some(b'b') => (0x08, 2),
            Some(b'f') => (0x0C, 2),
            Some(b'n') => (u32::from(b'\n'), 2),
            Some(b'r') => (u32::from(b'\r'), 2),
            Some(b't') => (u32::from(b'\t'), 2),
            Some(b'u') => {
                let first = u32::from(hex4(&raw[at + 2..]).unwrap_or_default());
                if (0xD800..0xDC00).contains(&first) {
                    let second = u32::from(hex4(&raw[at + 8..]).unwrap_or_default());
                    (
                        0x10000 + ((first - 0xD800) << 10 | (second.wrapping_sub(0xDC00))),
                        12,
                    )
                } else {
                    (first, 6)
                }
            }
            Some(&other) => (u32::from(other), 2),
            None => break,
        };
        let mut utf8 = [0; 4];
        let code = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
        text.extend_from_slice(code.encode_utf8(&mut utf8).as_bytes());
        at += length;
    }
    text.extend_from_slice(&raw[at.min(raw.len())..]);
    Cow::Owned(String::from_utf8(text).unwrap_or_default())
}
