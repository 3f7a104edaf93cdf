//! `reasons run droid` and `reasons run grok` with the real agents, headless, against a scripted
//! Chat Completions model on loopback, each set up as a person would have it (a custom model of
//! theirs pointing straight at the model, with its key): the model is sent the tools with
//! `reason`, the call runs, the reason is in the reasons log and in the agent's own log, the
//! person's settings are byte for byte what they were, and the run exits with the agent's status.
//!
//! Installed by `.ci/real-parts target/real-parts` (its `droid` and `grok-venv` blocks); ignored
//! by a plain `cargo test`, and failing (never skipping) when a part is missing.

use serde_json::{json, Value};

use crate::real::real_more_agents::{
    SHARED_CALL_ID as CALL_ID, SHARED_KEY as KEY, SHARED_MARKER as MARKER, SHARED_PROMPT as PROMPT,
    SHARED_REASON as REASON,
};
use crate::real::real_run::{check_run, Untouched};
use crate::real::real_run_pi_hermes::{joined_call, reasons_run_with};
use crate::util::chat_model::one_call_model;
use crate::util::only_file;
use crate::util::real_parts::{part, DROID, GROK};
use crate::util::sandbox::Sandbox;
use crate::util::upstream::Upstream;

/// The command the model asks for: what it writes differs from its text, so finding the file
/// proves it ran.
const COMMAND: &str = "printf '%s-%s' shell ran > marker";

/// Whether the first request that declared tools gave `tool` the layer's `reason`.
#[track_caller]
fn declared_with_reason(upstream: &Upstream, tool: &str) {
    let requests = upstream.tool_requests("/chat/completions");
    let tools = requests
        .first()
        .and_then(|request| request["tools"].as_array())
        .unwrap_or_else(|| panic!("no request with tools: {requests:#?}"));
    let declared = tools
        .iter()
        .find(|declared| declared["function"]["name"] == tool)
        .unwrap_or_else(|| panic!("no {tool} tool: {tools:#?}"));
    assert_eq!(
        declared["function"]["parameters"]["properties"]["reason"]["type"], "string",
        "{declared:#}"
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_droid_runs_through_reasons_run_with_its_custom_model_and_shows_the_reason_after_the_call() {
    let sandbox = Sandbox::new();
    // Droid's shell tool asks the model for a risk level and why it chose it.
    let upstream = Upstream::start(one_call_model(
        CALL_ID,
        "Execute",
        json!({"command": COMMAND, "riskLevelReason": "Writes one file in the work folder",
            "riskLevel": "low", "reason": REASON}),
        "Done: the shell ran.",
    ));
    let home = sandbox.path("home");
    let work = sandbox.path("work");
    let settings = json!({"customModels": [{
        "model": "gpt-4.1",
        "displayName": "Mine",
        "baseUrl": format!("{}/v1", upstream.url()),
        "apiKey": KEY,
        "provider": "generic-chat-completion-api",
    }]});
    let untouched = Untouched::write(&[(
        home.join(".factory/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )]);
    let args = [
        "exec",
        "--auto",
        "high",
        "-m",
        "custom:Mine-0",
        "-o",
        "json",
        PROMPT,
    ];
    let outcome = reasons_run_with(&sandbox, &["droid"], &part(DROID), &args, &[]);
    check_run(&outcome, &sandbox, "Execute", CALL_ID, REASON);
    declared_with_reason(&upstream, "Execute");
    // The person's key went with the request, to their model.
    let asked = upstream.received();
    assert!(
        asked
            .iter()
            .any(|request| request.header("authorization") == Some(&format!("Bearer {KEY}"))),
        "{:#?}",
        asked
            .iter()
            .map(|request| &request.headers)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        std::fs::read_to_string(work.join("marker")).unwrap(),
        MARKER
    );
    untouched.check();
    let session = only_file(&home.join(".factory/sessions"), "", ".jsonl");
    let call = joined_call(&session, &sandbox, "Execute", "call");
    assert_eq!(call["call_id"], CALL_ID, "{call}");
    // Droid keeps what its PostToolUse hook said for the call: the message it shows under it.
    let text = std::fs::read_to_string(&session).unwrap();
    let hook_line = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["message"]["hookEventName"] == "PostToolUse")
        .unwrap_or_else(|| panic!("no PostToolUse hook in Droid's session:\n{text}"));
    let said = hook_line["message"]["hookResults"][0]["stdout"]
        .as_str()
        .unwrap_or_default();
    let said: Value = serde_json::from_str(said).unwrap_or_else(|_| panic!("{hook_line:#}"));
    assert_eq!(
        said["systemMessage"],
        format!("model's reason for Execute: {REASON}"),
        "{hook_line:#}"
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_grok_runs_through_reasons_run_with_its_endpoint_and_key_kept() {
    let sandbox = Sandbox::new();
    // Grok's shell tool asks for a description of the command beside it.
    let upstream = Upstream::start(one_call_model(
        CALL_ID,
        "run_terminal_command",
        json!({"command": COMMAND, "description": "Leave a marker", "reason": REASON}),
        "Done: the shell ran.",
    ));
    let home = sandbox.path("home");
    let work = sandbox.path("work");
    let env = [
        ("GROK_MODELS_BASE_URL", format!("{}/v1", upstream.url())),
        ("XAI_API_KEY", KEY.to_owned()),
    ];
    let args = ["-p", PROMPT, "--always-approve", "-m", "gpt-4.1"];
    let outcome = reasons_run_with(&sandbox, &["grok"], &part(GROK), &args, &env);
    check_run(&outcome, &sandbox, "run_terminal_command", CALL_ID, REASON);
    declared_with_reason(&upstream, "run_terminal_command");
    assert!(
        upstream
            .received()
            .iter()
            .any(|request| request.header("authorization") == Some(&format!("Bearer {KEY}"))),
        "the key did not reach the model"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("marker")).unwrap(),
        MARKER
    );
    let session = only_file(&home.join(".grok/sessions"), "updates", ".jsonl");
    let call = joined_call(&session, &sandbox, "run_terminal_command", "call");
    assert_eq!(call["call_id"], CALL_ID, "{call}");
}
