//! No test touches the developer's own files. Tests run with a developer's variables (`HOME`,
//! every agent's home, every `XDG_*` folder, `REASONS_LOG`, a collector, `COLUMNS`) all pointed
//! at a sentinel folder full of settings, logs and sessions: the tests that write settings and
//! logs (`hook install`, `run` with a fake agent, a gateway's and `watch`'s default log, the hooks)
//! and those that read the usual folders pass as they do anywhere, and the sentinel folder is left
//! byte for byte as it was, with nothing sent to the collector. What makes it so is
//! `util/environment.rs`, through which every program a test starts gets its environment.

use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Tests that, run with the sentinel variables, would write into the sentinel folder, read from
/// it, or send spans, were any of those variables to reach what they start: one or more for each
/// way a test starts a program (`reasons()`, a gateway, `script`, a sandboxed fake agent).
const THE_TESTS: &[&str] = &[
    // `hook install` for every agent into a HOME of the test's (GEMINI_CLI_HOME, COPILOT_HOME,
    // CLAUDE_CONFIG_DIR would send it elsewhere).
    "hook::install::hook_install_creates_the_settings_and_their_folder_in_a_fresh_home",
    "hook::install::hook_install_writes_copilot_cli_s_user_hooks_file_merged_and_uninstall_undoes_it",
    "gateway::team::hook_install_writes_the_gateway_into_the_hooks_command",
    // The hooks and `watch` reading the log REASONS_LOG names, the test's own.
    "watch::reasons_log_names_the_log_watch_and_the_hooks_read",
    "watch::a_hook_given_garbage_prints_nothing_and_exits_0",
    // A gateway with no log named: its default log.
    "gateway::basics::a_gateway_with_no_log_named_keeps_reasons_in_its_own_homes_state_folder",
    "gateway::basics::a_plain_answer_loses_the_reason_that_goes_to_the_log",
    // `reasons run` with fake agents: the hook and settings it wires, the agent's own homes.
    "run::claude_code_is_pointed_at_the_gateway_with_the_hook_for_this_run_and_its_own_args_after",
    "run::every_agent_is_pointed_at_the_gateway_its_own_way",
    "run::cline_gets_a_copy_of_its_providers_pointed_at_the_gateway_gone_with_the_run",
    // The usual folders read on a terminal (`script`), and the default reasons log joined.
    "read::extract::with_no_path_and_a_terminal_the_local_agent_logs_are_read_and_announced",
    "read::agents::with_no_path_and_a_terminal_every_agents_usual_place_is_read_and_announced",
    "read::joined::reading_the_local_folders_joins_the_default_reasons_log",
    // A table in a pipe, with no width known.
    "read::tables::a_stats_table_is_whole_at_140_columns_and_in_a_pipe_with_no_width_known",
];

/// The variables a developer may have set, each naming a folder (or a file) in the sentinel.
const FOLDERS: &[(&str, &str)] = &[
    ("HOME", "home"),
    ("CLAUDE_CONFIG_DIR", "claude-config"),
    ("CODEX_HOME", "codex-home"),
    ("GEMINI_CLI_HOME", "gemini-cli-home"),
    ("COPILOT_HOME", "copilot-home"),
    ("CLINE_DATA_DIR", "cline-data"),
    ("CLINE_DIR", "cline"),
    ("QWEN_HOME", "qwen-home"),
    ("QWEN_RUNTIME_DIR", "qwen-runtime"),
    ("OPENCODE_CONFIG_DIR", "opencode-config"),
    ("KILO_CONFIG_DIR", "kilo-config"),
    ("PI_CODING_AGENT_DIR", "pi-agent"),
    ("OPENCLAW_STATE_DIR", "openclaw-state"),
    ("GROK_HOME", "grok-home"),
    ("HERMES_HOME", "hermes-home"),
    ("XDG_CONFIG_HOME", "xdg/config"),
    ("XDG_DATA_HOME", "xdg/data"),
    ("XDG_STATE_HOME", "xdg/state"),
    ("XDG_CACHE_HOME", "xdg/cache"),
    ("XDG_RUNTIME_DIR", "xdg/runtime"),
    ("REASONS_LOG", "named/reasons.jsonl"),
];

/// A developer's settings, logs and sessions, as each agent keeps them.
fn fill(sentinel: &Path) {
    let session = crate::util::claude_call(
        "developer",
        "toolu_developer",
        "Bash",
        serde_json::json!({"command": "ls", "reason": "The developer's own session"}),
    );
    let reasons = crate::util::logged_line("toolu_developer", "Bash", "ls", "The developer's");
    let hooks = r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "mine"}]}]}}"#;
    let files: &[(&str, &str)] = &[
        ("home/.claude/settings.json", hooks),
        ("home/.claude.json", r#"{"hasCompletedOnboarding": true}"#),
        ("home/.claude/projects/mine/session.jsonl", &session),
        ("home/.codex/hooks.json", hooks),
        ("home/.codex/config.toml", "model = \"mine\"\n"),
        ("home/.gemini/settings.json", hooks),
        ("home/.copilot/hooks/reasons.json", r#"{"version": 1}"#),
        ("home/.copilot/session-state/mine/events.jsonl", "{}\n"),
        ("home/.cline/data/settings/providers.json", "{}"),
        ("home/.qwen/settings.json", hooks),
        ("home/.local/state/reasons/reasons.jsonl", &reasons),
        ("claude-config/settings.json", hooks),
        ("claude-config/projects/mine/session.jsonl", &session),
        ("codex-home/hooks.json", hooks),
        ("codex-home/config.toml", "model = \"mine\"\n"),
        ("gemini-cli-home/.gemini/settings.json", hooks),
        ("copilot-home/config.json", "{}"),
        ("copilot-home/hooks/mine.json", r#"{"version": 1}"#),
        ("cline-data/settings/providers.json", "{}"),
        ("cline/data/settings/providers.json", "{}"),
        ("qwen-home/settings.json", hooks),
        ("opencode-config/opencode.json", "{}"),
        ("kilo-config/kilo.json", "{}"),
        ("xdg/config/opencode/opencode.json", "{}"),
        ("xdg/data/opencode/storage/session/mine.json", "{}"),
        ("xdg/state/reasons/reasons.jsonl", &reasons),
        ("xdg/cache/mine", "mine"),
        ("named/reasons.jsonl", &reasons),
    ];
    for (file, text) in files {
        let path = sentinel.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    std::fs::create_dir_all(sentinel.join("xdg/runtime")).unwrap();
    std::fs::create_dir_all(sentinel.join("qwen-runtime")).unwrap();
}

/// Everything under `dir`: each path with its bytes (`None` for a folder).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    fn walk(dir: &Path, found: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                found.insert(path.clone(), None);
                walk(&path, found);
            } else {
                found.insert(path.clone(), Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut found = BTreeMap::new();
    walk(dir, &mut found);
    found
}

#[cfg(unix)]
#[test]
fn tests_run_with_a_developers_variables_leave_the_developers_files_alone() {
    let sentinel = tempfile::tempdir().unwrap();
    fill(sentinel.path());
    let before = snapshot(sentinel.path());
    // A collector that must hear nothing.
    let collector = TcpListener::bind("127.0.0.1:0").unwrap();
    collector.set_nonblocking(true).unwrap();

    // This test binary again, running only THE_TESTS, in this process's environment (whatever
    // the developer has) with the sentinel's on top.
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "--test-threads", "2"])
        .args(THE_TESTS);
    for (name, folder) in FOLDERS {
        command.env(name, sentinel.path().join(folder));
    }
    command
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://{}", collector.local_addr().unwrap()),
        )
        .env("COLUMNS", "33")
        .env_remove("NO_COLOR");
    let output =
        crate::util::bounded::run_bounded_within(command, std::time::Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);

    // Whatever became of the tests, the developer's files are as they were.
    let after = snapshot(sentinel.path());
    let changed: BTreeSet<_> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .collect();
    assert!(
        changed.is_empty(),
        "the tests changed the developer's files: {changed:?}\n{stdout}\n{stderr}"
    );
    assert!(
        collector
            .accept()
            .is_err_and(|error| error.kind() == std::io::ErrorKind::WouldBlock),
        "the tests sent spans to the developer's collector"
    );
    // And they passed as anywhere else, every one of them (a test renamed is one this no
    // longer runs).
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let passed = format!("test result: ok. {} passed; 0 failed", THE_TESTS.len());
    assert!(stdout.contains(&passed), "{stdout}");
}
