//! Readers for recorded agent sessions, one module per shape, plus detection.

use serde::{Deserialize, Serialize};

/// A log format a reader understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Claude Code session transcripts (`~/.claude/projects/…/*.jsonl`).
    ClaudeCode,
    /// Codex CLI rollouts (`~/.codex/sessions/…/rollout-*.jsonl`).
    Codex,
    /// OpenAI Chat Completions requests, responses and streamed chunks.
    OpenaiChat,
    /// OpenAI Responses API requests, responses and streamed events.
    OpenaiResponses,
    /// Anthropic Messages API requests, responses and streamed events.
    Anthropic,
    /// Gemini API requests, responses and streams.
    Gemini,
    /// Gemini CLI session records.
    GeminiCli,
    /// MCP JSON-RPC traffic, plain or inside a record/replay cassette.
    Mcp,
    /// SWE-agent trajectories (`.traj`).
    SweAgent,
    /// OpenHands event trajectories.
    Openhands,
    /// Kimi CLI wire logs.
    Kimi,
}

impl Format {
    /// Every format, in the order help text lists them.
    pub const ALL: [Format; 11] = [
        Format::ClaudeCode,
        Format::Codex,
        Format::OpenaiChat,
        Format::OpenaiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::GeminiCli,
        Format::Mcp,
        Format::SweAgent,
        Format::Openhands,
        Format::Kimi,
    ];

    /// The name used on the command line and in records.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::OpenaiChat => "openai-chat",
            Format::OpenaiResponses => "openai-responses",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::GeminiCli => "gemini-cli",
            Format::Mcp => "mcp",
            Format::SweAgent => "swe-agent",
            Format::Openhands => "openhands",
            Format::Kimi => "kimi",
        }
    }
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
