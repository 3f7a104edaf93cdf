//! Skips JSONL lines that cannot hold a call without parsing them.
//!
//! Most bytes of an agent log are tool results; the lines that can hold a call (or the state a
//! call needs: a catalogue, a stream fragment, a session id) all contain one of a few JSON tokens,
//! quotes included. A token inside a JSON string has its quotes escaped (`\"tool_use\"`), so it
//! never matches, and whitespace around colons does not touch the token itself.

use memchr::memmem::Finder;

use crate::formats::Format;

const ANTHROPIC: &[&str] = &["\"tool_use\""];
const ANTHROPIC_STREAM: &[&str] = &[
    "\"content_block_start\"",
    "\"content_block_delta\"",
    "\"content_block_stop\"",
];
const CHAT: &[&str] = &["\"tool_calls\""];
const RESPONSES: &[&str] = &[
    "\"function_call\"",
    "\"custom_tool_call\"",
    "\"local_shell_call\"",
    "\"web_search_call\"",
];
const CATALOGUE: &[&str] = &["\"tools\""];
const CODEX_SESSION: &[&str] = &["\"session_meta\""];
const GEMINI: &[&str] = &["\"functionCall\""];
const GEMINI_CLI: &[&str] = &["\"toolCalls\""];
// PHP and some others escape `/` in strings: the method may be written `tools\/call`.
const MCP: &[&str] = &["\"tools/call\"", "\"tools\\/call\""];
const OPENHANDS: &[&str] = &["\"tool_call_metadata\""];
const KIMI: &[&str] = &["\"tool.call\""];

/// The tokens one format's lines need; `None` (format not forced) needs all of them, because a
/// stream that mixes shapes must still yield every call.
fn tokens(format: Option<Format>) -> Vec<&'static str> {
    let groups: &[&[&str]] = match format {
        Some(Format::ClaudeCode) => &[ANTHROPIC],
        Some(Format::Anthropic) => &[ANTHROPIC, ANTHROPIC_STREAM, CATALOGUE],
        Some(Format::Codex) => &[RESPONSES, CODEX_SESSION],
        Some(Format::OpenaiResponses) => &[RESPONSES, CATALOGUE],
        Some(Format::OpenaiChat | Format::SweAgent) => &[CHAT, CATALOGUE],
        Some(Format::Gemini) => &[GEMINI, CATALOGUE],
        Some(Format::GeminiCli) => &[GEMINI_CLI],
        Some(Format::Mcp) => &[MCP, CATALOGUE],
        Some(Format::Openhands) => &[OPENHANDS],
        Some(Format::Kimi) => &[KIMI],
        None => &[
            ANTHROPIC,
            ANTHROPIC_STREAM,
            CHAT,
            RESPONSES,
            CATALOGUE,
            CODEX_SESSION,
            GEMINI,
            GEMINI_CLI,
            MCP,
            OPENHANDS,
            KIMI,
        ],
    };
    groups
        .iter()
        .flat_map(|group| group.iter().copied())
        .collect()
}

/// Whether a line may hold a call, by a search for its format's tokens.
pub(crate) struct Prefilter {
    /// Tokens grouped by a shared prefix: one pass over the line per group.
    groups: Vec<(Finder<'static>, Vec<&'static [u8]>)>,
}

impl Prefilter {
    pub(crate) fn new(format: Option<Format>) -> Prefilter {
        let mut groups: Vec<(Finder<'static>, Vec<&'static [u8]>)> = Vec::new();
        for token in tokens(format) {
            let token = token.as_bytes();
            let prefix = &token[..PREFIX.min(token.len())];
            match groups
                .iter_mut()
                .find(|(finder, _)| finder.needle() == prefix)
            {
                Some((_, tokens)) => tokens.push(token),
                None => groups.push((Finder::new(prefix).into_owned(), vec![token])),
            }
        }
        Prefilter { groups }
    }

    pub(crate) fn may_hold_call(&self, line: &[u8]) -> bool {
        self.groups.iter().any(|(finder, tokens)| {
            finder
                .find_iter(line)
                .any(|at| tokens.iter().any(|token| line[at..].starts_with(token)))
        })
    }
}

/// Long enough to be rare in tool output, short enough that tokens share it (`"tool`).
const PREFIX: usize = 5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilter_passes_a_token_with_whitespace_after_the_colon() {
        let filter = Prefilter::new(Some(Format::ClaudeCode));
        assert!(filter.may_hold_call(br#"{"content": [{"type":   "tool_use", "id": "t"}]}"#));
    }

    #[test]
    fn prefilter_skips_a_token_inside_a_string() {
        let filter = Prefilter::new(None);
        let line = br#"{"type":"user","content":"the log said {\"type\":\"tool_use\"}"}"#;
        assert!(!filter.may_hold_call(line));
    }

    #[test]
    fn prefilter_skips_a_result_line_that_only_names_a_tool_use_id() {
        let filter = Prefilter::new(None);
        let line = br#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x"}]},"toolUseResult":"ok"}"#;
        assert!(!filter.may_hold_call(line));
    }

    #[test]
    fn prefilter_for_any_format_passes_every_shape() {
        let filter = Prefilter::new(None);
        for line in [
            &br#"{"type":"tool_use"}"#[..],
            br#"{"tool_calls":[]}"#,
            br#"{"type":"function_call"}"#,
            br#"{"type":"custom_tool_call"}"#,
            br#"{"functionCall":{}}"#,
            br#"{"toolCalls":[]}"#,
            br#"{"method":"tools/call"}"#,
            br#"{"method":"tools\/call"}"#,
            br#"{"type":"tool.call"}"#,
            br#"{"tools":[]}"#,
            br#"{"type":"session_meta"}"#,
            br#"{"type":"content_block_delta"}"#,
        ] {
            assert!(
                filter.may_hold_call(line),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
