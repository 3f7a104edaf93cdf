//! Readers for recorded agent sessions, one module per shape, plus detection.
//!
//! [`read_log`] turns any log a reader understands into [`CallRecord`]s, streaming: a JSONL line
//! is read, its calls are handed over, then the next line is read. Which format a log is in is
//! decided from its content, event by event, so a stream that mixes shapes still yields every
//! call; [`ReadOptions::format`] forces one.

use std::io::BufRead;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::record::CallRecord;

mod anthropic;
mod arguments;
mod buffered;
mod catalogue;
mod gemini;
mod kimi;
mod mcp;
mod openai_chat;
mod openhands;
mod prefilter;
#[cfg(test)]
mod properties;
mod read;
mod responses;
mod source;
mod split;
mod swe_agent;
mod walk;

/// How to read a log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Read the log as this format, instead of deciding from its content.
    pub format: Option<Format>,
    /// Keep each call's arguments in its record.
    pub keep_arguments: bool,
    /// Audit the calls of tools that declare a `reason` of their own, instead of marking them
    /// `declared`.
    pub audit_declared: bool,
    /// Parse every line in full, so that each one that is not JSON is reported. Otherwise a line
    /// that cannot hold a call is only checked to look like one whole JSON value (its brackets
    /// or quotes close, or it is a number or a literal), which catches cut and stray lines but
    /// not JSON that is wrong inside.
    pub check_every_line: bool,
}

/// What reading a log hands over, in the order the log holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// One recorded tool call.
    Call(CallRecord),
    /// A line that is not JSON (or not UTF-8, or cut short): skipped, and reading goes on.
    Malformed {
        /// 1-based line of the input.
        line: u64,
        /// What is wrong with it.
        message: String,
    },
}

/// What a whole read found, beyond the events it handed over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadSummary {
    /// Events read: JSONL lines that were parsed, or top-level values of a single document.
    pub events: u64,
    /// Call records handed over.
    pub calls: u64,
    /// Calls not handed over because an earlier event of the same source recorded them.
    pub repeats: u64,
    /// Lines skipped as malformed.
    pub malformed_lines: u64,
    /// The format of the first call, when there was one.
    pub format: Option<Format>,
}

pub use buffered::AlignedBufReader;
pub use split::read_file;

/// Reads one log and hands each event to `sink` as soon as the line holding it has been read.
///
/// `source` is the path as given (`-` for stdin); it goes into every record. A JSONL log is
/// streamed line by line and never held whole; a single JSON document (pretty-printed
/// trajectories, API payloads, cassettes) is read whole. Malformed lines become
/// [`Event::Malformed`] and reading goes on. Reading stops at the first error of `input` or
/// `sink` (a closed pipe, say), which is returned.
///
/// ```
/// use reasons::formats::{read_log, Event, ReadOptions};
/// use reasons::record::Status;
///
/// let log = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"],\"reason\":\"See what is here.\"}","call_id":"c1"}}"#;
/// let mut statuses = Vec::new();
/// read_log("-", log.as_bytes(), &ReadOptions::default(), &mut |event| {
///     if let Event::Call(call) = event {
///         statuses.push((call.format.as_str(), call.tool, call.status));
///     }
///     Ok(())
/// })?;
/// assert_eq!(statuses, [("codex", "shell".to_owned(), Status::Present)]);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_log<R: BufRead>(
    source: &str,
    input: R,
    options: &ReadOptions,
    sink: &mut dyn FnMut(Event) -> std::io::Result<()>,
) -> std::io::Result<ReadSummary> {
    let mut rules = source::Rules::new(source, options);
    let offset = source::Offset::default();
    let mut apply = |item| rules.apply(item, offset, sink);
    let events = read::Reader::new(options, &mut apply).read(input)?;
    Ok(rules.finish(events))
}

/// The format one event (a JSONL line, or a whole document) is in, decided from its content:
/// its outer record when that says (a Claude Code or Codex line, a SWE-agent trajectory…), else
/// the shape of the first call in it. `None` when it holds no call and says nothing.
pub fn detect(event: &Value) -> Option<Format> {
    let text = event.to_string();
    let mut parser = crate::json::Parser::default();
    let event = parser.parse(&text).ok()?;
    walk::container_format(event).or_else(|| read::first_call_format(event))
}

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
