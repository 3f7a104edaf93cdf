//! `reasons run pi` and `reasons run hermes` with the real agents, headless, against a scripted
//! Chat Completions model on loopback, each set up as a person would have it (their own config
//! pointing straight at the model, with its key): the model is sent the tools with `reason`, the
//! call runs, the reason is in the reasons log and joined by `extract` on the agent's own log,
//! the person's config is byte for byte what it was, and the run exits with the agent's status.
//!
//! Installed by `.ci/real-parts target/real-parts` (its `pi` and `hermes-venv` blocks); ignored
//! by a plain `cargo test`, and failing (never skipping) when a part is missing.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::real::real_more_agents::{
    SHARED_CALL_ID as CALL_ID, SHARED_KEY as KEY, SHARED_MARKER as MARKER, SHARED_PROMPT as PROMPT,
    SHARED_REASON as REASON,
};
use crate::real::real_run::{check_run, Outcome, Untouched};
use crate::util::bounded::run_bounded_within;
use crate::util::chat_model::one_call_model;
use crate::util::real_parts::{part, HERMES, PI};
use crate::util::sandbox::Sandbox;
use crate::util::upstream::Upstream;
use crate::util::{arg, extract_records_and_warnings, only_file};

/// How long one run may take.
const LIMIT: Duration = Duration::from_secs(300);

/// The command the model asks for: what it writes differs from its text, so finding the file
/// proves it ran.
const COMMAND: &str = "printf '%s-%s' shell ran > marker";

/// The one call in the agent's own log, read by `extract` with the run's reasons log: it has
/// the reason, from the call itself or from the log by its id.
#[track_caller]
pub(crate) fn joined_call(log: &Path, sandbox: &Sandbox, tool: &str, from: &str) -> Value {
    let reasons_log = sandbox.default_reasons_log();
    let (records, warnings) =
        extract_records_and_warnings(&["--reasons-log", arg(&reasons_log), arg(log)]);
    let calls: Vec<&Value> = records
        .iter()
        .filter(|record| record["tool"] == tool)
        .collect();
    assert_eq!(calls.len(), 1, "{records:#?}\n{warnings}");
    assert_eq!(calls[0]["reason"], REASON, "{}", calls[0]);
    assert_eq!(calls[0]["reason_from"], from, "{}", calls[0]);
    calls[0].clone()
}

// ---- Pi ---------------------------------------------------------------------------------------

/// Pi with the person's provider in `~/.pi/agent/models.json`, headless (`-p`).
fn pi_run(strip: bool) {
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(one_call_model(
        CALL_ID,
        "bash",
        json!({"command": COMMAND, "reason": REASON}),
        "Done: the shell ran.",
    ));
    let home = sandbox.path("home");
    let work = sandbox.path("work");
    let models = json!({"providers": {"mine": {
        "baseUrl": format!("{}/v1", upstream.url()),
        "api": "openai-completions",
        "apiKey": KEY,
        "models": [{"id": "gpt-4.1"}],
    }}});
    let settings = Untouched::write(&[(
        home.join(".pi/agent/models.json"),
        serde_json::to_string_pretty(&models).unwrap(),
    )]);
    let run: &[&str] = if strip { &["pi", "--strip"] } else { &["pi"] };
    let args = ["-p", "--model", "mine/gpt-4.1", PROMPT];
    let outcome = reasons_run_with(&sandbox, run, &part(PI), &args, &[]);
    check_run(&outcome, &sandbox, "bash", CALL_ID, REASON);
    let requests = upstream.tool_requests("/chat/completions");
    assert!(requests.len() >= 2, "{requests:#?}");
    let bash = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["function"]["name"] == "bash")
        .unwrap_or_else(|| panic!("no bash tool: {:#}", requests[0]["tools"]));
    assert_eq!(
        bash["function"]["parameters"]["properties"]["reason"]["type"],
        "string"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("marker")).unwrap(),
        MARKER
    );
    settings.check();
    let session = only_file(&home.join(".pi/agent/sessions"), "", ".jsonl");
    let text = std::fs::read_to_string(&session).unwrap();
    // Without --strip the reason reached Pi, which keeps it in its own log.
    assert_eq!(text.contains(REASON), !strip, "{text}");
    let call = joined_call(
        &session,
        &sandbox,
        "bash",
        if strip { "log" } else { "call" },
    );
    assert_eq!(call["call_id"], CALL_ID, "{call}");
}

/// `reasons run AGENT [OPTIONS] --program PROGRAM -- ARGS` in the sandbox, as
/// [`crate::real::real_run::reasons_run`] runs it, with the run's own options.
pub(crate) fn reasons_run_with(
    sandbox: &Sandbox,
    run: &[&str],
    program: &Path,
    args: &[&str],
    env: &[(&str, String)],
) -> Outcome {
    reasons_run_within(sandbox, run, program, args, env, LIMIT)
}

/// [`reasons_run_with`], given `limit` to end in (a real model's turns are slower).
pub(crate) fn reasons_run_within(
    sandbox: &Sandbox,
    run: &[&str],
    program: &Path,
    args: &[&str],
    env: &[(&str, String)],
    limit: Duration,
) -> Outcome {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reasons"));
    command
        .arg("run")
        .args(run)
        .args(["--program", arg(program), "--"])
        .args(args);
    sandbox.apply(&mut command);
    command
        .envs(env.iter().map(|(name, value)| (name, value)))
        .current_dir(sandbox.path("work"))
        .stdin(Stdio::null());
    let output = run_bounded_within(command, limit);
    Outcome {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_pi_runs_through_reasons_run_with_the_reason_kept_in_its_log() {
    pi_run(false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_pi_runs_through_reasons_run_stripped_and_joined_by_call_id() {
    pi_run(true);
}

// ---- Hermes -----------------------------------------------------------------------------------

/// Hermes with the person's endpoint in `~/.hermes/config.yaml` (its JSON session snapshots on,
/// the log `extract` reads), headless (`chat -Q --yolo -q`).
fn hermes_run(strip: bool) {
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(one_call_model(
        CALL_ID,
        "terminal",
        json!({"command": COMMAND, "reason": REASON}),
        "Done: the shell ran.",
    ));
    let home = sandbox.path("home");
    let work = sandbox.path("work");
    let config = format!(
        "model:\n  default: gpt-4.1\n  provider: custom\n  base_url: {}/v1\n  api_key: {KEY}\n  \
         api_mode: chat_completions\nsessions:\n  write_json_snapshots: true\n",
        upstream.url()
    );
    let settings = Untouched::write(&[(home.join(".hermes/config.yaml"), config)]);
    // A person who has used Hermes has its sessions folder.
    std::fs::create_dir_all(home.join(".hermes/sessions")).unwrap();
    let run: &[&str] = if strip {
        &["hermes", "--strip"]
    } else {
        &["hermes"]
    };
    let args = ["chat", "-Q", "--yolo", "-q", PROMPT];
    let outcome = reasons_run_with(&sandbox, run, &part(HERMES), &args, &[]);
    check_run(&outcome, &sandbox, "terminal", CALL_ID, REASON);
    assert_eq!(
        std::fs::read_to_string(work.join("marker")).unwrap(),
        MARKER
    );
    settings.check();
    // Only the config was the person's: the run's home linked the rest and wrote nothing else.
    let session = only_file(&home.join(".hermes/sessions"), "session_", ".json");
    let call = joined_call(
        &session,
        &sandbox,
        "terminal",
        if strip { "log" } else { "call" },
    );
    assert_eq!(call["call_id"], CALL_ID, "{call}");
    assert!(!home.join(".hermes/plugins").exists());
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_hermes_runs_through_reasons_run_with_the_reason_kept_in_its_log() {
    hermes_run(false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_hermes_runs_through_reasons_run_stripped_and_joined_by_call_id() {
    hermes_run(true);
}
