//! The parameter the layer adds: its name, the description the model reads, and its JSON Schema
//! property. A leaf, so that every module that looks for a reason (the readers, what a call
//! touched, the gateway's history) names it without depending on the layer's rules.

use serde_json::{json, Value};

/// The name of the parameter the layer adds to every declaration it can read.
pub const REASON_PARAM: &str = "reason";

/// The description of the added parameter: what the model reads when it decides what to write.
pub const REASON_DESCRIPTION: &str =
    "One short sentence: why this call. Shown to the human reviewing the session.";

/// The JSON Schema property the layer adds under [`REASON_PARAM`].
pub fn reason_property() -> Value {
    json!({ "type": "string", "description": REASON_DESCRIPTION })
}
