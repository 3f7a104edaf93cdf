//! Finds where a JSON string ends, and checks it on the way, 64 bytes at a time.
//!
//! Most bytes of a log are the insides of long strings (tool output, file contents) with an
//! escape every few dozen bytes. A scanner that stops at each escape to look at it pays a
//! mispredicted branch per escape, which cost more than all the reading. Here a block of 64
//! bytes becomes bitmasks (quotes, backslashes, control characters) with SSE2-width compares,
//! the escaped bytes are found with carries instead of branches (simdjson's method), and the
//! string ends at the first quote that is not escaped. Only a `\u` escape, whose digits and
//! surrogate pairs need a closer look, is read byte by byte.
//!
//! The rules are serde_json's: no raw control characters; after a backslash one of
//! `" \ / b f n r t`, or `u` and four hex digits, a high surrogate always followed by a low one.

use wide::u8x16;

use super::rejected::{Parsed, Rejected};

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
/// How many bytes of a string SWAR looks at before blocks take over.
const SHORT: usize = 32;
const ODD_BITS: u64 = 0xAAAA_AAAA_AAAA_AAAA;

/// Reads the string whose opening quote is at `at`; returns where its closing quote is, and
/// whether it holds a backslash.
#[inline(always)]
pub(super) fn string(bytes: &[u8], at: usize) -> Parsed<(usize, bool)> {
    let start = at + 1;
    // Keys, ids and timestamps end within a few words, without escapes: SWAR answers for
    // them before a block would be set up.
    let mut word_start = start;
    while let Some(word) = bytes.get(word_start..word_start + 8) {
        let (found, quotes) = specials(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        if found != 0 {
            // The first byte marked is the closing quote when the quotes' marks have it: told
            // from the masks, not by loading the byte again at the end of their chain.
            if quotes & found & found.wrapping_neg() != 0 {
                return Ok((word_start + (found.trailing_zeros() / 8) as usize, false));
            }
            break;
        }
        word_start += 8;
        if word_start - start >= SHORT {
            break;
        }
    }
    // Nothing before `word_start` ends plain content: the blocks start there.
    blocks(bytes, word_start)
}

/// The rest of a string from `base`, which is not inside an escape, 64 bytes at a time. Kept
/// out of line: the short strings above then pay for no more registers than they use.
#[inline(never)]
fn blocks(bytes: &[u8], mut base: usize) -> Parsed<(usize, bool)> {
    // Whether the first byte of the block is escaped by a backslash that ended the last one.
    let mut carried = 0;
    let mut escaped = false;
    loop {
        // Past the end of the text the block is padded with quotes: a string that ends in
        // the padding ran off the end of the text.
        let (block, available) = match bytes.get(base..base + 64) {
            Some(block) => (Block::new(block), 64),
            None => {
                let rest = bytes.get(base..).unwrap_or_default();
                let mut padded = [b'"'; 64];
                padded[..rest.len()].copy_from_slice(rest);
                (Block::new(&padded), rest.len())
            }
        };
        let backslashes = block.mask(|lane| lane.simd_eq(u8x16::splat(b'\\')));
        let carried_in = carried;
        let escaped_here = escaped_bytes(backslashes, &mut carried);
        let quotes = block.mask(|lane| lane.simd_eq(u8x16::splat(b'"'))) & !escaped_here;
        let inside = match quotes {
            0 => u64::MAX,
            quotes => (1u64 << quotes.trailing_zeros()) - 1,
        };
        let controls = block.mask(|lane| lane.min(u8x16::splat(0x1F)).simd_eq(lane));
        if controls & inside != 0 {
            return Err(Rejected);
        }
        let escapes = escaped_here & inside;
        if escapes != 0 {
            escaped = true;
            let simple = block.mask(|lane| {
                [b'"', b'\\', b'/', b'b', b'f', b'n', b'r', b't']
                    .into_iter()
                    .fold(u8x16::ZERO, |any, letter| {
                        any | lane.simd_eq(u8x16::splat(letter))
                    })
            });
            if escapes & !simple != 0 {
                // A `\u` (or a bad escape): the block again byte by byte, from its start or
                // from the backslash just before it. No escape is open there: every `\u`
                // before this block sent the string here already.
                return Ok((bytewise(bytes, base - carried_in as usize)?, true));
            }
        }
        if quotes != 0 {
            let end = quotes.trailing_zeros() as usize;
            if end >= available {
                return Err(Rejected);
            }
            return Ok((base + end, escaped));
        }
        if available < 64 {
            return Err(Rejected);
        }
        base += 64;
    }
}

/// The rest of a string from `from`, which is not inside an escape, one byte at a time; returns
/// where its closing quote is.
fn bytewise(bytes: &[u8], mut from: usize) -> Parsed<usize> {
    loop {
        match *bytes.get(from).ok_or(Rejected)? {
            b'"' => return Ok(from),
            b'\\' => from += escape_length(&bytes[from..])?,
            byte if byte < 0x20 => return Err(Rejected),
            _ => from += 1,
        }
    }
}

/// 64 bytes as four SSE2-wide lanes.
struct Block([u8x16; 4]);

impl Block {
    /// The first 64 of `bytes`, which has at least that many.
    fn new(bytes: &[u8]) -> Block {
        Block(std::array::from_fn(|lane| {
            let mut sixteen = [0; 16];
            sixteen.copy_from_slice(&bytes[lane * 16..lane * 16 + 16]);
            u8x16::from(sixteen)
        }))
    }

    /// Bit `i` set where byte `i` passes `test` (which answers with all ones or all zeros).
    #[inline(always)]
    fn mask(&self, test: impl Fn(u8x16) -> u8x16) -> u64 {
        self.0.iter().enumerate().fold(0, |mask, (lane, &bytes)| {
            mask | u64::from(test(bytes).to_bitmask()) << (16 * lane)
        })
    }
}

/// The bytes a backslash escapes, from the backslashes of a block; `carried` says whether the
/// block's first byte is escaped, and is set for the next block. A run of backslashes escapes
/// every second one and, when its length is odd, the byte after it: a subtraction finds the
/// runs that start on an even or an odd bit, so no byte is looked at alone (simdjson's
/// `json_escape_scanner`).
fn escaped_bytes(backslashes: u64, carried: &mut u64) -> u64 {
    let starts = backslashes & !*carried;
    let codes = ((starts << 1 | ODD_BITS).wrapping_sub(starts)) ^ ODD_BITS;
    let escaped = codes ^ (backslashes | *carried);
    *carried = (codes & backslashes) >> 63;
    escaped
}

/// Sets the high bit of each byte of `word` that ends plain string content: a quote, a
/// backslash or a control character; and, second, of each quote. The first byte marked (in
/// memory order) is always one of those, in both; bytes after it may be marked wrongly, which
/// does not matter.
fn specials(word: u64) -> (u64, u64) {
    let quote = word ^ (LOW_BITS * u64::from(b'"'));
    let backslash = word ^ (LOW_BITS * u64::from(b'\\'));
    let zero_quote = quote.wrapping_sub(LOW_BITS) & !quote & HIGH_BITS;
    let zero_backslash = backslash.wrapping_sub(LOW_BITS) & !backslash;
    let below_space = word.wrapping_sub(LOW_BITS * 0x20) & !word;
    (
        zero_quote | (zero_backslash | below_space) & HIGH_BITS,
        zero_quote,
    )
}

/// The length of the escape at the start of `bytes` (a backslash and what follows), when it is
/// one serde_json accepts in a string: `\uD800`–`\uDBFF` only followed by `\uDC00`–`\uDFFF`.
fn escape_length(bytes: &[u8]) -> Parsed<usize> {
    match bytes.get(1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(2),
        Some(b'u') => match hex4(&bytes[2..])? {
            0xDC00..=0xDFFF => Err(Rejected),
            0xD800..=0xDBFF => match (bytes.get(6..8), bytes.get(8..).map(hex4)) {
                (Some(b"\\u"), Some(Ok(0xDC00..=0xDFFF))) => Ok(12),
                _ => Err(Rejected),
            },
            _ => Ok(6),
        },
        _ => Err(Rejected),
    }
}

pub(super) fn hex4(bytes: &[u8]) -> Parsed<u16> {
    let digits = bytes.get(..4).ok_or(Rejected)?;
    digits.iter().try_fold(0u16, |value, &digit| {
        let nibble = (digit as char).to_digit(16).ok_or(Rejected)?;
        Ok(value << 4 | nibble as u16)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// serde_json's reading of the string that starts at `at`: where it ends, and whether it
    /// holds an escape.
    fn reference(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
        let mut values = serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<String>();
        values.next()?.ok()?;
        let end = at + values.byte_offset() - 1;
        Some((end, bytes[at..end].contains(&b'\\')))
    }

    fn scanned(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
        string(bytes, at).ok()
    }

    /// Pieces of string content that matter to a scanner: runs that cross block edges, runs of
    /// backslashes, every kind of escape, good and bad, quotes and control characters.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-z é\u{1F600}]{1,70}",
            2 => "\\\\{1,5}",
            2 => "\\\\[\"\\\\/bfnrt]",
            1 => "\\\\u[0-9a-fA-F]{4}",
            1 => Just("\\ud83d\\ude00".to_owned()),
            1 => prop_oneof![
                Just("\\udc00".to_owned()),
                Just("\\ud83d".to_owned()),
                Just("\\ud83dx".to_owned()),
                Just("\\u12".to_owned()),
                Just("\\x".to_owned()),
            ],
            1 => prop_oneof![Just("\"".to_owned()), Just("\u{1}".to_owned()), Just("\t".to_owned())],
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]

        #[test]
        fn ends_where_serde_json_ends_and_rejects_what_it_rejects(
            before in "[a-z\"]{0,70}",
            pieces in prop::collection::vec(piece(), 0..24),
            cut in any::<prop::sample::Index>(),
            keep_all in any::<bool>(),
        ) {
            let mut text = format!("{before}\"{}\"", pieces.concat()).into_bytes();
            if !keep_all {
                text.truncate(before.len() + 1 + cut.index(text.len() - before.len()));
            }
            let at = before.len();
            prop_assert_eq!(scanned(&text, at), reference(&text, at));
        }
    }

    #[test]
    fn a_string_that_runs_off_the_end_is_rejected_however_long() {
        for length in 0..200 {
            let mut text = vec![b'"'];
            text.extend(std::iter::repeat_n(b'a', length));
            assert_eq!(scanned(&text, 0), None, "{length}");
            text.push(b'\\');
            assert_eq!(scanned(&text, 0), None, "{length} and a backslash");
        }
    }

    #[test]
    fn an_escape_split_across_blocks_is_read_whole() {
        for length in 0..140 {
            for tail in ["\\\"x\"", "\\\\\"", "\\u00e9\"", "\\ud83d\\ude00\""] {
                let text = format!("\"{}{tail}", "a".repeat(length));
                assert_eq!(
                    scanned(text.as_bytes(), 0),
                    reference(text.as_bytes(), 0),
                    "{text}"
                );
                assert!(scanned(text.as_bytes(), 0).is_some(), "{text}");
            }
        }
    }
}
