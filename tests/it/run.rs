//! `reasons run AGENT` with a fake agent: a shell script named as the agent, first on PATH, that
//! records what it was given, talks to the gateway it was pointed at (bash's `/dev/tcp`) and
//! exits as told. What the real agents do with it is in `real_run.rs`.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::bounded::run_bounded_within;
use crate::util::sandbox::Sandbox;
use crate::util::upstream::{message, Answer, Upstream};
use crate::util::{arg, read_reasons_log};

const REASON: &str = "List the build folder before cleaning it";
const CALL_ID: &str = "toolu_run_1";

/// Sends one Messages request, non-streamed, to `$ANTHROPIC_BASE_URL` (a plain `http://` URL) and
/// keeps the answer in `$HOME/answer`.
const ASK_THE_GATEWAY: &str = r#"
url=${ANTHROPIC_BASE_URL#http://}
hostport=${url%%/*}
prefix=""
case "$url" in */*) prefix="/${url#*/}" ;; esac
body='{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"go"}],"tools":[{"name":"Bash","description":"Run","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]}'
exec 3<>"/dev/tcp/${hostport%:*}/${hostport#*:}"
printf 'POST %s/v1/messages HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nanthropic-version: 2023-06-01\r\nx-api-key: sk-test\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' "$prefix" "$hostport" "${#body}" "$body" >&3
cat <&3 > "$HOME/answer"
"#;

/// Writes Claude Code's transcript of the one call, as the agent would record it (stripped).
const RECORD_THE_CALL: &str = r#"
mkdir -p "$HOME/.claude/projects/-work"
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
printf '{"type":"assistant","sessionId":"s-run","timestamp":"%s","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_run_1","name":"Bash","input":{"command":"ls build"}}]}}\n' "$now" > "$HOME/.claude/projects/-work/s-run.jsonl"
"#;

/// A folder for the fake agents, and the PATH that finds them first (then only the system's).
struct FakeAgents {
    dir: tempfile::TempDir,
}

impl FakeAgents {
    fn new() -> FakeAgents {
        FakeAgents {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A fake agent called `name`: records its arguments and environment in `$HOME/args` and
    /// `$HOME/env`, then runs `script`.
    fn add(&self, name: &str, script: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        let text = format!(
            "#!/bin/bash\nprintf '%s\\n' \"$@\" > \"$HOME/args\"\nenv > \"$HOME/env\"\n{script}\n"
        );
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.dir.path().display())
    }
}

/// `reasons run ARGS` in the sandbox, its PATH the fake agents' and the system's.
fn run_in(sandbox: &Sandbox, agents: &FakeAgents, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reasons"));
    command.arg("run").args(args);
    sandbox.apply(&mut command);
    command
        .env("PATH", agents.path())
        .envs(env.iter().copied())
        .current_dir(sandbox.path("work"))
        .stdin(Stdio::null());
    let output = run_bounded_within(command, Duration::from_secs(60));
    Outcome {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

struct Outcome {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

impl Outcome {
    /// The last line on stderr: the run's summary.
    fn summary(&self) -> &str {
        self.stderr.lines().last().unwrap_or_default()
    }
}

/// What the fake agent recorded of its environment.
fn agent_env(sandbox: &Sandbox, name: &str) -> Option<String> {
    let env = std::fs::read_to_string(sandbox.path("home").join("env")).unwrap();
    env.lines()
        .find_map(|line| line.strip_prefix(&format!("{name}=")).map(str::to_owned))
}

fn agent_args(sandbox: &Sandbox) -> Vec<String> {
    let args = std::fs::read_to_string(sandbox.path("home").join("args")).unwrap();
    args.lines().map(str::to_owned).collect()
}

/// A model that answers every request with one Bash call carrying the reason.
fn calling_model() -> Upstream {
    Upstream::start(|_| {
        Answer::Json(
            200,
            message(&[json!({"type": "tool_use", "id": CALL_ID, "name": "Bash",
                "input": {"command": "ls build", "reason": REASON}})]),
        )
    })
}

#[test]
fn the_agents_exit_status_is_the_runs_and_the_summary_comes_last() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", "exit 7");
    let outcome = run_in(&sandbox, &agents, &["claude"], &[]);
    assert_eq!(outcome.status.code(), Some(7), "{}", outcome.stderr);
    let log = sandbox.default_reasons_log();
    assert_eq!(
        outcome.summary(),
        format!(
            "reasons: no calls recorded during the run; reasons log {}",
            log.display()
        ),
        "{}",
        outcome.stderr
    );
}

#[test]
fn an_agent_ended_by_a_signal_is_reported_the_shells_way() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("codex", "kill -TERM $$");
    let outcome = run_in(&sandbox, &agents, &["codex"], &[]);
    assert_eq!(outcome.status.code(), Some(128 + 15), "{}", outcome.stderr);
    assert!(
        outcome.summary().starts_with("reasons: "),
        "{}",
        outcome.stderr
    );
}

#[test]
fn an_agent_that_is_not_installed_is_named_with_status_2() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    let outcome = run_in(&sandbox, &agents, &["gemini-cli"], &[]);
    assert_eq!(outcome.status.code(), Some(2));
    assert!(
        outcome
            .stderr
            .contains("reasons: Gemini CLI is not installed: no `gemini` on PATH"),
        "{}",
        outcome.stderr
    );
    // Nothing was started: no gateway line, no summary.
    assert_eq!(outcome.stderr.lines().count(), 1, "{}", outcome.stderr);
}

#[test]
fn a_program_named_is_run_instead_of_the_one_on_path() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    let program = agents.add("my-claude", "echo ran-it; exit 3");
    let outcome = run_in(
        &sandbox,
        &agents,
        &["claude", "--program", arg(&program)],
        &[],
    );
    assert_eq!(outcome.status.code(), Some(3), "{}", outcome.stderr);
    assert_eq!(outcome.stdout, "ran-it\n");
}

#[test]
fn claude_code_is_pointed_at_the_gateway_with_the_hook_for_this_run_and_its_own_args_after() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", "");
    let settings = sandbox.path("home").join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, r#"{"model": "opus"}"#).unwrap();
    let log = sandbox.path("state").join("run.jsonl");
    let outcome = run_in(
        &sandbox,
        &agents,
        &[
            "claude",
            "--reasons-log",
            arg(&log),
            "--",
            "-p",
            "hello there",
        ],
        &[],
    );
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let url = agent_env(&sandbox, "ANTHROPIC_BASE_URL").unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let args = agent_args(&sandbox);
    assert_eq!(args[0], "--settings", "{args:?}");
    let given: Value = serde_json::from_str(&args[1]).unwrap();
    assert_eq!(given["env"]["ANTHROPIC_BASE_URL"], url.as_str());
    // Auto mode classifies on Claude Code's own stripped copy of each call, not at the API.
    assert_eq!(given["env"]["CLAUDE_CODE_AUTO_MODE_SERVER"], "0");
    assert_eq!(
        agent_env(&sandbox, "CLAUDE_CODE_AUTO_MODE_SERVER").as_deref(),
        Some("0")
    );
    let command = given["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        command.ends_with(&format!(
            " hook claude-code --reasons-log {}",
            log.display()
        )),
        "{command}"
    );
    assert_eq!(given["hooks"]["PreToolUse"][0]["matcher"], "*");
    assert_eq!(&args[2..], ["-p", "hello there"]);
    // The person's settings are as they were.
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        r#"{"model": "opus"}"#
    );
}

#[test]
fn a_hook_installed_already_is_not_wired_twice() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", "");
    let settings = sandbox.path("home").join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let installed = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "/opt/bin/reasons hook claude-code"}]}]}});
    std::fs::write(&settings, installed.to_string()).unwrap();
    let outcome = run_in(&sandbox, &agents, &["claude"], &[]);
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let given: Value = serde_json::from_str(&agent_args(&sandbox)[1]).unwrap();
    assert!(given.get("hooks").is_none(), "{given}");
    assert!(given["env"]["ANTHROPIC_BASE_URL"].is_string(), "{given}");
}

#[test]
fn a_call_through_the_runs_gateway_is_logged_and_counted() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", &format!("{ASK_THE_GATEWAY}\n{RECORD_THE_CALL}"));
    let upstream = calling_model();
    let log = sandbox.default_reasons_log();
    let outcome = run_in(
        &sandbox,
        &agents,
        &["claude"],
        &[("ANTHROPIC_BASE_URL", &upstream.url())],
    );
    assert!(outcome.status.success(), "{}", outcome.stderr);
    // Through the gateway: the model saw the optional reason, the agent got the call without it.
    let received = upstream.received();
    assert_eq!(received.len(), 1);
    let sent = received[0].json();
    assert_eq!(
        sent["tools"][0]["input_schema"]["properties"]["reason"]["type"],
        "string"
    );
    let answer = std::fs::read_to_string(sandbox.path("home").join("answer")).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""command":"ls build""#), "{answer}");
    assert!(!answer.contains(REASON), "{answer}");
    let logged = read_reasons_log(&log);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["call_id"], CALL_ID);
    assert_eq!(logged[0]["reason"], REASON);
    assert_eq!(
        outcome.summary(),
        format!(
            "reasons: 1 call, 1 with a reason, coverage 100.0%; reasons log {}",
            log.display()
        ),
        "{}",
        outcome.stderr
    );
}

#[test]
fn calls_recorded_before_the_run_are_not_counted() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", RECORD_THE_CALL);
    let earlier = sandbox
        .path("home")
        .join(".claude/projects/-old/s-old.jsonl");
    std::fs::create_dir_all(earlier.parent().unwrap()).unwrap();
    std::fs::write(
        &earlier,
        crate::util::claude_call("s-old", "toolu_old", "Bash", json!({"command": "ls"})),
    )
    .unwrap();
    let outcome = run_in(&sandbox, &agents, &["claude"], &[]);
    assert!(outcome.status.success(), "{}", outcome.stderr);
    // The run's one call, without a reason (the gateway took none off it).
    assert!(
        outcome
            .summary()
            .starts_with("reasons: 1 call, 0 with a reason, coverage 0.0%; "),
        "{}",
        outcome.stderr
    );
}

#[test]
fn a_base_url_already_set_becomes_the_upstream_and_keeps_its_path() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", ASK_THE_GATEWAY);
    let upstream = calling_model();
    let outcome = run_in(
        &sandbox,
        &agents,
        &["claude"],
        &[(
            "ANTHROPIC_BASE_URL",
            &format!("{}/corporate/anthropic", upstream.url()),
        )],
    );
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let url = agent_env(&sandbox, "ANTHROPIC_BASE_URL").unwrap();
    assert!(url.ends_with("/corporate/anthropic"), "{url}");
    assert_ne!(url, format!("{}/corporate/anthropic", upstream.url()));
    let received = upstream.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].path, "/corporate/anthropic/v1/messages");
}

#[test]
fn an_upstream_that_cannot_be_reached_is_a_502_in_the_agents_envelope() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", ASK_THE_GATEWAY);
    // A port that was free a moment ago: nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let outcome = run_in(
        &sandbox,
        &agents,
        &["claude", "--upstream", &format!("http://{closed}")],
        &[],
    );
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let answer = std::fs::read_to_string(sandbox.path("home").join("answer")).unwrap();
    assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["type"], "error", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot reach the upstream"),
        "{body}"
    );
    assert!(outcome.stderr.contains("cannot reach the upstream"));
}

#[test]
fn a_listen_address_in_use_is_an_error_before_the_agent_starts() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", "");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let outcome = run_in(&sandbox, &agents, &["claude", "--listen", &address], &[]);
    assert_eq!(outcome.status.code(), Some(2));
    assert!(
        outcome
            .stderr
            .contains(&format!("reasons: cannot listen on {address}")),
        "{}",
        outcome.stderr
    );
    assert!(!sandbox.path("home").join("args").exists());
}

#[test]
fn watch_outside_tmux_says_why_and_how() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", "");
    let outcome = run_in(&sandbox, &agents, &["claude", "--watch"], &[]);
    assert!(outcome.status.success(), "{}", outcome.stderr);
    assert!(
        outcome.stderr.contains("--watch opens a tmux split, and this terminal is not inside tmux: run `reasons watch --reasons-log "),
        "{}",
        outcome.stderr
    );
}

/// `reasons run codex` put a provider of its own pointed at OpenAI in place of the one the person
/// chose: now the chosen one (here by a profile, and a flag naming the profile's provider) is
/// copied whole, its base URL the gateway's, and chosen for the run wherever a choice is made.
#[test]
fn codex_keeps_the_provider_the_person_chose_by_profile_and_flag() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("codex", "");
    let config = sandbox.path("home").join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        "model_provider = \"openai\"\nprofile = \"work\"\n\
         [profiles.work]\nmodel_provider = \"theirs\"\n\
         [model_providers.mine]\nname = \"Mine\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         env_key = \"MINE_KEY\"\nwire_api = \"responses\"\n\
         query_params = { api-version = \"1\" }\nhttp_headers = { \"X-Mine\" = \"m\" }\n",
    )
    .unwrap();
    let outcome = run_in(
        &sandbox,
        &agents,
        &[
            "codex",
            "--",
            "-c",
            "profiles.work.model_provider=mine",
            "exec",
            "hi",
        ],
        &[],
    );
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let args = agent_args(&sandbox);
    assert_eq!(
        args[..2],
        ["-c", "model_provider=\"reasons-run\""],
        "{args:?}"
    );
    let provider = &args[3];
    assert!(
        provider.starts_with("model_providers.reasons-run={ name = \"Mine\", base_url = \"http://127.0.0.1:")
            && !provider.contains("127.0.0.1:9/")
            && provider.contains("/v1\", env_key = \"MINE_KEY\", wire_api = \"responses\", query_params = { api-version = \"1\" }, http_headers = { X-Mine = \"m\" }"),
        "{args:?}"
    );
    assert_eq!(
        args[4..6],
        ["-c", "profiles.work.model_provider=\"reasons-run\""]
    );
    // The person's own choice, after the run's, would win: it chooses the run's too.
    assert_eq!(
        args[8..],
        [
            "-c",
            "profiles.work.model_provider=\"reasons-run\"",
            "exec",
            "hi"
        ],
        "{args:?}"
    );
}

/// How each of the other agents is pointed at the gateway, in its environment or arguments.
#[test]
fn every_agent_is_pointed_at_the_gateway_its_own_way() {
    let check = |agent: &str, env: &[(&str, &str)], args: &[&str], seen: &dyn Fn(&Sandbox)| {
        let sandbox = Sandbox::new();
        let agents = FakeAgents::new();
        agents.add(agent, "");
        let mut all = vec![agent, "--"];
        all.extend_from_slice(args);
        let outcome = run_in(&sandbox, &agents, &all, env);
        assert!(outcome.status.success(), "{agent}: {}", outcome.stderr);
        seen(&sandbox);
    };
    let gateway = |url: &str| url.starts_with("http://127.0.0.1:");
    check(
        "codex",
        &[("OPENAI_API_KEY", "sk")],
        &["exec", "hi"],
        &|sandbox| {
            let args = agent_args(sandbox);
            assert_eq!(args[..3], ["-c", "model_provider=\"reasons-run\"", "-c"]);
            assert!(
                args[3].starts_with("model_providers.reasons-run={"),
                "{args:?}"
            );
            assert!(
                args[3].contains("/v1\", wire_api = \"responses\""),
                "{args:?}"
            );
            assert!(args[3].contains("env_key = \"OPENAI_API_KEY\""), "{args:?}");
            // The hook, as one of the run's settings.
            assert_eq!(args[4], "-c");
            assert!(
                args[5]
                    .starts_with("hooks.PreToolUse=[{ hooks = [{ type = \"command\", command = \"")
                    && args[5].contains(" hook codex --reasons-log "),
                "{args:?}"
            );
            assert_eq!(args[6..], ["exec", "hi"]);
        },
    );
    check("gemini", &[], &["-p", "hi"], &|sandbox| {
        assert!(gateway(
            &agent_env(sandbox, "GOOGLE_GEMINI_BASE_URL").unwrap()
        ));
        assert_eq!(agent_args(sandbox), ["-p", "hi"]);
    });
    check(
        "qwen",
        &[],
        &["--openai-base-url", "http://127.0.0.1:9/v1", "-p", "hi"],
        &|sandbox| {
            let args = agent_args(sandbox);
            assert_eq!(args[0], "--openai-base-url");
            assert!(gateway(&args[1]) && args[1].ends_with("/v1"), "{args:?}");
            assert_ne!(args[1], "http://127.0.0.1:9/v1");
        },
    );
    check("qwen", &[], &["-p", "hi"], &|sandbox| {
        assert!(gateway(&agent_env(sandbox, "OPENAI_BASE_URL").unwrap()));
    });
    check(
        "copilot",
        &[("COPILOT_PROVIDER_BASE_URL", "http://127.0.0.1:9/v1")],
        &[],
        &|sandbox| {
            let url = agent_env(sandbox, "COPILOT_PROVIDER_BASE_URL").unwrap();
            assert!(gateway(&url) && url.ends_with("/v1"), "{url}");
        },
    );
    for (agent, variable) in [
        ("opencode", "OPENCODE_CONFIG_CONTENT"),
        ("kilo", "KILO_CONFIG_CONTENT"),
    ] {
        check(agent, &[], &[], &|sandbox| {
            let content: Value =
                serde_json::from_str(&agent_env(sandbox, variable).unwrap()).unwrap();
            for provider in ["anthropic", "openai", "google"] {
                let url = content["provider"][provider]["options"]["baseURL"]
                    .as_str()
                    .unwrap();
                assert!(gateway(url), "{agent} {provider}: {content}");
            }
        });
    }
}

#[test]
fn copilot_gets_the_hook_for_this_run_as_a_plugin_of_its_own() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    // The plugin's folder is removed at the end of the run: the fake agent keeps a copy.
    agents.add(
        "copilot",
        r#"if [ "$1" = --plugin-dir ]; then cp -r "$2" "$HOME/plugin"; fi"#,
    );
    let hooks = sandbox.path("home").join(".copilot/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let theirs = r#"{"version": 1, "hooks": {"sessionStart": []}}"#;
    std::fs::write(hooks.join("mine.json"), theirs).unwrap();
    let log = sandbox.path("state").join("run.jsonl");
    let provider = [("COPILOT_PROVIDER_BASE_URL", "http://127.0.0.1:9/v1")];
    let outcome = run_in(
        &sandbox,
        &agents,
        &["copilot", "--reasons-log", arg(&log), "--", "-i", "hi"],
        &provider,
    );
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let args = agent_args(&sandbox);
    assert_eq!(args[0], "--plugin-dir", "{args:?}");
    assert_eq!(&args[2..], ["-i", "hi"]);
    assert!(
        !std::path::Path::new(&args[1]).exists(),
        "removed at the end"
    );
    let plugin = sandbox.path("home").join("plugin");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(plugin.join("plugin.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["name"], "reasons-run");
    let given: Value =
        serde_json::from_str(&std::fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap())
            .unwrap();
    assert_eq!(given["version"], 1);
    let command = given["hooks"]["preToolUse"][0]["bash"].as_str().unwrap();
    assert!(
        command.ends_with(&format!(
            " hook copilot-cli --reasons-log {}",
            log.display()
        )),
        "{command}"
    );
    // The person's hooks are as they were.
    assert_eq!(
        std::fs::read_to_string(hooks.join("mine.json")).unwrap(),
        theirs
    );
    assert_eq!(std::fs::read_dir(&hooks).unwrap().count(), 1);

    // With the hook installed already, none for the run.
    let installed = r#"{"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": "/opt/bin/reasons hook copilot-cli"}]}}"#;
    std::fs::write(hooks.join("reasons.json"), installed).unwrap();
    let outcome = run_in(&sandbox, &agents, &["copilot", "--", "-i", "hi"], &provider);
    assert!(outcome.status.success(), "{}", outcome.stderr);
    assert_eq!(agent_args(&sandbox), ["-i", "hi"]);
}

#[test]
fn copilot_without_a_provider_of_its_own_is_told_what_to_set() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("copilot", "");
    let outcome = run_in(&sandbox, &agents, &["copilot-cli"], &[]);
    assert_eq!(outcome.status.code(), Some(2));
    assert!(
        outcome.stderr.contains("COPILOT_PROVIDER_BASE_URL"),
        "{}",
        outcome.stderr
    );
}

#[test]
fn strip_defaults_to_what_the_agent_accepts() {
    // Gemini CLI keeps an undeclared reason: its calls come through as the model wrote them.
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add(
        "gemini",
        &ASK_THE_GATEWAY.replace("ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"),
    );
    let upstream = calling_model();
    let outcome = run_in(
        &sandbox,
        &agents,
        &["gemini", "--upstream", &upstream.url()],
        &[],
    );
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let answer = std::fs::read_to_string(sandbox.path("home").join("answer")).unwrap();
    assert!(answer.contains(REASON), "{answer}");
    // --strip takes it off all the same.
    let sandbox = Sandbox::new();
    let outcome = run_in(
        &sandbox,
        &agents,
        &["gemini", "--strip", "--upstream", &upstream.url()],
        &[],
    );
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let answer = std::fs::read_to_string(sandbox.path("home").join("answer")).unwrap();
    assert!(!answer.contains(REASON), "{answer}");
    assert!(answer.contains(r#""command":"ls build""#), "{answer}");
}

/// A fake agent that says it is ready, then waits for `$HOME/end` (or exits 42 on SIGTERM).
const WAITING_AGENT: &str = r#"
trap 'exit 42' TERM
touch "$HOME/ready"
while [ ! -e "$HOME/end" ]; do sleep 0.05; done
"#;

/// `reasons run claude` with the waiting agent, started; once the agent is ready.
fn start_waiting(sandbox: &Sandbox, agents: &FakeAgents) -> std::process::Child {
    agents.add("claude", WAITING_AGENT);
    let mut command = Command::new(env!("CARGO_BIN_EXE_reasons"));
    command.args(["run", "claude"]);
    sandbox.apply(&mut command);
    let child = command
        .env("PATH", agents.path())
        .current_dir(sandbox.path("work"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !sandbox.path("home").join("ready").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn sigterm_to_reasons_reaches_the_agent_and_its_status_is_the_runs() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    let child = start_waiting(&sandbox, &agents);
    signal(child.id(), "TERM");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(42), "{stderr}");
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .starts_with("reasons: no calls recorded during the run; "),
        "{stderr}"
    );
}

#[test]
fn an_interrupt_is_the_agents_and_reasons_lives_on_to_report() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    let child = start_waiting(&sandbox, &agents);
    // As from a terminal the agent shares: reasons only catches it (the terminal sends the
    // agent its own); the agent decides whether it ends.
    signal(child.id(), "INT");
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(sandbox.path("home").join("end"), "").unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .starts_with("reasons: no calls"),
        "{stderr}"
    );
}

#[test]
fn cline_gets_a_copy_of_its_providers_pointed_at_the_gateway_gone_with_the_run() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add(
        "cline",
        r#"cp "$CLINE_PROVIDER_SETTINGS_PATH" "$HOME/providers-seen"; ls -ld "$(dirname "$CLINE_PROVIDER_SETTINGS_PATH")" > "$HOME/folder-seen""#,
    );
    let providers = sandbox
        .path("home")
        .join(".cline/data/settings/providers.json");
    std::fs::create_dir_all(providers.parent().unwrap()).unwrap();
    let theirs = json!({"version": 1, "lastUsedProvider": "openai", "providers": {
        "openai": {"settings": {"provider": "openai", "apiKey": "k", "model": "m",
            "baseUrl": "http://127.0.0.1:9/v1"}}}})
    .to_string();
    std::fs::write(&providers, &theirs).unwrap();
    let outcome = run_in(&sandbox, &agents, &["cline"], &[]);
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let seen: Value = serde_json::from_str(
        &std::fs::read_to_string(sandbox.path("home").join("providers-seen")).unwrap(),
    )
    .unwrap();
    let url = seen["providers"]["openai"]["settings"]["baseUrl"]
        .as_str()
        .unwrap();
    assert!(
        url.starts_with("http://127.0.0.1:")
            && url.ends_with("/v1")
            && url != "http://127.0.0.1:9/v1",
        "{seen}"
    );
    assert_eq!(seen["providers"]["openai"]["settings"]["apiKey"], "k");
    // In a folder only its owner may enter, gone with the run; the person's file as it was.
    let folder = std::fs::read_to_string(sandbox.path("home").join("folder-seen")).unwrap();
    assert!(folder.starts_with("drwx------"), "{folder}");
    let copy = agent_env(&sandbox, "CLINE_PROVIDER_SETTINGS_PATH").unwrap();
    assert!(!std::path::Path::new(&copy).exists(), "{copy}");
    assert_eq!(std::fs::read_to_string(&providers).unwrap(), theirs);
}

#[test]
fn a_base_url_in_claude_codes_settings_wins_over_the_environment_as_it_does_in_claude_code() {
    let sandbox = Sandbox::new();
    let agents = FakeAgents::new();
    agents.add("claude", ASK_THE_GATEWAY);
    let upstream = calling_model();
    // The project's settings name the upstream; the environment names a place nothing serves.
    let project = sandbox.path("work").join(".claude/settings.json");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    let settings =
        json!({"env": {"ANTHROPIC_BASE_URL": format!("{}/team", upstream.url())}}).to_string();
    std::fs::write(&project, &settings).unwrap();
    let outcome = run_in(
        &sandbox,
        &agents,
        &["claude"],
        &[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/nowhere")],
    );
    assert!(outcome.status.success(), "{}", outcome.stderr);
    let received = upstream.received();
    assert_eq!(received.len(), 1, "{}", outcome.stderr);
    assert_eq!(received[0].path, "/team/v1/messages");
    let given: Value = serde_json::from_str(&agent_args(&sandbox)[1]).unwrap();
    assert!(
        given["env"]["ANTHROPIC_BASE_URL"]
            .as_str()
            .unwrap()
            .ends_with("/team"),
        "{given}"
    );
    assert_eq!(std::fs::read_to_string(&project).unwrap(), settings);
}
