//! Catalogues recorded in a log (request bodies' `tools`, MCP `tools/list` results): which tools
//! declare a `reason` of their own, so that their calls are `declared`, not audited.

use serde_json::Value;

use crate::layer::Declaration;

/// Catalogue entries: a tool's name and whether it declares a `reason` of its own.
pub(crate) type Declarations = Vec<(String, bool)>;

/// The token of a `tools` array, where every shape's catalogue is: the shapes whose calls can be
/// of declared tools list it.
pub(crate) const TOKENS: &[&str] = &["\"tools\""];

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
        // The layer's collision rule decides, with one refinement: a `reason` that is exactly
        // the layer's own marks a catalogue recorded behind the layer, and is audited as usual.
        let classified = Declaration::classify(declaration);
        let declares_its_own = match &classified {
            Declaration::Collision { .. } => !classified.is_the_layers_own(),
            Declaration::Augmentable { .. } | Declaration::Unreadable { .. } => false,
        };
        if let Some(name) = classified.name() {
            out.push((name.to_owned(), declares_its_own));
        }
    }
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
            "description": crate::layer::REASON_DESCRIPTION}}}}]);
        assert_eq!(declared(tools), [("read_file".to_owned(), false)]);
    }

    #[test]
    fn the_layers_own_reason_property_made_required_is_a_declaration() {
        // The layer never requires its parameter: whoever did means something by it.
        let tools = json!([{"name": "read_file", "input_schema": {"type": "object",
            "required": ["reason"], "properties": {"reason": {"type": "string",
            "description": crate::layer::REASON_DESCRIPTION}}}}]);
        assert_eq!(declared(tools), [("read_file".to_owned(), true)]);
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
