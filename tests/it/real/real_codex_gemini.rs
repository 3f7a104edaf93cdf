//! The real parts on the OpenAI and Gemini side through `reasons gateway`: the official `openai`
//! and `google-genai` Python SDKs, the real Codex CLI and the real Gemini CLI, each against a
//! scripted model API of `util/upstream.rs` on loopback.
//!
//! They are installed by `.ci/real-parts target/real-parts`, which `.ci/run` runs before the
//! ignored tests. Each test here is ignored by a plain `cargo test`, and fails (never passes by
//! skipping) when a part is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::util::bounded::run_bounded;
use crate::util::claude_code::{bash_call, scripted, ClaudeCode, BASH_ID, BASH_REASON};
use crate::util::gateway::Gateway;
use crate::util::gemini_model::{
    gemini_answer, gemini_events, has_function_response, one_shell_call_model,
};
use crate::util::real_parts::{part, python_script, CODEX, GEMINI_CLI};
use crate::util::sandbox::Sandbox;
use crate::util::upstream::{
    chat_chunks, chat_completion, responses_events, Answer, Received, Upstream,
};
use crate::util::{
    arg, extract_records, install_hook, installed_binary, only_file, read_reasons_log,
};

/// A request's path without its query.
fn path_of(request: &Received) -> &str {
    request.path.split('?').next().unwrap_or_default()
}

fn not_found() -> Answer {
    Answer::Json(
        404,
        json!({"error": {"code": 404, "message": "Not found", "status": "NOT_FOUND"}}),
    )
}

/// An SSE event named by its data's `type`, as the Responses API sends them.
fn typed_event(data: &Value) -> Vec<u8> {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().expect("a type")
    )
    .into_bytes()
}

/// A complete Responses API answer holding one function call.
fn responses_response(call_id: &str, name: &str, arguments: &Value) -> Value {
    json!({"id": "resp_test", "object": "response", "created_at": 1, "status": "completed",
        "model": "scripted", "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
        "output": [{"id": "fc_test", "type": "function_call", "status": "completed",
            "call_id": call_id, "name": name, "arguments": arguments.to_string()}]})
}

/// A Responses API stream that ends the turn with this text.
fn responses_message_events(text: &str) -> Vec<Vec<u8>> {
    let message = json!({"id": "msg_test", "type": "message", "role": "assistant",
        "status": "completed", "content": [{"type": "output_text", "text": text,
            "annotations": []}]});
    vec![
        typed_event(&json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_final", "status": "in_progress", "output": []}})),
        typed_event(
            &json!({"type": "response.output_item.done", "sequence_number": 1,
            "output_index": 0, "item": message}),
        ),
        typed_event(&json!({"type": "response.completed", "sequence_number": 2,
            "response": {"id": "resp_final", "status": "completed", "output": [message],
                "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 15}}})),
    ]
}

/// The arguments string of a call, parsed.
#[track_caller]
fn parsed(arguments: &Value) -> Value {
    let text = arguments.as_str().unwrap_or_else(|| panic!("{arguments}"));
    serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

// ---- the openai SDK ---------------------------------------------------------------------------

const SDK_REASON: &str = "List the folder the user asked about";

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_openai_sdk_gets_calls_without_the_reason_chat_and_responses_plain_and_streamed() {
    // Each way names itself in the user's message; the call's id says which way it was.
    let upstream = Upstream::start(|request| {
        let body = request.json();
        let arguments = json!({"cmd": "ls -l", "reason": SDK_REASON});
        let stream = body["stream"] == true;
        if path_of(request).ends_with("/chat/completions") {
            let way = body["messages"][0]["content"].as_str().unwrap_or("?");
            let calls = [(format!("call_{way}"), "exec_command".to_owned(), arguments)];
            let calls: Vec<(&str, &str, Value)> = calls
                .iter()
                .map(|(id, name, arguments)| (id.as_str(), name.as_str(), arguments.clone()))
                .collect();
            if stream {
                Answer::Events(chat_chunks(&calls))
            } else {
                Answer::Json(200, chat_completion(&calls))
            }
        } else if path_of(request).ends_with("/responses") {
            let call_id = format!("call_{}", body["input"].as_str().unwrap_or("?"));
            if stream {
                Answer::Events(responses_events(&call_id, "exec_command", &arguments))
            } else {
                Answer::Json(
                    200,
                    responses_response(&call_id, "exec_command", &arguments),
                )
            }
        } else {
            not_found()
        }
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let got = python_script(
        "openai_client.py",
        &[&format!("http://{}/v1", gateway.address)],
    );

    let stripped = json!(r#"{"cmd":"ls -l"}"#);
    let ways = [
        "chat_create",
        "chat_stream",
        "responses_create",
        "responses_stream",
    ];
    for way in ways {
        assert_eq!(
            got[way]["calls"],
            json!([{"id": format!("call_{way}"), "name": "exec_command", "arguments": stripped}]),
            "{way}: {got}"
        );
    }
    // The helpers' own events and accumulators saw the stripped arguments too.
    assert_eq!(
        got["chat_stream"]["done_events"],
        json!([stripped]),
        "{got}"
    );
    let helper = &got["responses_stream"];
    assert_eq!(helper["last_snapshot"], stripped, "{got}");
    assert_eq!(helper["done_events"], json!([stripped]), "{got}");
    assert_eq!(helper["item_done_events"], json!([stripped]), "{got}");
    assert!(!got.to_string().contains(SDK_REASON), "{got}");

    let received = upstream.received();
    assert_eq!(received.len(), 4, "{received:?}");
    for (request, (path, stream)) in received.iter().zip([
        ("/v1/chat/completions", None),
        ("/v1/chat/completions", Some(true)),
        ("/v1/responses", None),
        ("/v1/responses", Some(true)),
    ]) {
        assert_eq!(request.path, path);
        let body = request.json();
        assert_eq!(
            body.get("stream").and_then(Value::as_bool),
            stream,
            "{body}"
        );
        let tool = &body["tools"][0];
        let schema = if path.contains("chat") {
            &tool["function"]["parameters"]
        } else {
            &tool["parameters"]
        };
        assert_eq!(schema["properties"]["reason"]["type"], "string", "{body}");
        assert_eq!(schema["required"], json!(["cmd"]), "{body}");
    }
    assert_eq!(
        read_reasons_log(&gateway.log),
        ways.map(|way| json!({"via": "gateway", "tool": "exec_command",
            "call_id": format!("call_{way}"), "reason": SDK_REASON, "touched": "ls -l"}))
    );
}

// ---- the google-genai SDK ---------------------------------------------------------------------

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_genai_sdk_gets_function_calls_without_the_reason_plain_and_streamed() {
    // The plain answer's call has an id; the streamed one has none, as the API's often do.
    let upstream = Upstream::start(|request| {
        let args = json!({"command": "ls -l", "reason": SDK_REASON});
        let path = path_of(request);
        if path.ends_with(":generateContent") {
            let call = json!({"functionCall": {"id": "gc_plain", "name": "run_shell_command",
                "args": args}});
            Answer::Json(200, gemini_answer(json!([call])))
        } else if path.ends_with(":streamGenerateContent") {
            let call = json!({"functionCall": {"name": "run_shell_command", "args": args}});
            Answer::Events(gemini_events(&[
                gemini_answer(json!([{"text": "Let me look."}])),
                gemini_answer(json!([call])),
            ]))
        } else {
            not_found()
        }
    });
    let gateway = Gateway::start(&upstream.url(), &[]);
    let got = python_script("genai_client.py", &[&format!("http://{}", gateway.address)]);

    let stripped = json!({"command": "ls -l"});
    assert_eq!(
        got,
        json!({
            "generate_content": [{"id": "gc_plain", "name": "run_shell_command", "args": stripped}],
            "generate_content_stream": [{"id": null, "name": "run_shell_command", "args": stripped}],
        })
    );

    let received = upstream.received();
    assert_eq!(received.len(), 2, "{received:?}");
    // The SDK names its API version itself (`/v1/` or `/v1beta/`).
    assert!(
        received[0]
            .path
            .ends_with("/models/gemini-test:generateContent"),
        "{}",
        received[0].path
    );
    assert!(
        received[1]
            .path
            .ends_with("/models/gemini-test:streamGenerateContent?alt=sse"),
        "{}",
        received[1].path
    );
    // The SDK sends `parameters` in its own Schema type, and the JSON schema as given, under
    // the proto field's own name (which the API takes as well as `parametersJsonSchema`).
    for (request, key) in received
        .iter()
        .zip(["parameters", "parameters_json_schema"])
    {
        let body = request.json();
        let declaration = &body["tools"][0]["functionDeclarations"][0];
        assert_eq!(declaration["name"], "run_shell_command", "{body}");
        let reason = &declaration[key]["properties"]["reason"];
        assert_eq!(reason["type"], "string", "{key}: {body}");
        assert!(
            declaration[key]["required"]
                .as_array()
                .is_some_and(|required| !required.contains(&json!("reason"))),
            "{body}"
        );
    }
    assert_eq!(
        read_reasons_log(&gateway.log),
        [
            json!({"via": "gateway", "tool": "run_shell_command", "call_id": "gc_plain",
                "reason": SDK_REASON, "touched": "ls -l"}),
            json!({"via": "gateway", "tool": "run_shell_command", "call_id": null,
                "reason": SDK_REASON, "touched": "ls -l"}),
        ]
    );
}

// ---- the real Codex CLI -----------------------------------------------------------------------

pub(crate) const CODEX_REASON: &str = "Print a marker to check that the shell works";
pub(crate) const CODEX_CALL: &str = "call_reasons_1";
/// The command's output differs from its text, so that finding it proves the command ran.
const MARKER_COMMAND: &str = "printf '%s-%s\\n' shell ran";
const MARKER: &str = "shell-ran";
const FINAL: &str = "Done: the shell ran.";

/// The Responses API requests of a run.
pub(crate) fn responses_requests(upstream: &Upstream) -> Vec<Value> {
    upstream
        .received()
        .iter()
        .filter(|request| request.method == "POST" && path_of(request).ends_with("/responses"))
        .map(Received::json)
        .collect()
}

/// A Responses model that calls `exec_command` with a reason, then ends the turn once the
/// request's input holds that call's output.
pub(crate) fn codex_model(request: &Received) -> Answer {
    if request.method != "POST" || !path_of(request).ends_with("/responses") {
        return not_found();
    }
    let body = request.json();
    let answered = body["input"].as_array().is_some_and(|input| {
        input
            .iter()
            .any(|item| item["type"] == "function_call_output" && item["call_id"] == CODEX_CALL)
    });
    if answered {
        Answer::Events(responses_message_events(FINAL))
    } else {
        Answer::Events(responses_events(
            CODEX_CALL,
            "exec_command",
            &json!({"cmd": MARKER_COMMAND, "reason": CODEX_REASON}),
        ))
    }
}

/// A `codex exec` run: its own CODEX_HOME and working folder, the gateway as its model provider.
struct Codex {
    /// Its HOME (its CODEX_HOME too) and working folder.
    sandbox: Sandbox,
    /// The `--json` events it printed.
    events: Vec<Value>,
}

impl Codex {
    fn run(gateway: &Gateway) -> Codex {
        Codex::run_with(gateway, false)
    }

    /// A run with `reasons hook codex` installed by `reasons hook install codex` when `hook`, and
    /// trusted for this run only (`--dangerously-bypass-hook-trust`: a headless run cannot be
    /// asked).
    fn run_with(gateway: &Gateway, hook: bool) -> Codex {
        let codex = part(CODEX);
        let sandbox = Sandbox::new();
        let home = sandbox.path("home");
        let config = format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"reasons\"\n\n\
             [model_providers.reasons]\nname = \"reasons gateway\"\n\
             base_url = \"http://{}/v1\"\nwire_api = \"responses\"\nenv_key = \"REASONS_TEST_KEY\"\n",
            gateway.address
        );
        std::fs::write(home.join("config.toml"), config).unwrap();
        let mut command = Command::new(codex);
        command.args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--json",
        ]);
        if hook {
            install_hook("codex", &[("CODEX_HOME", &home)], &gateway.log);
            record_hook(&home.join("hooks.json"), "PreToolUse", &home);
            command.arg("--dangerously-bypass-hook-trust");
        }
        command
            .arg("Print the marker in the shell, then say done.")
            .current_dir(sandbox.path("work"));
        // Nothing of this machine's own setup: only what the run is given.
        sandbox.apply(&mut command);
        command
            .env("CODEX_HOME", &home)
            .env("REASONS_TEST_KEY", "sk-test-not-a-key");
        let output = run_bounded(command);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "codex failed: {}\nstdout: {stdout}\nstderr: {stderr}",
            output.status
        );
        let events = stdout
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        Codex { sandbox, events }
    }

    /// The thread id the run printed first.
    fn thread(&self) -> String {
        self.events
            .iter()
            .find(|event| event["type"] == "thread.started")
            .and_then(|event| event["thread_id"].as_str())
            .unwrap_or_else(|| panic!("no thread.started: {:?}", self.events))
            .to_owned()
    }

    /// The run's rollout, `CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl`.
    fn rollout(&self) -> PathBuf {
        only_file(&self.sandbox.path("home/sessions"), "rollout-", ".jsonl")
    }
}

/// Wraps the hook command `reasons hook install` wrote into `settings` (the last group of
/// `event`), exactly as written, so that what the agent gives it and what it answers are kept in
/// `dir` as `hook-in.json` and `hook-out.json`: neither Codex's `exec` nor Gemini CLI's `-p`
/// shows a hook's `systemMessage` anywhere a test can read (the interactive interfaces do).
fn record_hook(settings: &Path, event: &str, dir: &Path) {
    let mut value: Value = serde_json::from_slice(&std::fs::read(settings).unwrap()).unwrap();
    let handler = value["hooks"][event]
        .as_array_mut()
        .and_then(|groups| groups.last_mut())
        .map(|group| &mut group["hooks"][0])
        .expect("the installed hook");
    let command = handler["command"].as_str().unwrap().to_owned();
    let binary = installed_binary();
    assert!(
        command.starts_with(&format!("{} hook ", binary.display())),
        "the hook runs this binary by its absolute path: {command}"
    );
    let (input, output) = (dir.join("hook-in.json"), dir.join("hook-out.json"));
    handler["command"] = json!(format!(
        "tee {} | {command} | tee {}",
        input.display(),
        output.display()
    ));
    std::fs::write(settings, value.to_string()).unwrap();
}

/// What the recorded hook (see [`record_hook`]) was given and answered.
fn recorded_hook(dir: &Path) -> (Value, String) {
    let input = std::fs::read(dir.join("hook-in.json")).expect("the hook ran");
    let output = std::fs::read_to_string(dir.join("hook-out.json")).expect("the hook ran");
    (serde_json::from_slice(&input).expect("JSON in"), output)
}

/// What a Codex run through `gateway` shows: the declaration, the call's output coming back, the
/// rollout's copy of the call, the reasons log, and `extract`'s record of the call.
fn codex_session(strip: bool) {
    let upstream = Upstream::start(codex_model);
    let gateway = Gateway::start(
        &upstream.url(),
        if strip {
            &["-v"]
        } else {
            &["-v", "--no-strip"]
        },
    );
    let codex = Codex::run(&gateway);
    let thread = codex.thread();

    let requests = responses_requests(&upstream);
    assert_eq!(requests.len(), 2, "{requests:?}");
    let tools = requests[0]["tools"].as_array().expect("tools");
    let exec = tools
        .iter()
        .find(|tool| tool["name"] == "exec_command")
        .expect("exec_command is declared");
    assert_eq!(exec["type"], "function");
    assert_eq!(
        exec["parameters"]["properties"]["reason"]["type"], "string",
        "{exec}"
    );
    assert!(
        !exec["parameters"]["required"]
            .as_array()
            .unwrap()
            .contains(&json!("reason")),
        "{exec}"
    );
    // A free-text tool has no schema to augment, and passes as Codex declared it.
    let patch = tools
        .iter()
        .find(|tool| tool["name"] == "apply_patch")
        .expect("apply_patch is declared");
    assert_eq!(patch["type"], "custom");
    assert!(!patch.to_string().contains("\"reason\""), "{patch}");

    // The command ran: its output is in the next request, beside the call as Codex received it.
    let input = requests[1]["input"].as_array().expect("input");
    let output = input
        .iter()
        .find(|item| item["type"] == "function_call_output" && item["call_id"] == CODEX_CALL)
        .expect("the call's output");
    assert!(output.to_string().contains(MARKER), "{output}");
    let call = input
        .iter()
        .find(|item| item["type"] == "function_call" && item["call_id"] == CODEX_CALL)
        .expect("the call in the history");
    let mut expected = json!({"cmd": MARKER_COMMAND});
    if !strip {
        expected["reason"] = json!(CODEX_REASON);
    }
    // The model sees its reason there either way: Codex kept it, or the gateway gave it back.
    assert_eq!(
        parsed(&call["arguments"]),
        json!({"cmd": MARKER_COMMAND, "reason": CODEX_REASON}),
        "{call}"
    );

    // The rollout records the call under its call_id, as Codex received it.
    let rollout = codex.rollout();
    let text = std::fs::read_to_string(&rollout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session_meta");
    assert_eq!(lines[0]["payload"]["id"], thread.as_str());
    let recorded = lines
        .iter()
        .find(|line| {
            line["type"] == "response_item"
                && line["payload"]["type"] == "function_call"
                && line["payload"]["call_id"] == CODEX_CALL
        })
        .unwrap_or_else(|| panic!("no function_call {CODEX_CALL} in {}", rollout.display()));
    assert_eq!(
        parsed(&recorded["payload"]["arguments"]),
        expected,
        "{recorded}"
    );
    assert_eq!(text.contains(CODEX_REASON), !strip);

    // The reasons log holds the reason under that call_id, in the session Codex named; the
    // person running the gateway saw it on stderr.
    let stderr = gateway.stderr_once(CODEX_REASON);
    assert!(
        stderr.contains(&format!("exec_command: {CODEX_REASON}")),
        "{stderr}"
    );
    assert_eq!(
        read_reasons_log(&gateway.log),
        [
            json!({"via": "gateway", "tool": "exec_command", "call_id": CODEX_CALL,
            "reason": CODEX_REASON, "touched": MARKER_COMMAND, "session": thread})
        ]
    );
    let calls = extract_records(&["--reasons-log", arg(&gateway.log), arg(&rollout)]);
    let calls: Vec<&Value> = calls
        .iter()
        .filter(|record| record["call_id"] == CODEX_CALL)
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let record = calls[0];
    assert_eq!(record["format"], "codex", "{record}");
    assert_eq!(record["session"], thread.as_str(), "{record}");
    assert_eq!(record["tool"], "exec_command", "{record}");
    assert_eq!(record["reason"], CODEX_REASON, "{record}");
    assert_eq!(record["status"], "present", "{record}");
    assert_eq!(
        record["reason_from"],
        if strip { "log" } else { "call" },
        "{record}"
    );
}

/// A Codex run with the hook installed by `reasons hook install codex`: the hook ran on Codex's
/// real `PreToolUse` payload, found the model's reason (in the log by `tool_use_id` when the
/// gateway stripped it, in the call's input with `--no-strip`), and Codex showed its message;
/// the call still ran.
fn codex_hook_session(strip: bool) {
    let upstream = Upstream::start(codex_model);
    let gateway = Gateway::start(&upstream.url(), if strip { &[] } else { &["--no-strip"] });
    let codex = Codex::run_with(&gateway, true);
    let requests = responses_requests(&upstream);
    assert_eq!(requests.len(), 2, "{requests:?}");
    let output = requests[1]["input"]
        .as_array()
        .expect("input")
        .iter()
        .find(|item| item["type"] == "function_call_output" && item["call_id"] == CODEX_CALL)
        .cloned()
        .expect("the call's output");
    assert!(
        output.to_string().contains(MARKER),
        "the call ran: {output}"
    );
    // Codex gave the hook its real `PreToolUse` payload (its shell tool is `Bash` to hooks),
    // and the hook answered with the model's reason, found under the call's `tool_use_id`.
    let (input, output) = recorded_hook(&codex.sandbox.path("home"));
    assert_eq!(input["hook_event_name"], "PreToolUse", "{input}");
    assert_eq!(input["tool_use_id"], CODEX_CALL, "{input}");
    assert_eq!(input["tool_name"], "Bash", "{input}");
    assert_eq!(
        output,
        format!(
            "{}\n",
            json!({"systemMessage": format!("model's reason for Bash: {CODEX_REASON}")})
        )
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_codex_shows_the_logged_reason_through_the_installed_hook() {
    codex_hook_session(true);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_codex_shows_the_reason_in_the_call_through_the_installed_hook_with_no_strip() {
    codex_hook_session(false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_codex_runs_the_stripped_call_and_the_log_joins_its_rollout() {
    codex_session(true);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_codex_accepts_the_reason_with_no_strip_and_its_rollout_keeps_it() {
    codex_session(false);
}

// ---- the real Gemini CLI ----------------------------------------------------------------------

const GEMINI_REASON: &str = "Print a marker to check that the shell works";

/// A Gemini model that calls `run_shell_command` with the marker command and its reason (and
/// the id `call_id`, when given), then answers in text.
fn gemini_model(call_id: Option<&'static str>) -> impl Fn(&Received) -> Answer + Send + Sync {
    one_shell_call_model(
        MARKER_COMMAND,
        "Print a marker",
        GEMINI_REASON,
        call_id,
        FINAL,
    )
}

/// A `gemini -p` run: its own HOME and working folder, the gateway as its API.
struct GeminiCli {
    /// Its HOME and working folder.
    sandbox: Sandbox,
    stdout: String,
}

impl GeminiCli {
    fn run(gateway: &Gateway) -> GeminiCli {
        GeminiCli::run_with(gateway, false)
    }

    /// A run with `reasons hook gemini-cli` installed by `reasons hook install gemini-cli`
    /// when `hook`, merged into the settings the run needs.
    fn run_with(gateway: &Gateway, hook: bool) -> GeminiCli {
        let gemini = part(GEMINI_CLI);
        let sandbox = Sandbox::new();
        let home = sandbox.path("home");
        // With GOOGLE_GEMINI_BASE_URL set, the auth type the environment implies is "gateway",
        // which non-interactive mode rejects: the settings name the API key's.
        std::fs::create_dir(home.join(".gemini")).unwrap();
        std::fs::write(
            home.join(".gemini/settings.json"),
            json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
        )
        .unwrap();
        if hook {
            install_hook("gemini-cli", &[("HOME", &home)], &gateway.log);
            let settings = home.join(".gemini/settings.json");
            let merged: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
            assert_eq!(merged["security"]["auth"]["selectedType"], "gemini-api-key");
            record_hook(&settings, "BeforeTool", &home);
        }
        let mut command = Command::new(gemini);
        command
            // Without --yolo, non-interactive mode does not even declare its shell tool.
            .args([
                "--yolo",
                "-p",
                "Print the marker in the shell, then say done.",
            ])
            .current_dir(sandbox.path("work"));
        sandbox.apply(&mut command);
        command
            .env(
                "GOOGLE_GEMINI_BASE_URL",
                format!("http://{}", gateway.address),
            )
            .env("GEMINI_API_KEY", "test-not-a-key")
            // An untrusted folder overrides --yolo.
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
        let output = run_bounded(command);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "gemini failed: {}\nstdout: {stdout}\nstderr: {stderr}",
            output.status
        );
        GeminiCli { sandbox, stdout }
    }

    /// The session log, `HOME/.gemini/tmp/<folder>/chats/session-….jsonl`.
    fn session_log(&self) -> PathBuf {
        only_file(&self.sandbox.path("home/.gemini/tmp"), "session-", ".jsonl")
    }
}

/// What a Gemini CLI run through `gateway` shows: the declarations, the call's response coming
/// back and the id the CLI gave the call, and the session log's record of it. Returns the
/// session log, how it records the call, and the CLI's run.
fn gemini_session(
    gateway: &Gateway,
    upstream: &Upstream,
    strip: bool,
) -> (PathBuf, GeminiCall, GeminiCli) {
    let cli = GeminiCli::run(gateway);
    assert_eq!(cli.stdout.trim(), FINAL);

    let turns: Vec<Value> = upstream
        .received()
        .iter()
        .filter(|request| path_of(request).ends_with(":streamGenerateContent"))
        .map(Received::json)
        .collect();
    assert_eq!(turns.len(), 2, "{turns:?}");
    let declarations = turns[0]["tools"][0]["functionDeclarations"]
        .as_array()
        .expect("one group of declarations");
    let declared = |name: &str| {
        declarations
            .iter()
            .find(|declaration| declaration["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not declared"))
            .clone()
    };
    let shell = declared("run_shell_command");
    assert_eq!(
        shell["parametersJsonSchema"]["properties"]["reason"]["type"], "string",
        "{shell}"
    );
    // `enter_plan_mode` declares a `reason` of its own: it is left as the CLI wrote it.
    let plan = declared("enter_plan_mode");
    assert_eq!(
        plan["parametersJsonSchema"]["properties"]["reason"]["description"],
        "Short reason explaining why you are entering plan mode.",
        "{plan}"
    );

    // The command ran: its response is in the next turn, beside the call as the CLI received it.
    let parts: Vec<&Value> = turns[1]["contents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|content| content["parts"].as_array())
        .flatten()
        .collect();
    let response = parts
        .iter()
        .find_map(|part| part.get("functionResponse"))
        .expect("the call's response");
    assert_eq!(response["name"], "run_shell_command");
    assert!(response.to_string().contains(MARKER), "{response}");
    let call = parts
        .iter()
        .find_map(|part| part.get("functionCall"))
        .expect("the call in the history");
    let mut expected = json!({"command": MARKER_COMMAND, "description": "Print a marker"});
    if !strip {
        expected["reason"] = json!(GEMINI_REASON);
    }
    assert_eq!(call["args"], expected, "{call}");
    let api_id = call["id"].as_str().expect("the CLI sends the call's id");
    assert_eq!(response["id"], api_id);

    // The session log records the call as the CLI received it, under `<tool>__<id>`.
    let session = cli.session_log();
    let text = std::fs::read_to_string(&session).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["kind"], "main", "{first}");
    let session_id = first["sessionId"].as_str().expect("a sessionId").to_owned();
    let recorded = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|line| line["toolCalls"].as_array().cloned())
        .flatten()
        .find(|call| call["name"] == "run_shell_command")
        .unwrap_or_else(|| panic!("no run_shell_command in {text}"));
    assert_eq!(recorded["id"], format!("run_shell_command__{api_id}"));
    assert_eq!(recorded["args"], expected, "{recorded}");
    assert_eq!(recorded["status"], "success", "{recorded}");
    assert_eq!(text.contains(GEMINI_REASON), !strip);
    let id = recorded["id"].as_str().unwrap().to_owned();
    (session, GeminiCall { id, session_id }, cli)
}

/// How a Gemini CLI session log records the call: its id, and the session its first line names.
struct GeminiCall {
    id: String,
    session_id: String,
}

/// The one shell call of a Gemini CLI session's records, checked to be `present` with the
/// reason the model wrote, under the id and session the session log names.
#[track_caller]
fn the_shell_call(calls: &[Value], call: &GeminiCall) -> Value {
    let calls: Vec<&Value> = calls
        .iter()
        .filter(|record| record["tool"] == "run_shell_command")
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let record = calls[0].clone();
    assert_eq!(record["format"], "gemini-cli", "{record}");
    assert_eq!(record["call_id"], call.id, "{record}");
    assert_eq!(record["session"], call.session_id, "{record}");
    assert_eq!(record["reason"], GEMINI_REASON, "{record}");
    assert_eq!(record["status"], "present", "{record}");
    record
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_gemini_cli_accepts_the_reason_with_no_strip_and_its_session_keeps_it() {
    let upstream = Upstream::start(gemini_model(None));
    let gateway = Gateway::start(&upstream.url(), &["--no-strip"]);
    let (session, call, _cli) = gemini_session(&gateway, &upstream, false);

    the_shell_call(&extract_records(&[arg(&session)]), &call);
    // The gateway logged it too, with no id: the model's call had none. (The CLI invents one
    // once the call has passed, so only the session's own copy can hold this reason.)
    assert_eq!(
        read_reasons_log(&gateway.log),
        [
            json!({"via": "gateway", "tool": "run_shell_command", "call_id": null,
            "reason": GEMINI_REASON, "touched": MARKER_COMMAND})
        ]
    );
}

/// Gemini CLI with the hook installed by `reasons hook install gemini-cli`: the hook runs on the
/// CLI's real `BeforeTool` payload and answers with the model's reason, from the call's input
/// with `--no-strip`, or (stripped: `BeforeTool` sends no call id) from the log by what the call
/// touched; the call still runs.
fn gemini_hook_session(strip: bool) {
    let upstream = Upstream::start(gemini_model(strip.then_some("gc_reasons_1")));
    let gateway = Gateway::start(&upstream.url(), if strip { &[] } else { &["--no-strip"] });
    let cli = GeminiCli::run_with(&gateway, true);
    assert_eq!(cli.stdout.trim(), FINAL);
    let (input, output) = recorded_hook(&cli.sandbox.path("home"));
    assert_eq!(input["hook_event_name"], "BeforeTool", "{input}");
    assert_eq!(input["tool_name"], "run_shell_command", "{input}");
    assert_eq!(input["tool_input"]["command"], MARKER_COMMAND, "{input}");
    assert_eq!(
        output,
        format!(
            "{}\n",
            json!({"systemMessage":
                format!("model's reason for run_shell_command: {GEMINI_REASON}")})
        )
    );
    // The call ran: its response went back to the model.
    let responses = upstream
        .received()
        .iter()
        .filter(|request| has_function_response(&request.json()))
        .count();
    assert!(responses > 0, "the shell call ran");
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_gemini_cli_shows_the_reason_through_the_installed_hook_with_no_strip() {
    gemini_hook_session(false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_gemini_cli_shows_the_logged_reason_through_the_installed_hook() {
    gemini_hook_session(true);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_gemini_cli_runs_the_stripped_call_and_the_log_joins_its_session() {
    // The model gives its call an id, which the CLI keeps (recording `<tool>__<id>`); the log
    // holds the reason under the id, and `extract` joins the two.
    let upstream = Upstream::start(gemini_model(Some("gc_reasons_1")));
    let gateway = Gateway::start(&upstream.url(), &[]);
    let (session, call, _cli) = gemini_session(&gateway, &upstream, true);
    assert_eq!(call.id, "run_shell_command__gc_reasons_1");
    assert_eq!(
        read_reasons_log(&gateway.log),
        [
            json!({"via": "gateway", "tool": "run_shell_command", "call_id": "gc_reasons_1",
            "reason": GEMINI_REASON, "touched": MARKER_COMMAND})
        ]
    );
    let calls = extract_records(&["--reasons-log", arg(&gateway.log), arg(&session)]);
    let record = the_shell_call(&calls, &call);
    assert_eq!(record["reason_from"], "log", "{record}");
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_codex_and_gemini_cli_share_one_gateway_and_one_reasons_log() {
    let anthropic = Upstream::messages(scripted(vec![bash_call()]));
    let openai = Upstream::start(codex_model);
    let gemini = Upstream::start(gemini_model(Some("gc_reasons_1")));
    let dir = tempfile::tempdir().unwrap();
    let gateway = Gateway::start_per_api(
        &[
            ("anthropic", &anthropic.url()),
            ("openai", &openai.url()),
            ("gemini", &gemini.url()),
        ],
        &dir.path().join("reasons.jsonl"),
        &[],
    );

    ClaudeCode::run(
        &gateway,
        "Run the command: echo hello-from-stub",
        "Bash",
        &[],
        &[],
    );
    let codex = Codex::run(&gateway);
    assert!(!codex.thread().is_empty());
    let (_session, call, _cli) = gemini_session(&gateway, &gemini, true);
    assert_eq!(call.id, "run_shell_command__gc_reasons_1");

    // Each agent's requests reached its own provider only.
    let posts = |upstream: &Upstream| -> Vec<String> {
        let posted = upstream.received().into_iter();
        posted
            .filter(|request| request.method == "POST")
            .map(|request| request.path)
            .collect()
    };
    assert!(posts(&anthropic)
        .iter()
        .all(|path| path.starts_with("/v1/messages")));
    assert!(posts(&openai).iter().all(|path| path == "/v1/responses"));
    assert!(posts(&gemini).iter().all(|path| path.contains("/models/")));
    assert_eq!(responses_requests(&openai).len(), 2);

    // One reasons log holds the three calls' reasons, each under the id its agent records.
    let logged: Vec<(Value, Value, Value)> = read_reasons_log(&gateway.log)
        .into_iter()
        .map(|record| {
            (
                record["tool"].clone(),
                record["call_id"].clone(),
                record["reason"].clone(),
            )
        })
        .collect();
    assert_eq!(
        logged,
        [
            (json!("Bash"), json!(BASH_ID), json!(BASH_REASON)),
            (
                json!("exec_command"),
                json!(CODEX_CALL),
                json!(CODEX_REASON)
            ),
            (
                json!("run_shell_command"),
                json!("gc_reasons_1"),
                json!(GEMINI_REASON)
            ),
        ]
    );
}
