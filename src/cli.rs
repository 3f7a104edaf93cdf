//! The command line, as clap definitions only: parsing, help text, man pages and completions are
//! all made from these types, and the commands themselves never see them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::formats::Format;
use crate::record::Status;

/// Every tool call an AI agent makes, and why it made it.
///
/// `reasons` puts a `reason` parameter on every tool an agent's model can call and takes it off
/// again before the call reaches the tool's server, so the person approving a call can read why.
/// It also reads recorded agent sessions (Claude Code, Codex CLI, OpenAI, Anthropic, Gemini, MCP,
/// SWE-agent, OpenHands, Kimi) and reports which calls carried a reason.
///
/// Exit status: 0 when all is well, 1 when a check found something (`check` flagged calls,
/// `stats` fell below `--min-coverage`), 2 on a usage, input or I/O error.
#[derive(Debug, Parser)]
#[command(
    name = "reasons",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every recorded tool call with what it touched and its reason.
    ///
    /// One row per call: where it was recorded (path:line), the tool, a one-line summary of its
    /// arguments (the command, path, url or pattern it was given) and the reason the model wrote.
    /// A table on a terminal, JSON lines otherwise. Reading stdin, each call is written as soon as
    /// its line arrives, so `tail -f session.jsonl | reasons extract` is live.
    Extract(ExtractArgs),
    /// Flag every recorded call that carries no usable reason.
    ///
    /// One line per call whose reason is missing, blank or not a string, as `path:line: tool id:
    /// missing reason`, so editors and terminals can jump to it; a summary on stderr. Exits 1
    /// when anything is flagged.
    Check(CheckArgs),
    /// Count calls and reason coverage per tool, file, session, format or day.
    ///
    /// Coverage is the share of audited calls whose reason is present; calls to tools that
    /// declare their own `reason` and calls whose arguments cannot carry one are counted but not
    /// audited. `--min-coverage` turns it into a gate for CI; `--merge` adds up earlier JSON
    /// reports, so shards of logs add up to one.
    Stats(StatsArgs),
    /// Write one HTML page for the person reviewing the sessions read.
    ///
    /// The page shows every session as the list of its calls in order: where each was recorded,
    /// the tool and what it touched (a shell command, a file's path, an edit's old and new text, a
    /// search's pattern), its full arguments one click away, and beside them the reason, as the
    /// model's claim, with its status. Above them, the totals and coverage per tool and per day, as
    /// `stats` counts them. Filters and a search box work in the browser; without scripts the
    /// page is still complete. The page is self-contained: nothing is fetched, and its
    /// Content-Security-Policy forbids anything but its own inline style and script.
    Report(ReportArgs),
    /// Apply the reasons layer to a newline-delimited JSON stream.
    ///
    /// Reads JSON lines on stdin and writes exactly one line per line read, in order, each as
    /// soon as it is ready. Tool catalogues passing by (MCP `tools/list` results, request bodies
    /// with a `tools` array, a bare array of declarations) gain the optional `reason` parameter;
    /// calls on their way to a tool (MCP `tools/call` requests, bare call objects) lose it.
    /// Every other line passes byte for byte. Each reason taken off is shown on stderr.
    Filter(FilterArgs),
    /// Run an MCP stdio server behind the reasons layer.
    ///
    /// Starts SERVER with its arguments and sits between it and the MCP client that started
    /// `reasons`: the server's tool listings gain the optional `reason` parameter on the way to
    /// the client, and calls lose it on the way to the server. Everything else passes through
    /// untouched; the server's stderr is the proxy's. When the client closes stdin, the server's
    /// stdin is closed too, and a server still running 2 seconds later is killed. Exits with the
    /// server's exit status, or 128 + N when signal N ended it; 2 when it cannot be started.
    Proxy(ProxyArgs),
    /// Apply the reasons layer at a model's API, for an agent's built-in tools too.
    ///
    /// An HTTP server to point every agent's API base URL at (`ANTHROPIC_BASE_URL` for Claude
    /// Code, `OPENAI_BASE_URL=http://127.0.0.1:4179/v1` for Codex, `GOOGLE_GEMINI_BASE_URL` for
    /// Gemini CLI). It forwards each request to its API's upstream (told apart by the path),
    /// with the optional `reason` parameter added to the tools each request declares, and takes
    /// the reason off every call in the answer before the agent sees it, plain or streamed. Each
    /// reason goes to the reasons log, written before the call is passed on (and with -v to
    /// stderr as `tool: reason`). Credentials pass through as the agent sent them and are never
    /// logged.
    Gateway(GatewayArgs),
    /// Show the model's reason for a call in an agent's own interface.
    ///
    /// `reasons hook claude-code`, `reasons hook codex` (both `PreToolUse`) and `reasons hook
    /// gemini-cli` (`BeforeTool`) are hook commands: each reads its agent's hook JSON on stdin,
    /// finds the call's reason (in its input, else in the reasons log under the call's id, or for
    /// Gemini CLI, which sends none, by what the call touched) and prints it as a
    /// `systemMessage` for the person to read beside the call. A hook never decides anything
    /// about the call, and never gets in the way: with no reason, bad input or any error it
    /// prints nothing and exits 0. `reasons hook install AGENT` writes the hook into the agent's
    /// user settings; `reasons hook uninstall AGENT` takes it out again.
    Hook(HookArgs),
    /// Follow a running agent: each call as it arrives, what it touched, and the model's reason.
    ///
    /// Follows the reasons log (every gateway, proxy and filter writes there) and the agents'
    /// session logs (the PATHs, or with none on a terminal the usual local folders), joined by
    /// call id. Each call shows its time, agent and session, tool, what it touched, and then the
    /// reason, marked as the model's claim; a call without one says `no reason`. On a terminal a
    /// full-screen view: arrows and PgUp/PgDn scroll, Enter shows a call's arguments, `m` only
    /// calls without a reason, `/` filters by tool or text, `q` quits. In a pipe or with --plain,
    /// one line per call, each written as it arrives. It starts at the last calls of a long log.
    Watch(WatchArgs),
    /// Print a shell completion script.
    ///
    /// For example: `reasons completions bash > ~/.local/share/bash-completion/completions/reasons`.
    Completions(CompletionsArgs),
}

/// Where the logs come from, and how to read them.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Log files, directories (searched for *.jsonl, *.json and *.traj, and for the *.db SQLite
    /// stores of OpenCode, Kilo, Crush and Goose), quoted glob patterns, or - for stdin. With
    /// none and a terminal on stdin, the usual local agent log folders are read; with none and
    /// stdin a pipe or a file, stdin is; otherwise a PATH must be given. A call's place is
    /// path:line, and path:table:rowid in a SQLite store.
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,

    /// Read every input as this format instead of detecting it from the content.
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub input_format: Option<Format>,

    /// Treat malformed lines as an error (exit 2) instead of skipping them with a warning.
    #[arg(long)]
    pub strict: bool,

    /// Audit calls to tools that declare a `reason` of their own, like any other call.
    #[arg(long)]
    pub audit_declared: bool,

    /// Join a reasons log (repeatable): a call whose own arguments carry no reason takes the
    /// one logged under its id by `reasons gateway`, `proxy` or `filter`. Without it, the log
    /// $REASONS_LOG names is joined when it exists, and reading the usual local folders, the
    /// default log.
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Vec<PathBuf>,
}

/// Options of `reasons extract`.
#[derive(Debug, Args)]
pub struct ExtractArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,

    /// Output format [default: table on a terminal, jsonl otherwise].
    #[arg(long, value_enum)]
    pub format: Option<ExtractFormat>,

    /// Only calls to tools whose name matches this glob pattern (repeatable).
    #[arg(long, value_name = "NAME")]
    pub tool: Vec<String>,

    /// Only calls with this status (repeatable).
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    pub status: Vec<Status>,

    /// Only calls that count against coverage: missing, blank or invalid reasons.
    #[arg(long)]
    pub missing: bool,

    /// Only calls from this session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    /// Include each call's arguments.
    #[arg(long)]
    pub arguments: bool,

    /// Keep reading files as they grow, like `tail -f`. A file truncated in place (rotated with
    /// copytruncate) is read again from its start.
    #[arg(long)]
    pub follow: bool,

    /// Flush each row as it is written, even when stdout is not a terminal.
    #[arg(long)]
    pub line_buffered: bool,
}

/// Output formats of `reasons extract`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExtractFormat {
    /// A table fitted to the terminal.
    Table,
    /// One JSON record per line.
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
    /// Tab-separated values with a header row.
    Tsv,
}

/// Options of `reasons check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,

    /// How to report flagged calls.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,

    /// Never flag calls to tools whose name matches this glob pattern (repeatable).
    #[arg(long, value_name = "TOOL")]
    pub allow: Vec<String>,

    /// Also flag reasons that do not help a person: too long, boilerplate repeated across a
    /// session, a placeholder, the tool's name or the call again, a description of the call
    /// ("This command …"), or the parameter's own description copied.
    #[arg(long)]
    pub lint: bool,

    /// With --lint, the longest reason that is not flagged, in characters.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub max_len: usize,

    /// With --lint, how many calls of one session may share the same reason before it is
    /// flagged as boilerplate.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub repeat: usize,
}

/// Output formats of `reasons check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// `path:line: tool id: message`, like a compiler.
    Text,
    /// GitHub Actions `::warning` annotations.
    Github,
    /// The flagged call records, one JSON object per line.
    Jsonl,
}

/// Options of `reasons stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,

    /// What each row counts.
    #[arg(long, value_enum, default_value_t = Grouping::Tool)]
    pub by: Grouping,

    /// Output format.
    #[arg(long, value_enum, default_value_t = StatsFormat::Table)]
    pub format: StatsFormat,

    /// Exit 1 when the total coverage is below this percentage.
    #[arg(long, value_name = "PCT")]
    pub min_coverage: Option<f64>,

    /// Treat the PATHs as earlier `stats --format json` reports and add them up.
    #[arg(long)]
    pub merge: bool,

    /// Also count the reasons `check --lint` flags (`lint_flagged`; a "flagged" column).
    #[arg(long)]
    pub lint: bool,

    /// With --lint, the longest reason that is not flagged, in characters.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub max_len: usize,

    /// With --lint, how many calls of one session may share the same reason before it is
    /// flagged as boilerplate.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub repeat: usize,
}

/// What each row of `reasons stats` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Grouping {
    /// The tool's name.
    Tool,
    /// The log file.
    File,
    /// The session id.
    Session,
    /// The log format.
    Format,
    /// The day of the call's timestamp (UTC, as written).
    Day,
}

/// Output formats of `reasons stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    /// A table for the terminal.
    Table,
    /// One JSON object, for other tools and for `--merge`.
    Json,
    /// A Markdown table, ready for `$GITHUB_STEP_SUMMARY`.
    Markdown,
    /// Comma-separated values with a header row.
    Csv,
}

/// Options of `reasons report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,

    /// Write the page to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Options of `reasons filter`.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// Append each reason taken off a call to FILE as JSON lines, instead of showing it on stderr
    /// [default: $REASONS_LOG when it is set].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// Leave tool catalogues as they are (they still decide which tools' calls are stripped).
    #[arg(long)]
    pub no_augment: bool,

    /// Leave tool calls as they are.
    #[arg(long)]
    pub no_strip: bool,
}

/// Options of `reasons proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Append each reason taken off a call to FILE as JSON lines, instead of showing it on stderr
    /// [default: $REASONS_LOG when it is set].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// The MCP server to run, and its arguments (after `--`).
    #[arg(value_name = "SERVER", required = true, num_args = 1.., last = true)]
    pub server: Vec<String>,
}

/// Options of `reasons gateway`.
#[derive(Debug, Args)]
pub struct GatewayArgs {
    /// The address to listen on; one that is not loopback only when named here. Port 0 picks a
    /// free port (the address is printed on stderr).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4179")]
    pub listen: String,

    /// Where to forward (repeatable): URL sends every API there; API=URL sets one API's
    /// (anthropic, openai for Chat and Responses, gemini), with a path prefix if it has one.
    /// [default: each provider's own API: `https://api.anthropic.com`, `https://api.openai.com`,
    /// `https://generativelanguage.googleapis.com`]
    #[arg(long, value_name = "[API=]URL")]
    pub upstream: Vec<String>,

    /// Append the reasons to FILE [default: $REASONS_LOG, else
    /// $XDG_STATE_HOME/reasons/reasons.jsonl, or ~/.local/state/reasons/reasons.jsonl].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// Leave each call as the model wrote it, reason included, for agents that accept an extra
    /// argument (their own logs then keep it); the reasons are still logged.
    #[arg(long)]
    pub no_strip: bool,

    /// Send the history each request carries as the agent wrote it. By default each call there
    /// whose id the reasons log holds, to a tool augmented in that request, and which carries no
    /// reason of its own, gets its logged reason back: a model that sees its own calls without
    /// reasons learns to leave them out.
    #[arg(long)]
    pub no_restore: bool,

    /// Print each reason on stderr as `tool: reason` as it is taken off. Without it the gateway
    /// writes nothing after its startup line but that an upstream cannot be reached, or the
    /// reasons log cannot be written (`reasons watch` is where reasons are seen).
    #[arg(short, long)]
    pub verbose: bool,
}

/// Options of `reasons hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The hook to run, or what to do with one.
    #[command(subcommand)]
    pub command: HookCommand,
}

/// What `reasons hook` does.
#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Claude Code's `PreToolUse` hook.
    ClaudeCode(HookRunArgs),
    /// Codex CLI's `PreToolUse` hook.
    Codex(HookRunArgs),
    /// Gemini CLI's `BeforeTool` hook.
    GeminiCli(HookRunArgs),
    /// Write the hook into an agent's user settings, keeping everything else there.
    ///
    /// Claude Code: ~/.claude/settings.json; Codex: $CODEX_HOME/hooks.json (~/.codex without
    /// CODEX_HOME); Gemini CLI: ~/.gemini/settings.json. The file and its folder are created
    /// when missing; installing twice is installing once. The hook command is this binary's
    /// absolute path, with the --reasons-log given here.
    Install(HookInstallArgs),
    /// Take the hook out of an agent's user settings, keeping everything else there.
    Uninstall(HookUninstallArgs),
}

/// Options of a hook command.
#[derive(Debug, Args)]
pub struct HookRunArgs {
    /// The reasons log to look in [default: $REASONS_LOG, else the gateway's default log].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,
}

/// Options of `reasons hook install`.
#[derive(Debug, Args)]
pub struct HookInstallArgs {
    /// The agent whose settings to change.
    #[arg(value_enum)]
    pub agent: HookAgent,

    /// The settings file to change instead of the agent's user settings.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// The reasons log the installed hook looks in [default: the hook's own default].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,
}

/// Options of `reasons hook uninstall`.
#[derive(Debug, Args)]
pub struct HookUninstallArgs {
    /// The agent whose settings to change.
    #[arg(value_enum)]
    pub agent: HookAgent,

    /// The settings file to change instead of the agent's user settings.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// The agents `reasons hook` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookAgent {
    /// Claude Code (`PreToolUse`).
    ClaudeCode,
    /// Codex CLI (`PreToolUse`).
    Codex,
    /// Gemini CLI (`BeforeTool`).
    GeminiCli,
}

/// Options of `reasons watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Session logs to follow beside the reasons log: files, directories, quoted glob patterns.
    /// With none and a terminal on stdin, the usual local agent log folders.
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,

    /// The reasons log to follow [default: $REASONS_LOG, else the gateway's default log].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// One line per call, even on a terminal.
    #[arg(long)]
    pub plain: bool,
}

/// Options of `reasons completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

fn parse_format(name: &str) -> Result<Format, String> {
    name.parse()
}

fn parse_status(name: &str) -> Result<Status, String> {
    name.parse()
}
