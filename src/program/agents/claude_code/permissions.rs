//! When Claude Code would ask the person before a `PreToolUse` call runs, as read from its own
//! code (2.1.328) and measured in a terminal:
//!
//! - **Attended and interactive**: Claude Code gives its hooks `CLAUDE_CODE_SESSION_ATTENDED`
//!   (`1` only when a person is at the session) and `CLAUDE_CODE_ENTRYPOINT` (`cli` for the
//!   terminal interface; `sdk-cli` for `claude -p`, `sdk-ts`/`sdk-py` for the SDKs; other values
//!   for IDEs, the desktop app, remote sessions, whose dialogs were not measured). In `-p` an ask
//!   is a denial.
//! - **Its permission mode** (`permission_mode` in the event): `default` asks for commands, edits
//!   and MCP tools; `acceptEdits` not for edits; `bypassPermissions`, `dontAsk` and `auto` show no
//!   dialog; `plan` runs its calls as `auto` does when auto mode is on (its code:
//!   `mode === "plan" && autoModeActive`), which a hook cannot see: no ask.
//! - **Its tools**: `Read`, `Glob`, `Grep` and every other tool but `Bash`, the edit tools and MCP
//!   tools run without a dialog in the working folders; `Bash` runs its read-only commands without
//!   one (and in `acceptEdits` the file commands `mkdir`, `touch`, `rm`, `rmdir`, `mv`, `cp`,
//!   `sed`).
//! - **Its rules** (`permissions.allow`, `deny`, `ask` in the managed, user, project and local
//!   settings, `--settings`, `--allowedTools`, `--disallowedTools`): a call a deny rule may match
//!   is refused without a dialog, a call an ask rule matches is asked for, a call an allow rule may
//!   match runs without one. Its sandbox runs commands without asking.
//! - **Other hooks**: Claude Code merges the decisions of every `PreToolUse` hook that matches a
//!   call, and an ask outranks an allow: another hook of the person's whose matcher may match the
//!   tool (in the same settings files) may be there to allow the call, and what it answers cannot
//!   be known, so no ask.
//!
//! Where a rule cannot be read (the agent's process not found, a settings file that is not JSON),
//! the answer is no ask.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::AGENT;
use crate::program::agents::asks::{shell, Surroundings};
use crate::program::agents::hook_settings::{hook_handlers, is_our_hook};
use crate::program::json_settings::{json_files, read_json};

/// Whether Claude Code would show the person its dialog for this `PreToolUse` event.
pub fn would_ask(event: &Value, around: &Surroundings) -> bool {
    attended(around) && would_ask_in_session(event, around).unwrap_or(false)
}

/// Whether a person is at this interactive terminal session.
pub(super) fn attended(around: &Surroundings) -> bool {
    around.var("CLAUDE_CODE_SESSION_ATTENDED") == Some("1")
        && around.var("CLAUDE_CODE_ENTRYPOINT") == Some("cli")
        && !around.in_ci()
        && around.agent_on_terminal
        && !around.has_flag(&["-p", "--print", "--permission-prompt-tool"])
}

/// The answer for an attended session; `None` where it cannot be told.
pub(super) fn would_ask_in_session(event: &Value, around: &Surroundings) -> Option<bool> {
    let mode = event.get("permission_mode")?.as_str()?;
    // The modes that show a dialog; in the others not even an ask rule shows one.
    if !matches!(mode, "default" | "acceptEdits") {
        return Some(false);
    }
    let tool = event.get("tool_name")?.as_str()?;
    let input = event.get("tool_input")?;
    let call = Call {
        tool,
        command: input.get("command").and_then(Value::as_str),
    };
    let accept_edits = mode == "acceptEdits";
    let asks_by_mode = match Tool::of(tool) {
        Tool::Bash => {
            let file_commands: &[&str] = if accept_edits {
                ACCEPT_EDITS_PROGRAMS
            } else {
                &[]
            };
            !shell::only_reads(call.command?, file_commands)
        }
        Tool::Edit => !accept_edits,
        Tool::Mcp => true,
        Tool::Other => false,
    };
    let rules = Rules::read(event, around)?;
    if rules.another_hook {
        return Some(false);
    }
    if rules.sandboxed && Tool::of(tool) == Tool::Bash {
        return Some(false);
    }
    if rules.deny.iter().any(|rule| rule.may_match(&call)) {
        return Some(false);
    }
    if rules.ask.iter().any(|rule| rule.surely_matches(&call)) {
        return Some(true);
    }
    if rules.allow.iter().any(|rule| rule.may_match(&call)) {
        return Some(false);
    }
    Some(asks_by_mode)
}

/// The kinds of tool the permission rules treat alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tool {
    Bash,
    /// The tools that change files: their rules are written as `Edit(…)` or by the tool's name.
    Edit,
    /// A tool of an MCP server, `mcp__SERVER__TOOL`.
    Mcp,
    Other,
}

impl Tool {
    fn of(name: &str) -> Tool {
        match name {
            "Bash" => Tool::Bash,
            "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => Tool::Edit,
            name if name.starts_with("mcp__") => Tool::Mcp,
            _ => Tool::Other,
        }
    }
}

/// What the rules look at in a call.
pub(super) struct Call<'a> {
    tool: &'a str,
    command: Option<&'a str>,
}

/// The file commands `acceptEdits` runs without asking.
pub(super) const ACCEPT_EDITS_PROGRAMS: &[&str] =
    &["cp", "mkdir", "mv", "rm", "rmdir", "sed", "touch"];

/// A permission rule, `Tool` or `Tool(content)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rule {
    tool: String,
    content: Option<String>,
}

impl Rule {
    fn parse(text: &str) -> Option<Rule> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        match text.split_once('(') {
            Some((tool, rest)) => {
                let content = rest.strip_suffix(')')?;
                let content = content.replace("\\(", "(").replace("\\)", ")");
                Some(Rule {
                    tool: tool.trim().to_owned(),
                    // `Bash()` and `Bash(*)` are the whole tool.
                    content: Some(content).filter(|content| !matches!(content.trim(), "" | "*")),
                })
            }
            None => Some(Rule {
                tool: text.to_owned(),
                content: None,
            }),
        }
    }

    /// Whether the rule names the call's tool: by its name, the edit tools by any edit tool's
    /// name, an MCP tool by its server (`mcp__server`, `mcp__server__*`).
    fn names_tool(&self, tool: &str) -> bool {
        if self.tool == tool {
            return true;
        }
        match Tool::of(tool) {
            Tool::Edit => Tool::of(&self.tool) == Tool::Edit,
            Tool::Mcp => {
                let server = self.tool.strip_suffix("__*").unwrap_or(&self.tool);
                server.matches("__").count() == 1
                    && tool
                        .strip_prefix(server)
                        .is_some_and(|rest| rest.starts_with("__"))
            }
            _ => false,
        }
    }

    /// Whether the rule may match the call: true unless it certainly does not (a command rule
    /// whose fixed start no command of the line begins with; a path or domain rule of another
    /// tool's).
    fn may_match(&self, call: &Call) -> bool {
        if !self.names_tool(call.tool) {
            return false;
        }
        let (Some(content), Some(command)) = (&self.content, call.command) else {
            return true;
        };
        let start = fixed_start(content);
        start.is_empty()
            || command.trim_start().starts_with(start)
            || shell::commands(command)
                .iter()
                .any(|words| words.join(" ").starts_with(start))
    }

    /// Whether the rule certainly matches the call: the whole tool, the exact command, or a
    /// prefix rule (`cmd:*`, `cmd *`) the whole line begins with.
    fn surely_matches(&self, call: &Call) -> bool {
        if !self.names_tool(call.tool) {
            return false;
        }
        let Some(content) = &self.content else {
            return true;
        };
        let Some(command) = call.command.map(str::trim) else {
            return false;
        };
        match content
            .strip_suffix(":*")
            .or_else(|| content.strip_suffix(" *"))
        {
            Some(prefix) if !prefix.contains('*') => {
                command == prefix || command.starts_with(&format!("{prefix} "))
            }
            Some(_) => false,
            None => !content.contains('*') && command == content,
        }
    }
}

/// A command rule's text before its first wildcard (`npm run test:*` → `npm run test`).
pub(super) fn fixed_start(content: &str) -> &str {
    let start = content.split('*').next().unwrap_or_default();
    start.strip_suffix(':').unwrap_or(start).trim()
}

/// The permission rules in force, from every place Claude Code reads them.
#[derive(Debug, Default)]
pub(super) struct Rules {
    allow: Vec<Rule>,
    deny: Vec<Rule>,
    ask: Vec<Rule>,
    /// The sandbox is on: Claude Code runs commands in it without asking.
    sandboxed: bool,
    /// A `PreToolUse` hook other than ours may answer for the call.
    another_hook: bool,
}

impl Rules {
    /// The rules, or `None` when one of their sources cannot be read (or the agent's command
    /// line, which may add some, was not found).
    fn read(event: &Value, around: &Surroundings) -> Option<Rules> {
        around.agent_command_line.as_ref()?;
        let tool = event.get("tool_name")?.as_str()?;
        let mut rules = Rules::default();
        for path in settings_files(event, around) {
            if let Some(settings) = read_json(&path).ok()? {
                rules.add_settings(&settings, tool);
            }
        }
        for value in around.option_values(&["--settings"], false) {
            let settings = if value.trim_start().starts_with('{') {
                serde_json::from_str(&value).ok()?
            } else {
                read_json(Path::new(&value)).ok()??
            };
            rules.add_settings(&settings, tool);
        }
        let listed = |names: &[&str]| {
            around
                .option_values(names, true)
                .iter()
                .flat_map(|value| split_rule_list(value))
                .filter_map(|rule| Rule::parse(&rule))
                .collect::<Vec<_>>()
        };
        rules
            .allow
            .extend(listed(&["--allowedTools", "--allowed-tools"]));
        rules
            .deny
            .extend(listed(&["--disallowedTools", "--disallowed-tools"]));
        // A project's tools allowed in `~/.claude.json` (the older place for them).
        let config = match around.var("CLAUDE_CONFIG_DIR") {
            Some(dir) => Path::new(dir).join(".claude.json"),
            None => around.home()?.join(".claude.json"),
        };
        if let Some(config) = read_json(&config).ok()? {
            for dir in project_dirs(event, around) {
                let key = dir.to_string_lossy();
                let allowed = config["projects"][key.as_ref()]["allowedTools"].as_array();
                let allowed = allowed.into_iter().flatten().filter_map(Value::as_str);
                rules.allow.extend(allowed.filter_map(Rule::parse));
            }
        }
        Some(rules)
    }

    fn add_settings(&mut self, settings: &Value, tool: &str) {
        let permissions = &settings["permissions"];
        for (key, list) in [
            ("allow", &mut self.allow),
            ("deny", &mut self.deny),
            ("ask", &mut self.ask),
        ] {
            let texts = permissions[key].as_array().into_iter().flatten();
            list.extend(texts.filter_map(Value::as_str).filter_map(Rule::parse));
        }
        self.sandboxed |= settings["sandbox"]["enabled"] == Value::Bool(true);
        self.another_hook |= another_hook(settings, tool);
    }
}

/// Whether the settings hold a `PreToolUse` hook other than ours whose matcher may match the
/// tool; hooks that cannot be read count as one.
pub(super) fn another_hook(settings: &Value, tool: &str) -> bool {
    let Some(entries) = settings["hooks"].get("PreToolUse") else {
        return false;
    };
    let Ok(handlers) = hook_handlers(entries) else {
        return true;
    };
    handlers
        .into_iter()
        .any(|(matcher, handler)| !is_our_hook(handler, AGENT.name()) && may_match(matcher, tool))
}

/// Whether a hook's matcher may match the tool: none, `""` and `*` match every tool, names
/// joined by `|` (letters, digits, `_`) match those names exactly, and anything else is a
/// regular expression, which may.
pub(super) fn may_match(matcher: Option<&Value>, tool: &str) -> bool {
    let Some(matcher) = matcher.and_then(Value::as_str) else {
        return true;
    };
    let names_only = matcher
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'|');
    if matcher.is_empty() || !names_only {
        return true;
    }
    matcher.split('|').any(|name| name == tool)
}

/// The settings files Claude Code reads rules from: managed (`managed-settings.json` and the
/// drop-in folder `managed-settings.d/*.json`), user, and each project's shared and local ones.
pub(super) fn settings_files(event: &Value, around: &Surroundings) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(etc) = &around.etc {
        let managed = etc.join("claude-code");
        files.push(managed.join("managed-settings.json"));
        files.extend(json_files(&managed.join("managed-settings.d")));
    }
    let home = AGENT
        .home
        .folder_with(|name| around.var(name).map(OsString::from));
    files.extend(home.map(|home| home.join("settings.json")));
    for dir in project_dirs(event, around) {
        files.push(dir.join(".claude/settings.json"));
        files.push(dir.join(".claude/settings.local.json"));
    }
    files
}

/// The project's folder (where Claude Code was started) and the event's working folder.
pub(super) fn project_dirs(event: &Value, around: &Surroundings) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = around
        .var("CLAUDE_PROJECT_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    if let Some(cwd) = event.get("cwd").and_then(Value::as_str) {
        let cwd = PathBuf::from(cwd);
        if !dirs.contains(&cwd) {
            dirs.push(cwd);
        }
    }
    dirs
}

/// The rules of one `--allowedTools` value: separated by commas or spaces outside parentheses.
pub(super) fn split_rule_list(value: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' | ' ' if depth == 0 => rules.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    rules.push(current);
    rules.retain(|rule| !rule.trim().is_empty());
    rules
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::is_claude_code;
    use super::*;

    /// An attended terminal session of `claude` in `dir`, its HOME `dir/home`.
    fn attended_in(dir: &Path, line: &[&str]) -> Surroundings {
        let env = [
            ("CLAUDE_CODE_SESSION_ATTENDED", "1"),
            ("CLAUDE_CODE_ENTRYPOINT", "cli"),
            ("HOME", &dir.join("home").to_string_lossy()),
            ("CLAUDE_PROJECT_DIR", &dir.join("work").to_string_lossy()),
        ]
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
        Surroundings {
            env,
            agent_command_line: Some(line.iter().map(|word| word.to_string()).collect()),
            agent_on_terminal: true,
            etc: Some(dir.join("etc")),
        }
    }

    fn event(dir: &Path, mode: &str, tool: &str, input: Value) -> Value {
        json!({"session_id": "s", "transcript_path": "/t", "cwd": dir.join("work"),
            "permission_mode": mode, "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": input, "tool_use_id": "toolu_1"})
    }

    fn bash(dir: &Path, mode: &str, command: &str) -> Value {
        event(dir, mode, "Bash", json!({"command": command}))
    }

    fn write(path: &Path, value: Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, value.to_string()).unwrap();
    }

    #[test]
    fn a_command_in_default_mode_is_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        assert!(would_ask(
            &bash(dir.path(), "default", "rm -rf build && mkdir build"),
            &around
        ));
    }

    #[test]
    fn only_an_attended_interactive_terminal_session_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let call = bash(dir.path(), "default", "cargo test");
        let attended = attended_in(dir.path(), &["claude"]);
        assert!(would_ask(&call, &attended));
        let changed = |change: &dyn Fn(&mut Surroundings)| {
            let mut around = attended.clone();
            change(&mut around);
            would_ask(&call, &around)
        };
        // `claude -p` and the SDKs: not attended, their entry point says so.
        assert!(!changed(&|around| {
            around
                .env
                .insert("CLAUDE_CODE_SESSION_ATTENDED".into(), "0".into());
        }));
        assert!(!changed(&|around| {
            around.env.remove("CLAUDE_CODE_SESSION_ATTENDED");
        }));
        for entrypoint in ["sdk-cli", "sdk-ts", "sdk-py", "claude-vscode", "remote"] {
            assert!(!changed(&|around| {
                around
                    .env
                    .insert("CLAUDE_CODE_ENTRYPOINT".into(), entrypoint.into());
            }));
        }
        assert!(!changed(&|around| {
            around.env.insert("CI".into(), "true".into());
        }));
        assert!(!changed(&|around| around.agent_on_terminal = false));
        assert!(!changed(&|around| around.agent_command_line = None));
        for flag in ["-p", "--print", "--permission-prompt-tool=mcp__x__y"] {
            assert!(!changed(&|around| {
                around.agent_command_line = Some(vec!["claude".into(), flag.into()]);
            }));
        }
    }

    #[test]
    fn modes_without_a_dialog_are_never_asked() {
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        for mode in [
            "bypassPermissions",
            "dontAsk",
            "auto",
            "plan",
            "unknownMode",
        ] {
            assert!(
                !would_ask(&bash(dir.path(), mode, "cargo test"), &around),
                "{mode}"
            );
            let edit = event(dir.path(), mode, "Edit", json!({"file_path": "/w/a"}));
            assert!(!would_ask(&edit, &around), "{mode}");
        }
        let mut no_mode = bash(dir.path(), "default", "cargo test");
        no_mode.as_object_mut().unwrap().remove("permission_mode");
        assert!(!would_ask(&no_mode, &around));
    }

    #[test]
    fn reads_and_other_tools_are_never_asked() {
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        for (tool, input) in [
            ("Read", json!({"file_path": "/w/a.rs"})),
            ("Glob", json!({"pattern": "**/*.rs"})),
            ("Grep", json!({"pattern": "fn"})),
            ("TodoWrite", json!({"todos": []})),
            ("WebFetch", json!({"url": "https://example.com"})),
        ] {
            for mode in ["default", "plan", "acceptEdits"] {
                assert!(!would_ask(
                    &event(dir.path(), mode, tool, input.clone()),
                    &around
                ));
            }
        }
    }

    #[test]
    fn read_only_commands_are_not_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        for command in [
            "ls -la",
            "cat a.txt | grep x | wc -l",
            "git status && git log --oneline -5",
            "LANG=C sort a | uniq",
            "gh pr view 12",
            "cd src; pwd",
            "/bin/echo hi",
        ] {
            assert!(
                !would_ask(&bash(dir.path(), "default", command), &around),
                "{command}"
            );
        }
        for command in [
            "git push",
            "ls && rm x",
            "npm install",
            "gh pr merge 1",
            "docker run x",
        ] {
            assert!(
                would_ask(&bash(dir.path(), "default", command), &around),
                "{command}"
            );
        }
    }

    #[test]
    fn accept_edits_runs_edits_and_file_commands_without_asking() {
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        for tool in ["Edit", "Write", "MultiEdit", "NotebookEdit"] {
            let call = |mode| event(dir.path(), mode, tool, json!({"file_path": "/w/a"}));
            assert!(would_ask(&call("default"), &around), "{tool}");
            assert!(!would_ask(&call("acceptEdits"), &around), "{tool}");
        }
        let files = "rm -rf build && mkdir build";
        assert!(!would_ask(&bash(dir.path(), "acceptEdits", files), &around));
        assert!(would_ask(
            &bash(dir.path(), "acceptEdits", "cargo build"),
            &around
        ));
    }

    #[test]
    fn mcp_tools_are_asked_for_unless_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        let call = event(
            dir.path(),
            "default",
            "mcp__everything__echo",
            json!({"message": "hi"}),
        );
        assert!(would_ask(&call, &around));
        for allowed in [
            "mcp__everything",
            "mcp__everything__*",
            "mcp__everything__echo",
        ] {
            let around = attended_in(dir.path(), &["claude", "--allowedTools", allowed]);
            assert!(!would_ask(&call, &around), "{allowed}");
        }
        for other in ["mcp__every", "mcp__everything__add", "mcp__other"] {
            let around = attended_in(dir.path(), &["claude", "--allowedTools", other]);
            assert!(would_ask(&call, &around), "{other}");
        }
    }

    #[test]
    fn an_allow_rule_in_any_settings_file_runs_the_call_without_asking() {
        let command = "npm run test -- --watch";
        let home_settings = |dir: &Path| dir.join("home/.claude/settings.json");
        let project = |dir: &Path| dir.join("work/.claude/settings.json");
        let local = |dir: &Path| dir.join("work/.claude/settings.local.json");
        for file in [home_settings, project, local] {
            for rule in ["Bash", "Bash(npm run test:*)", "Bash(npm run *)", "Bash(*)"] {
                let dir = tempfile::tempdir().unwrap();
                let around = attended_in(dir.path(), &["claude"]);
                assert!(would_ask(&bash(dir.path(), "default", command), &around));
                write(&file(dir.path()), json!({"permissions": {"allow": [rule]}}));
                assert!(
                    !would_ask(&bash(dir.path(), "default", command), &around),
                    "{rule}"
                );
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        write(
            &project(dir.path()),
            json!({"permissions": {"allow": ["Bash(cargo:*)", "Read"]}}),
        );
        assert!(would_ask(&bash(dir.path(), "default", command), &around));
        write(
            &project(dir.path()),
            json!({"permissions": {"allow": ["Edit(src/**)"]}}),
        );
        let write_call = event(dir.path(), "default", "Write", json!({"file_path": "/w/a"}));
        assert!(!would_ask(&write_call, &around));
    }

    #[test]
    fn an_allow_rule_for_one_command_of_a_line_leaves_it_to_claude_code() {
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude", "--allowedTools", "Bash(mkdir:*)"]);
        assert!(!would_ask(
            &bash(dir.path(), "default", "rm -rf b && mkdir b"),
            &around
        ));
    }

    #[test]
    fn the_command_line_s_rules_and_settings_count() {
        let dir = tempfile::tempdir().unwrap();
        let call = bash(dir.path(), "default", "cargo test");
        for line in [
            &["claude", "--allowedTools", "Read,Bash(cargo test:*)"][..],
            &["claude", "--allowed-tools", "Read", "Bash(cargo *)"],
            &[
                "claude",
                "--settings",
                r#"{"permissions": {"allow": ["Bash"]}}"#,
            ],
            &["claude", "--disallowedTools", "Bash(cargo:*)"],
        ] {
            assert!(
                !would_ask(&call, &attended_in(dir.path(), line)),
                "{line:?}"
            );
        }
        let settings = dir.path().join("run-settings.json");
        write(
            &settings,
            json!({"permissions": {"allow": ["Bash(cargo test)"]}}),
        );
        let around = attended_in(
            dir.path(),
            &["claude", "--settings", &settings.to_string_lossy()],
        );
        assert!(!would_ask(&call, &around));
        let missing = attended_in(dir.path(), &["claude", "--settings", "/nowhere.json"]);
        assert!(!would_ask(&call, &missing));
    }

    #[test]
    fn the_machine_s_managed_settings_count_their_drop_ins_too() {
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        let call = bash(dir.path(), "default", "make all");
        assert!(would_ask(&call, &around));
        write(
            &dir.path()
                .join("etc/claude-code/managed-settings.d/50-build.json"),
            json!({"permissions": {"allow": ["Bash(make:*)"]}}),
        );
        assert!(!would_ask(&call, &around));
        std::fs::remove_dir_all(dir.path().join("etc")).unwrap();
        write(
            &dir.path().join("etc/claude-code/managed-settings.json"),
            json!({"permissions": {"deny": ["Bash(make:*)"]}}),
        );
        assert!(!would_ask(&call, &around));
    }

    #[test]
    fn a_deny_rule_refuses_without_a_dialog() {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join("home/.claude/settings.json"),
            json!({"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Bash"]}}),
        );
        let around = attended_in(dir.path(), &["claude"]);
        assert!(!would_ask(
            &bash(dir.path(), "default", "ls && rm -rf /"),
            &around
        ));
        assert!(would_ask(&bash(dir.path(), "default", "ls"), &around));
    }

    #[test]
    fn an_ask_rule_asks_even_for_a_read_only_command_or_an_allowed_one() {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join("work/.claude/settings.json"),
            json!({"permissions": {"ask": ["Bash(git log:*)"], "allow": ["Bash(git:*)"]}}),
        );
        let around = attended_in(dir.path(), &["claude"]);
        assert!(would_ask(
            &bash(dir.path(), "default", "git log -3"),
            &around
        ));
        assert!(!would_ask(
            &bash(dir.path(), "default", "git push"),
            &around
        ));
        // Still never where no dialog is shown.
        assert!(!would_ask(&bash(dir.path(), "auto", "git log -3"), &around));
    }

    #[test]
    fn a_project_s_allowed_tools_in_the_claude_json_count() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        write(
            &dir.path().join("home/.claude.json"),
            json!({"projects": {work.to_string_lossy(): {"allowedTools": ["Bash(make:*)"]}}}),
        );
        let around = attended_in(dir.path(), &["claude"]);
        assert!(!would_ask(
            &bash(dir.path(), "default", "make all"),
            &around
        ));
        assert!(would_ask(
            &bash(dir.path(), "default", "cargo test"),
            &around
        ));
    }

    #[test]
    fn the_sandbox_runs_commands_without_asking() {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join("home/.claude/settings.json"),
            json!({"sandbox": {"enabled": true}}),
        );
        let around = attended_in(dir.path(), &["claude"]);
        assert!(!would_ask(
            &bash(dir.path(), "default", "cargo test"),
            &around
        ));
    }

    #[test]
    fn another_pre_tool_use_hook_that_may_match_the_tool_means_no_ask() {
        let dir = tempfile::tempdir().unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        let call = bash(dir.path(), "default", "make all");
        let hook = |matcher: Value, command: &str| {
            json!({"hooks": {"PreToolUse": [{"matcher": matcher,
                "hooks": [{"type": "command", "command": command}]}]}})
        };
        let ours = "/usr/local/bin/reasons hook claude-code --reasons-log /l";
        let project = dir.path().join("work/.claude/settings.json");
        // Ours, however it is spelled, and others' for other tools or events leave the ask.
        for settings in [
            hook(json!("*"), ours),
            hook(json!("Edit|Write"), "./format.sh"),
            hook(json!("mcp__github"), "./audit.sh"),
            json!({"hooks": {"PostToolUse": [{"matcher": "*",
                "hooks": [{"type": "command", "command": "./log.sh"}]}]}}),
        ] {
            write(&project, settings.clone());
            assert!(would_ask(&call, &around), "{settings}");
        }
        // Another hook that may answer for a Bash call, in any settings file: no ask.
        for (file, settings) in [
            (
                "work/.claude/settings.json",
                hook(json!("Bash"), "./allow-make.sh"),
            ),
            (
                "work/.claude/settings.local.json",
                hook(json!("Edit|Bash"), "./x.sh"),
            ),
            ("home/.claude/settings.json", hook(json!("*"), "./x.sh")),
            ("home/.claude/settings.json", hook(json!(""), "./x.sh")),
            ("home/.claude/settings.json", hook(json!("Ba.*"), "./x.sh")),
            (
                "etc/claude-code/managed-settings.json",
                hook(Value::Null, "./x.sh"),
            ),
            (
                "home/.claude/settings.json",
                json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "p"}]}]}}),
            ),
            (
                "home/.claude/settings.json",
                json!({"hooks": {"PreToolUse": "x"}}),
            ),
        ] {
            let path = dir.path().join(file);
            write(&path, settings.clone());
            assert!(!would_ask(&call, &around), "{file}: {settings}");
            std::fs::remove_file(&path).unwrap();
        }
        // With ours beside another in one group, the other still counts.
        write(
            &project,
            json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": ours},
                {"type": "command", "command": "./allow.sh"}]}]}}),
        );
        assert!(!would_ask(&call, &around));
        std::fs::remove_file(&project).unwrap();
        assert!(would_ask(&call, &around));
        // On the command line's --settings too.
        let inline = hook(json!("Bash"), "./allow.sh").to_string();
        let around = attended_in(dir.path(), &["claude", "--settings", &inline]);
        assert!(!would_ask(&call, &around));
    }

    #[test]
    fn settings_that_cannot_be_read_mean_no_ask() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("work/.claude/settings.local.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{ not json").unwrap();
        let around = attended_in(dir.path(), &["claude"]);
        assert!(!would_ask(
            &bash(dir.path(), "default", "cargo test"),
            &around
        ));
        std::fs::write(&path, "  \n").unwrap();
        assert!(would_ask(
            &bash(dir.path(), "default", "cargo test"),
            &around
        ));
    }

    #[test]
    fn rules_parse_as_claude_code_writes_them() {
        assert_eq!(
            Rule::parse("Bash(npm run test:*)"),
            Some(Rule {
                tool: "Bash".into(),
                content: Some("npm run test:*".into())
            })
        );
        assert_eq!(Rule::parse("Bash(*)").unwrap().content, None);
        assert_eq!(Rule::parse("Read").unwrap().content, None);
        assert_eq!(Rule::parse("Bash(broken"), None);
        assert_eq!(
            split_rule_list("Read,Bash(git log:*) Edit"),
            ["Read", "Bash(git log:*)", "Edit"]
        );
    }

    #[test]
    fn claude_code_is_recognised_by_its_command_line() {
        let line = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert!(is_claude_code(&line(&[
            "claude",
            "--permission-mode",
            "default"
        ])));
        assert!(is_claude_code(&line(&[
            "/x/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
        ])));
        assert!(is_claude_code(&line(&[
            "node",
            "/x/@anthropic-ai/claude-code/cli.js"
        ])));
        assert!(!is_claude_code(&line(&[
            "/bin/sh",
            "-c",
            "reasons hook claude-code"
        ])));
    }
}
