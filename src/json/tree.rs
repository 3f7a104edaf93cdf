//! The tree a parse gives: values borrowed from the text, read by key without building a
//! `serde_json::Value` (but when asked for one).

use std::borrow::Cow;

use serde_json::Value;

use super::text::{decode, fingerprint, same_bytes, skip_whitespace, slice};
use super::Node;

/// One value of a parsed tree.
#[derive(Clone, Copy)]
pub(crate) struct Json<'p> {
    pub(super) text: &'p str,
    pub(super) nodes: &'p [Node],
    pub(super) node: Node,
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
