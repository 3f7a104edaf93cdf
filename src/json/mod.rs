//! A JSON tree for reading events, borrowed from the line it was parsed from.
//!
//! Readers look at a few keys of a few objects and skip the rest, mostly long strings: tool
//! output, file contents. Building `serde_json::Value`s for all of it (an allocation for every
//! string and key, a hash map for every object) was most of the time spent on lines that hold a
//! call. Here a string stays as written until a reader asks for it, objects are lists of entries
//! searched in place, and every node of a line lives in one buffer that is reused for the next
//! line: parsing allocates nothing once the buffers have grown.
//!
//! The tree must mean exactly what `serde_json::Value` means, so the parser accepts exactly what
//! `serde_json::from_str::<Value>` accepts: UTF-8, RFC 8259 with strict escapes (surrogates
//! paired), no raw control characters in strings, numbers that fit an `f64`, at most 127 nested
//! containers; and a key that comes twice keeps its first place and its last value, as in a
//! `Value` map. Whatever it rejects goes back to serde_json, whose verdict and message are final.
//!
//! The text is UTF-8 already (the reader checks each line with a SIMD validator first), so a
//! string is a slice of it: nothing is copied or checked again when a reader asks for one.

use std::borrow::Cow;

use serde_json::Value;

use rejected::Parsed;
pub(crate) use rejected::Rejected;
use string::{hex4, string};

mod rejected;
mod string;

/// serde_json's nesting limit: its 128th nested array or object is an error.
const MAX_DEPTH: usize = 127;

#[derive(Debug, Clone, Copy)]
enum Node {
    Null,
    Bool(bool),
    /// The number as written, `start..end` of the text.
    Number {
        start: usize,
        end: usize,
    },
    /// The string between its quotes, as written; `escaped` when it holds a backslash.
    String {
        start: usize,
        end: usize,
        escaped: bool,
    },
    /// Items at `first..first + len` of the node buffer; the array is `start..end` of the
    /// text.
    Array {
        first: u32,
        len: u32,
        start: usize,
        end: usize,
    },
    /// Entries at `first..first + 2 * len`: a key (a `String` node), then its value; `keys`
    /// has the [`fingerprint`] bit of every key set; the object ends just before `end` of the
    /// text (so that a member can be spliced in before its closing brace).
    Object {
        first: u32,
        len: u32,
        keys: u64,
        end: usize,
    },
}

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
fn more_follow(bytes: &[u8], at: usize, closer: u8) -> Parsed<(bool, usize)> {
    let at = skip_whitespace(bytes, at);
    let more = match bytes.get(at) {
        Some(b',') => true,
        Some(&byte) if byte == closer => false,
        _ => return Err(Rejected),
    };
    Ok((more, at + 1))
}

/// The first position from `at` on that is not whitespace.
#[inline]
fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// Where the literal `word` that starts at `at` ends.
fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Parsed<usize> {
    if !bytes[at..].starts_with(word) {
        return Err(Rejected);
    }
    Ok(at + word.len())
}

/// Reads the number that starts at `start`; returns where it ends.
fn number(bytes: &[u8], start: usize) -> Parsed<usize> {
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
fn number_text(bytes: &[u8], start: usize, end: usize) -> &str {
    std::str::from_utf8(&bytes[start..end]).unwrap_or_default()
}

/// A piece of the text between ASCII delimiters, which are always character boundaries.
fn slice(text: &str, start: usize, end: usize) -> &str {
    text.get(start..end).unwrap_or_default()
}

/// One bit of 64 that a key sets in its object's fingerprint, from its length and its first and
/// last bytes: looking up a key the object does not have mostly ends at that bit. A key with
/// escapes may equal any other once decoded, so it sets every bit.
fn fingerprint(raw: &[u8], escaped: bool) -> u64 {
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
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

fn same_key(bytes: &[u8], a: &Node, b: &Node) -> bool {
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

fn decode_node<'t>(bytes: &'t [u8], node: &Node) -> Cow<'t, str> {
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
fn keep_last_values(bytes: &[u8], stack: &mut Vec<Node>, mark: usize) {
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

/// A string's text with its escapes resolved. The parser has checked that it is UTF-8 and that
/// every escape is one JSON allows.
fn decode(raw: &str, escaped: bool) -> Cow<'_, str> {
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

/// One value of a parsed tree.
#[derive(Clone, Copy)]
pub(crate) struct Json<'p> {
    text: &'p str,
    nodes: &'p [Node],
    node: Node,
}

impl std::fmt::Debug for Json<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_value())
    }
}

impl<'p> Json<'p> {
    fn at(self, index: usize) -> Json<'p> {
        Json {
            node: self.nodes[index],
            ..self
        }
    }

    pub(crate) fn as_object(self) -> Option<Object<'p>> {
        match self.node {
            Node::Object {
                first, len, keys, ..
            } => Some(Object {
                json: self,
                first: first as usize,
                len: len as usize,
                keys,
            }),
            _ => None,
        }
    }

    /// The items of an array.
    pub(crate) fn as_array(self) -> Option<impl ExactSizeIterator<Item = Json<'p>> + Clone> {
        match self.node {
            Node::Array { first, len, .. } => {
                let (first, len) = (first as usize, len as usize);
                Some((first..first + len).map(move |at| self.at(at)))
            }
            _ => None,
        }
    }

    /// Where the closing brace of an object is in the text.
    pub(crate) fn closing_brace(self) -> Option<usize> {
        match self.node {
            Node::Object { end, .. } => Some(end - 1),
            _ => None,
        }
    }

    /// Where a string is in the text, its quotes included.
    pub(crate) fn string_span(self) -> Option<(usize, usize)> {
        match self.node {
            Node::String { start, end, .. } => Some((start - 1, end + 1)),
            _ => None,
        }
    }

    /// An array as written.
    pub(crate) fn array_text(self) -> Option<&'p str> {
        match self.node {
            Node::Array { start, end, .. } => Some(slice(self.text, start, end)),
            _ => None,
        }
    }

    /// A string, its escapes resolved.
    pub(crate) fn as_str(self) -> Option<Cow<'p, str>> {
        self.as_text().map(Text::decode)
    }

    pub(crate) fn as_text(self) -> Option<Text<'p>> {
        match self.node {
            Node::String {
                start,
                end,
                escaped,
            } => Some(Text {
                raw: slice(self.text, start, end),
                escaped,
            }),
            _ => None,
        }
    }

    /// A number as written.
    pub(crate) fn as_number(self) -> Option<&'p str> {
        match self.node {
            Node::Number { start, end } => Some(slice(self.text, start, end)),
            _ => None,
        }
    }

    /// A non-negative integer, the way `Value::as_u64` reads one.
    pub(crate) fn as_u64(self) -> Option<u64> {
        self.as_number()?
            .parse::<serde_json::Number>()
            .ok()?
            .as_u64()
    }

    pub(crate) fn as_bool(self) -> Option<bool> {
        match self.node {
            Node::Bool(flag) => Some(flag),
            _ => None,
        }
    }

    pub(crate) fn is_null(self) -> bool {
        matches!(self.node, Node::Null)
    }

    pub(crate) fn is_string(self) -> bool {
        matches!(self.node, Node::String { .. })
    }

    pub(crate) fn is_array(self) -> bool {
        matches!(self.node, Node::Array { .. })
    }

    pub(crate) fn is_object(self) -> bool {
        matches!(self.node, Node::Object { .. })
    }

    /// The same value as a `serde_json::Value`, for the code that works on those.
    pub(crate) fn to_value(self) -> Value {
        match self.node {
            Node::Null => Value::Null,
            Node::Bool(flag) => Value::Bool(flag),
            Node::Number { .. } => self
                .as_number()
                .and_then(|number| number.parse::<serde_json::Number>().ok())
                .map_or(Value::Null, Value::Number),
            Node::String { .. } => Value::String(self.as_str().unwrap_or_default().into_owned()),
            Node::Array { .. } => Value::Array(
                self.as_array()
                    .into_iter()
                    .flatten()
                    .map(Json::to_value)
                    .collect(),
            ),
            Node::Object { .. } => Value::Object(
                self.as_object()
                    .into_iter()
                    .flat_map(Object::iter)
                    .map(|(key, value)| (key.decode().into_owned(), value.to_value()))
                    .collect(),
            ),
        }
    }
}

/// A string as written in the JSON text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Text<'p> {
    raw: &'p str,
    escaped: bool,
}

impl<'p> Text<'p> {
    pub(crate) fn decode(self) -> Cow<'p, str> {
        decode(self.raw, self.escaped)
    }

    /// Whether the string is `text`, without decoding it when it has no escapes.
    pub(crate) fn is(self, text: &str) -> bool {
        if self.escaped {
            self.decode() == text
        } else {
            self.raw == text
        }
    }
}

/// One object of a parsed tree; its entries in the order they were written.
#[derive(Clone, Copy)]
pub(crate) struct Object<'p> {
    json: Json<'p>,
    first: usize,
    len: usize,
    keys: u64,
}

impl<'p> Object<'p> {
    pub(crate) fn get(self, key: &str) -> Option<Json<'p>> {
        if !self.may_have(key) {
            return None;
        }
        // Shapes look up a dozen keys in every object: straight over the key nodes. Through
        // `get_each` of one key this took 2% more of reading a Chat log.
        let wanted = key.as_bytes();
        self.entries()
            .chunks_exact(2)
            .find(|entry| self.key_reads_as(entry[0], wanted))
            .map(|entry| Json {
                node: entry[1],
                ..self.json
            })
    }

    /// Whether a key node reads as `wanted`, escapes decoded: the one rule by which [`get`]
    /// and [`get_each`] match a key.
    ///
    /// [`get`]: Object::get
    /// [`get_each`]: Object::get_each
    #[inline]
    fn key_reads_as(self, key: Node, wanted: &[u8]) -> bool {
        let Node::String {
            start,
            end,
            escaped,
        } = key
        else {
            return false;
        };
        if escaped {
            decode(slice(self.json.text, start, end), true).as_bytes() == wanted
        } else {
            same_bytes(&self.json.text.as_bytes()[start..end], wanted)
        }
    }

    /// Whether the object may have the key: `false` is sure, from the bits of its keys'
    /// fingerprints, without looking at a key.
    pub(crate) fn may_have(self, key: &str) -> bool {
        self.keys & fingerprint(key.as_bytes(), false) != 0
    }

    /// Its keys and values, one after the other.
    fn entries(self) -> &'p [Node] {
        &self.json.nodes[self.first..self.first + 2 * self.len]
    }

    /// The values of several keys (each the first written), in one pass over the members:
    /// for reading a few keys of many small objects, such as every call of a history.
    pub(crate) fn get_each<const N: usize>(self, keys: [&str; N]) -> [Option<Json<'p>>; N] {
        let mut found = [None; N];
        let mut missing = N;
        for entry in self.entries().chunks_exact(2) {
            for (wanted, found) in keys.iter().zip(&mut found) {
                if found.is_none() && self.key_reads_as(entry[0], wanted.as_bytes()) {
                    *found = Some(Json {
                        node: entry[1],
                        ..self.json
                    });
                    missing -= 1;
                }
            }
            if missing == 0 {
                break;
            }
        }
        found
    }

    pub(crate) fn len(self) -> usize {
        self.len
    }

    /// Where the first member's key starts in the text (its opening quote), when there is one:
    /// a member spliced in there comes first.
    pub(crate) fn first_key_start(self) -> Option<usize> {
        match self.entries().first()? {
            Node::String { start, .. } => Some(start - 1),
            _ => None,
        }
    }

    pub(crate) fn contains_key(self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub(crate) fn iter(self) -> impl Iterator<Item = (Text<'p>, Json<'p>)> + Clone {
        (0..self.len).map(move |entry| {
            let at = self.first + 2 * entry;
            let key = self.json.at(at).as_text().unwrap_or(Text {
                raw: "",
                escaped: false,
            });
            (key, self.json.at(at + 1))
        })
    }

    pub(crate) fn values(self) -> impl Iterator<Item = Json<'p>> + Clone {
        self.iter().map(|(_, value)| value)
    }

    /// Each member's key, and its value with where the value is written in the text
    /// (`start..end`).
    pub(crate) fn members_as_written(
        self,
    ) -> impl Iterator<Item = (Text<'p>, Json<'p>, (usize, usize))> + Clone {
        let bytes = self.json.text.as_bytes();
        (0..self.len).map(move |entry| {
            let at = self.first + 2 * entry;
            let (key, value) = (self.json.at(at), self.json.at(at + 1));
            let key_end = match key.node {
                Node::String { end, .. } => end,
                _ => 0,
            };
            // After the key's closing quote: whitespace, the colon, whitespace, the value.
            let colon = skip_whitespace(bytes, key_end + 1);
            let start = skip_whitespace(bytes, colon + 1);
            let end = match value.node {
                Node::Null => start + 4,
                Node::Bool(flag) => start + if flag { 4 } else { 5 },
                Node::Number { end, .. } | Node::Array { end, .. } | Node::Object { end, .. } => {
                    end
                }
                Node::String { end, .. } => end + 1,
            };
            let key = key.as_text().unwrap_or(Text {
                raw: "",
                escaped: false,
            });
            (key, value, (start, end))
        })
    }
}

/// The parser against serde_json, for the differential fuzz target (`fuzz/fuzz_targets/json.rs`):
/// built only for the fuzz targets (`cfg(fuzzing)`, or the `fuzzing` feature their crate turns on
/// so that `cargo check` sees it too), so the parser stays private to the crate everywhere else.
#[cfg(any(fuzzing, feature = "fuzzing"))]
pub mod differential {
    use serde_json::Value;

    use super::{Json, Parser};

    /// Panics when the tree and serde_json disagree on `text`: one accepts what the other
    /// rejects, or both accept it and read different values. Then a value of several, as a
    /// document is read: a value the parser takes from the start of `text` reads as serde_json
    /// reads that same slice.
    pub fn check(text: &str) {
        let mut parser = Parser::default();
        let tree = parser.parse(text).ok().map(Json::to_value);
        let reference = serde_json::from_str::<Value>(text).ok();
        assert_eq!(
            tree, reference,
            "parse disagrees with serde_json on {text:?}"
        );

        let mut at = 0;
        if let Ok(json) = parser.parse_next(text, &mut at) {
            let first = json.to_value();
            let reference = serde_json::from_str::<Value>(&text[..at]).ok();
            assert_eq!(
                Some(first),
                reference,
                "parse_next disagrees with serde_json on {:?}",
                &text[..at]
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn parsed(text: &str) -> Option<Value> {
        let mut parser = Parser::default();
        parser.parse(text).ok().map(Json::to_value)
    }

    /// What serde_json makes of `text`, compared with the tree: both reject it, or both read
    /// the same value.
    fn agrees(text: &str) {
        let reference = serde_json::from_str::<Value>(text).ok();
        assert_eq!(parsed(text), reference, "{text:?}");
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            r#"{"a":[1,-2.5e3,true,false,null,"x"],"b":{}}"#,
            " [ 1 , { \"k\" : \"v\" } ]\n",
            r#""caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t""#,
            "\"日本語\"",
            "0",
            "-0",
            "123456789012345678901234567890",
            "1E+2",
            "1e-400",
            "0e99999999999999999999",
            r#"{"a":1,"b":{"x":1},"a":2}"#,
            r#"{"a":1,"b":2,"\u0061":3}"#,
            r#"{"a":{"c":1},"b":2,"c":3,"d":4,"a":[5]}"#,
        ] {
            agrees(text);
        }
    }

    #[test]
    fn rejects_what_serde_json_rejects() {
        for text in [
            "",
            "01",
            "1.",
            "-",
            ".5",
            "+1",
            "1e",
            "1e400",
            "-1e400",
            "1e99999999999999999999",
            "\"\\uD800\"",
            "\"\\uDC00\"",
            "\"\\uD800\\n\"",
            "\"\\uD800\\uD800\"",
            "\"a\tb\"",
            "\"\\U0041\"",
            "\"\\x\"",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:2}",
            "[1 2]",
            "tru",
            "nul",
            "truex",
            "{} {}",
            "\"unclosed",
            "[",
            "{\"a\":",
        ] {
            agrees(text);
        }
    }

    #[test]
    fn the_nesting_limit_is_serde_jsons() {
        for depth in [126, 127, 128, 200] {
            let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            agrees(&text);
            let text = format!(
                "{}1{}",
                "{\"a\":[".repeat(depth / 2),
                "]}".repeat(depth / 2)
            );
            agrees(&text);
        }
    }

    #[test]
    fn strings_are_borrowed_until_decoded() {
        let mut parser = Parser::default();
        let json = parser.parse(r#"{"plain":"x","escaped":"a\"b"}"#).unwrap();
        let object = json.as_object().unwrap();
        assert!(matches!(
            object.get("plain").unwrap().as_str(),
            Some(Cow::Borrowed("x"))
        ));
        assert_eq!(object.get("escaped").unwrap().as_str().unwrap(), "a\"b");
        assert!(object.get("escaped").unwrap().as_text().unwrap().is("a\"b"));
    }

    #[test]
    fn several_keys_in_one_pass_are_what_each_lookup_finds() {
        let mut parser = Parser::default();
        let text = r#"{"type":"tool_use","\u0069d":"t1","name":"Bash","input":{},"id2":1,"":0}"#;
        let object = parser.parse(text).unwrap().as_object().unwrap();
        let keys = ["input", "id", "missing", "type", "", "input"];
        let each = object.get_each(keys).map(|found| found.map(Json::to_value));
        let one_by_one = keys.map(|key| object.get(key).map(Json::to_value));
        assert_eq!(each, one_by_one);
        assert_eq!(each[1], Some(Value::from("t1")));
        assert_eq!(each[2], None);
    }

    #[test]
    fn a_parser_is_reused_across_texts() {
        let mut parser = Parser::default();
        for text in [r#"[1,[2,[3]]]"#, r#"{"a":{"b":{}}}"#, "\"s\"", "[[]]"] {
            let json = parser.parse(text).map(Json::to_value);
            assert_eq!(json.ok(), serde_json::from_str(text).ok());
        }
    }

    /// An object's members as serde_json reads them, each value as written, keys written twice
    /// kept twice.
    fn raw_members(text: &str) -> Option<Vec<(String, String)>> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = Vec<(String, String)>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Self::Value, M::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value: &'de serde_json::value::RawValue = map.next_value()?;
                    members.push((key, value.get().to_owned()));
                }
                Ok(members)
            }
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let members = serde::Deserializer::deserialize_map(&mut deserializer, Members).ok()?;
        deserializer.end().ok()?;
        Some(members)
    }

    #[test]
    fn keys_written_twice_are_rejected_only_when_asked() {
        for text in [r#"{"a":1,"a":2}"#, r#"[{"x":{"b":1,"b":2}}]"#] {
            assert!(Parser::rejecting_duplicate_keys().parse(text).is_err());
            assert!(Parser::default().parse(text).is_ok());
        }
        assert!(Parser::rejecting_duplicate_keys()
            .parse(r#"{"a":1,"b":{"a":2}}"#)
            .is_ok());
    }

    /// JSON-ish text: valid JSON, cut and spliced and sprinkled with the characters that matter.
    fn jsonish() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            any::<bool>().prop_map(|flag| flag.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| n.to_string()),
            "[ -~é\u{1F600}\\\\\"\t]{0,8}".prop_map(|text| format!("\"{text}\"")),
            "(\\\\u[0-9a-fA-F]{4}|\\\\[\"\\\\/bfnrtxu]|[a-z]){0,4}"
                .prop_map(|text| format!("\"{text}\"")),
            "-?[0-9]{0,3}(\\.[0-9]{0,2})?([eE][+-]?[0-9]{0,4})?",
        ];
        let value = leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..5).prop_map(|entries| {
                    let entries: Vec<String> = entries
                        .into_iter()
                        .map(|(key, value)| format!("\"{key}\" : {value}"))
                        .collect();
                    format!("{{{}}}", entries.join(","))
                }),
            ]
        });
        (
            value,
            any::<prop::sample::Index>(),
            "[ ,:\\[\\]{}\"\\\\0-9a-z]{0,2}",
        )
            .prop_map(|(text, cut, noise)| {
                // Half the time, damage the text at one place.
                if cut.index(4) == 0 && !text.is_empty() {
                    let at = cut.index(text.len());
                    let at = (0..=at)
                        .rev()
                        .find(|&at| text.is_char_boundary(at))
                        .unwrap_or(0);
                    format!("{}{noise}{}", &text[..at], &text[at..])
                } else {
                    text
                }
            })
    }

    /// Keys of many lengths, sharing their beginnings, some written with escapes: as written,
    /// and as read.
    fn a_key() -> impl Strategy<Value = (String, String)> {
        prop_oneof![
            Just(("", "")),
            Just(("a", "a")),
            Just(("id", "id")),
            Just(("type", "type")),
            Just(("\\u0074ype", "type")),
            Just(("tool_use", "tool_use")),
            Just(("tool_use_id", "tool_use_id")),
            Just(("tool_use_i\\u0064", "tool_use_id")),
            Just(("tool_usE", "tool_usE")),
            Just(("abcdefgh", "abcdefgh")),
            Just(("abcdefghi", "abcdefghi")),
            Just(("abcdefghj", "abcdefghj")),
            Just(("abcdefgh\u{e9}", "abcdefgh\u{e9}")),
            Just(("\u{e9}t\u{e9}", "\u{e9}t\u{e9}")),
        ]
        .prop_map(|(written, read)| (written.to_owned(), read.to_owned()))
    }

    proptest! {
        #[test]
        fn a_key_is_found_as_serde_json_finds_it(
            keys in prop::collection::vec(a_key(), 0..6),
            looked_up in prop::collection::vec(a_key(), 1..4),
        ) {
            let members: Vec<String> = keys
                .iter()
                .enumerate()
                .map(|(n, (written, _))| format!("\"{written}\":{n}"))
                .collect();
            // No space before the closing brace: a last short key is read at the text's end.
            let text = format!("{{{}}}", members.join(","));
            let expected: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
            let mut parser = Parser::default();
            let object = parser.parse(&text).unwrap().as_object().unwrap();
            for (_, key) in &looked_up {
                prop_assert_eq!(object.get(key).map(Json::to_value), expected.get(key).cloned());
            }
            let [a, b, c] = [0, 1, 2].map(|n| &looked_up[n.min(looked_up.len() - 1)].1);
            let each = object.get_each([a, b, c]).map(|found| found.map(Json::to_value));
            prop_assert_eq!(each, [a, b, c].map(|key| expected.get(key).cloned()));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn accepts_and_reads_exactly_what_serde_json_does(text in jsonish()) {
            let reference = serde_json::from_str::<Value>(&text).ok();
            prop_assert_eq!(parsed(&text), reference, "{:?}", text);
        }

        /// An object's members as written are serde_json's raw members, whenever the parser
        /// that rejects keys written twice accepts the object.
        #[test]
        fn members_as_written_are_serde_jsons_raw_members(text in jsonish()) {
            let text = format!("{{ \"k\" :{text}, \"l\":[ {text} ] ,\"m\"\n:\t{text}}}");
            let mut parser = Parser::rejecting_duplicate_keys();
            if let Ok(json) = parser.parse(&text) {
                let members: Vec<(String, String)> = json
                    .as_object()
                    .unwrap()
                    .members_as_written()
                    .map(|(key, value, (start, end))| {
                        let written = &text[start..end];
                        assert_eq!(serde_json::from_str::<Value>(written).ok(), Some(value.to_value()));
                        (key.decode().into_owned(), written.to_owned())
                    })
                    .collect();
                prop_assert_eq!(Some(members), raw_members(&text));
            }
        }
    }
}
