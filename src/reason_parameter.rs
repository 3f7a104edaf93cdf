//! The parameter the layer adds: its name, the description the model reads, and its JSON Schema
//! property. A leaf, so that every module that looks for a reason (the readers, what a call
//! touched, the gateway's history) names it without depending on the layer's rules.

use serde_json::{json, Map, Value};

/// The name of the parameter the layer adds to every declaration it can read.
pub const REASON_PARAM: &str = "reason";

/// The description of the added parameter: what the model reads when it decides what to write.
pub const REASON_DESCRIPTION: &str =
    "One short sentence: why this call. Shown to the human reviewing the session.";

/// The JSON Schema property the layer adds under [`REASON_PARAM`].
pub fn reason_property() -> Value {
    json!({ "type": "string", "description": REASON_DESCRIPTION })
}

/// Where the added parameter goes among a schema's properties (SPEC §1, "Its place"): a model
/// writes a call's arguments in the order its schema lists them, so the place decides whether it
/// writes the reason before the arguments or after them.
///
/// The same place orders a call's arguments when the gateway gives a logged reason back to the
/// history, so that the model's context shows its own calls written the way the schema asks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ReasonPosition {
    /// The first property: the model writes why before what.
    First,
    /// The last property, after every one the tool declares.
    #[default]
    Last,
}

impl ReasonPosition {
    /// Puts `value` under [`REASON_PARAM`] in `object` at this place. The layer calls it only
    /// on an object without the key (a `reason` already there is a collision, left alone); one
    /// that has it keeps its place and takes the new value.
    pub fn put(self, object: &mut Map<String, Value>, value: Value) {
        match self {
            ReasonPosition::Last => {
                object.insert(REASON_PARAM.to_owned(), value);
            }
            ReasonPosition::First if object.contains_key(REASON_PARAM) => {
                object.insert(REASON_PARAM.to_owned(), value);
            }
            ReasonPosition::First => {
                object.shift_insert(0, REASON_PARAM.to_owned(), value);
            }
        }
    }

    /// The place's name, as `--reason-position` takes it.
    pub fn name(self) -> &'static str {
        match self {
            ReasonPosition::First => "first",
            ReasonPosition::Last => "last",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_puts_the_reason_before_every_other_key_and_last_after() {
        let object = json!({"command": "ls", "cwd": "/"});
        let Value::Object(object) = object else {
            unreachable!()
        };
        let mut first = object.clone();
        ReasonPosition::First.put(&mut first, json!("why"));
        assert_eq!(
            Value::Object(first).to_string(),
            r#"{"reason":"why","command":"ls","cwd":"/"}"#
        );
        let mut last = object;
        ReasonPosition::Last.put(&mut last, json!("why"));
        assert_eq!(
            Value::Object(last).to_string(),
            r#"{"command":"ls","cwd":"/","reason":"why"}"#
        );
    }

    #[test]
    fn a_reason_already_there_keeps_its_place() {
        let Value::Object(mut object) = json!({"a": 1, "reason": "old", "b": 2}) else {
            unreachable!()
        };
        ReasonPosition::First.put(&mut object, json!("new"));
        assert_eq!(
            Value::Object(object).to_string(),
            r#"{"a":1,"reason":"new","b":2}"#
        );
    }

    #[test]
    fn the_default_is_last() {
        assert_eq!(ReasonPosition::default(), ReasonPosition::Last);
    }
}
