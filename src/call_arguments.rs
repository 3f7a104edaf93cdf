//! What a call's arguments hold, whatever API they came in (where each API keeps them is its
//! room's, in [`crate::apis`]).

use std::borrow::Cow;

use serde_json::{Map, Value};

/// What a call's arguments hold, once a JSON-encoded string is decoded.
#[derive(Debug, PartialEq)]
pub enum Arguments<'a> {
    /// A JSON object, given as one or decoded from a string.
    Object(Cow<'a, Map<String, Value>>),
    /// No arguments: `null`, or a string that is empty or all whitespace.
    Empty,
    /// Anything else: a string that is not JSON or not an object, an array, a number…
    NotAnObject,
}

/// Reads a call's arguments the way agent clients do: an object, or the JSON string a model's
/// function call travels as, with the empty string meaning "no arguments".
pub fn decode_arguments(arguments: &Value) -> Arguments<'_> {
    match arguments {
        Value::Object(map) => Arguments::Object(Cow::Borrowed(map)),
        Value::Null => Arguments::Empty,
        Value::String(text) if text.trim().is_empty() => Arguments::Empty,
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Arguments::Object(Cow::Owned(map)),
            _ => Arguments::NotAnObject,
        },
        _ => Arguments::NotAnObject,
    }
}
