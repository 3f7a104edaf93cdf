//! What a call touched: the one place that reads a call's arguments for what it acts on.
//!
//! A person deciding about a call reads what it does first (a shell command, a file's path, an
//! edit's file, a search's pattern, an address) and the model's reason beside it. [`view`] is that
//! reading, for renderings that show more (the report shows an edit's old and new text);
//! [`summary`] is its one-line form, bounded in length, which `extract`'s table, the reasons log
//! and `watch` show. Both come from the same argument names, so no two views of one call can
//! disagree about what it touched.
//!
//! The view is read off the argument names agents use, not off tool names: Claude Code's `Edit`,
//! Gemini CLI's `replace`, OpenHands' `str_replace_editor` and Kimi's `StrReplaceFile` all carry an
//! old and a new text, under four spellings.
//!
//! ```
//! use reasons::touched::summary;
//! use serde_json::json;
//!
//! let bash = json!({"command": "cargo test", "reason": "Run the tests"});
//! assert_eq!(summary(&bash), "cargo test");
//! let edit = json!({"file_path": "src/a.rs", "old_string": "1", "new_string": "2"});
//! assert_eq!(summary(&edit), "src/a.rs");
//! assert_eq!(summary(&json!(r#"{"cmd":"ls -la"}"#)), "ls -la");
//! ```

use serde_json::{Map, Value};

use crate::call_arguments::{decode_arguments, Arguments};
use crate::reason_parameter::REASON_PARAM;
use crate::visible::{cut_to, visible};

/// How a call's arguments read, by what they act on.
#[derive(Debug, PartialEq)]
pub enum View<'a> {
    /// A shell command (an argv array joined with spaces), and where it runs when it says.
    Command {
        /// The command line.
        command: String,
        /// The folder it runs in, when the call names one.
        workdir: Option<&'a str>,
    },
    /// An edit of a file: each pair of old and new text.
    Edit {
        /// The file edited, when the call names it.
        path: Option<&'a str>,
        /// Each old text and the new text that replaces it.
        changes: Vec<(&'a str, &'a str)>,
    },
    /// A file written whole.
    Write {
        /// The file written, when the call names it.
        path: Option<&'a str>,
        /// What is written.
        content: &'a str,
    },
    /// A patch in text form (Codex `apply_patch`, a unified diff).
    Patch(&'a str),
    /// A search: its pattern, and where it looks.
    Search {
        /// What is looked for.
        pattern: String,
        /// Where, when the call says.
        scope: Option<&'a str>,
    },
    /// A file or folder the call acts on.
    Path(&'a str),
    /// An address the call fetches.
    Url(&'a str),
    /// Anything else: a one-line summary of its arguments.
    Summary(String),
    /// No arguments at all.
    Nothing,
}

/// `CommandLine` is Antigravity's.
const COMMAND_KEYS: [&str; 3] = ["command", "cmd", "CommandLine"];
/// `target_file` is Grok CLI's, `AbsolutePath` Antigravity's.
const PATH_KEYS: [&str; 11] = [
    "file_path",
    "filePath",
    "target_file",
    "AbsolutePath",
    "absolute_path",
    "notebook_path",
    "path",
    "dir_path",
    "file_name",
    "filename",
    "dir",
];
const SEARCH_KEYS: [&str; 6] = ["pattern", "query", "q", "regex", "glob", "queries"];
/// The spellings of an edit's old and new text.
const EDIT_PAIRS: [(&str, &str); 4] = [
    ("old_string", "new_string"),
    ("old_str", "new_str"),
    ("old", "new"),
    ("search", "replace"),
];
/// What an editor tool that takes a `command` (OpenHands' `str_replace_editor`) may be asked.
const EDITOR_COMMANDS: [&str; 5] = ["view", "create", "str_replace", "insert", "undo_edit"];

/// The view of a call with these arguments. Arguments that travel as a JSON string holding an
/// object are read as that object only when decoded first (as [`summary`] does): a view borrows
/// from the value it is given.
pub fn view(arguments: &Value) -> View<'_> {
    match arguments {
        Value::Object(map) => view_of_object(map),
        Value::String(text) if is_patch(text) => View::Patch(text),
        _ => match decode_arguments(arguments) {
            Arguments::Empty => View::Nothing,
            Arguments::Object(_) | Arguments::NotAnObject => View::Summary(cut(&listed(arguments))),
        },
    }
}

fn view_of_object(map: &Map<String, Value>) -> View<'_> {
    let text = |key: &str| map.get(key).and_then(Value::as_str);
    let first = |keys: &[&str]| keys.iter().find_map(|key| text(key));
    let path = first(&PATH_KEYS);
    for (old, new) in EDIT_PAIRS {
        if let (Some(old), Some(new)) = (text(old), text(new)) {
            return View::Edit {
                path,
                changes: vec![(old, new)],
            };
        }
    }
    if let Some(Value::Array(edits)) = map.get("edits") {
        let changes: Vec<(&str, &str)> = edits
            .iter()
            .filter_map(|edit| {
                let edit = edit.as_object()?;
                EDIT_PAIRS.iter().find_map(|(old, new)| {
                    Some((edit.get(*old)?.as_str()?, edit.get(*new)?.as_str()?))
                })
            })
            .collect();
        if !changes.is_empty() {
            return View::Edit { path, changes };
        }
    }
    if let Some(content) = text("content").or_else(|| text("file_text")) {
        return View::Write { path, content };
    }
    for key in ["patch", "input", "diff"] {
        if let Some(patch) = text(key).filter(|text| is_patch(text)) {
            return View::Patch(patch);
        }
    }
    let editor = text("command").is_some_and(|command| EDITOR_COMMANDS.contains(&command));
    if !editor {
        if let Some(command) = COMMAND_KEYS
            .iter()
            .find_map(|key| map.get(*key).and_then(shell_text))
        {
            let workdir = text("workdir").or_else(|| text("cwd"));
            return View::Command { command, workdir };
        }
    }
    if let Some(pattern) = SEARCH_KEYS
        .iter()
        .find_map(|key| map.get(*key).and_then(shell_text))
    {
        return View::Search {
            pattern,
            scope: path,
        };
    }
    if let Some(url) = text("url") {
        return View::Url(url);
    }
    if let Some(path) = path {
        return View::Path(path);
    }
    if map.keys().all(|key| key == REASON_PARAM) {
        return View::Nothing;
    }
    View::Summary(cut(&listed(&Value::Object(map.clone()))))
}

/// Argument names that say most about a call no other view reads, most telling first.
const TELLING_KEYS: [&str; 5] = ["prompt", "description", "code", "expression", "input"];

/// The longest summary, in columns, before the `…` of a cut one.
pub const SUMMARY_LIMIT: usize = 80;

/// What a call touched, in one line a person reads first: the command, the path (an edit's or a
/// write's file, the files of a patch), the pattern, the address, else its other arguments. At
/// most [`SUMMARY_LIMIT`] characters and `…` where something was left out; control characters
/// and bidirectional overrides are shown as visible marks ([`visible`]), so the line can be put
/// on any terminal.
pub fn summary(arguments: &Value) -> String {
    let decoded;
    let arguments = match decode_arguments(arguments) {
        Arguments::Object(map) if !arguments.is_object() => {
            decoded = Value::Object(map.into_owned());
            &decoded
        }
        _ => arguments,
    };
    let text = match view(arguments) {
        View::Command { command, .. } => command,
        View::Edit { path, changes } => path
            .or_else(|| changes.first().map(|(old, _)| *old))
            .unwrap_or_default()
            .to_owned(),
        View::Write { path, content } => path.unwrap_or(content).to_owned(),
        View::Patch(patch) => patched_files(patch).unwrap_or_else(|| patch.to_owned()),
        View::Search { pattern, .. } => pattern,
        View::Path(text) | View::Url(text) => text.to_owned(),
        View::Summary(text) => text,
        View::Nothing => String::new(),
    };
    visible(&cut(&text)).into_owned()
}

/// The files a patch names (Codex's `*** Update File:`, a unified diff's `+++ b/…`), joined with
/// spaces; `None` when it names none.
fn patched_files(patch: &str) -> Option<String> {
    let files: Vec<&str> = patch
        .lines()
        .filter_map(|line| {
            [
                "*** Update File: ",
                "*** Add File: ",
                "*** Delete File: ",
                "+++ b/",
                "+++ ",
            ]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix))
        })
        .map(str::trim)
        .filter(|file| !file.is_empty() && *file != "/dev/null")
        .collect();
    (!files.is_empty()).then(|| files.join(" "))
}

/// Arguments no view reads: the most telling of them, else every one as `key=value`, without the
/// reason; free text as it is.
fn listed(arguments: &Value) -> String {
    match decode_arguments(arguments) {
        Arguments::Object(map) => TELLING_KEYS
            .iter()
            .find_map(|key| map.get(*key).and_then(plain_text))
            .unwrap_or_else(|| {
                map.iter()
                    .filter(|(key, _)| key.as_str() != REASON_PARAM)
                    .map(|(key, value)| format!("{key}={}", plain_text(value).unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
        Arguments::Empty => String::new(),
        Arguments::NotAnObject => plain_text(arguments).unwrap_or_default(),
    }
}

/// A value as text a person reads: strings as they are, argv arrays joined with spaces.
fn plain_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Array(items) if items.iter().all(Value::is_string) => Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The first line, at most [`SUMMARY_LIMIT`] columns before the `…` that says something was
/// left out (a later line, or the rest of a long one).
fn cut(text: &str) -> String {
    let text = text.trim();
    let first_line = text.lines().next().unwrap_or("");
    if first_line.len() < text.len() {
        cut_to(&format!("{first_line}…"), SUMMARY_LIMIT + 1)
    } else {
        cut_to(first_line, SUMMARY_LIMIT + 1)
    }
}

/// A string, or an array of strings joined with spaces (an argv, a list of queries).
fn shell_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_string) => Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

/// Whether a text is a patch: Codex's `*** Begin Patch` envelope or a unified diff.
fn is_patch(text: &str) -> bool {
    let start = text.trim_start();
    start.starts_with("*** Begin Patch")
        || start.starts_with("--- ")
        || start.starts_with("diff --git")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_shell_call_shows_its_command_and_an_argv_is_joined() {
        let arguments = json!({"command": ["rg", "-n", "x"], "workdir": "/w", "reason": "r"});
        assert_eq!(
            view(&arguments),
            View::Command {
                command: "rg -n x".into(),
                workdir: Some("/w")
            }
        );
    }

    #[test]
    fn every_spelling_of_an_edit_shows_old_and_new() {
        for (old, new) in EDIT_PAIRS {
            let arguments = json!({"path": "a.rs", old: "1", new: "2"});
            assert_eq!(
                view(&arguments),
                View::Edit {
                    path: Some("a.rs"),
                    changes: vec![("1", "2")]
                },
                "{old}/{new}"
            );
        }
        let multi = json!({"file_path": "b", "edits": [{"old_string": "a", "new_string": "b"}]});
        assert!(matches!(view(&multi), View::Edit { changes, .. } if changes == [("a", "b")]));
    }

    #[test]
    fn an_editor_command_is_not_a_shell_command() {
        let arguments = json!({"command": "create", "path": "/w/a.py", "file_text": "x = 1\n"});
        assert_eq!(
            view(&arguments),
            View::Write {
                path: Some("/w/a.py"),
                content: "x = 1\n"
            }
        );
        let viewed = json!({"command": "view", "path": "/w/a.py"});
        assert_eq!(view(&viewed), View::Path("/w/a.py"));
    }

    #[test]
    fn a_search_shows_its_pattern_and_scope_and_a_file_tool_its_path() {
        assert_eq!(
            view(&json!({"pattern": "fn total", "path": "src"})),
            View::Search {
                pattern: "fn total".into(),
                scope: Some("src")
            }
        );
        assert_eq!(
            view(&json!({"file_path": "/a/b.rs", "limit": 4})),
            View::Path("/a/b.rs")
        );
        assert_eq!(view(&json!({"url": "https://x"})), View::Url("https://x"));
    }

    #[test]
    fn a_patch_in_free_text_is_a_patch() {
        let patch = "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch\n";
        assert_eq!(view(&json!(patch)), View::Patch(patch));
    }

    #[test]
    fn other_arguments_are_summarised_and_none_is_nothing() {
        assert_eq!(
            view(&json!({"id": 342, "reason": "dup"})),
            View::Summary("id=342".into())
        );
        assert_eq!(view(&json!({"reason": "r"})), View::Nothing);
        assert_eq!(view(&json!("")), View::Nothing);
        assert_eq!(view(&Value::Null), View::Nothing);
    }

    #[test]
    fn the_summary_of_a_shell_call_is_its_command() {
        assert_eq!(
            summary(&json!({"command": "ls -la", "reason": "look"})),
            "ls -la"
        );
        assert_eq!(
            summary(&json!({"command": ["bash", "-lc", "ls"]})),
            "bash -lc ls"
        );
    }

    #[test]
    fn the_summary_reads_arguments_in_a_json_string() {
        assert_eq!(summary(&json!(r#"{"path":"src/a.rs"}"#)), "src/a.rs");
        assert_eq!(
            summary(&json!(
                r#"{"file_path":"a.rs","old_string":"x","new_string":"y"}"#
            )),
            "a.rs"
        );
    }

    #[test]
    fn the_summary_of_an_edit_or_a_write_is_its_file_and_of_a_patch_its_files() {
        let edit = json!({"file_path": "/w/a.rs", "old_string": "1", "new_string": "2"});
        assert_eq!(summary(&edit), "/w/a.rs");
        assert_eq!(summary(&json!({"path": "b.md", "content": "# B"})), "b.md");
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n-x\n+y\n*** Add File: b.rs\n+z\n*** End Patch\n";
        assert_eq!(summary(&json!(patch)), "src/a.rs b.rs");
        assert_eq!(summary(&json!({"input": patch})), "src/a.rs b.rs");
        let diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(summary(&json!(diff)), "x.py");
    }

    #[test]
    fn the_summary_of_an_editor_view_is_its_path_not_the_editor_command() {
        assert_eq!(
            summary(&json!({"command": "view", "path": "/w/a.py"})),
            "/w/a.py"
        );
    }

    #[test]
    fn without_a_telling_key_the_arguments_are_listed_without_the_reason() {
        assert_eq!(
            summary(&json!({"a": 1, "b": "x", "reason": "r"})),
            "a=1 b=x"
        );
        assert_eq!(
            summary(&json!({"prompt": "Find the bug", "subagent_type": "x"})),
            "Find the bug"
        );
        assert_eq!(summary(&json!({"reason": "r"})), "");
        assert_eq!(summary(&Value::Null), "");
    }

    #[test]
    fn long_and_multi_line_text_is_cut() {
        assert_eq!(
            summary(&json!({"command": "echo one\necho two"})),
            "echo one…"
        );
        let long = "x".repeat(200);
        assert_eq!(
            summary(&json!({"path": long})).chars().count(),
            SUMMARY_LIMIT + 1
        );
    }

    #[test]
    fn a_summary_cannot_drive_the_terminal() {
        assert_eq!(
            summary(&json!({"command": "echo hi\u{1b}[2J\rrm -rf ~"})),
            "echo hi␛[2J␍rm -rf ~"
        );
        assert_eq!(
            summary(&json!({"path": "invoice\u{202e}fdp.exe"})),
            "invoice<U+202E>fdp.exe"
        );
    }

    #[test]
    fn free_text_arguments_are_shown_as_text() {
        assert_eq!(summary(&json!("just some text")), "just some text");
    }
}
