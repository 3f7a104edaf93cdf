//! `reasons run AGENT` with every real agent, headless, against a scripted model on loopback.
//! Each agent is set up as a person would have it, its own settings pointing straight at the
//! model; `reasons run` must put its gateway in between without changing those settings: the
//! model is sent the tools with `reason`, the call runs, the reasons log holds the reason, the run
//! exits with the agent's status, and its last line counts the call.
//!
//! The agents are installed by `.ci/real-parts target/real-parts`; each test is ignored by a plain
//! `cargo test`, and fails (never passes by skipping) when a part is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::real::real_codex_gemini::{codex_model, responses_requests, CODEX_CALL, CODEX_REASON};
use crate::real::real_more_agents::{
    model_for, Agent, SHARED_CALL_ID as CALL_ID, SHARED_KEY as KEY, SHARED_MARKER as MARKER,
    SHARED_PROMPT as PROMPT, SHARED_REASON as REASON,
};
use crate::util::bounded::run_bounded_within;
use crate::util::claude_code::{bash_call, scripted, API_KEY, BASH_ID, BASH_REASON, FINAL};
use crate::util::cline::cline_auth;
use crate::util::gemini_model::{has_function_response, one_shell_call_model};
use crate::util::real_parts::{
    part, CLAUDE_CODE, CLINE, CODEX, COPILOT, COPILOT_CACHE, GEMINI_CLI, KILO, NPM_CACHE, OPENCODE,
    QWEN_CODE,
};
use crate::util::sandbox::Sandbox;
use crate::util::tmux::{keep_screen, Tmux};
use crate::util::upstream::{declares_tools, Answer, Received, Upstream};
use crate::util::{arg, quoted, read_reasons_log};

/// How long one run may take (Kilo took 145 s on a loaded machine).
const LIMIT: Duration = Duration::from_secs(300);

/// What `reasons run` did.
pub(crate) struct Outcome {
    pub(crate) status: std::process::ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// `reasons run AGENT --program PROGRAM -- ARGS` in the sandbox, with `env` added.
fn reasons_run(
    sandbox: &Sandbox,
    agent: &str,
    program: &Path,
    args: &[&str],
    env: &[(&str, String)],
) -> Outcome {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reasons"));
    command
        .args(["run", agent, "--program", arg(program), "--"])
        .args(args);
    sandbox.apply(&mut command);
    command
        .envs(env.iter().map(|(name, value)| (name, value)))
        .current_dir(sandbox.path("work"))
        .stdin(Stdio::null());
    let started = std::time::Instant::now();
    let output = run_bounded_within(command, LIMIT);
    eprintln!("reasons run {agent}: {:.1?}", started.elapsed());
    Outcome {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The person's settings files and what they hold before the run: they must hold the same after.
pub(crate) struct Untouched(Vec<(PathBuf, Vec<u8>)>);

impl Untouched {
    pub(crate) fn write(files: &[(PathBuf, String)]) -> Untouched {
        for (path, text) in files {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Untouched::keep(files.iter().map(|(path, _)| path.clone()).collect())
    }

    pub(crate) fn keep(paths: Vec<PathBuf>) -> Untouched {
        Untouched(
            paths
                .into_iter()
                .map(|path| {
                    let bytes = std::fs::read(&path).unwrap();
                    (path, bytes)
                })
                .collect(),
        )
    }

    #[track_caller]
    pub(crate) fn check(&self) {
        for (path, before) in &self.0 {
            let after = std::fs::read(path).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&after),
                String::from_utf8_lossy(before),
                "{} changed",
                path.display()
            );
        }
    }
}

/// The checks every agent's run shares: its status, the reason logged under the call's id, the
/// summary line counting the one call with its reason.
#[track_caller]
pub(crate) fn check_run(
    outcome: &Outcome,
    sandbox: &Sandbox,
    tool: &str,
    call_id: &str,
    reason: &str,
) {
    assert!(
        outcome.status.success(),
        "{}\nstdout: {}\nstderr: {}",
        outcome.status,
        outcome.stdout,
        outcome.stderr
    );
    let log = sandbox.default_reasons_log();
    let logged = read_reasons_log(&log);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["tool"], tool, "{}", logged[0]);
    assert_eq!(logged[0]["reason"], reason, "{}", logged[0]);
    if logged[0]["call_id"] != Value::Null {
        assert_eq!(logged[0]["call_id"], call_id, "{}", logged[0]);
    }
    assert_eq!(
        outcome.stderr.lines().last().unwrap_or_default(),
        format!(
            "reasons: 1 call, 1 with a reason, coverage 100.0%; reasons log {}",
            log.display()
        ),
        "{}",
        outcome.stderr
    );
}

/// The tool the model was sent first, by name, in whichever envelope.
#[track_caller]
fn declared_reason(request: &Value, tool: &str) -> Value {
    let tools = request["tools"].as_array().expect("tools");
    for declaration in tools {
        let schema = if declaration["name"] == tool {
            declaration
                .get("input_schema")
                .or_else(|| declaration.get("parameters"))
        } else if declaration["function"]["name"] == tool {
            declaration["function"].get("parameters")
        } else {
            declaration["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|function| function["name"] == tool)
                .and_then(|function| {
                    function
                        .get("parametersJsonSchema")
                        .or_else(|| function.get("parameters"))
                })
        };
        if let Some(schema) = schema {
            return schema["properties"]["reason"].clone();
        }
    }
    panic!("no {tool} among {tools:#?}");
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_runs_through_reasons_run_with_the_hook_for_the_run() {
    let sandbox = Sandbox::new();
    let upstream = Upstream::messages(scripted(vec![bash_call()]));
    let home = sandbox.path("home");
    let settings = Untouched::write(&[(
        home.join(".claude/settings.json"),
        r#"{"cleanupPeriodDays": 30}"#.to_owned(),
    )]);
    let outcome = reasons_run(
        &sandbox,
        "claude",
        &part(CLAUDE_CODE),
        &[
            "-p",
            "Say hello in the shell",
            "--allowedTools",
            "Bash",
            "--output-format",
            "json",
        ],
        &[
            // The person's own base URL: the gateway goes in front of it.
            ("ANTHROPIC_BASE_URL", upstream.url()),
            ("ANTHROPIC_API_KEY", API_KEY.to_owned()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ],
    );
    check_run(&outcome, &sandbox, "Bash", BASH_ID, BASH_REASON);
    let result: Value = serde_json::from_str(outcome.stdout.trim()).unwrap();
    assert_eq!(result["result"], FINAL, "{result}");
    let requests: Vec<Value> = upstream
        .received()
        .iter()
        .filter(|request| {
            request.path.starts_with("/v1/messages?") || request.path == "/v1/messages"
        })
        .map(|request| request.json())
        .filter(declares_tools)
        .collect();
    assert!(!requests.is_empty());
    assert_eq!(declared_reason(&requests[0], "Bash")["type"], "string");
    // The call ran, without its reason (Claude Code rejects one), and the hook the run wired
    // showed the reason: Claude Code recorded both in the transcript.
    let session = result["session_id"].as_str().unwrap();
    let transcript = crate::util::only_file(&home.join(".claude/projects"), session, ".jsonl");
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(text.contains("hello-from-stub"), "the Bash call ran");
    let shown: Vec<Value> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| {
            line["attachment"]["type"] == "hook_system_message"
                && line["attachment"]["toolUseID"] == BASH_ID
        })
        .collect();
    assert_eq!(shown.len(), 1, "{text}");
    assert!(
        shown[0]["attachment"]["content"]
            .as_str()
            .unwrap()
            .contains(BASH_REASON),
        "{}",
        shown[0]
    );
    settings.check();
}

/// A headless `codex exec` whose model calls the shell.
const CODEX_EXEC: [&str; 5] = [
    "exec",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    "--json",
    "Print the marker in the shell, then say done.",
];

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_codex_runs_through_reasons_run() {
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(codex_model);
    let home = sandbox.path("home");
    let settings = Untouched::write(&[(
        home.join(".codex/config.toml"),
        "model = \"gpt-5.5\"\n".to_owned(),
    )]);
    let outcome = reasons_run(
        &sandbox,
        "codex",
        &part(CODEX),
        &CODEX_EXEC,
        &[
            ("OPENAI_BASE_URL", format!("{}/v1", upstream.url())),
            ("OPENAI_API_KEY", KEY.to_owned()),
        ],
    );
    check_run(&outcome, &sandbox, "exec_command", CODEX_CALL, CODEX_REASON);
    let requests = responses_requests(&upstream);
    assert!(requests.len() >= 2, "{requests:#?}");
    assert_eq!(
        declared_reason(&requests[0], "exec_command")["type"],
        "string"
    );
    // The command ran: its output went back to the model.
    let output = requests
        .iter()
        .flat_map(|request| request["input"].as_array().cloned().unwrap_or_default())
        .find(|item| item["type"] == "function_call_output" && item["call_id"] == CODEX_CALL)
        .expect("the call's output went back");
    assert!(output.to_string().contains("shell-ran"), "{output}");
    settings.check();
}

/// `reasons run codex` with the person's own model provider: the run must keep it (its base URL
/// as the gateway's upstream, its key, query parameters and headers), not put OpenAI's in its place.
#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_codex_run_keeps_the_person_s_own_model_provider() {
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(codex_model);
    let home = sandbox.path("home");
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"mine\"\n\n[model_providers.mine]\n\
         name = \"Mine\"\nbase_url = \"{}/v1\"\nenv_key = \"MINE_KEY\"\n\
         wire_api = \"responses\"\nquery_params = {{ api-version = \"2026-01-01\" }}\n\
         http_headers = {{ \"X-Mine\" = \"static\" }}\n\
         env_http_headers = {{ \"X-Mine-Env\" = \"MINE_HEADER\" }}\n",
        upstream.url()
    );
    let settings = Untouched::write(&[(home.join(".codex/config.toml"), config)]);
    let outcome = reasons_run(
        &sandbox,
        "codex",
        &part(CODEX),
        &CODEX_EXEC,
        &[
            ("MINE_KEY", "mine-secret".to_owned()),
            ("MINE_HEADER", "from-env".to_owned()),
        ],
    );
    check_run(&outcome, &sandbox, "exec_command", CODEX_CALL, CODEX_REASON);
    let received: Vec<Received> = upstream
        .received()
        .into_iter()
        .filter(|request| request.method == "POST" && request.path.contains("/responses"))
        .collect();
    assert!(received.len() >= 2, "{received:#?}");
    for request in &received {
        assert!(
            request.path.starts_with("/v1/responses?")
                && request.path.contains("api-version=2026-01-01"),
            "{}",
            request.path
        );
        assert_eq!(request.header("authorization"), Some("Bearer mine-secret"));
        assert_eq!(request.header("x-mine"), Some("static"));
        assert_eq!(request.header("x-mine-env"), Some("from-env"));
    }
    assert_eq!(
        declared_reason(&received[0].json(), "exec_command")["type"],
        "string"
    );
    settings.check();
}

/// The Gemini model's call: its id and reason.
const GEMINI_CALL: &str = "gemini_call_1";
const GEMINI_REASON: &str = "Print a marker to check that the shell works";

/// A Gemini model that calls `run_shell_command` with a reason, then answers in text once the
/// history holds the call's response; a request without tools (Gemini CLI's routing) gets text.
fn gemini_model() -> impl Fn(&Received) -> Answer + Send + Sync {
    one_shell_call_model(
        "printf '%s-%s\\n' shell ran",
        "Print a marker",
        GEMINI_REASON,
        Some(GEMINI_CALL),
        "Done: the shell ran.",
    )
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_gemini_cli_runs_through_reasons_run() {
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(gemini_model());
    let home = sandbox.path("home");
    // GOOGLE_GEMINI_BASE_URL makes Gemini CLI assume a gateway login: the settings name the key's.
    let settings = Untouched::write(&[(
        home.join(".gemini/settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
    )]);
    let outcome = reasons_run(
        &sandbox,
        "gemini",
        &part(GEMINI_CLI),
        &[
            "--yolo",
            "-m",
            "gemini-2.5-flash",
            "-p",
            "Print the marker in the shell, then say done.",
        ],
        &[
            ("GOOGLE_GEMINI_BASE_URL", upstream.url()),
            ("GEMINI_API_KEY", "test-not-a-key".to_owned()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true".to_owned()),
        ],
    );
    check_run(
        &outcome,
        &sandbox,
        "run_shell_command",
        GEMINI_CALL,
        GEMINI_REASON,
    );
    let requests: Vec<Value> = upstream
        .received()
        .iter()
        .filter(|request| request.method == "POST")
        .map(|request| request.json())
        .filter(declares_tools)
        .collect();
    assert_eq!(
        declared_reason(&requests[0], "run_shell_command")["type"],
        "string"
    );
    let answered = requests
        .iter()
        .find(|request| has_function_response(request))
        .expect("the call's response went back");
    assert!(answered.to_string().contains("shell-ran"), "{answered}");
    settings.check();
}

/// One of the five agents of `real_more_agents`, its settings pointing at the scripted model.
fn more_agents_run(agent: Agent) {
    let _serial = (agent == Agent::Cline).then(|| {
        crate::real::real_more_agents::CLINE_ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    });
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(model_for(agent));
    let model = format!("{}/v1", upstream.url());
    let work = sandbox.path("work");
    // The agent's name for `reasons run`, its program, its arguments, its environment, and the
    // settings files that must stay as they are.
    type Setup = (
        &'static str,
        PathBuf,
        Vec<String>,
        Vec<(&'static str, String)>,
        Untouched,
    );
    let (name, program, args, env, settings): Setup = match agent {
        Agent::OpenCode | Agent::Kilo => {
            let (name, program, config, prefix, schema) = match agent {
                Agent::OpenCode => (
                    "opencode",
                    OPENCODE,
                    "opencode.json",
                    "OPENCODE",
                    "https://opencode.ai/config.json",
                ),
                _ => (
                    "kilo",
                    KILO,
                    "kilo.json",
                    "KILO",
                    "https://app.kilo.ai/config.json",
                ),
            };
            // With its `$schema`, which both add to a configuration that has none (with or
            // without `reasons run`).
            let config_text = json!({"$schema": schema, "provider": {"scripted": {
                    "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                    "options": {"baseURL": model, "apiKey": KEY},
                    "models": {"gpt-4.1": {"name": "Scripted"}}}},
                    "model": "scripted/gpt-4.1"})
            .to_string();
            let settings = Untouched::write(&[(work.join(config), config_text)]);
            let mut args = vec!["run".to_owned()];
            if agent == Agent::Kilo {
                args.push("--auto".to_owned());
            }
            args.extend(["--format", "json", PROMPT].map(String::from));
            let mut env: Vec<(&str, String)> = vec![(
                "npm_config_cache",
                part(NPM_CACHE).to_string_lossy().into_owned(),
            )];
            for setting in [
                "DISABLE_MODELS_FETCH",
                "DISABLE_AUTOUPDATE",
                "DISABLE_DEFAULT_PLUGINS",
            ] {
                let variable: &'static str =
                    Box::leak(format!("{prefix}_{setting}").into_boxed_str());
                env.push((variable, "1".to_owned()));
            }
            (name, part(program), args, env, settings)
        }
        Agent::QwenCode => {
            let args = [
                "--auth-type",
                "openai",
                "--openai-base-url",
                &model,
                "--openai-api-key",
                KEY,
                "-m",
                "gpt-4.1",
                "--yolo",
                "-o",
                "stream-json",
                PROMPT,
            ]
            .map(String::from)
            .to_vec();
            (
                "qwen",
                part(QWEN_CODE),
                args,
                Vec::new(),
                Untouched::keep(Vec::new()),
            )
        }
        Agent::Copilot => {
            let args = ["-p", PROMPT, "--allow-all-tools", "--no-auto-update"]
                .map(String::from)
                .to_vec();
            let env = vec![
                ("COPILOT_OFFLINE", "true".to_owned()),
                ("COPILOT_PROVIDER_BASE_URL", model.clone()),
                ("COPILOT_PROVIDER_TYPE", "openai".to_owned()),
                ("COPILOT_PROVIDER_API_KEY", KEY.to_owned()),
                ("COPILOT_MODEL", "gpt-4.1".to_owned()),
                (
                    "COPILOT_PKG_CACHE_HOME",
                    part(COPILOT_CACHE).to_string_lossy().into_owned(),
                ),
            ];
            (
                "copilot",
                part(COPILOT),
                args,
                env,
                Untouched::keep(Vec::new()),
            )
        }
        Agent::Cline => {
            // The person's setup: `cline auth` with the model's base URL.
            let providers = cline_auth(&sandbox, &work, &model, KEY, LIMIT);
            let saved = std::fs::read_to_string(&providers)
                .unwrap_or_else(|e| panic!("{}: {e}", providers.display()));
            assert!(saved.contains(&model), "{saved}");
            let args = ["--json", PROMPT].map(String::from).to_vec();
            let env = vec![("CLINE_SESSION_BACKEND_MODE", "local".to_owned())];
            (
                "cline",
                part(CLINE),
                args,
                env,
                Untouched::keep(vec![providers]),
            )
        }
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let outcome = reasons_run(&sandbox, name, &program, &args, &env);
    crate::real::real_more_agents::stop_leftovers(agent, &sandbox);
    check_run(&outcome, &sandbox, agent.shell_tool(), CALL_ID, REASON);
    let requests = upstream.tool_requests("/chat/completions");
    assert!(requests.len() >= 2, "{agent:?}: {requests:#?}");
    assert_eq!(
        declared_reason(&requests[0], agent.shell_tool())["type"],
        "string"
    );
    let marker = std::fs::read_to_string(work.join("marker"))
        .unwrap_or_else(|error| panic!("{agent:?} did not run the command: {error}"));
    assert_eq!(marker, MARKER);
    settings.check();
    if agent == Agent::Copilot {
        // The hook of the run's plugin (--plugin-dir) ran before the call, the only hook there
        // is (the sandbox's HOME has none), and denied nothing: the command ran, above.
        let home = sandbox.path("home");
        let events =
            crate::util::only_file(&home.join(".copilot/session-state"), "", "events.jsonl");
        let events = std::fs::read_to_string(&events).unwrap();
        let hook_ran = events.lines().any(|line| {
            let event: Value = serde_json::from_str(line).unwrap_or_default();
            event["type"] == "hook.start" && event["data"]["hookType"] == "preToolUse"
        });
        assert!(hook_ran, "{events}");
        assert!(!home.join(".copilot/hooks").exists());
    }
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_opencode_runs_through_reasons_run() {
    more_agents_run(Agent::OpenCode);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_kilo_runs_through_reasons_run() {
    more_agents_run(Agent::Kilo);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_qwen_code_runs_through_reasons_run() {
    more_agents_run(Agent::QwenCode);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_copilot_cli_runs_through_reasons_run() {
    more_agents_run(Agent::Copilot);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_cline_runs_through_reasons_run() {
    more_agents_run(Agent::Cline);
}

// ---- interactive, in a terminal ---------------------------------------------------------------

/// The width and height of the terminal the interactive runs are in.
pub(crate) const TERMINAL: (u16, u16) = (160, 50);

/// How long an interactive agent may take to show a screen.
const SCREEN_LIMIT: Duration = Duration::from_secs(120);

/// The screen once `done` holds for it (kept under `target/screens/NAME.txt` for a person to
/// look at), or a failure showing it after two minutes.
#[track_caller]
pub(crate) fn screen_when(tmux: &Tmux, name: &str, done: impl Fn(&str) -> bool) -> String {
    let screen = tmux.screen_within(name, SCREEN_LIMIT, done);
    keep_screen(name, &screen);
    screen
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (tmux)"]
fn real_claude_code_interactive_through_reasons_run_shows_the_reason_and_ends_with_the_summary() {
    const REASON: &str = "Create the marker the user asked for";
    let sandbox = Sandbox::new();
    let upstream = Upstream::messages(scripted(vec![crate::util::claude_code::tool_use(
        "toolu_interactive",
        "Bash",
        json!({"command": "touch approved-marker", "reason": REASON}),
    )]));
    let home = sandbox.path("home");
    let work = sandbox.path("work");
    // What a person who has used Claude Code has: onboarding done, the key approved, the folder
    // trusted.
    let approved = &API_KEY[API_KEY.len() - 20..];
    std::fs::write(
        home.join(".claude.json"),
        json!({"hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [approved], "rejected": []},
            "projects": {work.to_string_lossy(): {"hasTrustDialogAccepted": true}}})
        .to_string(),
    )
    .unwrap();
    let settings = Untouched::write(&[(
        home.join(".claude/settings.json"),
        r#"{"cleanupPeriodDays": 30}"#.to_owned(),
    )]);
    let env = [
        ("ANTHROPIC_BASE_URL", upstream.url()),
        ("ANTHROPIC_API_KEY", API_KEY.to_owned()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
    ];
    let claude = part(CLAUDE_CODE);
    let script = sandbox.script(
        &env,
        Path::new(env!("CARGO_BIN_EXE_reasons")),
        &[
            "run",
            "claude",
            "--program",
            arg(&claude),
            "--",
            "--permission-mode",
            "default",
            "Create the marker in the shell",
        ],
    );
    let (width, height) = TERMINAL;
    let tmux = Tmux::start(&format!("bash {}", quoted(&script)), width, height);

    // Claude Code's own dialog for the command. A hook that asks (`reasons hook claude-code`
    // "in the prompt") puts the reason inside it; one that only tells shows it beside the call
    // once it ran.
    let dialog = screen_when(&tmux, "real-run-claude-dialog", |screen| {
        screen.contains("Do you want to proceed?")
    });
    assert!(dialog.contains("touch approved-marker"), "{dialog}");
    let asked = dialog.contains("requires confirmation");
    if asked {
        assert!(dialog.contains(REASON), "{dialog}");
    }
    tmux.keys(&["Enter"]);
    let after = screen_when(&tmux, "real-run-claude-after", |screen| {
        screen.contains(FINAL) && (asked || screen.contains(REASON))
    });
    assert!(work.join("approved-marker").exists(), "{after}");

    // Ctrl-C twice ends Claude Code; `reasons run` outlives it and says what the run's calls
    // carried.
    tmux.keys(&["C-c"]);
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["C-c"]);
    let log = sandbox.default_reasons_log();
    let summary = format!(
        "reasons: 1 call, 1 with a reason, coverage 100.0%; reasons log {}",
        log.display()
    );
    let end = screen_when(&tmux, "real-run-claude-end", |screen| {
        screen.contains("exit status ")
    });
    let flat = end.replace('\n', "");
    assert!(flat.contains(&summary), "{end}");
    assert!(end.contains("exit status 0"), "{end}");
    let logged = read_reasons_log(&log);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["reason"], REASON);
    settings.check();
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (tmux)"]
fn watch_inside_tmux_opens_reasons_watch_beside_the_agent_and_closes_it_after() {
    let sandbox = Sandbox::new();
    let agent = sandbox.path("claude");
    // A fake agent that lives until told to end.
    std::fs::write(
        &agent,
        format!(
            "#!/bin/bash\nwhile [ ! -e {} ]; do sleep 0.1; done\n",
            quoted(sandbox.path("end"))
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let log = sandbox.path("state").join("reasons.jsonl");
    let (width, height) = TERMINAL;
    let tmux = Tmux::start(
        &format!(
            "{} run claude --program {} --reasons-log {} --watch; echo \"exit status $?\"",
            quoted(env!("CARGO_BIN_EXE_reasons")),
            quoted(&agent),
            quoted(&log),
        ),
        width,
        height,
    );
    let panes = || tmux.run(&["list-panes", "-F", "#{pane_id} #{pane_current_command}"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while panes().lines().count() < 2 {
        assert!(std::time::Instant::now() < deadline, "{}", panes());
        std::thread::sleep(Duration::from_millis(100));
    }
    // The split shows the live view of the run's log; the agent's pane keeps the focus.
    let watching = tmux.run(&["capture-pane", "-p", "-t", "{bottom}"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut watching = watching;
    while !watching.contains("waiting for calls") {
        assert!(std::time::Instant::now() < deadline, "{watching}");
        std::thread::sleep(Duration::from_millis(100));
        watching = tmux.run(&["capture-pane", "-p", "-t", "{bottom}"]);
    }
    let active = tmux.run(&["display-message", "-p", "#{pane_at_top}"]);
    assert_eq!(active.trim(), "1");
    std::fs::write(sandbox.path("end"), "").unwrap();
    let end = screen_when(&tmux, "real-run-watch-end", |screen| {
        screen.contains("exit status")
    });
    assert!(end.contains("exit status 0"), "{end}");
    assert_eq!(panes().lines().count(), 1, "{}", panes());
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (tmux)"]
fn real_codex_interactive_through_reasons_run_asks_to_trust_the_hook_which_then_shows_the_reason() {
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(codex_model);
    let home = sandbox.path("home");
    let work = sandbox.path("work");
    let config = home.join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "model = \"gpt-5.5\"\n[projects.{:?}]\ntrust_level = \"trusted\"\n",
            work.to_string_lossy()
        ),
    )
    .unwrap();
    let env = [
        ("OPENAI_BASE_URL", format!("{}/v1", upstream.url())),
        ("OPENAI_API_KEY", "sk-x".to_owned()),
    ];
    let script = sandbox.script(
        &env,
        Path::new(env!("CARGO_BIN_EXE_reasons")),
        &[
            "run",
            "codex",
            "--program",
            arg(&part(CODEX)),
            "--",
            "Print the marker in the shell",
        ],
    );
    let (width, height) = TERMINAL;
    let tmux = Tmux::start(&format!("bash {}", quoted(&script)), width, height);
    // Codex's own review of a hook it has not trusted yet: the person trusts it ("Trust all
    // and continue"). Codex 0.171 then offers a newer model: the person keeps the configured one.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let mut trusted = false;
    let shown = loop {
        std::thread::sleep(Duration::from_millis(700));
        let screen = tmux.screen();
        if screen.contains("Done: the shell ran.") {
            break screen;
        }
        assert!(std::time::Instant::now() < deadline, "{screen}");
        // Keys go only to a dialog drawn down to its options: a "2" sent while it is still
        // being drawn is lost, and the Enter after it picks the first option (a review of the
        // hooks, which leaves the hook untrusted for this run).
        let hooks_dialog =
            screen.contains("Hooks need review") && screen.contains("Continue without trusting");
        if hooks_dialog || screen.contains("Use existing model") {
            trusted |= hooks_dialog;
            tmux.keys(&["2"]);
            std::thread::sleep(Duration::from_millis(300));
            tmux.keys(&["Enter"]);
        }
    };
    assert!(trusted, "Codex never asked to trust the hook");
    keep_screen("real-run-codex-reason", &shown);
    assert!(
        shown.contains(&format!("Hook · model's reason for Bash: {CODEX_REASON}")),
        "{shown}"
    );
    tmux.keys(&["C-c"]);
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["C-c"]);
    let end = screen_when(&tmux, "real-run-codex-end", |screen| {
        screen.contains("exit status")
    });
    let summary = format!(
        "reasons: 1 call, 1 with a reason, coverage 100.0%; reasons log {}",
        sandbox.default_reasons_log().display()
    );
    assert!(end.replace('\n', "").contains(&summary), "{end}");
    assert!(end.contains("exit status 0"), "{end}");
    // The trust is Codex's own record (beside its other state there), kept for the next run.
    let kept = std::fs::read_to_string(&config).unwrap();
    assert!(
        kept.contains("[hooks.state.\"/<session-flags>/config.toml:pre_tool_use:0:0\"]"),
        "{kept}"
    );
}
