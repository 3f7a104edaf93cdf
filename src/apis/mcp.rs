//! MCP: `tools/list` declarations (`{"name","inputSchema"}`) and `tools/call` requests
//! (`{"jsonrpc","id","method":"tools/call","params":{"name","arguments"}}`) or their bare
//! `params`. No gateway serves it: `filter` and `proxy` carry it.

use serde_json::{json, Map, Value};

use super::{id_text, ApiShape, ModelProvider};

/// MCP's shape.
pub struct Mcp;

impl Mcp {
    /// The id the client's own transcript gives a `tools/call` request: a `params._meta` entry
    /// named `…toolUseId` or `…toolCallId` (Claude Code sends `claudecode/toolUseId`).
    fn client_call_id(&self, call: &Value) -> Option<String> {
        let meta = self.call_body(call)?.get("_meta")?.as_object()?;
        meta.iter().find_map(|(key, value)| {
            let name = key.rsplit('/').next()?;
            let is_tool_use =
                name.eq_ignore_ascii_case("toolUseId") || name.eq_ignore_ascii_case("toolCallId");
            is_tool_use
                .then(|| value.as_str().map(str::to_owned))
                .flatten()
        })
    }
}

/// The `_meta` key under which a `tools/call` request tells its server why the model made the
/// call (MCP SEP-2817, a draft): `{"invocationReason": {"text": …}}`.
pub const AI_INVOCATION_META: &str = "io.modelcontextprotocol/aiInvocation";

/// Gives a `tools/call` request (or its bare `params`) the reason taken off it, under
/// `params._meta` [`AI_INVOCATION_META`], beside the `_meta` entries it already has. A reason
/// that is not text goes as its JSON text. A `_meta` that is not an object is the client's own
/// business and is left as it is; returns whether the reason went in.
pub fn give_invocation_reason(call: &mut Value, reason: &Value) -> bool {
    let Some(body) = Mcp.call_body_mut(call) else {
        return false;
    };
    let Value::Object(meta) = body
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()))
    else {
        return false;
    };
    let text = match reason {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    meta.insert(
        AI_INVOCATION_META.to_owned(),
        json!({"invocationReason": {"text": text}}),
    );
    true
}

impl ApiShape for Mcp {
    fn schema_key(&self, _body: &Map<String, Value>) -> Option<&'static str> {
        Some("inputSchema")
    }

    fn call_body<'a>(&self, call: &'a Value) -> Option<&'a Map<String, Value>> {
        match call.get("method") {
            Some(_) => call.get("params")?.as_object(),
            None => call.as_object(),
        }
    }

    fn call_body_mut<'a>(&self, call: &'a mut Value) -> Option<&'a mut Map<String, Value>> {
        match call.get("method").is_some() {
            true => call.get_mut("params")?.as_object_mut(),
            false => call.as_object_mut(),
        }
    }

    /// A `tools/call` request is known to its client by a tool-use id of its own, and to the
    /// protocol by its JSON-RPC id.
    fn ids(&self, call: &Value) -> (Option<String>, Option<String>) {
        match call.get("method") {
            Some(_) => (self.client_call_id(call), id_text(self.call_id(call))),
            None => (id_text(self.call_id(call)), None),
        }
    }

    fn declares_a_function(&self, _tool: &Value) -> bool {
        false
    }

    fn answer_calls<'a>(&self, _answer: &'a mut Value) -> Vec<&'a mut Value> {
        Vec::new()
    }

    fn serves(&self, _path: &str) -> bool {
        false
    }

    fn provider(&self) -> Option<ModelProvider> {
        None
    }

    fn error_body(&self, _status: u16, message: &str) -> Value {
        json!({"error": {"code": -32603, "message": message}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_joins_the_meta_the_call_has_and_a_meta_that_is_no_object_is_left_alone() {
        let mut call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {}, "_meta": {"progressToken": 3}}});
        assert!(give_invocation_reason(&mut call, &json!("Check it")));
        assert_eq!(
            call["params"]["_meta"],
            json!({"progressToken": 3,
                "io.modelcontextprotocol/aiInvocation": {"invocationReason": {"text": "Check it"}}})
        );
        // Bare params, and a reason that is no text: its JSON text.
        let mut params = json!({"name": "echo", "arguments": {}});
        assert!(give_invocation_reason(&mut params, &json!({"why": 1})));
        assert_eq!(
            params["_meta"][AI_INVOCATION_META]["invocationReason"]["text"],
            "{\"why\":1}"
        );
        let mut odd = json!({"method": "tools/call", "params": {"name": "echo", "_meta": "x"}});
        assert!(!give_invocation_reason(&mut odd, &json!("r")));
        assert_eq!(odd["params"]["_meta"], "x");
    }
}
