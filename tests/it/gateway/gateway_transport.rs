//! What the gateway's HTTP does to an answer's reasons: an upstream that compresses its answer
//! although asked not to (gzip, deflate, br, zstd) has it decoded, stripped and logged on every
//! API, plain and streamed, and one it cannot decode is held back; a client speaking HTTP/2
//! (curl, with prior knowledge, as h2c) gets its answer on every API.

use std::io::Write;
use std::process::Command;

use serde_json::{json, Value};

use crate::util::gateway::Gateway;
use crate::util::read_reasons_log;
use crate::util::upstream::{
    bash_tool, chat_chunks, chat_completion, gemini_chunk, message, message_events,
    messages_request, responses_events, Answer, Upstream,
};

const REASON: &str = "See the files";

fn arguments() -> Value {
    json!({"command": "ls", "reason": REASON})
}

fn tool_use() -> Value {
    json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": arguments()})
}

fn shell_parameters() -> Value {
    json!({"type": "object", "properties": {"command": {"type": "string"}}})
}

/// One API's exchange: where the request goes, its body, and the upstream's answer to it.
struct Case {
    api: &'static str,
    path: &'static str,
    request: Vec<u8>,
    content_type: &'static str,
    answer: Vec<u8>,
    tool: &'static str,
}

/// Every API, its answer plain and streamed.
fn cases() -> Vec<Case> {
    let chat_request = |stream: bool| {
        json!({"model": "m", "stream": stream, "messages": [{"role": "user", "content": "go"}],
            "tools": [{"type": "function", "function": {"name": "shell",
                "parameters": shell_parameters()}}]})
        .to_string()
        .into_bytes()
    };
    let responses_request = |stream: bool| {
        json!({"model": "m", "stream": stream, "input": "go",
            "tools": [{"type": "function", "name": "shell", "parameters": shell_parameters()}]})
        .to_string()
        .into_bytes()
    };
    let gemini_request = json!({"contents": [{"role": "user", "parts": [{"text": "go"}]}],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command",
            "parameters": shell_parameters()}]}]})
    .to_string()
    .into_bytes();
    let calls = [("call_1", "shell", arguments())];
    let call_item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
        "name": "shell", "arguments": arguments().to_string(), "status": "completed"});
    let sse = "text/event-stream";
    let plain = "application/json";
    vec![
        Case {
            api: "anthropic plain",
            path: "/v1/messages",
            request: messages_request(&[bash_tool()], false),
            content_type: plain,
            answer: message(&[tool_use()]).to_string().into_bytes(),
            tool: "Bash",
        },
        Case {
            api: "anthropic streamed",
            path: "/v1/messages",
            request: messages_request(&[bash_tool()], true),
            content_type: sse,
            answer: message_events(&[tool_use()]).concat(),
            tool: "Bash",
        },
        Case {
            api: "chat plain",
            path: "/v1/chat/completions",
            request: chat_request(false),
            content_type: plain,
            answer: chat_completion(&calls).to_string().into_bytes(),
            tool: "shell",
        },
        Case {
            api: "chat streamed",
            path: "/v1/chat/completions",
            request: chat_request(true),
            content_type: sse,
            answer: chat_chunks(&calls).concat(),
            tool: "shell",
        },
        Case {
            api: "responses plain",
            path: "/v1/responses",
            request: responses_request(false),
            content_type: plain,
            answer: json!({"id": "resp_1", "object": "response", "status": "completed",
                "output": [call_item]})
            .to_string()
            .into_bytes(),
            tool: "shell",
        },
        Case {
            api: "responses streamed",
            path: "/v1/responses",
            request: responses_request(true),
            content_type: sse,
            answer: responses_events("call_1", "shell", &arguments()).concat(),
            tool: "shell",
        },
        Case {
            api: "gemini plain",
            path: "/v1beta/models/gemini-test:generateContent",
            request: gemini_request.clone(),
            content_type: plain,
            answer: gemini_chunk("run_shell_command", &arguments())
                .to_string()
                .into_bytes(),
            tool: "run_shell_command",
        },
        Case {
            api: "gemini streamed",
            path: "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
            request: gemini_request,
            content_type: sse,
            answer: format!(
                "data: {}\n\n",
                gemini_chunk("run_shell_command", &arguments())
            )
            .into_bytes(),
            tool: "run_shell_command",
        },
    ]
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn deflate(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(bytes, 1).unwrap()
}

/// Brotli without an encoder at hand: RFC 7932's uncompressed meta-blocks (at most 65,536 bytes
/// each), then the last, empty one; what a decoder must read like any other brotli stream.
fn brotli(bytes: &[u8]) -> Vec<u8> {
    let mut encoded = Vec::new();
    for (n, block) in bytes.chunks(1 << 16).enumerate() {
        // The stream's first bit is its window (0: 16 bits). Then ISLAST 0, MNIBBLES 4 (00),
        // MLEN - 1 in 16 bits, ISUNCOMPRESSED 1, padded to a byte.
        let window = u32::from(n == 0);
        let header = ((block.len() as u32 - 1) << 3 | 1 << 19) << window;
        encoded.extend_from_slice(&header.to_le_bytes()[..3]);
        encoded.extend_from_slice(block);
    }
    encoded.push(0b11); // ISLAST 1, ISLASTEMPTY 1
    encoded
}

/// How a test encodes an answer's bytes.
type Encode = fn(&[u8]) -> Vec<u8>;

/// An upstream that answers every request with the case's answer (chosen by the request's
/// path and whether it asks for a stream), encoded as `encoding` says.
fn compressing_upstream(encoding: &'static str, encode: Encode) -> Upstream {
    let cases = cases();
    Upstream::start(move |request| {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let streamed = body["stream"] == true || request.path.contains(":stream");
        let case = cases
            .iter()
            .find(|case| {
                case.path.split('?').next() == Some(request.path.split('?').next().unwrap())
                    && (case.content_type == "text/event-stream") == streamed
            })
            .expect("a case for every request");
        let encoded = encode(&case.answer);
        let mut answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {}\r\ncontent-encoding: {encoding}\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n",
            case.content_type,
            encoded.len()
        )
        .into_bytes();
        answer.extend(encoded);
        Answer::Raw(answer)
    })
}

fn logged_reasons(gateway: &Gateway) -> Vec<(String, String)> {
    if !gateway.log.exists() {
        return Vec::new();
    }
    read_reasons_log(&gateway.log)
        .iter()
        .map(|record| {
            (
                record["tool"].as_str().unwrap().to_owned(),
                record["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_gzip_answer_is_decoded_stripped_and_logged_on_every_api_plain_and_streamed() {
    let upstream = compressing_upstream("gzip", gzip);
    let gateway = Gateway::start(&upstream.url(), &[]);
    for (done, case) in cases().iter().enumerate() {
        let reply = gateway.post(case.path, &case.request);
        let body = String::from_utf8_lossy(&reply.body);
        assert_eq!(reply.status, 200, "{}: {body}", case.api);
        assert_eq!(reply.header("content-encoding"), None, "{}", case.api);
        assert!(
            !body.contains(REASON),
            "{}: the reason reached the client: {body}",
            case.api
        );
        assert!(
            body.contains("ls"),
            "{}: the call reached the client: {body}",
            case.api
        );
        let logged = logged_reasons(&gateway);
        assert_eq!(logged.len(), done + 1, "{}: {logged:?}", case.api);
        assert_eq!(
            logged[done],
            (case.tool.to_owned(), REASON.to_owned()),
            "{}",
            case.api
        );
    }
}

#[test]
fn deflate_br_and_zstd_answers_are_decoded_stripped_and_logged_too() {
    let encodings: [(&str, Encode); 3] = [("deflate", deflate), ("br", brotli), ("zstd", zstd)];
    for (encoding, encode) in encodings {
        let upstream = compressing_upstream(encoding, encode);
        let gateway = Gateway::start(&upstream.url(), &[]);
        for stream in [false, true] {
            let reply = gateway.post("/v1/messages", &messages_request(&[bash_tool()], stream));
            let body = String::from_utf8_lossy(&reply.body);
            assert_eq!(reply.status, 200, "{encoding}: {body}");
            assert!(!body.contains(REASON), "{encoding}: {body}");
            assert!(body.contains("toolu_1"), "{encoding}: {body}");
        }
        assert_eq!(
            logged_reasons(&gateway),
            vec![("Bash".to_owned(), REASON.to_owned()); 2],
            "{encoding}"
        );
    }
}

#[test]
fn an_answer_in_an_encoding_the_gateway_cannot_read_is_held_back_and_said() {
    let upstream = compressing_upstream("compress", |bytes| bytes.to_vec());
    let gateway = Gateway::start(&upstream.url(), &[]);
    for case in cases() {
        let reply = gateway.post(case.path, &case.request);
        let body = String::from_utf8_lossy(&reply.body);
        assert_eq!(reply.status, 502, "{}: {body}", case.api);
        assert!(!body.contains(REASON), "{}: {body}", case.api);
        assert!(body.contains("`compress`"), "{}: {body}", case.api);
    }
    assert_eq!(logged_reasons(&gateway), Vec::new());
    gateway.stderr_once("which the gateway cannot read");
}

#[test]
fn a_gzip_answer_cut_short_is_not_passed_on() {
    let case = cases().remove(0);
    let whole = gzip(&case.answer);
    let cut = whole[..whole.len() - 12].to_vec();
    let upstream = Upstream::start(move |_| {
        let mut answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n",
            cut.len()
        )
        .into_bytes();
        answer.extend(&cut);
        Answer::Raw(answer)
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let reply = gateway.post(case.path, &case.request);
    let body = String::from_utf8_lossy(&reply.body);
    assert_eq!(reply.status, 502, "{body}");
    assert!(!body.contains(REASON), "{body}");
}

/// `curl --http2-prior-knowledge` (h2c) posting `body` to the gateway: the status and the body.
fn curl_http2(gateway: &Gateway, path: &str, body: &[u8]) -> (u16, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let request = dir.path().join("request.json");
    std::fs::write(&request, body).unwrap();
    let output = Command::new("curl")
        .args([
            "--silent",
            "--show-error",
            "--http2-prior-knowledge",
            "--max-time",
            "30",
        ])
        .args(["--write-out", "\n%{http_code} %{http_version}"])
        .args([
            "-H",
            "content-type: application/json",
            "-H",
            "x-api-key: sk-test",
        ])
        .arg("--data-binary")
        .arg(format!("@{}", request.display()))
        .arg(format!("http://{}{path}", gateway.address))
        .output()
        .expect("curl runs (Debian's curl, with HTTP/2)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, last) = stdout.rsplit_once('\n').expect("curl's write-out line");
    let (status, version) = last.split_once(' ').unwrap();
    (
        status.parse().unwrap_or(0),
        version.to_owned(),
        body.to_owned(),
    )
}

#[test]
fn an_http2_client_gets_its_answer_stripped_on_every_api() {
    let cases = cases();
    let plain_upstream = compressing_upstream("identity", |bytes| bytes.to_vec());
    let gateway = Gateway::start(&plain_upstream.url(), &[]);
    for (done, case) in cases.iter().enumerate() {
        let (status, version, body) = curl_http2(&gateway, case.path, &case.request);
        assert_eq!(
            (status, version.as_str()),
            (200, "2"),
            "{}: {body}",
            case.api
        );
        assert!(!body.contains(REASON), "{}: {body}", case.api);
        assert!(body.contains("ls"), "{}: {body}", case.api);
        assert_eq!(logged_reasons(&gateway).len(), done + 1, "{}", case.api);
    }
    // What the upstream received was an HTTP/1.1 request like any other, with its body.
    for received in plain_upstream.received() {
        assert!(received.json()["tools"].is_array(), "{:?}", received.path);
    }
}
