//! The quality rules of `--lint`: which present reasons do not help the person reading them.
//!
//! A reason is a claim about *why* a call is made. What a model writes instead, measured with
//! Qwen2.5-Coder behind `reasons gateway` (`doc/fill-rate.md`): the call again in words ("Run the
//! tests with cargo test." on `cargo test`), a description of what the call does ("This command
//! compiles the project"), or the layer's own description of the parameter ("One short sentence:
//! why this call. Shown to the human…"). Each is flagged here, beside the older hints: a
//! placeholder, the tool's name alone, more than one sentence, too long, and the same text on many
//! calls of a session. `check --lint` prints the hints; `stats --lint` counts the reasons they
//! flag. Both call [`hints`], so the two can never disagree.
//!
//! ```
//! use reasons::lint::{call_hints, Limits};
//! use serde_json::json;
//!
//! let limits = Limits::default();
//! let cargo_test = json!({"command": "cargo test"});
//! assert!(!call_hints("Run the tests with cargo test.", "bash", Some(&cargo_test), limits).is_empty());
//! assert!(call_hints("Check the parser fix before committing", "bash", Some(&cargo_test), limits).is_empty());
//! ```

use std::collections::HashMap;

use serde_json::Value;

use crate::layer::REASON_DESCRIPTION;
use crate::record::{CallRecord, Status};

/// Limits of `--lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest reason not flagged, in characters.
    pub max_len: usize,
    /// How many calls of one session may share a reason before it is boilerplate.
    pub repeat: usize,
}

impl Default for Limits {
    /// The command line's defaults.
    fn default() -> Limits {
        Limits {
            max_len: 200,
            repeat: 5,
        }
    }
}

/// One hint about one call's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// Which of the calls given to [`hints`] it is about.
    pub call: usize,
    /// What is wrong with the reason, for a person.
    pub message: String,
}

/// The hints about a file's calls, in the order of the calls (several may concern one call).
/// Only calls whose status is `present` are read; the repeat rule counts within each session.
pub fn hints(calls: &[CallRecord], limits: Limits) -> Vec<Hint> {
    fn session_of(record: &CallRecord) -> &str {
        record.session.as_deref().unwrap_or_default()
    }
    fn text_of(record: &CallRecord) -> &str {
        record.reason.as_deref().unwrap_or_default().trim()
    }
    let present = |record: &&CallRecord| record.status == Status::Present;
    let mut uses: HashMap<(&str, &str), usize> = HashMap::new();
    for record in calls.iter().filter(present) {
        *uses
            .entry((session_of(record), text_of(record)))
            .or_default() += 1;
    }
    let mut hints = Vec::new();
    for (call, record) in calls.iter().enumerate() {
        if record.status != Status::Present {
            continue;
        }
        let text = text_of(record);
        for message in call_hints(text, &record.tool, record.arguments.as_ref(), limits) {
            hints.push(Hint { call, message });
        }
        let repeats = uses[&(session_of(record), text)];
        if repeats > limits.repeat {
            hints.push(Hint {
                call,
                message: format!(
                    "the same reason is on {repeats} calls of this session (--repeat {})",
                    limits.repeat
                ),
            });
        }
    }
    hints
}

/// The hints about one reason on its own, without the session around it: `arguments` are the
/// call's, when the log's reader kept them (what the call touched is read off them).
pub fn call_hints(
    reason: &str,
    tool: &str,
    arguments: Option<&Value>,
    limits: Limits,
) -> Vec<String> {
    let text = reason.trim();
    let mut hints = Vec::new();
    if PLACEHOLDERS.contains(&text.to_lowercase().as_str()) {
        hints.push(format!("reason is a placeholder: {text:?}"));
    } else if parrots_description(text) {
        hints.push(format!(
            "reason repeats the parameter's description instead of giving one: {text:?}"
        ));
    } else if restates_tool(text, tool) {
        hints.push(format!("reason only restates the tool name: {text:?}"));
    } else if describes_call(text) {
        hints.push(format!(
            "reason describes the call instead of explaining it: {text:?}"
        ));
    } else if let Some(touched) = arguments.map(crate::touched::summary) {
        if restates_call(text, tool, &touched) {
            hints.push(format!("reason only restates the call: {text:?}"));
        }
    }
    let length = text.chars().count();
    if length > limits.max_len {
        hints.push(format!(
            "reason is {length} characters long (--max-len {})",
            limits.max_len
        ));
    } else if sentences(text) > 1 {
        hints.push("reason is longer than one sentence".to_owned());
    }
    hints
}

/// Reasons that say nothing a person can use.
const PLACEHOLDERS: [&str; 14] = [
    "n/a",
    "na",
    "none",
    "null",
    "nil",
    "-",
    "...",
    "…",
    "tbd",
    "todo",
    "reason",
    "no reason",
    "because",
    "why",
];

/// Words that, around a tool's name or a call's arguments, add nothing to them: "run bash",
/// "calling the Read tool", "Running cargo test in the shell".
const FILLER: [&str; 38] = [
    "a",
    "an",
    "the",
    "this",
    "that",
    "tool",
    "call",
    "calling",
    "run",
    "runs",
    "running",
    "use",
    "uses",
    "using",
    "invoke",
    "invokes",
    "invoking",
    "execute",
    "executes",
    "executing",
    "to",
    "with",
    "in",
    "on",
    "of",
    "and",
    "command",
    "shell",
    "file",
    "read",
    "reads",
    "reading",
    "show",
    "shows",
    "showing",
    "display",
    "displays",
    "it",
];

/// How a description of the call begins: the call named as the subject of the sentence, or left
/// out before the tool's own verb ("Runs a shell command to list…", "Reads a file from…").
const DESCRIBING_OPENINGS: [&str; 19] = [
    "this command",
    "this call",
    "this tool",
    "this function",
    "this script",
    "this will",
    "the command",
    "the call",
    "the tool",
    "the function",
    "runs a command",
    "runs a shell command",
    "runs the command",
    "executes a command",
    "executes a shell command",
    "executes the command",
    "reads a file",
    "reads the file",
    "reads the contents",
];

/// Whether a reason is the layer's own description of the parameter, whole or begun: a small
/// model copies "One short sentence: why this call…" and sometimes goes on after its first words.
pub fn parrots_description(reason: &str) -> bool {
    let reason = normalized(reason);
    let description = normalized(REASON_DESCRIPTION);
    if reason.is_empty() {
        return false;
    }
    // The reason is the description, or the start of it.
    if description.starts_with(&reason) {
        return true;
    }
    // The reason begins with one of the description's clauses ("One short sentence:" and the rest).
    REASON_DESCRIPTION
        .split([':', '.'])
        .map(normalized)
        .filter(|clause| clause.split(' ').count() >= 3)
        .any(|clause| reason.starts_with(&clause))
}

/// Whether a reason describes what the call is ("This command lists the files") rather than why
/// it is made.
pub fn describes_call(reason: &str) -> bool {
    let reason = normalized(reason);
    DESCRIBING_OPENINGS.iter().any(|opening| {
        reason.strip_prefix(opening).is_some_and(|rest| {
            // "This call is needed to notify the maintainers" gives a why, in the same words.
            let explains = PURPOSES.iter().any(|purpose| rest.starts_with(purpose));
            (rest.is_empty() || rest.starts_with(' ')) && !explains
        })
    })
}

/// What, after "This call", turns a description into an explanation.
const PURPOSES: [&str; 4] = [" is necessary", " is needed", " is required", " is meant"];

/// Whether every word of a reason is the call's own (its tool's name or what it touched, such as
/// the command or the path) or filler: "Run the tests with cargo test." for `cargo test`.
pub fn restates_call(reason: &str, tool: &str, touched: &str) -> bool {
    let own: Vec<String> = words(tool).into_iter().chain(words(touched)).collect();
    let meaningful: Vec<String> = words(reason)
        .into_iter()
        .filter(|word| !FILLER.contains(&word.as_str()))
        .collect();
    !meaningful.is_empty()
        && meaningful.iter().all(|word| {
            own.iter()
                .any(|own| own == word || singular(own) == singular(word))
        })
}

/// Whether a reason is only the tool's name, perhaps with filler around it.
pub fn restates_tool(reason: &str, tool: &str) -> bool {
    let tool_words = words(tool);
    let meaningful: Vec<String> = words(reason)
        .into_iter()
        .filter(|word| !FILLER.contains(&word.as_str()))
        .collect();
    !tool_words.is_empty()
        && (meaningful == tool_words || meaningful.concat() == tool_words.concat())
}

/// How many sentences a text holds: a `.`, `!` or `?` followed by more words, or a line break,
/// starts another.
pub fn sentences(text: &str) -> usize {
    let mut count = 1;
    let mut chars = text.trim().chars().peekable();
    while let Some(char) = chars.next() {
        let ends =
            matches!(char, '.' | '!' | '?') && chars.peek().is_some_and(|c| c.is_whitespace());
        if ends || char == '\n' {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.peek().is_some() {
                count += 1;
            }
        }
    }
    count
}

/// The lower-cased words of a text, split at everything that is not a letter or a digit.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A text's words joined by single spaces: how two texts are compared regardless of case,
/// punctuation and spacing.
fn normalized(text: &str) -> String {
    words(text).join(" ")
}

/// A word without a plural `s`, so "tests" restates `cargo test`.
fn singular(word: &str) -> &str {
    match word.strip_suffix('s') {
        Some(stem) if stem.len() > 2 && !stem.ends_with('s') => stem,
        _ => word,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_counted_by_their_ends() {
        assert_eq!(sentences("Read the config."), 1);
        assert_eq!(sentences("Read v1.2 of the config"), 1);
        assert_eq!(sentences("Read it. Then write it."), 2);
        assert_eq!(sentences("First line\nsecond line"), 2);
    }

    #[test]
    fn a_reason_that_is_the_tool_name_restates_it() {
        assert!(restates_tool("Bash", "Bash"));
        assert!(restates_tool("run the bash tool", "Bash"));
        assert!(restates_tool("fs write", "fs_write"));
        assert!(restates_tool("fswrite", "fs_write"));
        assert!(!restates_tool("Check which tests fail", "Bash"));
    }

    #[test]
    fn the_parameters_description_whole_or_begun_is_parroted() {
        assert!(parrots_description(REASON_DESCRIPTION));
        let first_clause = REASON_DESCRIPTION.split(':').next().unwrap();
        assert!(parrots_description(first_clause));
        assert!(parrots_description(&format!(
            "{first_clause}: How to count the number of lines in a file."
        )));
        // The model changed the case of one word and cut the rest.
        let cut = &REASON_DESCRIPTION.to_uppercase()[..REASON_DESCRIPTION.len() - 10];
        assert!(parrots_description(cut));
        assert!(!parrots_description(
            "Count the lines to see whether the file grew"
        ));
        assert!(!parrots_description("One more run, to confirm the fix"));
    }

    #[test]
    fn a_reason_that_names_the_call_as_its_subject_describes_it() {
        assert!(describes_call(
            "This command compiles the project and checks for any errors"
        ));
        assert!(describes_call("The call lists the files."));
        assert!(describes_call(
            "Runs a shell command to list the contents of the current directory."
        ));
        assert!(describes_call("Reads a file from the specified path."));
        assert!(!describes_call("This commit's tests fail: find out why"));
        assert!(!describes_call(
            "This call is necessary to notify the maintainers about the broken config."
        ));
        assert!(!describes_call("Check that the build passes"));
    }

    #[test]
    fn a_reason_made_of_the_calls_own_words_restates_it() {
        assert!(restates_call(
            "Run the tests with cargo test.",
            "bash",
            "cargo test"
        ));
        assert!(restates_call(
            "Reading Cargo.toml",
            "read_file",
            "Cargo.toml"
        ));
        assert!(!restates_call(
            "Reading Cargo.toml for tests.",
            "read_file",
            "Cargo.toml"
        ));
        assert!(!restates_call(
            "See which test fails after the parser change",
            "bash",
            "cargo test"
        ));
        // Nothing but filler is not a restatement of anything.
        assert!(!restates_call("Run it", "bash", "cargo test"));
    }

    #[test]
    fn one_reason_gets_one_hint_about_what_it_says() {
        let cargo_test = serde_json::json!({"command": "cargo test"});
        let hints = call_hints(
            REASON_DESCRIPTION,
            "bash",
            Some(&cargo_test),
            Limits::default(),
        );
        // Parroted, and two sentences; not also "describes" or "restates".
        assert_eq!(hints.len(), 2, "{hints:?}");
        assert!(hints[0].contains("description"), "{hints:?}");
    }
}
