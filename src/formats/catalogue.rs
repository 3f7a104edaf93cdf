//! Catalogues recorded in a log (request bodies' `tools`, MCP `tools/list` results): which tools
//! declare a `reason` of their own, so that their calls are `declared`, not audited.

use serde_json::{Map, Value};

use super::walk::Declarations;
use crate::layer::REASON_PARAM;

/// The description the layer gives its property (SPEC §1). A catalogue recorded behind the layer
/// carries it, and then the `reason` is the layer's, not the tool's.
// The layer module owns this text; this copy goes once the layer exports it.
const LAYER_REASON_DESCRIPTION: &str =
    "One short sentence: why this call. Shown to the human reviewing the session.";

/// Reads one `tools` array: each declaration it can read adds `(name, declares_own_reason)`.
pub(crate) fn read(tools: &Value, out: &mut Declarations) {
    for declaration in tools.as_array().into_iter().flatten() {
        let Some(map) = declaration.as_object() else {
            continue;
        };
        // Gemini groups its declarations: `tools: [{functionDeclarations: [...]}]`.
        for group in ["functionDeclarations", "function_declarations"] {
            if let Some(declarations) = map.get(group) {
                read(declarations, out);
            }
        }
        if let Some((name, schema)) = name_and_schema(map) {
            out.push((name.to_owned(), schema.is_some_and(declares_own_reason)));
        }
    }
}

/// The envelopes: OpenAI Chat `{function: {name, parameters}}`; Responses and Gemini
/// `{name, parameters}`; Anthropic `{name, input_schema}`; MCP `{name, inputSchema}`.
fn name_and_schema(map: &Map<String, Value>) -> Option<(&str, Option<&Value>)> {
    let body = match map.get("function") {
        Some(Value::Object(function)) => function,
        _ => map,
    };
    let name = body.get("name")?.as_str()?;
    let schema = ["parameters", "input_schema", "inputSchema"]
        .iter()
        .find_map(|key| body.get(*key));
    Some((name, schema))
}

/// The collision rule of the layer: a tool that declares `reason`, or lists it in `required`,
/// owns it, unless the property is exactly the layer's own.
pub(crate) fn declares_own_reason(schema: &Value) -> bool {
    let Some(schema) = schema.as_object() else {
        return false;
    };
    if let Some(property) = schema
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|properties| properties.get(REASON_PARAM))
    {
        return !is_layers_own(property);
    }
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|required| required.iter().any(|name| name == REASON_PARAM))
}

fn is_layers_own(property: &Value) -> bool {
    property.as_object().is_some_and(|property| {
        property.len() == 2
            && property.get("type").and_then(Value::as_str) == Some("string")
            && property.get("description").and_then(Value::as_str) == Some(LAYER_REASON_DESCRIPTION)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn declared(tools: Value) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        read(&tools, &mut out);
        out
    }

    #[test]
    fn a_tool_with_its_own_reason_property_is_declared() {
        let tools = json!([{"name": "cancel", "inputSchema": {"type": "object",
            "properties": {"reason": {"type": "string", "description": "Why the job stops"}}}}]);
        assert_eq!(declared(tools), [("cancel".to_owned(), true)]);
    }

    #[test]
    fn a_tool_that_requires_reason_is_declared() {
        let tools = json!([{"type": "function", "function": {"name": "refund",
            "parameters": {"type": "object", "required": ["reason"]}}}]);
        assert_eq!(declared(tools), [("refund".to_owned(), true)]);
    }

    #[test]
    fn the_layers_own_reason_property_is_not_a_declaration() {
        let tools = json!([{"name": "read_file", "input_schema": {"type": "object",
            "properties": {"path": {"type": "string"}, "reason": {"type": "string",
            "description": LAYER_REASON_DESCRIPTION}}}}]);
        assert_eq!(declared(tools), [("read_file".to_owned(), false)]);
    }

    #[test]
    fn a_reason_property_close_to_the_layers_but_not_equal_is_declared() {
        let tools = json!([{"name": "read_file", "parameters": {"type": "object",
            "properties": {"reason": {"type": "string", "description": "Why."}}}}]);
        assert_eq!(declared(tools), [("read_file".to_owned(), true)]);
    }

    #[test]
    fn gemini_function_declarations_are_read_inside_their_group() {
        let tools = json!([{"functionDeclarations": [{"name": "get_weather",
            "parameters": {"type": "OBJECT", "properties": {"reason": {"type": "STRING"}}}}]}]);
        assert_eq!(declared(tools), [("get_weather".to_owned(), true)]);
    }

    #[test]
    fn a_declaration_without_schema_declares_nothing() {
        let tools = json!([{"type": "custom", "name": "apply_patch"}, "not a declaration"]);
        assert_eq!(declared(tools), [("apply_patch".to_owned(), false)]);
    }
}
