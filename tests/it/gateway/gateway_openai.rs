//! `reasons gateway` in front of OpenAI Chat Completions, OpenAI Responses and Gemini, each with
//! a scripted upstream on loopback.

use serde_json::{json, Value};

use crate::util::gateway::Gateway;
use crate::util::read_reasons_log;
use crate::util::upstream::{
    chat_chunks, chat_completion, gemini_chunk, request, responses_events, Answer, Upstream,
};

const REASON: &str = "Count the lines the user asked about";

fn shell_arguments() -> Value {
    json!({"command": ["wc", "-l", "notes.txt"], "reason": REASON})
}

fn stripped_arguments() -> String {
    json!({"command": ["wc", "-l", "notes.txt"]}).to_string()
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"command": {"type": "array",
        "items": {"type": "string"}}}, "required": ["command"]})
}

fn logged(gateway: &Gateway) -> Vec<(Value, Value, Value)> {
    read_reasons_log(&gateway.log)
        .into_iter()
        .map(|record| {
            (
                record["tool"].clone(),
                record["call_id"].clone(),
                record["reason"].clone(),
            )
        })
        .collect()
}

#[test]
fn chat_completions_plain_and_streamed_lose_the_reason() {
    let upstream = Upstream::start(|request| {
        let calls = [("call_1", "shell", shell_arguments())];
        if request.json()["stream"] == true {
            Answer::Events(chat_chunks(&calls))
        } else {
            Answer::Json(200, chat_completion(&calls))
        }
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let tools =
        json!([{"type": "function", "function": {"name": "shell", "parameters": schema()}}]);
    for stream in [false, true] {
        let body = json!({"model": "gpt-test", "stream": stream, "tools": tools,
            "messages": [{"role": "user", "content": "How long is notes.txt?"}]});
        let reply = gateway.post("/v1/chat/completions", body.to_string().as_bytes());
        assert_eq!(reply.status, 200);
        let arguments: String = if stream {
            reply
                .events()
                .iter()
                .filter_map(|chunk| {
                    chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                        .as_str()
                        .map(str::to_owned)
                })
                .collect()
        } else {
            reply.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(arguments, stripped_arguments(), "stream: {stream}");
    }
    let sent = upstream.received()[0].json();
    assert_eq!(
        sent["tools"][0]["function"]["parameters"]["properties"]["reason"]["type"],
        "string"
    );
    let expected = (json!("shell"), json!("call_1"), json!(REASON));
    assert_eq!(logged(&gateway), [expected.clone(), expected]);
}

#[test]
fn responses_streams_lose_the_reason_in_every_copy_of_the_arguments() {
    let upstream = Upstream::start(|_| {
        Answer::Events(responses_events(
            "call_r1",
            "exec_command",
            &shell_arguments(),
        ))
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let body = json!({"model": "gpt-test", "stream": true, "input": "How long is notes.txt?",
        "tools": [{"type": "function", "name": "exec_command", "parameters": schema(),
            "strict": false},
            {"type": "custom", "name": "apply_patch", "format": {"type": "text"}}]});
    let reply = gateway.post("/v1/responses", body.to_string().as_bytes());
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    assert!(!text.contains(REASON), "{text}");
    let events = reply.events();
    let deltas: String = events
        .iter()
        .filter(|event| event["type"] == "response.function_call_arguments.delta")
        .map(|event| event["delta"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(deltas, stripped_arguments());
    let completed = events
        .iter()
        .find(|event| event["type"] == "response.completed")
        .unwrap();
    assert_eq!(
        completed["response"]["output"][0]["arguments"],
        stripped_arguments()
    );
    let sent = upstream.received()[0].json();
    assert_eq!(
        sent["tools"][0]["parameters"]["properties"]["reason"]["type"],
        "string"
    );
    assert_eq!(
        sent["tools"][1], body["tools"][1],
        "a custom tool is left alone"
    );
    assert_eq!(
        logged(&gateway),
        [(json!("exec_command"), json!("call_r1"), json!(REASON))]
    );
}

#[test]
fn gemini_answers_lose_the_reason_plain_and_streamed() {
    let upstream = Upstream::start(|request| {
        let chunk = gemini_chunk("run_shell_command", &shell_arguments());
        if request.path.contains("alt=sse") {
            Answer::Events(vec![format!("data: {chunk}\r\n\r\n").into_bytes()])
        } else {
            Answer::Json(200, chunk)
        }
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "How long?"}]}],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command",
            "parametersJsonSchema": schema()}]}, {"googleSearch": {}}]});
    for path in [
        "/v1beta/models/gemini-test:generateContent",
        "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
    ] {
        let reply = gateway.post(path, body.to_string().as_bytes());
        let answer = if path.contains("sse") {
            reply.events().remove(0)
        } else {
            reply.json()
        };
        assert_eq!(
            answer["candidates"][0]["content"]["parts"][0]["functionCall"]["args"],
            json!({"command": ["wc", "-l", "notes.txt"]}),
            "{path}"
        );
    }
    let sent = upstream.received()[0].json();
    let declaration = &sent["tools"][0]["functionDeclarations"][0];
    assert_eq!(
        declaration["parametersJsonSchema"]["properties"]["reason"]["type"],
        "string"
    );
    assert_eq!(sent["tools"][1], json!({"googleSearch": {}}));
    let expected = (json!("run_shell_command"), json!(null), json!(REASON));
    assert_eq!(logged(&gateway), [expected.clone(), expected]);
}

#[test]
fn an_unreachable_upstream_answers_in_each_apis_own_error_shape() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let gateway = Gateway::start(&format!("http://{closed}"), &[]);
    let openai = gateway.post("/v1/chat/completions", b"{}");
    assert_eq!(openai.status, 502);
    assert_eq!(openai.json()["error"]["type"], "server_error");
    let gemini = request(
        gateway.address,
        "POST",
        "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
        &[],
        b"{}",
    );
    assert_eq!(gemini.json()["error"]["code"], 502);
    assert_eq!(gemini.json()["error"]["status"], "UNAVAILABLE");
}

/// A scripted upstream that answers every request with a call named after it, so that the
/// answer tells which upstream it came from.
fn named_upstream(name: &'static str) -> Upstream {
    Upstream::start(move |request| {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if request.path.contains("/models/") && request.path.contains(':') {
            return Answer::Json(200, gemini_chunk(name, &json!({"reason": REASON})));
        }
        if request.path.ends_with("/responses") {
            let events = responses_events("call_r", name, &json!({"reason": REASON}));
            return Answer::Events(events);
        }
        if body.is_null() {
            return Answer::Json(200, json!({"upstream": name}));
        }
        Answer::Json(200, chat_completion(&[("call_c", name, json!({}))]))
    })
}

#[test]
fn one_gateway_sends_each_api_to_its_own_upstream() {
    let [anthropic, openai, gemini] = ["anthropic", "openai", "gemini"].map(named_upstream);
    let dir = tempfile::tempdir().unwrap();
    let gateway = Gateway::start_per_api(
        &[
            ("openai", &openai.url()),
            ("anthropic", &anthropic.url()),
            ("gemini", &format!("{}/prefix", gemini.url())),
        ],
        &dir.path().join("r.jsonl"),
        &[],
    );
    for (name, upstream) in [
        ("anthropic", &anthropic),
        ("openai", &openai),
        ("gemini", &gemini),
    ] {
        assert!(
            gateway
                .startup
                .contains(&format!("{name} to {}", upstream.url())),
            "{}",
            gateway.startup
        );
    }
    let chat = json!({"model": "m", "messages": [], "tools": []});
    for path in ["/v1/messages", "/v1/messages/count_tokens"] {
        gateway.post(path, chat.to_string().as_bytes());
    }
    gateway.post("/v1/chat/completions", chat.to_string().as_bytes());
    gateway.post("/v1/responses", chat.to_string().as_bytes());
    gateway.post(
        "/v1beta/models/m:streamGenerateContent?alt=sse",
        b"{\"contents\":[]}",
    );
    // Paths of no API the gateway rewrites go where the client's headers say.
    let get = |path: &str, header: (&str, &str)| {
        request(gateway.address, "GET", path, &[header], b"").json()["upstream"].clone()
    };
    assert_eq!(
        get("/v1/models", ("anthropic-version", "2023-06-01")),
        "anthropic"
    );
    assert_eq!(get("/v1/models", ("authorization", "Bearer k")), "openai");
    assert_eq!(get("/v1beta/models", ("x-goog-api-key", "k")), "gemini");
    let paths = |upstream: &Upstream| -> Vec<String> {
        upstream.received().into_iter().map(|r| r.path).collect()
    };
    assert_eq!(
        paths(&anthropic),
        ["/v1/messages", "/v1/messages/count_tokens", "/v1/models"]
    );
    assert_eq!(
        paths(&openai),
        ["/v1/chat/completions", "/v1/responses", "/v1/models"]
    );
    assert_eq!(
        paths(&gemini),
        [
            "/prefix/v1beta/models/m:streamGenerateContent?alt=sse",
            "/prefix/v1beta/models"
        ]
    );
}

#[test]
fn upstreams_that_cannot_be_told_apart_are_refused() {
    let cases: [(&[&str], &str); 2] = [
        (
            &["--upstream", "claude=http://127.0.0.1:9"],
            "--upstream claude=http://127.0.0.1:9: no API is named claude (give anthropic, gemini, openai)",
        ),
        (
            &["--upstream", "http://127.0.0.1:8", "--upstream", "http://127.0.0.1:9"],
            "--upstream http://127.0.0.1:9: give one URL for every API, or API=URL (anthropic, gemini, openai)",
        ),
    ];
    for (upstreams, expected) in cases {
        let args = [&["gateway", "--listen", "127.0.0.1:0"][..], upstreams].concat();
        let run = crate::util::run(&args);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains(expected), "{}", run.stderr);
    }
}
