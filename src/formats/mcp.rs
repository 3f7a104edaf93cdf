//! MCP `tools/call` requests (`params.name`, `params.arguments`), on the wire or inside a
//! recorded cassette. Their catalogue, `tools/list` results, is read like any other `tools`.

use serde_json::{Map, Value};

use super::walk::{id_at, str_at, Call, Visit, Walker};
use crate::formats::Format;

pub(crate) fn visit(map: &Map<String, Value>, _key: Option<&str>, walk: &mut Walker) -> Visit {
    if str_at(map, "method") != Some("tools/call") {
        return Visit::Pass;
    }
    let params = map.get("params").and_then(Value::as_object);
    let Some((params, name)) = params.and_then(|params| Some((params, str_at(params, "name")?)))
    else {
        return Visit::Skip;
    };
    walk.call(Call {
        format: Format::Mcp,
        call_id: id_at(map, "id"),
        tool: name.to_owned(),
        arguments: params.get("arguments").cloned().unwrap_or(Value::Null),
        freeform: false,
    });
    Visit::Skip
}
