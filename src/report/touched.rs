//! What a call touched, the way a reviewer needs to see it: a shell command as the command, a
//! file tool as its path, an edit as its old and new text, a search as its pattern.
//!
//! The view is read off the argument names agents use, not off tool names: Claude Code's `Edit`,
//! Gemini CLI's `replace`, OpenHands' `str_replace_editor` and Kimi's `StrReplaceFile` all carry an
//! old and a new text, under four spellings.

use serde_json::{Map, Value};

use reasons::envelope::{decode_arguments, Arguments};
use reasons::layer::REASON_PARAM;

/// How a call's arguments are shown above its full arguments.
#[derive(Debug, PartialEq)]
pub enum View<'a> {
    /// A shell command (an argv array joined with spaces), and where it runs when it says.
    Command {
        command: String,
        workdir: Option<&'a str>,
    },
    /// An edit of a file: each pair of old and new text.
    Edit {
        path: Option<&'a str>,
        changes: Vec<(&'a str, &'a str)>,
    },
    /// A file written whole.
    Write {
        path: Option<&'a str>,
        content: &'a str,
    },
    /// A patch in text form (Codex `apply_patch`, a unified diff).
    Patch(&'a str),
    /// A search: its pattern, and where it looks.
    Search {
        pattern: String,
        scope: Option<&'a str>,
    },
    /// A file or folder the call acts on.
    Path(&'a str),
    /// An address the call fetches.
    Url(&'a str),
    /// Anything else: a one-line summary.
    Summary(String),
    /// No arguments at all.
    Nothing,
}

const COMMAND_KEYS: [&str; 2] = ["command", "cmd"];
const PATH_KEYS: [&str; 9] = [
    "file_path",
    "filePath",
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

/// The view of a call with these arguments (decoded already when they travelled as a JSON
/// string holding an object).
pub fn view(arguments: &Value) -> View<'_> {
    match arguments {
        Value::Object(map) => view_of_object(map),
        Value::String(text) if is_patch(text) => View::Patch(text),
        _ => match decode_arguments(arguments) {
            Arguments::Empty => View::Nothing,
            Arguments::Object(_) | Arguments::NotAnObject => {
                View::Summary(crate::output::touched(arguments))
            }
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
    View::Summary(crate::output::touched(&Value::Object(map.clone())))
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
}
