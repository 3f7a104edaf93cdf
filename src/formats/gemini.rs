//! Gemini `functionCall {name, args}` parts (API requests, responses and streams) and Gemini CLI
//! `toolCalls[]` in its session records.

use serde_json::{Map, Value};

use super::walk::{id_at, str_at, Call, Visit, Walker};
use crate::formats::Format;

pub(crate) fn visit(map: &Map<String, Value>, key: Option<&str>, walk: &mut Walker) -> Visit {
    if let Some(Value::Object(function_call)) = map.get("functionCall") {
        let Some(name) = str_at(function_call, "name") else {
            return Visit::Pass;
        };
        walk.call(Call {
            format: Format::Gemini,
            call_id: id_at(function_call, "id"),
            tool: name.to_owned(),
            arguments: function_call.get("args").cloned().unwrap_or(Value::Null),
            freeform: false,
        });
        return Visit::Skip;
    }
    if map.contains_key("functionResponse") {
        return Visit::Skip;
    }
    if key == Some("toolCalls") {
        // Each entry carries its own `result`: the call is taken whole, the result never read.
        let Some(name) = str_at(map, "name") else {
            return Visit::Pass;
        };
        walk.call(Call {
            format: Format::GeminiCli,
            call_id: id_at(map, "id"),
            tool: name.to_owned(),
            arguments: map.get("args").cloned().unwrap_or(Value::Null),
            freeform: false,
        });
        return Visit::Skip;
    }
    Visit::Pass
}
