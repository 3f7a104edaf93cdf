//! "What it touched": one line that says what a call acts on, from its arguments.

use serde_json::Value;

use reasons::envelope::{decode_arguments, Arguments};
use reasons::layer::REASON_PARAM;

/// Argument names that say what a call acts on, most telling first.
const TELLING_KEYS: [&str; 16] = [
    "command",
    "cmd",
    "pattern",
    "query",
    "q",
    "url",
    "file_path",
    "filePath",
    "path",
    "notebook_path",
    "glob",
    "prompt",
    "description",
    "code",
    "expression",
    "input",
];

/// The longest summary, in characters, before it is cut.
const LIMIT: usize = 80;

/// A one-line summary of a call's arguments: the command, path, url or pattern it was given,
/// else its other arguments, cut to fit.
pub fn touched(arguments: &Value) -> String {
    let text = match decode_arguments(arguments) {
        Arguments::Object(map) => {
            let telling = TELLING_KEYS
                .iter()
                .find_map(|key| map.get(*key).and_then(plain_text));
            telling.unwrap_or_else(|| {
                map.iter()
                    .filter(|(key, _)| key.as_str() != REASON_PARAM)
                    .map(|(key, value)| format!("{key}={}", plain_text(value).unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        }
        Arguments::Empty => String::new(),
        Arguments::NotAnObject => plain_text(arguments).unwrap_or_default(),
    };
    cut(&text)
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

/// The first line, at most [`LIMIT`] characters, with `…` where something was left out.
fn cut(text: &str) -> String {
    let text = text.trim();
    let first_line = text.lines().next().unwrap_or("");
    let mut cut: String = first_line.chars().take(LIMIT).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_command_is_what_a_shell_call_touched() {
        assert_eq!(
            touched(&json!({"command": "ls -la", "reason": "look"})),
            "ls -la"
        );
        assert_eq!(
            touched(&json!({"command": ["bash", "-lc", "ls"]})),
            "bash -lc ls"
        );
    }

    #[test]
    fn arguments_in_a_json_string_are_read() {
        assert_eq!(touched(&json!(r#"{"path":"src/a.rs"}"#)), "src/a.rs");
    }

    #[test]
    fn without_a_telling_key_the_arguments_are_listed_without_the_reason() {
        assert_eq!(
            touched(&json!({"a": 1, "b": "x", "reason": "r"})),
            "a=1 b=x"
        );
    }

    #[test]
    fn long_and_multi_line_text_is_cut() {
        let cut = touched(&json!({"command": "echo one\necho two"}));
        assert_eq!(cut, "echo one…");
        let long = "x".repeat(200);
        assert_eq!(touched(&json!({"path": long})).chars().count(), LIMIT + 1);
    }

    #[test]
    fn free_text_arguments_are_shown_as_text() {
        assert_eq!(touched(&json!("*** Begin Patch")), "*** Begin Patch");
    }
}
