//! Five more real agents through `reasons gateway`: OpenCode, Kilo, Qwen Code, Cline and GitHub
//! Copilot CLI, each headless against a scripted OpenAI Chat Completions model on loopback that
//! makes one call to the agent's own shell tool, with a reason, then ends the turn in text. Each
//! runs once with the reason stripped and once with `--no-strip`, with `HOME` and every `XDG_*`
//! folder in a temporary directory; its own log is then read where it wrote it, by path and by the
//! discovery of the usual folders on a terminal.
//!
//! They are installed by `.ci/real-parts target/real-parts` (its `agents` block), which `.ci/run`
//! runs before the ignored tests. Each test here is ignored by a plain `cargo test`, and fails
//! (never passes by skipping) when a part is missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::bounded::run_bounded_within;
use crate::util::chat_model::{answered, one_call_model};
use crate::util::cline::cline_auth;
use crate::util::gateway::Gateway;
use crate::util::real_parts::{
    part, CLINE, COPILOT, COPILOT_CACHE, KILO, NPM_CACHE, OPENCODE, QWEN_CODE,
};
use crate::util::sandbox::Sandbox;
use crate::util::upstream::{Answer, Received, Upstream};
use crate::util::{arg, extract_records_and_warnings, read_reasons_log, reasons_on_a_terminal};

const CALL_ID: &str = "call_reasons_1";
const REASON: &str = "Write a marker to check that the shell works";
/// The file the command writes holds what differs from its text, so finding it proves it ran.
const MARKER_COMMAND: &str = "printf '%s-%s' shell ran > marker";
const MARKER: &str = "shell-ran";
const FINAL: &str = "Done: the shell ran.";
const PROMPT: &str = "Write the marker in the shell, then say done.";
/// The API key every agent is given: the scripted model takes anything.
const KEY: &str = "sk-test-not-a-key";
/// How long one agent may run: more than `run_bounded`'s two minutes, since on a loaded machine
/// Kilo took 145 s (beside three builds and another Kilo run).
const AGENT_LIMIT: Duration = Duration::from_secs(300);

// ---- the scripted model -----------------------------------------------------------------------

/// A model that calls `tool` with `arguments` and the reason, then ends the turn once the
/// history holds that call's result.
fn shell_model(tool: &'static str, arguments: Value) -> impl Fn(&Received) -> Answer + Send + Sync {
    let mut arguments = arguments;
    arguments["reason"] = json!(REASON);
    one_call_model(CALL_ID, tool, arguments, FINAL)
}

// ---- the agents -------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Agent {
    OpenCode,
    Kilo,
    QwenCode,
    Cline,
    Copilot,
}

/// What one run left: the agent's stdout, and the session id it reports.
struct AgentRun {
    stdout: String,
    session: String,
}

impl Agent {
    /// The name of its log format in `reasons`' records.
    fn format(self) -> &'static str {
        match self {
            Agent::OpenCode => "opencode",
            // Kilo 7.7.7's `kilo.db` is OpenCode's schema plus the tables `kilo_board` and
            // `kilo_board_message` (no `custom_llm2`): a reader that tells Kilo's store by
            // `custom_llm2` alone (agents at bf1cd91) labels these calls `opencode`.
            Agent::Kilo => "kilo",
            Agent::QwenCode => "qwen-code",
            Agent::Cline => "cline",
            Agent::Copilot => "copilot-cli",
        }
    }

    /// Its shell tool, as it declares it to the model.
    pub(crate) fn shell_tool(self) -> &'static str {
        match self {
            Agent::OpenCode | Agent::Kilo | Agent::Copilot => "bash",
            Agent::QwenCode => "run_shell_command",
            Agent::Cline => "run_commands",
        }
    }

    /// The shell call's arguments, as the tool requires them (OpenCode's, Kilo's and Copilot's
    /// require a `description`; Cline's takes a list of commands).
    pub(crate) fn arguments(self) -> Value {
        match self {
            Agent::OpenCode | Agent::Kilo | Agent::Copilot => {
                json!({"command": MARKER_COMMAND, "description": "Write the marker"})
            }
            Agent::QwenCode => json!({"command": MARKER_COMMAND}),
            Agent::Cline => json!({"commands": [MARKER_COMMAND]}),
        }
    }

    /// Runs the agent headless in `sandbox` with `base_url` (`…/v1`) as its model API.
    fn run(self, sandbox: &Sandbox, base_url: &str) -> AgentRun {
        let work = sandbox.path("work");
        let mut command = match self {
            Agent::OpenCode | Agent::Kilo => {
                let (program, config, prefix) = match self {
                    Agent::OpenCode => (OPENCODE, "opencode.json", "OPENCODE"),
                    _ => (KILO, "kilo.json", "KILO"),
                };
                // A provider of its own, through the AI SDK's OpenAI-compatible package (bundled).
                let settings = json!({"provider": {"scripted": {
                    "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                    "options": {"baseURL": base_url, "apiKey": KEY},
                    "models": {"gpt-4.1": {"name": "Scripted"}}}},
                    "model": "scripted/gpt-4.1"});
                std::fs::write(work.join(config), settings.to_string()).unwrap();
                let mut command = Command::new(part(program));
                command.args(["run"]);
                if self == Agent::Kilo {
                    command.arg("--auto");
                }
                command.args(["--format", "json", PROMPT]);
                sandbox.apply(&mut command);
                // No model list from the net, no update, no default plugins (fetched from the npm
                // registry at start otherwise); what it still fetches is cached under target/.
                for setting in [
                    "DISABLE_MODELS_FETCH",
                    "DISABLE_AUTOUPDATE",
                    "DISABLE_DEFAULT_PLUGINS",
                ] {
                    command.env(format!("{prefix}_{setting}"), "1");
                }
                command.env("npm_config_cache", part(NPM_CACHE));
                command
            }
            Agent::QwenCode => {
                let mut command = Command::new(part(QWEN_CODE));
                command.args([
                    "--auth-type",
                    "openai",
                    "--openai-base-url",
                    base_url,
                    "--openai-api-key",
                    KEY,
                    "-m",
                    "gpt-4.1",
                    "--yolo",
                    "-o",
                    "stream-json",
                    PROMPT,
                ]);
                sandbox.apply(&mut command);
                command
            }
            Agent::Cline => {
                cline_auth(sandbox, &work, base_url, KEY, AGENT_LIMIT);
                stop_leftovers(self, sandbox);
                let mut command = Command::new(part(CLINE));
                command.args(["--json", PROMPT]);
                sandbox.apply(&mut command);
                // Without it, Cline starts a hub daemon on the fixed port 25463 that outlives
                // the run (and would serve the next run, from another HOME). The sessions it
                // writes are the same: with no hub it runs locally anyway.
                command.env("CLINE_SESSION_BACKEND_MODE", "local");
                command
            }
            Agent::Copilot => {
                let mut command = Command::new(part(COPILOT));
                command.args(["-p", PROMPT, "--allow-all-tools", "--no-auto-update"]);
                sandbox.apply(&mut command);
                command
                    .env("COPILOT_OFFLINE", "true")
                    .env("COPILOT_PROVIDER_BASE_URL", base_url)
                    .env("COPILOT_PROVIDER_TYPE", "openai")
                    .env("COPILOT_PROVIDER_API_KEY", KEY)
                    .env("COPILOT_MODEL", "gpt-4.1")
                    // Its 235 MB unpacked once by .ci/real-parts, not into the sandbox each run.
                    .env("COPILOT_PKG_CACHE_HOME", part(COPILOT_CACHE));
                command
            }
        };
        command.current_dir(&work);
        let started = std::time::Instant::now();
        let output = run_bounded_within(command, AGENT_LIMIT);
        eprintln!("{self:?} ran in {:.1?}", started.elapsed());
        stop_leftovers(self, sandbox);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "{self:?} failed: {}\nstdout: {stdout}\nstderr: {stderr}",
            output.status
        );
        let session = self.session(sandbox, &stdout);
        AgentRun { stdout, session }
    }

    /// The session id the agent reports for the run.
    fn session(self, sandbox: &Sandbox, stdout: &str) -> String {
        let events: Vec<Value> = stdout
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let found = match self {
            // `--format json` events name their session.
            Agent::OpenCode | Agent::Kilo => events
                .iter()
                .find_map(|event| event["sessionID"].as_str().map(str::to_owned)),
            // `-o stream-json` messages too.
            Agent::QwenCode => events
                .iter()
                .find_map(|event| event["session_id"].as_str().map(str::to_owned)),
            // The session file names it.
            Agent::Cline => {
                let text = std::fs::read_to_string(self.log(sandbox)).unwrap();
                let file: Value = serde_json::from_str(&text).unwrap();
                file["sessionId"].as_str().map(str::to_owned)
            }
            // The first event, `session.start`.
            Agent::Copilot => {
                let text = std::fs::read_to_string(self.log(sandbox)).unwrap();
                let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
                assert_eq!(first["type"], "session.start", "{first}");
                first["data"]["sessionId"].as_str().map(str::to_owned)
            }
        };
        found.unwrap_or_else(|| panic!("{self:?} reports no session: {stdout}"))
    }

    /// Where the agent wrote its log of the session.
    #[track_caller]
    fn log(self, sandbox: &Sandbox) -> PathBuf {
        let home = sandbox.path("home");
        match self {
            Agent::OpenCode => existing(sandbox.path("data").join("opencode/opencode.db")),
            Agent::Kilo => existing(sandbox.path("data").join("kilo/kilo.db")),
            // `~/.qwen/projects/<cwd with dashes>/chats/<session>.jsonl`
            Agent::QwenCode => crate::util::only_file(&home.join(".qwen/projects"), "", ".jsonl"),
            // `~/.cline/data/sessions/<id>/<id>.messages.json`
            Agent::Cline => {
                crate::util::only_file(&home.join(".cline/data/sessions"), "", ".messages.json")
            }
            // `~/.copilot/session-state/<id>/events.jsonl`
            Agent::Copilot => {
                crate::util::only_file(&home.join(".copilot/session-state"), "", "events.jsonl")
            }
        }
    }

    /// The log's bytes, with a SQLite store's write-ahead log (where a just-finished agent's
    /// last transactions may still be), to check whether the reason is in it at all.
    fn log_bytes(self, sandbox: &Sandbox) -> Vec<u8> {
        let log = self.log(sandbox);
        let mut bytes = std::fs::read(&log).unwrap();
        let mut wal = log.clone().into_os_string();
        wal.push("-wal");
        if let Ok(more) = std::fs::read(wal) {
            bytes.extend(more);
        }
        bytes
    }
}

#[track_caller]
fn existing(path: PathBuf) -> PathBuf {
    assert!(path.is_file(), "{} is not there", path.display());
    path
}

/// Checks that the agent left nothing running: what is still there a few seconds after it
/// ended is stopped, by pid, and fails the test.
pub(crate) fn stop_leftovers(agent: Agent, sandbox: &Sandbox) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut left = sandbox.processes();
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        left = sandbox.processes();
    }
    for (pid, _) in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(
        left.is_empty(),
        "{agent:?} left these running (now stopped): {left:#?}"
    );
}

/// Cline keeps state on a fixed port: never two of its runs at once.
pub(crate) static CLINE_ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// What `real_run` shares with these tests: the scripted model of an agent, the call it makes
/// (its id and reason), the prompt, the key and the marker the call writes.
pub(crate) fn model_for(agent: Agent) -> impl Fn(&Received) -> Answer + Send + Sync {
    shell_model(agent.shell_tool(), agent.arguments())
}
pub(crate) const SHARED_CALL_ID: &str = CALL_ID;
pub(crate) const SHARED_REASON: &str = REASON;
pub(crate) const SHARED_PROMPT: &str = PROMPT;
pub(crate) const SHARED_KEY: &str = KEY;
pub(crate) const SHARED_MARKER: &str = MARKER;

// ---- reading the agent's log ------------------------------------------------------------------

/// `reasons extract --format jsonl` with no PATH and a terminal on stdin (through `script`), in
/// the sandbox's HOME and XDG folders: the records, and the folders it announced reading.
fn discover(sandbox: &Sandbox) -> (Vec<Value>, Vec<PathBuf>) {
    let mut script = reasons_on_a_terminal(&["extract", "--format", "jsonl"]);
    sandbox.apply(&mut script);
    script.env("NO_COLOR", "1");
    let output = run_bounded_within(script, Duration::from_secs(60));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}\n{text}", output.status);
    let mut calls = Vec::new();
    let mut folders = Vec::new();
    let mut others = Vec::new();
    for line in text.lines().map(|line| line.trim_end_matches('\r')) {
        if let Some(folder) = line.strip_prefix("reasons: reading ") {
            folders.push(PathBuf::from(folder));
        } else if let Some(log) = line.strip_prefix("reasons: joining ") {
            // The default reasons log, joined when it exists, is announced as well.
            assert_eq!(Path::new(log), sandbox.default_reasons_log(), "{text}");
        } else if line.starts_with('{') {
            calls.push(serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")));
        } else if !line.is_empty() {
            others.push(line);
        }
    }
    // Everything an agent keeps in its own folders is read without a warning.
    assert!(others.is_empty(), "{others:#?}");
    (calls, folders)
}

/// The one record of the shell call among `calls`, checked to be the agent's, in its session,
/// with the model's reason taken from `reason_from`.
#[track_caller]
fn the_shell_call(agent: Agent, calls: &[Value], session: &str, reason_from: &str) {
    let found: Vec<&Value> = calls
        .iter()
        .filter(|record| record["call_id"] == CALL_ID)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{agent:?}: the call {CALL_ID} once: {calls:#?}"
    );
    let record = found[0];
    assert_eq!(record["format"], agent.format(), "{record}");
    assert_eq!(record["tool"], agent.shell_tool(), "{record}");
    assert_eq!(record["session"], session, "{record}");
    assert!(!record["timestamp"].is_null(), "{record}");
    assert_eq!(record["reason"], REASON, "{record}");
    assert_eq!(record["status"], "present", "{record}");
    assert_eq!(record["reason_from"], reason_from, "{record}");
}

// ---- one session ------------------------------------------------------------------------------

/// Runs `agent` through a gateway (stripping, or with `--no-strip`) and checks everything a run
/// shows: the declaration the model saw, the command run, the agent's log with or without the
/// reason, the reasons log, and `extract`'s record of the call by path and by discovery.
fn agent_session(agent: Agent, strip: bool) {
    let _serial = (agent == Agent::Cline).then(|| {
        CLINE_ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    });
    let started = std::time::Instant::now();
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(shell_model(agent.shell_tool(), agent.arguments()));
    // The sandbox's default reasons log, so that the discovery joins it as a person's would.
    let log = sandbox.default_reasons_log();
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let gateway = Gateway::start_logging_to(
        &upstream.url(),
        &log,
        if strip { &[] } else { &["--no-strip"] },
    );
    let run = agent.run(&sandbox, &format!("http://{}/v1", gateway.address));

    // The model saw the shell tool with an optional reason, and answered the turn after the call.
    let requests = upstream.tool_requests("/chat/completions");
    assert!(requests.len() >= 2, "{agent:?}: {requests:#?}");
    let shell = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["function"]["name"] == agent.shell_tool())
        .unwrap_or_else(|| panic!("{agent:?} declares no {}", agent.shell_tool()));
    let parameters = &shell["function"]["parameters"];
    assert_eq!(
        parameters["properties"]["reason"]["type"], "string",
        "{shell}"
    );
    assert!(
        !parameters["required"]
            .as_array()
            .is_some_and(|required| required.contains(&json!("reason"))),
        "{shell}"
    );
    assert!(
        requests.iter().any(|body| answered(body, CALL_ID)),
        "{agent:?} never sent the call's result: {requests:#?}"
    );
    assert!(run.stdout.contains(FINAL), "{agent:?}: {}", run.stdout);

    // The command really ran, with or without the reason beside its arguments.
    let marker = std::fs::read_to_string(sandbox.path("work").join("marker"))
        .unwrap_or_else(|error| panic!("{agent:?} did not run the command: {error}"));
    assert_eq!(marker, MARKER);

    // The agent's own log holds the reason only when the gateway left it in the call.
    let bytes = agent.log_bytes(&sandbox);
    let kept = bytes.windows(REASON.len()).any(|w| w == REASON.as_bytes());
    assert_eq!(
        kept,
        !strip,
        "{agent:?}: the reason in {}",
        agent.log(&sandbox).display()
    );

    // The gateway logged the reason under the call's id, whether it stripped it or not.
    let logged = read_reasons_log(&log);
    assert_eq!(logged.len(), 1, "{logged:?}");
    for (key, value) in [
        ("via", "gateway"),
        ("tool", agent.shell_tool()),
        ("call_id", CALL_ID),
        ("reason", REASON),
    ] {
        assert_eq!(logged[0][key], value, "{}", logged[0]);
    }
    drop(gateway);

    // By path: the call, with the reason from the log (stripped) or from the call itself.
    let path = agent.log(&sandbox);
    let reason_from = if strip { "log" } else { "call" };
    let (calls, warnings) = if strip {
        extract_records_and_warnings(&["--reasons-log", arg(&log), arg(&path)])
    } else {
        extract_records_and_warnings(&[arg(&path)])
    };
    // An agent's own log is read without a warning.
    assert!(
        warnings.is_empty(),
        "extract {}: {warnings}",
        path.display()
    );
    the_shell_call(agent, &calls, &run.session, reason_from);

    // By discovery: the same call, its folder announced, the default reasons log joined.
    let (calls, folders) = discover(&sandbox);
    assert!(
        folders.iter().any(|folder| path.starts_with(folder)),
        "{agent:?}: no folder holding {} announced: {folders:?}",
        path.display()
    );
    the_shell_call(agent, &calls, &run.session, reason_from);
    eprintln!(
        "{agent:?}, {}: {:.1?}",
        if strip { "stripped" } else { "--no-strip" },
        started.elapsed()
    );
}

// ---- the tests --------------------------------------------------------------------------------

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_opencode_runs_the_stripped_call_and_the_log_joins_its_database() {
    agent_session(Agent::OpenCode, true);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_opencode_accepts_the_reason_with_no_strip_and_its_database_keeps_it() {
    agent_session(Agent::OpenCode, false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_kilo_runs_the_stripped_call_and_the_log_joins_its_database() {
    agent_session(Agent::Kilo, true);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_kilo_accepts_the_reason_with_no_strip_and_its_database_keeps_it() {
    agent_session(Agent::Kilo, false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_qwen_code_runs_the_stripped_call_and_the_log_joins_its_chat() {
    agent_session(Agent::QwenCode, true);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_qwen_code_accepts_the_reason_with_no_strip_and_its_chat_keeps_it() {
    agent_session(Agent::QwenCode, false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_cline_runs_the_stripped_call_and_the_log_joins_its_session() {
    agent_session(Agent::Cline, true);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_cline_accepts_the_reason_with_no_strip_and_its_session_keeps_it() {
    agent_session(Agent::Cline, false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_copilot_cli_runs_the_stripped_call_and_the_log_joins_its_events() {
    agent_session(Agent::Copilot, true);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_copilot_cli_accepts_the_reason_with_no_strip_and_its_events_keep_it() {
    agent_session(Agent::Copilot, false);
}
