//! The log formats the readers understand, by name: the one list every other place derives from.
//!
//! Part of the record rather than of the readers: a record carries its format as much as a
//! reader decides one, and the readers (`crate::formats`) already stand on `record`, so both
//! use it without `record` importing the readers.

use serde::{Deserialize, Serialize};

/// Declares [`Format`] from one line per format: its variant, its name on the command line and
/// in records, and its doc comment. `ALL` and `as_str` follow from the same list.
macro_rules! formats {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal,)*) => {
        /// A log format a reader understands.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Format {
            $($(#[doc = $doc])* #[serde(rename = $name)] $variant,)*
        }

        impl Format {
            /// Every format, in the order help text lists them.
            pub const ALL: [Format; [$($name),*].len()] = [$(Format::$variant),*];

            /// The name used on the command line and in records.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Format::$variant => $name,)*
                }
            }
        }
    };
}

formats! {
    /// Claude Code session transcripts (`~/.claude/projects/…/*.jsonl`).
    ClaudeCode = "claude-code",
    /// Codex CLI rollouts (`~/.codex/sessions/…/rollout-*.jsonl`).
    Codex = "codex",
    /// OpenAI Chat Completions requests, responses and streamed chunks.
    OpenaiChat = "openai-chat",
    /// OpenAI Responses API requests, responses and streamed events.
    OpenaiResponses = "openai-responses",
    /// Anthropic Messages API requests, responses and streamed events.
    Anthropic = "anthropic",
    /// Gemini API requests, responses and streams.
    Gemini = "gemini",
    /// Gemini CLI session records.
    GeminiCli = "gemini-cli",
    /// MCP JSON-RPC traffic, plain or inside a record/replay cassette.
    Mcp = "mcp",
    /// SWE-agent trajectories (`.traj`).
    SweAgent = "swe-agent",
    /// OpenHands event trajectories.
    Openhands = "openhands",
    /// Kimi CLI wire logs.
    Kimi = "kimi",
    /// OpenCode sessions: its `opencode.db` store, its legacy `storage/` tree, `opencode export`.
    Opencode = "opencode",
    /// Kilo CLI sessions: its `kilo.db` store (OpenCode's schema).
    Kilo = "kilo",
    /// GitHub Copilot CLI session events (`~/.copilot/session-state/<id>/events.jsonl`).
    CopilotCli = "copilot-cli",
    /// Qwen Code chat records (`~/.qwen/projects/<p>/chats/<session>.jsonl`).
    QwenCode = "qwen-code",
    /// Cline session messages (`~/.cline/data/sessions/<id>/<id>.messages.json`).
    Cline = "cline",
    /// Cursor agent transcripts (`~/.cursor/projects/<p>/agent-transcripts/…jsonl`).
    Cursor = "cursor",
    /// Crush sessions: its per-project `.crush/crush.db` store.
    Crush = "crush",
    /// Goose sessions: its `sessions.db` store, and its JSONL sessions before 1.10.
    Goose = "goose",
    /// VS Code GitHub Copilot Chat sessions (`workspaceStorage/<hash>/chatSessions/<id>.json`).
    VscodeCopilotChat = "vscode-copilot-chat",
    /// Kiro CLI session journals (`~/.kiro/sessions/cli/<id>.jsonl`).
    KiroCli = "kiro-cli",
    /// Pi coding agent sessions (`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`).
    Pi = "pi",
    /// OpenClaw sessions (its store `openclaw-agent.sqlite`, and the older
    /// `~/.openclaw/agents/<agent>/sessions/<id>.jsonl`): Pi's format.
    Openclaw = "openclaw",
    /// Antigravity CLI transcripts (`~/.gemini/antigravity-cli/brain/<id>/…/transcript.jsonl`).
    Antigravity = "antigravity",
    /// Grok CLI session updates (`~/.grok/sessions/<cwd>/<id>/updates.jsonl`).
    GrokCli = "grok-cli",
    /// Hermes Agent sessions: its store `state.db`, its session files
    /// (`~/.hermes/sessions/session_*.json`) and exported message rows.
    Hermes = "hermes",
    /// Factory Droid sessions (`~/.factory/sessions/<cwd>/<id>.jsonl`).
    FactoryDroid = "factory-droid",
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|format| format.as_str() == s)
            .ok_or_else(|| format!("unknown format `{s}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn a_name_reads_back_as_its_format_everywhere() {
        for format in Format::ALL {
            assert_eq!(format.as_str().parse::<Format>(), Ok(format));
            let json = serde_json::to_value(format).expect("a format serialises");
            assert_eq!(json, format.as_str());
            assert_eq!(serde_json::from_value::<Format>(json).ok(), Some(format));
        }
    }
}
