//! No classifier reads a reason (SPEC §4.2): what an Anthropic request asks of the provider's
//! classifier, taken off when the gateway augments the request's tools.
//!
//! Claude Code's auto mode asks the Messages API to classify the dangerous tool use in the very
//! answer it requests: `"safeguards": [{"type": "dangerous_tool_use", "classifier_context": …}]`
//! in the body, and the `dangerous-tool-use-…` token of `anthropic-beta`. That answer is to tools
//! the gateway augmented, so the classified call would carry the model's `reason`, and its
//! history the reasons the gateway gave back: a permission layer the model could talk its way
//! through. Without them, no verdict comes back, and Claude Code classifies on its own copy of
//! each call, which the gateway stripped.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::Value;

/// The top-level key of an Anthropic request that lists what the provider is to classify.
pub(crate) const SAFEGUARDS_KEY: &str = "safeguards";

/// The `type` of the safeguard that classifies the model's tool calls.
const TOOL_USE_SAFEGUARD: &str = "dangerous_tool_use";

/// The `anthropic-beta` tokens that turn that classifier on (`dangerous-tool-use-2026-09-03`).
const TOOL_USE_BETA_PREFIX: &str = "dangerous-tool-use-";

/// What becomes of a request's `safeguards` member.
#[derive(Debug, PartialEq)]
pub(crate) enum Safeguards {
    /// Nothing to take off: no tool-use safeguard, or a value that is no array of them.
    AsItCame,
    /// The other safeguards, each as it was written, in a new array.
    Kept(String),
    /// Nothing remains: the key goes, as Claude Code writes a request when the classifier is
    /// off (it never sends `safeguards` without the tool-use one, nor an empty list).
    Dropped,
}

/// The `safeguards` value written as `written`, without its tool-use safeguard.
pub(crate) fn without_the_tool_use_safeguard(written: &str) -> Safeguards {
    let Ok(entries) = serde_json::from_str::<Vec<&RawValue>>(written) else {
        return Safeguards::AsItCame;
    };
    let classifies_tool_use = |entry: &&RawValue| {
        serde_json::from_str::<Value>(entry.get())
            .is_ok_and(|entry| entry["type"] == TOOL_USE_SAFEGUARD)
    };
    let kept: Vec<&str> = entries
        .iter()
        .filter(|entry| !classifies_tool_use(entry))
        .map(|entry| entry.get())
        .collect();
    match kept.len() {
        _ if kept.len() == entries.len() => Safeguards::AsItCame,
        0 => Safeguards::Dropped,
        _ => Safeguards::Kept(format!("[{}]", kept.join(","))),
    }
}

/// The request header that turns provider betas on, the classifier's among them.
pub const BETA_HEADER: &str = "anthropic-beta";

/// An `anthropic-beta` header's value without the tool-use classifier's tokens: the other tokens
/// in their order, as they were written; empty when none remains (the header then goes).
pub(crate) fn betas_without_the_tool_use_classifier(value: &str) -> Cow<'_, str> {
    let classifier = |token: &str| token.trim().starts_with(TOOL_USE_BETA_PREFIX);
    if !value.split(',').any(classifier) {
        return Cow::Borrowed(value);
    }
    let kept: Vec<&str> = value
        .split(',')
        .filter(|token| !classifier(token) && !token.trim().is_empty())
        .map(str::trim)
        .collect();
    Cow::Owned(kept.join(","))
}

/// Every value of a request's [`BETA_HEADER`] without the tool-use classifier's tokens: `None`
/// when none held one (the header goes as it came), else the values to send in its place, in
/// their order, a value left without a token gone. A value that is not text is kept as it came.
pub(crate) fn beta_headers_without_the_tool_use_classifier<'a>(
    values: impl IntoIterator<Item = &'a [u8]>,
) -> Option<Vec<Vec<u8>>> {
    let mut changed = false;
    let mut kept = Vec::new();
    for value in values {
        let rest = std::str::from_utf8(value)
            .ok()
            .map(betas_without_the_tool_use_classifier)
            .filter(|rest| rest.as_bytes() != value);
        match rest {
            None => kept.push(value.to_vec()),
            Some(rest) => {
                changed = true;
                if !rest.is_empty() {
                    kept.push(rest.into_owned().into_bytes());
                }
            }
        }
    }
    changed.then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tool_use_safeguard_goes() {
        let written = r#"[ {"type":"dangerous_tool_use","classifier_context":{"rules":["a"]}} , {"type" : "other",  "x":1e400} ]"#;
        assert_eq!(
            without_the_tool_use_safeguard(written),
            Safeguards::Kept(r#"[{"type" : "other",  "x":1e400}]"#.to_owned())
        );
        let alone = r#"[{"type":"dangerous_tool_use","classifier_context":{},"extra":true}]"#;
        assert_eq!(without_the_tool_use_safeguard(alone), Safeguards::Dropped);
    }

    #[test]
    fn safeguards_without_it_are_left_as_they_came() {
        for written in [
            r#"[{"type":"other"}]"#,
            "[]",
            r#"{"type":"dangerous_tool_use"}"#,
            r#""dangerous_tool_use""#,
            "[1,",
        ] {
            assert_eq!(
                without_the_tool_use_safeguard(written),
                Safeguards::AsItCame,
                "{written}"
            );
        }
    }

    #[test]
    fn only_the_classifier_beta_goes() {
        assert_eq!(
            betas_without_the_tool_use_classifier(
                "claude-code-20250219, dangerous-tool-use-2026-09-03,oauth-2025-04-20"
            ),
            "claude-code-20250219,oauth-2025-04-20"
        );
        assert_eq!(
            betas_without_the_tool_use_classifier("dangerous-tool-use-2026-09-03"),
            ""
        );
        // Untouched, spaces and all, when it holds no such token.
        let other = "claude-code-20250219, interleaved-thinking-2025-05-14";
        assert!(matches!(
            betas_without_the_tool_use_classifier(other),
            Cow::Borrowed(value) if value == other
        ));
    }

    #[test]
    fn of_several_beta_headers_the_one_left_without_a_token_goes() {
        let values: [&[u8]; 3] = [
            b"claude-code-20250219",
            b"dangerous-tool-use-2026-09-03",
            b"oauth-2025-04-20, dangerous-tool-use-2026-09-03",
        ];
        assert_eq!(
            beta_headers_without_the_tool_use_classifier(values),
            Some(vec![
                b"claude-code-20250219".to_vec(),
                b"oauth-2025-04-20".to_vec()
            ])
        );
        let none: [&[u8]; 2] = [b"claude-code-20250219", b"\xff not text"];
        assert_eq!(beta_headers_without_the_tool_use_classifier(none), None);
    }
}
