//! MCP `tools/call` requests (`params.name`, `params.arguments`), on the wire or inside a
//! recorded cassette. Their catalogue, `tools/list` results, is read like any other `tools`.

use super::descriptor::Shape;
use crate::formats::catalogue;
use crate::formats::event_walk::{id_at, str_at, str_is, Call, Visit, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

// PHP and some others escape `/` in strings: the method may be written `tools\/call`.
pub(crate) const SHAPE: Shape = Shape::visiting(
    Format::Mcp,
    visit,
    &[&["\"tools/call\"", "\"tools\\/call\""], catalogue::TOKENS],
);

pub(crate) fn visit<'p>(map: Object<'p>, _key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    if !str_is(map, "method", "tools/call") {
        return Visit::Pass;
    }
    let params = map.get("params").and_then(Json::as_object);
    let Some((params, name)) = params.and_then(|params| Some((params, str_at(params, "name")?)))
    else {
        return Visit::Skip;
    };
    let arguments = walk.arguments(params.get("arguments"));
    walk.call(Call {
        format: Format::Mcp,
        call_id: id_at(map, "id"),
        tool: name.into_owned(),
        arguments,
        freeform: false,
    });
    Visit::Skip
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Status::{Declared, Missing, Present};

    #[test]
    fn tools_call_requests_are_calls_with_their_json_rpc_id() {
        let text = r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"reason":"sum"}}}"#;
        let call = &records(text)[0];
        assert_eq!(call.call_id.as_deref(), Some("12"));
        assert_eq!((call.tool.as_str(), call.status), ("add", Present));
    }

    #[test]
    fn a_cassette_yields_its_calls_and_its_tools_list_declares() {
        let text = r#"{
  "interactions": [
    {
      "timestamp": "2026-01-01T00:00:00",
      "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
      "response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "stop", "inputSchema": {"type": "object", "properties": {"reason": {"type": "string"}}}},
        {"name": "start", "inputSchema": {"type": "object", "properties": {}}}
      ]}}
    },
    {
      "request": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "stop", "arguments": {"reason": "x"}}},
      "response": {"jsonrpc": "2.0", "id": 2, "result": {"content": []}}
    },
    {
      "request": {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "start"}}
    }
  ]
}
"#;
        assert_eq!(
            brief(text),
            expect(&[(12, "stop", Declared), (16, "start", Missing)])
        );
        assert_eq!(records(text)[0].timestamp, None);
    }

    #[test]
    fn a_method_written_with_an_escaped_slash_is_read() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"add","arguments":{}}}"#;
        assert_eq!(brief(&format!("{text}\n{text}\n")).len(), 1);
    }
}
