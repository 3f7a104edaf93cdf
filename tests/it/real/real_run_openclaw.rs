//! `reasons run openclaw` with the real OpenClaw (on the node 24 `.ci/real-parts` installs beside
//! it), headless (`agent exec --state-dir`), against a scripted Chat Completions model on
//! loopback, set up as a person would have it: a provider of theirs in `openclaw.json` pointing
//! straight at the model, with its key. The model is sent the tools with `reason`, the call runs,
//! the reason is in the reasons log and joined by `extract` on OpenClaw's own transcript store,
//! the person's config is byte for byte what it was. Stripped, OpenClaw sends the call back in
//! its history under an id of only letters and digits, and the gateway still gives the model its
//! reason back there.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::real::real_more_agents::{
    SHARED_CALL_ID as CALL_ID, SHARED_KEY as KEY, SHARED_MARKER as MARKER, SHARED_PROMPT as PROMPT,
    SHARED_REASON as REASON,
};
use crate::real::real_run::{check_run, Untouched};
use crate::real::real_run_pi_hermes::{joined_call, reasons_run_with};
use crate::util::chat_model::one_call_model;
use crate::util::only_file;
use crate::util::real_parts::{browser_script, part, OPENCLAW};
use crate::util::sandbox::Sandbox;
use crate::util::tmux::screens;
use crate::util::upstream::Upstream;
use crate::util::{arg, free_port};

/// The command the model asks for: what it writes differs from its text, so finding the file
/// proves it ran.
const COMMAND: &str = "printf '%s-%s' shell ran > marker";

/// A person's `openclaw.json`: a provider of theirs pointing straight at the model, with its key,
/// and its model the default.
fn persons_config(upstream: &Upstream) -> Value {
    json!({
        "models": {"providers": {"mine": {
            "baseUrl": format!("{}/v1", upstream.url()),
            "apiKey": KEY,
            "api": "openai-completions",
            "models": [{"id": "gpt-4.1", "name": "gpt-4.1"}],
        }}},
        "agents": {"defaults": {"model": {"primary": "mine/gpt-4.1"}}},
    })
}

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
    let config = persons_config(&upstream);
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

/// What a person following an OpenClaw run sees of a call: its gateway (`openclaw gateway
/// run`) started by `reasons run openclaw`, its own Control UI opened in Chromium, a message
/// typed there, the call's card opened. OpenClaw keeps the reason in the call's arguments (the
/// run does not strip it), and the card shows it under the command. With exec approvals on,
/// OpenClaw's own approval box asks once, and the call's card shows the reason while it waits.
fn control_ui(approve: bool) {
    const ANSWER: &str = "Done: the old build is cleared.";
    let sandbox = Sandbox::new();
    let old_build = sandbox.path("work").join("old-build");
    std::fs::create_dir(&old_build).unwrap();
    let upstream = Upstream::start(one_call_model(
        CALL_ID,
        "exec",
        json!({"command": SHOWN_COMMAND, "reason": SHOWN_REASON}),
        ANSWER,
    ));
    let mut config = persons_config(&upstream);
    config["agents"]["defaults"]["workspace"] = json!(sandbox.path("work"));
    config["gateway"] = json!({"mode": "local", "bind": "loopback", "auth": {"mode": "none"}});
    if approve {
        config["tools"] = json!({"exec": {"mode": "ask"}});
    }
    let state = sandbox.path("home").join(".openclaw");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("openclaw.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    let port = free_port();
    let gateway = RunningGateway::start(&sandbox, port);

    let name = if approve {
        "openclaw-control-ui-approval"
    } else {
        "openclaw-control-ui"
    };
    let plan = json!({
        "url": format!("http://127.0.0.1:{port}/chat"),
        "message": "Please clear the old build",
        "command": SHOWN_COMMAND,
        "answer": ANSWER,
        "approve": approve,
        "removes": old_build,
        "screenshot": screens().join(format!("{name}.png")),
    });
    let shown = browser_script("openclaw_control_ui.py", &plan);
    let card = shown["card"].as_str().unwrap();
    assert!(card.contains(SHOWN_COMMAND), "the opened card: {card:?}");
    let lines: Vec<&str> = card.lines().map(str::trim).collect();
    assert!(
        lines
            .windows(2)
            .any(|pair| pair == ["reason:", SHOWN_REASON]),
        "the opened card: {card:?}"
    );
    if approve {
        let approval = shown["approval"].as_str().unwrap();
        assert!(approval.contains("Exec approval needed"), "{approval:?}");
        assert!(approval.contains(SHOWN_COMMAND), "{approval:?}");
        assert_eq!(shown["approvals"], 1, "{shown}");
        assert_eq!(shown["ran_before_allowed"], false, "{shown}");
    }
    assert_eq!(shown["approvals_after"], 0, "asked twice: {shown}");
    assert!(!old_build.exists(), "the call never ran");

    let said = gateway.stop();
    assert!(
        said.contains("reasons: 1 call, 1 with a reason, coverage 100.0%"),
        "{said}"
    );
}

/// The call the Control UI tests' model makes.
const SHOWN_COMMAND: &str = "rm -rf old-build";
const SHOWN_REASON: &str = "Clear the old build";

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_openclaw_control_ui_shows_the_reason_in_the_calls_card() {
    control_ui(false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_openclaw_control_ui_asks_once_with_the_reason_on_the_screen() {
    control_ui(true);
}

/// `reasons run openclaw -- gateway run`, its output kept in files (OpenClaw's gateway says a
/// lot, more than a pipe holds while nobody reads it), ended by SIGTERM.
struct RunningGateway {
    child: Child,
    said: PathBuf,
}

impl RunningGateway {
    fn start(sandbox: &Sandbox, port: u16) -> RunningGateway {
        let said = sandbox.path("state").join("run.log");
        let log = std::fs::File::create(&said).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_reasons"));
        command
            .args(["run", "openclaw", "--program", arg(&part(OPENCLAW)), "--"])
            .args(["gateway", "run", "--port", &port.to_string()]);
        sandbox.apply(&mut command);
        let child = command
            .current_dir(sandbox.path("work"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("reasons runs");
        let gateway = RunningGateway { child, said };
        let deadline = Instant::now() + STARTUP;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "OpenClaw's gateway never listened: {}",
                std::fs::read_to_string(&gateway.said).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        gateway
    }

    /// Ends the run as a service manager would, and gives what it said.
    fn stop(mut self) -> String {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + STARTUP;
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the run did not end on SIGTERM");
            std::thread::sleep(Duration::from_millis(100));
        }
        std::fs::read_to_string(&self.said).unwrap()
    }
}

impl Drop for RunningGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long OpenClaw's gateway may take to start, and to stop.
const STARTUP: Duration = Duration::from_secs(120);
