//! A scripted OpenAI Chat Completions model on loopback, as the agents that speak it (OpenCode,
//! Kilo, Qwen Code, Cline, Copilot CLI) are given: one call, then a final text.

use serde_json::{json, Value};

use crate::util::upstream::{chat_chunks, chat_completion, declares_tools, Answer, Received};

/// A Chat Completions answer that ends the turn with `text`, streamed or whole as asked.
pub fn text_answer(text: &str, stream: bool) -> Answer {
    let usage = json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15});
    if !stream {
        return Answer::Json(
            200,
            json!({"id": "chatcmpl-text", "object": "chat.completion", "created": 1,
                "model": "scripted", "choices": [{"index": 0, "message": {"role": "assistant",
                "content": text}, "finish_reason": "stop"}], "usage": usage}),
        );
    }
    let chunk = |choices: Value, usage: Value| {
        let data = json!({"id": "chatcmpl-text", "object": "chat.completion.chunk", "created": 1,
            "model": "scripted", "choices": choices, "usage": usage});
        format!("data: {data}\n\n").into_bytes()
    };
    Answer::Events(vec![
        chunk(
            json!([{"index": 0, "delta": {"role": "assistant", "content": text},
                "finish_reason": null}]),
            Value::Null,
        ),
        chunk(
            json!([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            Value::Null,
        ),
        chunk(json!([]), usage),
        b"data: [DONE]\n\n".to_vec(),
    ])
}

/// Whether a Chat request's history holds the result of the call `id`, under that id or under
/// its letters and digits only (as OpenClaw sends ids back).
pub fn answered(body: &Value, id: &str) -> bool {
    let letters_and_digits =
        |id: &str| -> String { id.chars().filter(char::is_ascii_alphanumeric).collect() };
    body["messages"].as_array().is_some_and(|messages| {
        messages.iter().any(|message| {
            message["role"] == "tool"
                && message["tool_call_id"]
                    .as_str()
                    .is_some_and(|sent| sent == id || sent == letters_and_digits(id))
        })
    })
}

/// A model that calls `tool` with `arguments` (the call `id`), then ends the turn with
/// `final_text` once the history holds that call's result. A request without tools (a title, a
/// summary) gets text; the model list, asked by some agents, names one model.
pub fn one_call_model(
    id: &'static str,
    tool: &'static str,
    arguments: Value,
    final_text: &'static str,
) -> impl Fn(&Received) -> Answer + Send + Sync {
    move |request| {
        let path = request.path.split('?').next().unwrap_or_default();
        if request.method == "GET" && path.ends_with("/models") {
            return Answer::Json(
                200,
                json!({"object": "list", "data": [{"id": "gpt-4.1", "object": "model"}]}),
            );
        }
        if request.method != "POST" || !path.ends_with("/chat/completions") {
            return Answer::Json(404, json!({"error": {"message": "Not found"}}));
        }
        let body = request.json();
        let stream = body["stream"] == true;
        let has_tools = declares_tools(&body);
        if !has_tools {
            return text_answer("Marker", stream);
        }
        if answered(&body, id) {
            return text_answer(final_text, stream);
        }
        let calls = [(id, tool, arguments.clone())];
        if stream {
            Answer::Events(chat_chunks(&calls))
        } else {
            Answer::Json(200, chat_completion(&calls))
        }
    }
}
