//! `reasons hook install AGENT` and `uninstall AGENT`: the hook written into the agent's user
//! settings beside everything there, twice is once, and taken out again.

use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use crate::util::{arg, installed_binary, reasons};

fn install(args: &[&str], home: &Path) -> crate::util::Run {
    reasons()
        .args(["hook"])
        .args(args)
        .env("HOME", home)
        .env("CODEX_HOME", home.join("codex-home"))
        .output()
        .unwrap()
        .into()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn hook_install_creates_the_settings_and_their_folder_in_a_fresh_home() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("logs/reasons.jsonl");
    for (agent, file, event) in [
        ("claude-code", ".claude/settings.json", "PreToolUse"),
        ("codex", "codex-home/hooks.json", "PreToolUse"),
        ("gemini-cli", ".gemini/settings.json", "BeforeTool"),
    ] {
        let out = install(&["install", agent, "--reasons-log", arg(&log)], home.path());
        assert_eq!(out.code, 0, "{}", out.stderr);
        let path = home.path().join(file);
        assert!(
            out.stdout.contains(&path.display().to_string()),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains(&format!("reasons hook uninstall {agent}")),
            "{}",
            out.stdout
        );
        let settings = read_json(&path);
        let groups = settings["hooks"][event].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{settings}");
        assert_eq!(
            groups[0]["hooks"][0]["command"],
            format!(
                "{} hook {agent} --reasons-log {}",
                installed_binary().display(),
                log.display()
            )
        );
    }
    let codex = install(&["install", "codex"], home.path());
    assert!(
        codex.stdout.contains("--dangerously-bypass-hook-trust"),
        "{}",
        codex.stdout
    );
}

#[test]
fn hook_install_takes_every_name_run_takes_and_is_refused_for_an_agent_without_a_hook() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".claude/settings.json");
    let out = install(&["install", "claude"], home.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let settings = read_json(&path);
    assert_eq!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        format!("{} hook claude-code", installed_binary().display())
    );
    // The two names are one agent: installing by the other changes nothing.
    let text = fs::read(&path).unwrap();
    let again = install(&["install", "claude-code"], home.path());
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(fs::read(&path).unwrap(), text);
    let out = install(&["uninstall", "claude"], home.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(read_json(&path), json!({}));

    // An agent reasons knows but has no hook for: what shows its reasons instead.
    for (agent, said) in [
        (
            "cursor",
            "error: Cursor has no hook `reasons hook` installs; `reasons watch` beside it shows \
             the reasons",
        ),
        (
            "openclaw",
            "error: OpenClaw has no hook `reasons hook` installs; `reasons run openclaw --watch` \
             (or `reasons watch` beside it) shows the reasons",
        ),
        (
            "pi",
            "error: Pi's hook is wired by `reasons run pi` for its run only: there is nothing to \
             install",
        ),
    ] {
        for command in ["install", "uninstall"] {
            let refused = install(&[command, agent], home.path());
            assert_eq!(refused.code, 2, "{}", refused.stderr);
            assert_eq!(
                refused.stderr.lines().next(),
                Some(said),
                "{}",
                refused.stderr
            );
        }
    }
    // A name it does not know: the names it does.
    let refused = install(&["install", "nosuch"], home.path());
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("invalid value 'nosuch'")
            && refused.stderr.contains("claude")
            && refused.stderr.contains("copilot"),
        "{}",
        refused.stderr
    );
    assert!(!home.path().join(".openclaw").exists());
    assert!(!home.path().join(".pi").exists());
}

#[test]
fn hook_install_keeps_every_other_setting_and_twice_is_once_and_uninstall_undoes_it() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".claude/settings.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let before = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]
        },
        "zeta": 1
    });
    fs::write(&path, serde_json::to_string_pretty(&before).unwrap()).unwrap();
    let first = install(&["install", "claude-code"], home.path());
    assert_eq!(first.code, 0, "{}", first.stderr);
    let installed = read_json(&path);
    let ours = json!({"matcher": "*", "hooks": [{"type": "command",
        "command": format!("{} hook claude-code", installed_binary().display())}]});
    let mut expected = before.clone();
    expected["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(ours);
    assert_eq!(installed, expected);
    // Keys keep their order.
    let keys: Vec<&String> = installed.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "permissions", "hooks", "zeta"]);

    let text = fs::read(&path).unwrap();
    let again = install(&["install", "claude-code"], home.path());
    assert_eq!(again.code, 0);
    assert!(again.stdout.contains("already"), "{}", again.stdout);
    assert_eq!(fs::read(&path).unwrap(), text, "twice is once");

    // Installing with another log replaces ours in place of adding a second.
    install(
        &["install", "claude-code", "--reasons-log", "/l.jsonl"],
        home.path(),
    );
    assert_eq!(
        read_json(&path)["hooks"]["PreToolUse"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let removed = install(&["uninstall", "claude-code"], home.path());
    assert_eq!(removed.code, 0, "{}", removed.stderr);
    assert_eq!(read_json(&path), before);
    let nothing = install(&["uninstall", "claude-code"], home.path());
    assert_eq!(nothing.code, 0);
    assert!(
        nothing.stdout.starts_with("No Claude Code hook"),
        "{}",
        nothing.stdout
    );
}

#[test]
fn hook_install_puts_the_reason_in_the_prompt_by_default_and_says_what_the_person_will_see() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".claude/settings.json");
    let command = |after: &str| format!("{} hook claude-code{after}", installed_binary().display());
    let prompt = install(&["install", "claude-code"], home.path());
    assert_eq!(prompt.code, 0, "{}", prompt.stderr);
    assert!(
        prompt.stdout.contains("inside its permission dialog")
            && prompt.stdout.contains("Yes or No only"),
        "{}",
        prompt.stdout
    );
    let hook = &read_json(&path)["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(hook["command"], command(""));

    let after = install(&["install", "claude-code", "--after"], home.path());
    assert_eq!(after.code, 0, "{}", after.stderr);
    assert!(after.stdout.starts_with("Replaced"), "{}", after.stdout);
    assert!(after.stdout.contains("beside the call"), "{}", after.stdout);
    let groups = &read_json(&path)["hooks"]["PreToolUse"];
    assert_eq!(groups.as_array().unwrap().len(), 1, "{groups}");
    assert_eq!(groups[0]["hooks"][0]["command"], command(" --after"));

    let gemini = install(&["install", "gemini-cli"], home.path());
    assert!(
        gemini.stdout.contains("right above its confirmation box"),
        "{}",
        gemini.stdout
    );
}

#[test]
fn hook_install_writes_copilot_cli_s_user_hooks_file_merged_and_uninstall_undoes_it() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".copilot/hooks/reasons.json");
    let out = install(&["install", "copilot-cli"], home.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(&path.display().to_string()),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("Hook permission request"),
        "{}",
        out.stdout
    );
    let ours = json!({"type": "command",
        "bash": format!("{} hook copilot-cli", installed_binary().display())});
    assert_eq!(
        read_json(&path),
        json!({"version": 1, "hooks": {"preToolUse": [ours.clone()]}})
    );
    let text = fs::read(&path).unwrap();
    let again = install(&["install", "copilot-cli"], home.path());
    assert!(again.stdout.contains("already"), "{}", again.stdout);
    assert_eq!(fs::read(&path).unwrap(), text, "twice is once");

    // Another handler the person added there stays, in its place.
    let theirs = json!({"type": "command", "bash": "./audit.sh", "timeoutSec": 5});
    let before = json!({"version": 1, "hooks": {"preToolUse": [theirs.clone()],
        "sessionStart": [{"type": "command", "bash": "./hello.sh"}]}});
    fs::write(&path, before.to_string()).unwrap();
    install(&["install", "copilot-cli"], home.path());
    let merged = read_json(&path);
    assert_eq!(merged["hooks"]["preToolUse"], json!([theirs, ours]));
    assert_eq!(
        merged["hooks"]["sessionStart"],
        before["hooks"]["sessionStart"]
    );
    let removed = install(&["uninstall", "copilot-cli"], home.path());
    assert_eq!(removed.code, 0, "{}", removed.stderr);
    assert_eq!(read_json(&path), before);

    let copilot_home = home.path().join("elsewhere");
    let out = reasons()
        .args(["hook", "install", "copilot-cli"])
        .env("HOME", home.path())
        .env("COPILOT_HOME", &copilot_home)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(copilot_home.join("hooks/reasons.json").exists());

    fs::write(&path, "{\"version\": 1,").unwrap();
    let bad = install(&["install", "copilot-cli"], home.path());
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr
            .starts_with(&format!("reasons: {}:1: not valid JSON", path.display())),
        "{}",
        bad.stderr
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\"version\": 1,");
}

#[test]
fn hook_install_refuses_a_bad_settings_file_and_leaves_it_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let not_json = dir.path().join("settings.json");
    fs::write(&not_json, "{\"hooks\": {,}").unwrap();
    let out = install(
        &["install", "gemini-cli", "--file", arg(&not_json)],
        dir.path(),
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with(&format!(
            "reasons: {}:1: not valid JSON",
            not_json.display()
        )),
        "{}",
        out.stderr
    );
    assert_eq!(fs::read_to_string(&not_json).unwrap(), "{\"hooks\": {,}");

    let wrong_shape = dir.path().join("array.json");
    fs::write(&wrong_shape, "{\"hooks\": []}").unwrap();
    let out = install(
        &["install", "codex", "--file", arg(&wrong_shape)],
        dir.path(),
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("`hooks` is not an object"),
        "{}",
        out.stderr
    );
    assert_eq!(fs::read_to_string(&wrong_shape).unwrap(), "{\"hooks\": []}");

    let read_only = dir.path().join("read-only.json");
    fs::write(&read_only, "{\"a\": 1}").unwrap();
    let mut permissions = fs::metadata(&read_only).unwrap().permissions();
    permissions.set_readonly(true);
    fs::set_permissions(&read_only, permissions).unwrap();
    let out = install(&["install", "codex", "--file", arg(&read_only)], dir.path());
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains(&format!("{}: the file is read-only", read_only.display())),
        "{}",
        out.stderr
    );
    assert_eq!(fs::read_to_string(&read_only).unwrap(), "{\"a\": 1}");

    let nowhere = dir.path().join("missing/settings.json");
    let out = install(&["install", "codex", "--file", arg(&nowhere)], dir.path());
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("missing/settings.json: its folder"),
        "{}",
        out.stderr
    );
    assert!(!nowhere.parent().unwrap().exists());
}
