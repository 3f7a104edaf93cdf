//! MCP: `tools/list` declarations (`{"name","inputSchema"}`) and `tools/call` requests
//! (`{"jsonrpc","id","method":"tools/call","params":{"name","arguments"}}`) or their bare
//! `params`. No gateway serves it: `filter` and `proxy` carry it.

use serde_json::{json, Map, Value};

use super::{id_text, Provider, Room};

/// MCP's room.
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

impl Room for Mcp {
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

    fn provider(&self) -> Option<Provider> {
        None
    }

    fn error_body(&self, _status: u16, message: &str) -> Value {
        json!({"error": {"code": -32603, "message": message}})
    }
}
