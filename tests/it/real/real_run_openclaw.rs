//! `reasons run openclaw` with the real OpenClaw (on the node 24 `.ci/real-parts` installs beside
//! it), headless (`agent exec --state-dir`), against a scripted Chat Completions model on
//! loopback, set up as a person would have it: a provider of theirs in `openclaw.json` pointing
//! straight at the model, with its key. The model is sent the tools with `reason`, the call runs,
//! the reason is in the reasons log and joined by `extract` on OpenClaw's own transcript store,
//! the person's config is byte for byte what it was. Stripped, OpenClaw sends the call back in
//! its history under an id of only letters and digits, and the gateway still gives the model its
//! reason back there.

use serde_json::{json, Value};

use crate::real::real_more_agents::{
    SHARED_CALL_ID as CALL_ID, SHARED_KEY as KEY, SHARED_MARKER as MARKER, SHARED_PROMPT as PROMPT,
    SHARED_REASON as REASON,
};
use crate::real::real_run::{check_run, Untouched};
use crate::real::real_run_pi_hermes::{joined_call, reasons_run_with};
use crate::util::chat_model::one_call_model;
use crate::util::only_file;
use crate::util::real_parts::{part, OPENCLAW};
use crate::util::sandbox::Sandbox;
use crate::util::upstream::Upstream;

/// The command the model asks for: what it writes differs from its text, so finding the file
/// proves it ran.
const COMMAND: &str = "printf '%s-%s' shell ran > marker";

fn openclaw_run(strip: bool) {
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(one_call_model(
        CALL_ID,
        "exec",
        json!({"command": COMMAND, "reason": REASON}),
        "Done: the shell ran.",
    ));
    let home = sandbox.path("home");
    let work = sandbox.path("work");
    let state = home.join(".openclaw");
    let config = json!({
        "models": {"providers": {"mine": {
            "baseUrl": format!("{}/v1", upstream.url()),
            "apiKey": KEY,
            "api": "openai-completions",
            "models": [{"id": "gpt-4.1", "name": "gpt-4.1"}],
        }}},
        "agents": {"defaults": {"model": {"primary": "mine/gpt-4.1"}}},
    });
    let untouched = Untouched::write(&[(
        state.join("openclaw.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )]);
    let run: &[&str] = if strip {
        &["openclaw", "--strip"]
    } else {
        &["openclaw"]
    };
    let state_dir = state.to_string_lossy().into_owned();
    let args = ["agent", "exec", "--state-dir", &state_dir, "--json", PROMPT];
    let outcome = reasons_run_with(&sandbox, run, &part(OPENCLAW), &args, &[]);
    check_run(&outcome, &sandbox, "exec", CALL_ID, REASON);
    assert_eq!(
        std::fs::read_to_string(work.join("marker")).unwrap(),
        MARKER
    );
    untouched.check();
    let requests = upstream.tool_requests("/chat/completions");
    let exec = requests[0]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["function"]["name"] == "exec"))
        .unwrap_or_else(|| panic!("no exec tool: {:#}", requests[0]));
    assert_eq!(
        exec["function"]["parameters"]["properties"]["reason"]["type"],
        "string"
    );
    // The call as OpenClaw sends it back: its id without the underscores, its reason there
    // (kept by OpenClaw, or given back by the gateway when it was stripped).
    let called = requests
        .iter()
        .flat_map(|request| request["messages"].as_array().cloned().unwrap_or_default())
        .find(|message| message["role"] == "assistant" && message["tool_calls"].is_array())
        .unwrap_or_else(|| panic!("the call never came back: {requests:#?}"));
    let call = &called["tool_calls"][0];
    assert_eq!(call["id"], CALL_ID.replace('_', ""), "{call}");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments["reason"], REASON, "{call}");
    // OpenClaw's transcripts are in its store; without --strip the reason is in the call there.
    let store = only_file(&state.join("agents"), "openclaw-agent", ".sqlite");
    let joined = joined_call(&store, &sandbox, "exec", if strip { "log" } else { "call" });
    assert_eq!(joined["call_id"], CALL_ID, "{joined}");
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_openclaw_runs_through_reasons_run_with_its_provider_and_key_kept() {
    openclaw_run(false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_openclaw_stripped_gets_the_reason_back_under_the_id_it_sends() {
    openclaw_run(true);
}
