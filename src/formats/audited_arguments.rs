//! What the rules of a source need of a call's arguments, taken while the line is at hand: the
//! status and reason (as audited), a key that tells whether a later event records the same
//! arguments, and the arguments themselves when the record keeps them.

use std::hash::{BuildHasher, Hash, Hasher};

use foldhash::quality::{FixedState, FoldHasher};

use serde_json::Value;

use crate::json::{Json, Object, Parser};
use crate::reason_parameter::REASON_PARAM;
use crate::record::{ReasonField, Status};

/// A call's arguments as the rules of a source audit them: their status, reason and key, read
/// while the line is at hand. (What the arguments hold, decoded, is the public
/// [`crate::call_arguments::Arguments`].)
#[derive(Debug, Clone)]
pub(crate) struct AuditedArguments {
    /// The status the arguments give, before a catalogue can make the call `declared`.
    pub(crate) status: Status,
    /// The reason's text, when it is a string.
    pub(crate) reason: Option<String>,
    /// The same for the same arguments however they were encoded (a JSON string in one event,
    /// an object in the next; keys in any order).
    pub(crate) key: u64,
    /// The arguments as a reviewer wants them (a JSON-encoded object decoded), when records
    /// keep them.
    pub(crate) kept: Option<Value>,
}

impl AuditedArguments {
    /// Reads the arguments a call was recorded with; `None` when it has none. A string is read
    /// the way agent clients read it (see [`crate::call_arguments::decode_arguments`]): empty means no
    /// arguments, and a JSON object in it is the arguments; `inner` parses that JSON.
    pub(crate) fn read(
        arguments: Option<Json<'_>>,
        inner: &mut Parser,
        keep: bool,
    ) -> AuditedArguments {
        let Some(arguments) = arguments.filter(|arguments| !arguments.is_null()) else {
            return AuditedArguments::none(keep.then_some(Value::Null));
        };
        if let Some(object) = arguments.as_object() {
            return AuditedArguments::object(object, keep.then(|| arguments.to_value()));
        }
        match arguments.as_str() {
            Some(text) => AuditedArguments::string(&text, inner, keep),
            None => {
                let mut hasher = key_hasher();
                hash_json(arguments, &mut hasher);
                AuditedArguments::not_an_object(hasher.finish(), keep.then(|| arguments.to_value()))
            }
        }
    }

    /// Arguments that are a JSON string holding `text` (streamed fragments joined, say).
    pub(crate) fn string(text: &str, inner: &mut Parser, keep: bool) -> AuditedArguments {
        let original = || Value::String(text.to_owned());
        if text.trim().is_empty() {
            return AuditedArguments::none(keep.then(original));
        }
        // The tree rejects exactly what serde_json rejects: text it cannot read is no JSON.
        match inner
            .parse(text)
            .ok()
            .and_then(|json| Some((json, json.as_object()?)))
        {
            Some((json, object)) => AuditedArguments::object(object, keep.then(|| json.to_value())),
            None => {
                let mut hasher = key_hasher();
                (3u8, text).hash(&mut hasher);
                AuditedArguments::not_an_object(hasher.finish(), keep.then(original))
            }
        }
    }

    /// Arguments recorded as JSON text (a streamed input joined); text that is no JSON is
    /// still the arguments, as a string.
    pub(crate) fn json_text(text: &str, keep: bool) -> AuditedArguments {
        let mut parser = Parser::default();
        let mut inner = Parser::default();
        match parser.parse(text) {
            Ok(json) => AuditedArguments::read(Some(json), &mut inner, keep),
            Err(_) => AuditedArguments::string(text, &mut inner, keep),
        }
    }

    fn none(kept: Option<Value>) -> AuditedArguments {
        let (status, reason) = Status::of_reason_field(ReasonField::NoArguments);
        AuditedArguments {
            status,
            reason,
            key: 0,
            kept,
        }
    }

    fn object(object: Object<'_>, kept: Option<Value>) -> AuditedArguments {
        let reason = object.get(REASON_PARAM);
        let text = reason.and_then(Json::as_str);
        let field = match (reason, &text) {
            (None, _) => ReasonField::Absent,
            (Some(_), Some(text)) => ReasonField::Text(text),
            (Some(_), None) => ReasonField::NotText,
        };
        let (status, mut reason) = Status::of_reason_field(field);
        if status == Status::Invalid {
            // The value the log holds, as JSON: what the record gives for an invalid reason.
            reason = object
                .get(REASON_PARAM)
                .map(|value| value.to_value().to_string());
        }
        let mut hasher = key_hasher();
        hash_object(object, &mut hasher);
        AuditedArguments {
            status,
            reason,
            key: hasher.finish(),
            kept,
        }
    }

    fn not_an_object(key: u64, kept: Option<Value>) -> AuditedArguments {
        let (status, reason) = Status::of_reason_field(ReasonField::NotAnObject);
        AuditedArguments {
            status,
            reason,
            key,
            kept,
        }
    }
}

fn hash_json(json: Json<'_>, hasher: &mut FoldHasher) {
    if json.is_null() {
        0u8.hash(hasher);
    } else if let Some(object) = json.as_object() {
        hash_object(object, hasher);
    } else if let Some(items) = json.as_array() {
        (4u8, items.len()).hash(hasher);
        items.for_each(|item| hash_json(item, hasher));
    } else if let Some(text) = json.as_str() {
        (3u8, text.as_ref()).hash(hasher);
    } else if let Some(number) = json.as_number() {
        // One number written two ways (`1.0`, `1.00`) is one argument.
        let canonical = number
            .parse::<serde_json::Number>()
            .map_or_else(|_| number.to_owned(), |number| number.to_string());
        (2u8, canonical).hash(hasher);
    } else {
        (1u8, json.as_bool()).hash(hasher);
    }
}

/// What the keys of arguments are hashed with. The key only tells repeats apart within one run,
/// so it need not be keyed: foldhash hashes a call's arguments several times faster than the
/// standard SipHash, which showed in the profile of every read. The same seed in every
/// thread, so pieces of one file read on several threads agree.
pub(crate) fn key_hasher() -> FoldHasher<'static> {
    FixedState::default().build_hasher()
}

/// Key order does not matter: each entry is hashed on its own and the hashes are added up.
fn hash_object(object: Object<'_>, hasher: &mut FoldHasher) {
    let entries = object.iter().fold(0u64, |sum, (key, value)| {
        let mut entry = key_hasher();
        key.decode().hash(&mut entry);
        hash_json(value, &mut entry);
        sum.wrapping_add(entry.finish())
    });
    (5u8, object.len(), entries).hash(hasher);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> AuditedArguments {
        let mut parser = Parser::default();
        let json = parser.parse(text).expect("JSON");
        AuditedArguments::read(Some(json), &mut Parser::default(), true)
    }

    /// The reader's rule and the layer's (on `Value`) agree on every kind of arguments.
    #[test]
    fn statuses_and_kept_arguments_are_those_of_the_value_rules() {
        for text in [
            r#"{"reason":"why"}"#,
            r#"{"reason":"  "}"#,
            r#"{"reason":3}"#,
            r#"{"path":"a"}"#,
            r#""{\"reason\":\"why\"}""#,
            r#""{\"path\":\"a\"}""#,
            r#""[\"ls\"]""#,
            r#""ls -la""#,
            r#""  ""#,
            r#""""#,
            "null",
            "[1,2]",
            "42",
            "true",
            r#""{\"reason\":\"caf\\u00e9\"}""#,
            r#"{"reason":"a\"b"}"#,
        ] {
            let value: Value = serde_json::from_str(text).expect("JSON");
            let read = read(text);
            assert_eq!(
                (read.status, read.reason.clone()),
                Status::of_arguments(&value),
                "{text}"
            );
            let decoded = match crate::call_arguments::decode_arguments(&value) {
                crate::call_arguments::Arguments::Object(map) => Value::Object(map.into_owned()),
                _ => value,
            };
            assert_eq!(read.kept, Some(decoded), "{text}");
        }
        let absent = AuditedArguments::read(None, &mut Parser::default(), true);
        assert_eq!(
            (absent.status, absent.kept),
            (Status::Missing, Some(Value::Null))
        );
    }

    #[test]
    fn the_key_ignores_encoding_and_key_order_but_not_content() {
        let key = |text: &str| read(text).key;
        assert_eq!(
            key(r#"{"a":1,"b":[true,"x"]}"#),
            key(r#"{"b":[true,"x"],"a":1}"#)
        );
        assert_eq!(
            key(r#"{"a":1.0}"#),
            key(r#""{ \"a\": 1.00 }""#),
            "a JSON string and an object"
        );
        assert_eq!(key("null"), key(r#""""#));
        assert_ne!(key(r#"{"a":1}"#), key(r#"{"a":2}"#));
        assert_ne!(key(r#"{"a":1}"#), key(r#"{"b":1}"#));
        assert_ne!(key(r#"{"a":"1"}"#), key(r#"{"a":1}"#));
        assert_ne!(key(r#"{"a":[1,2]}"#), key(r#"{"a":[2,1]}"#));
        assert_ne!(key(r#""ls""#), key(r#""pwd""#));
    }
}
