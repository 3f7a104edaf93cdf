//! A scripted Gemini API model on loopback, as Gemini CLI is given: one shell call, then text.

use serde_json::{json, Value};

use crate::util::upstream::{declares_tools, Answer, Received};

/// A Gemini answer: one candidate with these parts.
pub fn gemini_answer(parts: Value) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": parts},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "scripted", "responseId": "resp_test"})
}

/// A Gemini stream of these chunks, as the API sends them (`\r\n` line ends).
pub fn gemini_events(chunks: &[Value]) -> Vec<Vec<u8>> {
    chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\r\n\r\n").into_bytes())
        .collect()
}

/// Whether a Gemini request's history holds a `functionResponse`.
pub fn has_function_response(body: &Value) -> bool {
    body["contents"].as_array().is_some_and(|contents| {
        contents
            .iter()
            .filter_map(|content| content["parts"].as_array())
            .flatten()
            .any(|part| part.get("functionResponse").is_some())
    })
}

/// A Gemini model that calls `run_shell_command` with `command`, `description` and `reason` (and the id
/// `call_id`, when given), then answers `final_text` once the history holds the call's response.
/// A request without tools is Gemini CLI's routing classifier, answered as it asks.
pub fn one_shell_call_model(
    command: &'static str,
    description: &'static str,
    reason: &'static str,
    call_id: Option<&'static str>,
    final_text: &'static str,
) -> impl Fn(&Received) -> Answer + Send + Sync {
    move |request| {
        let path = request.path.split('?').next().unwrap_or_default();
        if request.method != "POST" || !path.contains("/models/") {
            return Answer::Json(
                404,
                json!({"error": {"code": 404, "message": "Not found", "status": "NOT_FOUND"}}),
            );
        }
        let body = request.json();
        let has_tools = declares_tools(&body);
        let answer = if !has_tools {
            let verdict = json!({"complexity_reasoning": "A one-line shell command.",
                "complexity_score": 10});
            gemini_answer(json!([{"text": verdict.to_string()}]))
        } else if has_function_response(&body) {
            gemini_answer(json!([{"text": final_text}]))
        } else {
            let mut call = json!({"name": "run_shell_command",
                "args": {"command": command, "description": description,
                    "reason": reason}});
            if let Some(id) = call_id {
                call["id"] = json!(id);
            }
            gemini_answer(json!([{"functionCall": call}]))
        };
        if path.ends_with(":streamGenerateContent") {
            Answer::Events(gemini_events(&[answer]))
        } else {
            Answer::Json(200, answer)
        }
    }
}
