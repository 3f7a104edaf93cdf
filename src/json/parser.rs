//! The parser: JSON text into the nodes of a [`Json`](super::Json) tree, in buffers reused from
//! one parse to the next.

use std::borrow::Cow;

use super::rejected::{Parsed, Rejected};
use super::string::string;
use super::text::{decode, fingerprint, skip_whitespace};
use super::{Json, Node, MAX_DEPTH};

/// Parses JSON into a [`Json`] tree, reusing its buffers from one parse to the next.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    /// Finished containers' children, each container's contiguous.
    nodes: Vec<Node>,
    /// Children of the containers still open.
    stack: Vec<Node>,
    /// Whether an object that writes a key twice is [`Rejected`] (it is otherwise read as a
    /// `Value` map reads it): for readers that must see every member as written.
    reject_duplicate_keys: bool,
}

impl Parser {
    /// A parser with room for the tree of a typical event: grown one doubling at a time, its
    /// buffers were a dozen allocations for every small file read.
    pub(crate) fn for_events() -> Parser {
        Parser {
            nodes: Vec::with_capacity(1024),
            stack: Vec::with_capacity(256),
            reject_duplicate_keys: false,
        }
    }

    /// A parser that rejects an object writing a key twice, anywhere in the text.
    pub(crate) fn rejecting_duplicate_keys() -> Parser {
        Parser {
            reject_duplicate_keys: true,
            ..Parser::default()
        }
    }

    /// Lets go of buffers grown past `nodes` nodes by an unusually large text, for a parser that
    /// is kept from one text to the next.
    pub(crate) fn shrink_to(&mut self, nodes: usize) {
        self.nodes.shrink_to(nodes);
        self.stack.shrink_to(nodes);
    }

    /// Parses `text`, which must be one JSON value with nothing but whitespace around it.
    pub(crate) fn parse<'p>(&'p mut self, text: &'p str) -> Parsed<Json<'p>> {
        let mut at = 0;
        let json = self.parse_next(text, &mut at)?;
        if skip_whitespace(text.as_bytes(), at) != text.len() {
            return Err(Rejected);
        }
        Ok(json)
    }

    /// Parses the value that starts at `*at` (after whitespace) and leaves `*at` just past it:
    /// one value of a text that holds several. The tree replaces the one parsed before.
    pub(crate) fn parse_next<'p>(&'p mut self, text: &'p str, at: &mut usize) -> Parsed<Json<'p>> {
        self.nodes.clear();
        self.stack.clear();
        let bytes = text.as_bytes();
        *at = self.value(bytes, skip_whitespace(bytes, *at), 0)?;
        let node = self.stack.pop().ok_or(Rejected)?;
        Ok(Json {
            text,
            nodes: &self.nodes,
            node,
        })
    }

    // The parse goes by positions passed in and returned, never by a position behind a
    // reference: pushing a node may write anywhere as far as the compiler knows, so a position
    // in memory was stored and loaded again around every token.

    /// Parses the value at `at` onto the stack; returns where it ends. Nodes go straight into
    /// the stack rather than back to the caller: an enum returned through memory and read back
    /// at once stalled the processor on every value (a quarter of the parse).
    fn value(&mut self, bytes: &[u8], at: usize, depth: usize) -> Parsed<usize> {
        let (node, end) = match bytes.get(at) {
            Some(b'{') => return self.object(bytes, at, depth),
            Some(b'[') => return self.array(bytes, at, depth),
            Some(b'"') => {
                let (end, escaped) = string(bytes, at)?;
                let node = Node::String {
                    start: at + 1,
                    end,
                    escaped,
                };
                (node, end + 1)
            }
            Some(b'-' | b'0'..=b'9') => {
                let end = number(bytes, at)?;
                (Node::Number { start: at, end }, end)
            }
            Some(b't') => (Node::Bool(true), literal(bytes, at, b"true")?),
            Some(b'f') => (Node::Bool(false), literal(bytes, at, b"false")?),
            Some(b'n') => (Node::Null, literal(bytes, at, b"null")?),
            _ => return Err(Rejected),
        };
        self.stack.push(node);
        Ok(end)
    }

    fn array(&mut self, bytes: &[u8], start: usize, depth: usize) -> Parsed<usize> {
        if depth >= MAX_DEPTH {
            return Err(Rejected);
        }
        let mark = self.stack.len();
        let mut at = skip_whitespace(bytes, start + 1);
        if bytes.get(at) == Some(&b']') {
            at += 1;
        } else {
            loop {
                at = self.value(bytes, skip_whitespace(bytes, at), depth + 1)?;
                let (more, next) = more_follow(bytes, at, b']')?;
                at = next;
                if !more {
                    break;
                }
            }
        }
        // Four billion nodes in one line would not fit in memory first.
        let first = u32::try_from(self.nodes.len()).map_err(|_| Rejected)?;
        let len = u32::try_from(self.stack.len() - mark).map_err(|_| Rejected)?;
        // Nodes are plain data: one copy of the whole run.
        self.nodes.extend_from_slice(&self.stack[mark..]);
        self.stack.truncate(mark);
        self.stack.push(Node::Array {
            first,
            len,
            start,
            end: at,
        });
        Ok(at)
    }

    fn object(&mut self, bytes: &[u8], start: usize, depth: usize) -> Parsed<usize> {
        if depth >= MAX_DEPTH {
            return Err(Rejected);
        }
        let mark = self.stack.len();
        // The fingerprint bit of every key; a key whose bit is set already may repeat one.
        let mut keys = 0;
        let mut duplicate = false;
        let mut at = skip_whitespace(bytes, start + 1);
        if bytes.get(at) == Some(&b'}') {
            at += 1;
        } else {
            loop {
                at = skip_whitespace(bytes, at);
                if bytes.get(at) != Some(&b'"') {
                    return Err(Rejected);
                }
                let (end, escaped) = string(bytes, at)?;
                // Pushed before it is compared: a key node kept aside for the comparison was
                // written field by field and read back whole, a stalled load for every key.
                self.stack.push(Node::String {
                    start: at + 1,
                    end,
                    escaped,
                });
                let bit = fingerprint(&bytes[at + 1..end], escaped);
                if keys & bit != 0 && !duplicate {
                    if let Some((key, entries)) = self.stack[mark..].split_last() {
                        duplicate = entries
                            .chunks_exact(2)
                            .any(|earlier| same_key(bytes, &earlier[0], key));
                    }
                }
                keys |= bit;
                at = skip_whitespace(bytes, end + 1);
                if bytes.get(at) != Some(&b':') {
                    return Err(Rejected);
                }
                at = self.value(bytes, skip_whitespace(bytes, at + 1), depth + 1)?;
                let (more, next) = more_follow(bytes, at, b'}')?;
                at = next;
                if !more {
                    break;
                }
            }
        }
        if duplicate {
            if self.reject_duplicate_keys {
                return Err(Rejected);
            }
            keep_last_values(bytes, &mut self.stack, mark);
        }
        let first = u32::try_from(self.nodes.len()).map_err(|_| Rejected)?;
        let len = u32::try_from((self.stack.len() - mark) / 2).map_err(|_| Rejected)?;
        self.nodes.extend_from_slice(&self.stack[mark..]);
        self.stack.truncate(mark);
        self.stack.push(Node::Object {
            first,
            len,
            keys,
            end: at,
        });
        Ok(at)
    }
}

/// After a container's value at `at`: whether another value follows (a comma) or the container
/// ends there (`closer`), and the position past that comma or closer.
#[inline]
pub(super) fn more_follow(bytes: &[u8], at: usize, closer: u8) -> Parsed<(bool, usize)> {
    let at = skip_whitespace(bytes, at);
    let more = match bytes.get(at) {
        Some(b',') => true,
        Some(&byte) if byte == closer => false,
        _ => return Err(Rejected),
    };
    Ok((more, at + 1))
}

/// Where the literal `word` that starts at `at` ends.
pub(super) fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Parsed<usize> {
    if !bytes[at..].starts_with(word) {
        return Err(Rejected);
    }
    Ok(at + word.len())
}

/// Reads the number that starts at `start`; returns where it ends.
pub(super) fn number(bytes: &[u8], start: usize) -> Parsed<usize> {
    let mut end = start + usize::from(bytes[start] == b'-');
    let digits = |end: &mut usize| {
        let from = *end;
        while bytes.get(*end).is_some_and(u8::is_ascii_digit) {
            *end += 1;
        }
        *end - from
    };
    let integer_digits = match bytes.get(end) {
        // One leading zero, never followed by another digit.
        Some(b'0') => {
            end += 1;
            if bytes.get(end).is_some_and(u8::is_ascii_digit) {
                return Err(Rejected);
            }
            1
        }
        Some(b'1'..=b'9') => digits(&mut end),
        _ => return Err(Rejected),
    };
    let mut plain = integer_digits <= 18;
    if bytes.get(end) == Some(&b'.') {
        end += 1;
        if digits(&mut end) == 0 {
            return Err(Rejected);
        }
        plain = false;
    }
    if let Some(b'e' | b'E') = bytes.get(end) {
        end += 1;
        if let Some(b'+' | b'-') = bytes.get(end) {
            end += 1;
        }
        if digits(&mut end) == 0 {
            return Err(Rejected);
        }
        plain = false;
    }
    // An integer of up to 18 digits always fits; anything else may not fit an f64, which
    // serde_json rejects: let it decide.
    if !plain
        && number_text(bytes, start, end)
            .parse::<serde_json::Number>()
            .is_err()
    {
        return Err(Rejected);
    }
    Ok(end)
}

/// The text of a number the parser has checked: ASCII digits and signs only.
pub(super) fn number_text(bytes: &[u8], start: usize, end: usize) -> &str {
    std::str::from_utf8(&bytes[start..end]).unwrap_or_default()
}

pub(super) fn same_key(bytes: &[u8], a: &Node, b: &Node) -> bool {
    match (a, b) {
        (
            Node::String {
                start: a_start,
                end: a_end,
                escaped: false,
            },
            Node::String {
                start: b_start,
                end: b_end,
                escaped: false,
            },
        ) => bytes[*a_start..*a_end] == bytes[*b_start..*b_end],
        _ => decode_node(bytes, a) == decode_node(bytes, b),
    }
}

pub(super) fn decode_node<'t>(bytes: &'t [u8], node: &Node) -> Cow<'t, str> {
    match *node {
        Node::String {
            start,
            end,
            escaped,
        } => match std::str::from_utf8(&bytes[start..end]) {
            Ok(raw) => decode(raw, escaped),
            Err(_) => Cow::Borrowed(""),
        },
        _ => Cow::Borrowed(""),
    }
}

/// Makes an object's entries (at `stack[mark..]`) unique the way a `Value` map does: each key
/// where it first came, with the value it was given last. Rare: only hand-made JSON repeats keys.
pub(super) fn keep_last_values(bytes: &[u8], stack: &mut Vec<Node>, mark: usize) {
    let entries: Vec<(Node, Node)> = stack[mark..]
        .chunks(2)
        .map(|pair| (pair[0], pair[1]))
        .collect();
    let mut unique: Vec<(Node, Node)> = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        match unique
            .iter_mut()
            .find(|(earlier, _)| same_key(bytes, earlier, &key))
        {
            Some(entry) => entry.1 = value,
            None => unique.push((key, value)),
        }
    }
    stack.truncate(mark);
    for (key, value) in unique {
        stack.push(key);
        stack.push(value);
    }
}
