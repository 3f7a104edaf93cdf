//! Real agents with a real model, end to end, against llama.cpp's server with
//! Qwen2.5-Coder-0.5B-Instruct (`util/llama.rs`). Qwen Code, headless, through `reasons gateway`:
//! the model's shell call runs, the agent never sees its reason, the reasons log keeps it beside
//! the command, and `reasons watch` shows the call with it. Pi, headless, through `reasons run
//! pi` with the person's own provider pointed at the model: the same, joined on Pi's own log.
//!
//! On this 2-core machine a turn costs about one second per 30 prompt tokens, so the agent is
//! given a prompt it can afford: Qwen Code's `--bare` (no memory, no context files, no output
//! language rule, its core tools), with its file tools and its Goal tools (`get_goal`,
//! `update_goal`, new in 0.24) left out and a one-line system prompt of its own
//! (`--system-prompt`). What remains is its shell tool as it declares it (about 1,800 tokens with
//! the gateway's `reason`), prefilled once and then read from llama.cpp's cache.
//!
//! The one help the model gets is in the test's relay, never in the gateway: the assistant's
//! turn after the user's message is begun with Qwen's `<tool_call>` tag, without which the 0.5B
//! model writes its call as JSON in the text (measured in doc/fill-rate.md, and again with this
//! agent's prompt: "Got it. Here's the JSON object for the run_shell_command tool call: …").
//! Which tool, its arguments and the reason are the model's own.
//!
//! The parts are installed by `.ci/real-parts target/real-parts`, which `.ci/run` runs before
//! the ignored tests. The test is ignored by a plain `cargo test`, and fails (never passes by
//! skipping) when a part is missing.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::real::real_run_pi_hermes::reasons_run_within;
use crate::util::bounded::run_bounded_within;
use crate::util::gateway::Gateway;
use crate::util::llama::{chat_calls, LlamaServer, Relay};
use crate::util::real_parts::{part, PI, QWEN_CODE};
use crate::util::sandbox::Sandbox;
use crate::util::{
    arg, extract_records_and_warnings, lines_of, only_file, read_reasons_log, reasons,
};

/// The shell tool Qwen Code declares.
const SHELL_TOOL: &str = "run_shell_command";
/// Its system prompt for the run, instead of its own (thousands of tokens).
const SYSTEM_PROMPT: &str =
    "You are a coding agent. Use the run_shell_command tool to do what the user asks.";
/// The task. It names the timeout because the model otherwise copies every optional parameter,
/// `"timeout": 0` among them, which Qwen Code refuses ("Timeout must be a positive number.");
/// and the folder, because the model writes the parameters in the schema's order and, when it
/// stops before `directory`, never reaches `reason`, which the gateway declares last (measured
/// with this prompt less "in the current directory": no reason).
const PROMPT: &str = "Run the shell command git init with the run_shell_command tool, \
                      timeout 60000, in the current directory.";
/// The command, which the log's `touched` names. Not one that Qwen Code reads as a file
/// operation (`touch`, `mkdir`, `>` and the like are checked against the rules of its file
/// tools, which are left out here, and denied).
const COMMAND: &str = "git init";
/// The repository the command creates in the agent's working folder: finding it proves it ran.
const MARKER: &str = ".git";
/// The most tokens the model may write a turn: at temperature 0 the 0.5B model can repeat
/// itself until the agent's own limit (8,000), which would take an hour here.
const MAX_OUTPUT_TOKENS: &str = "200";
/// The whole run: two turns, the first prefilled (1,700 tokens, 40 s on a quiet machine, over
/// two minutes beside builds), the second mostly from the cache.
const AGENT_LIMIT: Duration = Duration::from_secs(900);
/// How long `watch` may take to show a call already logged.
const WATCH_LIMIT: Duration = Duration::from_secs(30);

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_qwen_code_with_a_real_model_runs_its_shell_call_and_watch_shows_the_reason() {
    let started = Instant::now();
    let model = LlamaServer::start();
    let relay = Relay::start_starting_calls(&model);
    let sandbox = Sandbox::new();
    let log = sandbox.default_reasons_log();
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let gateway = Gateway::start_logging_to(&relay.url(), &log, &[]);

    let mut command = Command::new(part(QWEN_CODE));
    command.args([
        "--auth-type",
        "openai",
        "--openai-base-url",
        &format!("http://{}/v1", gateway.address),
        "--openai-api-key",
        "sk-test-not-a-key",
        "-m",
        "qwen2.5-coder-0.5b-instruct",
        "--bare",
        "--exclude-tools",
        "read_file,edit,get_goal,update_goal",
        "--system-prompt",
        SYSTEM_PROMPT,
        "--yolo",
        "-o",
        "stream-json",
        PROMPT,
    ]);
    sandbox.apply(&mut command);
    command
        .env("QWEN_CODE_MAX_OUTPUT_TOKENS", MAX_OUTPUT_TOKENS)
        .current_dir(sandbox.path("work"));
    let output = run_bounded_within(command, AGENT_LIMIT);
    let ran_for = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let exchanges = relay.exchanges();
    let answers: Vec<String> = exchanges
        .iter()
        .map(|exchange| String::from_utf8_lossy(&exchange.reply_body).into_owned())
        .collect();
    eprintln!(
        "Qwen Code with the real model: {} requests, {ran_for:.1?}",
        exchanges.len()
    );
    assert!(
        output.status.success(),
        "Qwen Code failed: {}\nstdout: {stdout}\nstderr: {}\nthe model answered: {answers:#?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr),
        model.log_tail()
    );

    // The model saw one tool, the agent's shell, with the layer's reason declared.
    let first = &exchanges
        .first()
        .expect("the agent asked the model")
        .request;
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(tools, [SHELL_TOOL], "{first}");
    assert_eq!(
        first["tools"][0]["function"]["parameters"]["properties"]["reason"],
        reasons::layer::reason_property()
    );

    // The call the agent received, in its own output: one shell call, without a reason.
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let received: Vec<&Value> = events
        .iter()
        .flat_map(|event| event["message"]["content"].as_array().into_iter().flatten())
        .filter(|content| content["type"] == "tool_use")
        .collect();
    assert_eq!(received.len(), 1, "the agent's calls: {stdout}");
    let received = received[0];
    assert_eq!(received["name"], SHELL_TOOL, "{received}");
    assert!(
        received["input"]["command"].is_string() && received["input"].get("reason").is_none(),
        "the agent received: {received}"
    );
    let call_id = received["id"].as_str().expect("a call id");

    // The same call as llama.cpp answered it, with the model's reason. (Beside builds, a first
    // turn can outlast Qwen Code's two minutes a request: it asks again, and the model answers
    // both; the call it received is the one checked.)
    let from_model: Vec<(String, String, String)> = exchanges
        .iter()
        .flat_map(|exchange| chat_calls(exchange.reply_status, &exchange.reply_body))
        .collect();
    let (_, tool, arguments) = from_model
        .iter()
        .find(|(id, _, _)| id == call_id)
        .unwrap_or_else(|| panic!("the model made no call {call_id}: {answers:#?}"));
    assert_eq!(tool, SHELL_TOOL);
    let arguments: Value = serde_json::from_str(arguments).expect("JSON arguments");
    let reason = arguments["reason"]
        .as_str()
        .filter(|reason| !reason.trim().is_empty())
        .unwrap_or_else(|| panic!("the model wrote no reason: {arguments}"))
        .to_owned();
    assert!(
        arguments["command"]
            .as_str()
            .is_some_and(|command| command.contains(COMMAND)),
        "{arguments}"
    );

    // The agent ran it: the file is there.
    let marker = sandbox.path("work").join(MARKER);
    assert!(
        marker.is_dir(),
        "Qwen Code did not run the command: {stdout}"
    );

    // Nor has the call in the agent's own log.
    // (The reason's words may still be in the log: in its next turn the model tends to write
    // its call out again as text.)
    let chat = crate::util::only_file(&sandbox.path("home").join(".qwen/projects"), "", ".jsonl");
    let mut logged_calls = Vec::new();
    for line in std::fs::read_to_string(&chat).unwrap().lines() {
        let record: Value = serde_json::from_str(line).expect("a JSON line");
        function_calls(&record, call_id, &mut logged_calls);
    }
    assert!(
        !logged_calls.is_empty(),
        "{} lacks the call",
        chat.display()
    );
    for call in &logged_calls {
        assert!(
            call["args"]["command"].is_string() && call["args"].get("reason").is_none(),
            "the agent logged: {call}"
        );
    }

    // The reasons log holds it, with what the call touched.
    let logged = read_reasons_log(&log);
    let entry = logged
        .iter()
        .find(|entry| entry["call_id"] == call_id)
        .unwrap_or_else(|| panic!("{call_id} is not in the reasons log: {logged:?}"));
    assert_eq!(entry["via"], "gateway", "{entry}");
    assert_eq!(entry["tool"], SHELL_TOOL, "{entry}");
    assert_eq!(entry["reason"], reason.as_str(), "{entry}");
    let touched = entry["touched"].as_str().unwrap_or_default();
    assert!(touched.contains(COMMAND), "{entry}");
    drop(gateway);

    // `reasons watch` on the agent's log, joined with the reasons log, shows the call with it.
    let shown = watch_lines(&chat, &log);
    let words: String = reason.chars().take(20).collect();
    let line = shown
        .iter()
        .find(|line| {
            [SHELL_TOOL, COMMAND, "model's reason:", &words]
                .iter()
                .all(|part| line.contains(part))
        })
        .unwrap_or_else(|| panic!("watch showed no {COMMAND} with {reason:?}: {shown:#?}"));
    eprintln!(
        "watch showed: {line}\nthe whole test: {:.1?}",
        started.elapsed()
    );
}

/// Every `functionCall` with the id `call_id` in a record of Qwen Code's chat log.
fn function_calls(value: &Value, call_id: &str, found: &mut Vec<Value>) {
    match value {
        Value::Object(object) => {
            if let Some(call) = object.get("functionCall") {
                if call["id"] == call_id {
                    found.push(call.clone());
                }
            }
            object
                .values()
                .for_each(|value| function_calls(value, call_id, found));
        }
        Value::Array(values) => values
            .iter()
            .for_each(|value| function_calls(value, call_id, found)),
        _ => {}
    }
}

/// The lines `reasons watch --plain --reasons-log LOG SESSION` writes for what is already
/// logged, as a subprocess stopped once it has written them.
fn watch_lines(session: &Path, log: &Path) -> Vec<String> {
    let mut child = reasons()
        .args(["watch", "--plain", "--reasons-log", arg(log), arg(session)])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reasons watch starts");
    let lines = lines_of(child.stdout.take().unwrap());
    let messages = lines_of(child.stderr.take().unwrap());
    let first = lines.recv_timeout(WATCH_LIMIT);
    // The rest of what is already there follows at once.
    let mut shown: Vec<String> = first.iter().cloned().collect();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(2)) {
        shown.push(line);
    }
    let _ = child.kill();
    let _ = child.wait();
    if first.is_err() {
        let said: Vec<String> = messages.try_iter().collect();
        panic!("watch showed nothing in {WATCH_LIMIT:?}; it said {said:?}")
    }
    shown
}

// ---- Pi ---------------------------------------------------------------------------------------

/// Pi's system prompt for the run, instead of its own; its one tool is its shell.
const PI_SYSTEM_PROMPT: &str =
    "You are a coding agent. Use the bash tool to do what the user asks.";
/// The task, in the words that have the 0.5B model call Pi's `bash{command, timeout}` with the
/// command alone and then its reason.
const PI_PROMPT: &str =
    "Run the shell command git init with the bash tool in the current directory.";

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_pi_with_a_real_model_through_reasons_run_keeps_the_model_s_reason_in_its_log() {
    let started = Instant::now();
    let model = LlamaServer::start();
    let relay = Relay::start_starting_calls(&model);
    let sandbox = Sandbox::new();
    // The person's own provider, pointing straight at the model: `reasons run pi` moves it.
    let models = json!({"providers": {"local": {
        "baseUrl": format!("{}/v1", relay.url()),
        "api": "openai-completions",
        "apiKey": "sk-test-not-a-key",
        "models": [{"id": "qwen2.5-coder-0.5b-instruct", "contextWindow": 4096,
            "maxTokens": 200, "reasoning": false}],
    }}});
    let pi_folder = sandbox.path("home").join(".pi/agent");
    std::fs::create_dir_all(&pi_folder).unwrap();
    std::fs::write(pi_folder.join("models.json"), models.to_string()).unwrap();
    let args = [
        "-p",
        "--model",
        "local/qwen2.5-coder-0.5b-instruct",
        "--tools",
        "bash",
        "--no-context-files",
        "--no-skills",
        "--system-prompt",
        PI_SYSTEM_PROMPT,
        PI_PROMPT,
    ];
    let outcome = reasons_run_within(&sandbox, &["pi"], &part(PI), &args, &[], AGENT_LIMIT);
    let exchanges = relay.exchanges();
    let answers: Vec<String> = exchanges
        .iter()
        .map(|exchange| String::from_utf8_lossy(&exchange.reply_body).into_owned())
        .collect();
    eprintln!(
        "Pi with the real model: {} requests, {:.1?}",
        exchanges.len(),
        started.elapsed()
    );
    assert!(
        outcome.status.success(),
        "reasons run pi failed: {}\nstdout: {}\nstderr: {}\nthe model answered: {answers:#?}\n{}",
        outcome.status,
        outcome.stdout,
        outcome.stderr,
        model.log_tail()
    );

    // The model saw Pi's shell with the layer's reason declared.
    let first = &exchanges.first().expect("Pi asked the model").request;
    let bash = first["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["function"]["name"] == "bash"))
        .unwrap_or_else(|| panic!("no bash tool: {first}"));
    assert_eq!(
        bash["function"]["parameters"]["properties"]["reason"],
        reasons::layer::reason_property()
    );

    // The model's call, as llama.cpp answered it, with its own reason.
    let (call_id, _, arguments) = exchanges
        .iter()
        .flat_map(|exchange| chat_calls(exchange.reply_status, &exchange.reply_body))
        .find(|(_, tool, _)| tool == "bash")
        .unwrap_or_else(|| panic!("the model made no bash call: {answers:#?}"));
    let arguments: Value = serde_json::from_str(&arguments).expect("JSON arguments");
    let reason = arguments["reason"]
        .as_str()
        .filter(|reason| !reason.trim().is_empty())
        .unwrap_or_else(|| panic!("the model wrote no reason: {arguments}"))
        .to_owned();
    assert!(
        sandbox.path("work").join(MARKER).is_dir(),
        "Pi did not run {arguments}: {}",
        outcome.stdout
    );

    // The reasons log holds it; the run's summary counted the call in Pi's own log.
    let log = sandbox.default_reasons_log();
    let logged = read_reasons_log(&log);
    let entry = logged
        .iter()
        .find(|entry| entry["call_id"] == call_id.as_str())
        .unwrap_or_else(|| panic!("{call_id} is not in the reasons log: {logged:?}"));
    assert_eq!(entry["reason"], reason.as_str(), "{entry}");
    assert!(
        outcome.stderr.contains("1 with a reason"),
        "{}",
        outcome.stderr
    );

    // Pi kept the call with its reason (the run does not strip), and `extract` joins the two.
    let session = only_file(
        &sandbox.path("home").join(".pi/agent/sessions"),
        "",
        ".jsonl",
    );
    let (records, warnings) =
        extract_records_and_warnings(&["--reasons-log", arg(&log), arg(&session)]);
    let call = records
        .iter()
        .find(|record| record["call_id"] == call_id.as_str())
        .unwrap_or_else(|| panic!("{call_id} is not in Pi's log: {records:#?}\n{warnings}"));
    assert_eq!(call["reason"], reason.as_str(), "{call}");
    assert_eq!(call["reason_from"], "call", "{call}");
    eprintln!(
        "the model's reason: {reason}\nthe whole test: {:.1?}",
        started.elapsed()
    );
}
