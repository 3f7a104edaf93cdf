//! The command line, as clap definitions only: parsing, help text, man pages and completions are
//! all made from these types, and the commands themselves never see them. Wherever the command
//! line names agents (the values it takes, the help that lists them), they come from
//! [`agents::ALL`].

use std::ffi::OsStr;
use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{ArgMatches, Args, FromArgMatches, Parser, Subcommand, ValueEnum};

use reasons::record::Format;
use reasons::record::Status;

use crate::program::agents::{self, Agent};

/// Every tool call an AI agent makes, and why it made it.
#[derive(Debug, Parser)]
#[command(
    name = "reasons",
    version,
    propagate_version = true,
    max_term_width = 100,
    long_about = about()
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// `reasons --help`'s text, with the agents whose logs it reads.
fn about() -> String {
    let agents: Vec<&str> = agents::ALL.iter().map(|agent| agent.title).collect();
    format!(
        "Every tool call an AI agent makes, and why it made it.\n\n\
         `reasons` puts a `reason` parameter on every tool an agent's model can call and takes it \
         off again before the call reaches the tool's server, so the person approving a call can \
         read why. It also reads recorded agent sessions ({}; SWE-agent and OpenHands \
         trajectories, Kimi CLI's wire logs, and the OpenAI, Anthropic, Gemini and MCP wire \
         formats) and reports which calls carried a reason.\n\n\
         Exit status: 0 when all is well, 1 when a check found something (`check` flagged calls, \
         `stats` fell below `--min-coverage`), 2 on a usage, input or I/O error.",
        agents.join(", ")
    )
}

/// `reasons run --help`'s list of how each agent it starts is pointed at the gateway.
fn run_help() -> String {
    let mut help = String::from(RUN_HELP);
    help.push_str(
        "\n\nHow each agent is pointed at the gateway, and where its hook is wired for the run:",
    );
    for agent in agents::ALL {
        if let Some(run) = &agent.run {
            help.push_str(&format!(
                "\n\n{} (`{}`): {}",
                agent.title, run.command, run.pointed
            ));
        }
    }
    help
}

/// `reasons run --help`'s text above the agents.
const RUN_HELP: &str = "Start an agent with the reasons layer at its model's API, in one command.

Starts a gateway on a free loopback port for this run (the gateway's options apply), points AGENT \
at it its own way (a base URL already set becomes the gateway's upstream, so a proxy in between \
stays), runs the agent in the foreground with the terminal and the AGENT_ARGS, and exits with its \
status (128 + N when signal N ended it). At the end, one line on stderr: the calls the agent \
recorded during the run, how many carried a reason, the coverage, and where the reasons log is. \
Nothing is written to the agent's settings files.

The hook is wired for this run where the agent takes one without a settings file changed, unless \
the agent's settings run it already; where it takes none for one run, `reasons watch` shows the \
reasons (`--watch`).

Ctrl-C and the window's size are the agent's (it shares the terminal's process group); SIGTERM \
and SIGHUP sent to `reasons` are passed on to the agent.";

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
    /// Send the calls of recorded logs to an OpenTelemetry collector, one span each.
    ///
    /// Every call, every status (`reasons.status`, and `reasons.reason_from` when a reasons log
    /// gave it its reason), as `execute_tool {tool}` spans with `gen_ai.tool.call.id`, so that
    /// coverage can be charted in the team's backend (Arize Phoenix, Jaeger, Langfuse, any
    /// collector). Exporting a log again sends the same spans (their ids come from the call ids).
    Export(ExportArgs),
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
    /// Run an MCP server behind the reasons layer: a stdio one, or a remote one with --url.
    ///
    /// Starts SERVER with its arguments and sits between it and the MCP client that started
    /// `reasons`: the server's tool listings gain the optional `reason` parameter on the way to
    /// the client, and calls lose it on the way to the server. Everything else passes through
    /// untouched; the server's stderr is the proxy's. When the client closes stdin, the server's
    /// stdin is closed too, and a server still running 2 seconds later is killed. Exits with the
    /// server's exit status, or 128 + N when signal N ended it; 2 when it cannot be started.
    ///
    /// With --url instead of SERVER, the server is a remote one, reached over MCP's Streamable
    /// HTTP transport, and the proxy is its stdio face for the client (as `mcp-remote` is):
    /// the session id, the protocol version, the server's own event stream and resumption of a
    /// broken one are handled as the transport says, and the session is ended (DELETE) when the
    /// client closes stdin; then the proxy exits 0. A request the server cannot answer
    /// (unreachable, TLS, an HTTP error, a stream cut short) gets a JSON-RPC error naming the
    /// cause, and a line that is not JSON a parse error (-32700); the proxy goes on. A server
    /// that answers 401 is signed in to with OAuth as the MCP spec says: the browser is opened
    /// once ($BROWSER, else xdg-open or open; the address is printed on stderr too), and the
    /// tokens are kept in $XDG_CONFIG_HOME/reasons/mcp-auth/ (mode 0600; --sign-out deletes
    /// the server's), reused and refreshed. An Authorization given with --header wins.
    ///
    /// With --listen ADDR the proxy is an HTTP server instead (MCP's Streamable HTTP), for
    /// clients configured with a URL: in front of the --url server (each client's session relayed
    /// to one of the server's, answers as JSON or event streams as they came), or of SERVER, one
    /// process a session (started by `initialize`, ended by DELETE). In front of a --url server
    /// that asks for OAuth, the proxy signs in as above for the clients that send no
    /// Authorization of their own, one sign-in for every session; a client's own is passed on,
    /// and the server's answers to it as they came. A request whose Host is not the proxy's or
    /// whose Origin is a web page elsewhere is refused (403), as the transport asks against DNS
    /// rebinding; an unknown session id gets 404, a body that is not JSON -32700.
    /// It runs until Ctrl-C or SIGTERM, then ends the sessions still open and exits 0.
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
    /// `reasons hook AGENT` is a hook command: it reads the agent's hook JSON on stdin and finds
    /// the call's reason (in its input, else with --gateway URL from a team's gateway, else in the
    /// reasons log under the call's id, or, for an agent that sends no id, by what the call
    /// touched). An agent whose approval dialog shows a hook's text only when the hook asks gets
    /// the reason inside that dialog ("Why (the model's claim): …"), as the agent's own "ask",
    /// only where the agent would have asked the person anyway, in an attended interactive
    /// session, with no other hook of the person's that may answer for the call, and not where the
    /// dialog lists the reason already (an MCP tool behind `reasons proxy`); elsewhere, and with
    /// --after, it gets the reason as a message beside the call where the agent shows one. The
    /// reason never decides anything, and a hook never gets in the way: with no reason, bad input
    /// or any error it prints nothing and exits 0. `reasons hook install AGENT` writes the hook
    /// into the agent's user settings; `reasons hook uninstall AGENT` takes it out again.
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
    /// Start an agent with the reasons layer at its model's API, in one command.
    #[command(long_about = run_help())]
    Run(RunArgs),
    /// Print a shell completion script.
    ///
    /// For example: `reasons completions bash > ~/.local/share/bash-completion/completions/reasons`.
    Completions(CompletionsArgs),
    /// Write the man pages, made from these definitions (the ones in man/ are made this way).
    #[command(hide = true)]
    Generate(GenerateArgs),
}

/// Where the logs come from, and how to read them.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Log files, directories (searched for *.jsonl, *.json and *.traj, and for the SQLite
    /// stores, *.db and *.sqlite, of the agents that keep one), quoted glob patterns, or - for
    /// stdin. With none and a terminal on stdin, the usual local agent log folders are read;
    /// with none and stdin a pipe or a file, stdin is; otherwise a PATH must be given. A call's
    /// place is path:line, and path:table:rowid in a SQLite store.
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

/// Whether what leaves the machine is masked: one definition for every command that sends or
/// shows a record elsewhere.
#[derive(Debug, Args)]
pub struct NoMaskArgs {
    /// Send reasons, what calls touched and their arguments as the model wrote them. Without it,
    /// what leaves this machine (OpenTelemetry spans, the --store, --serve-reasons answers, the
    /// report page) has known credentials replaced by `[masked: KIND]`: cloud and provider keys
    /// and tokens, JWTs, private key blocks, Authorization and Bearer values, passwords in URLs,
    /// and the values of names that say secret, token, password, key or credential. The local
    /// reasons log always keeps what the model wrote.
    #[arg(long)]
    pub no_mask: bool,
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

    /// Keep reading the file as it grows, like `tail -F`. A file truncated in place (rotated with
    /// copytruncate) is read again from its start; one replaced by another file (rotated by
    /// renaming) is read to its end, then the new one from its start. A log its agent rewrites
    /// whole (one JSON document, a SQLite store) is read again whenever it changes, and its new
    /// calls shown.
    #[arg(long)]
    pub follow: bool,

    /// Flush each row as it is written, even when stdout is not a terminal.
    #[arg(long)]
    pub line_buffered: bool,

    /// Show known credentials in reasons, what calls touched and arguments as `[masked: KIND]`,
    /// as they are masked where they leave the machine (for a shared screen).
    #[arg(long)]
    pub mask: bool,
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

    #[command(flatten)]
    #[allow(missing_docs)]
    pub limits: LintLimits,
}

/// What `--lint` allows (`check`, `stats`).
#[derive(Debug, Args)]
pub struct LintLimits {
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

    #[command(flatten)]
    #[allow(missing_docs)]
    pub limits: LintLimits,
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
    /// The day of the call's timestamp (in UTC; a local time without its offset, as written).
    Day,
}

/// Output formats of `reasons stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    /// A table fitted to the terminal: where not every column fits, the least needed are left
    /// out, as its last line says.
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

    #[command(flatten)]
    #[allow(missing_docs)]
    pub mask: NoMaskArgs,
}

/// Options of `reasons filter`.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// Append each reason taken off a call to FILE as JSON lines, instead of showing it on stderr
    /// [default: $REASONS_LOG when it is set].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// Send each reason to an OpenTelemetry collector as a span too (OTLP/HTTP protobuf;
    /// `/v1/traces` is added to a base URL) [default: $OTEL_EXPORTER_OTLP_ENDPOINT].
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,

    /// Leave tool catalogues as they are (they still decide which tools' calls are stripped).
    #[arg(long)]
    pub no_augment: bool,

    /// Leave tool calls as they are.
    #[arg(long)]
    pub no_strip: bool,

    /// Where the `reason` parameter goes among each declaration's properties: `first` asks the
    /// model for the reason before the arguments, `last` after them. Either way it is optional
    /// and the same request gives the same bytes.
    #[arg(long, value_enum, value_name = "PLACE", default_value_t = ReasonPlace::library_default())]
    pub reason_position: ReasonPlace,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub mask: NoMaskArgs,
}

/// Options of `reasons proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Append each reason taken off a call to FILE as JSON lines, instead of showing it on stderr
    /// [default: $REASONS_LOG when it is set].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// Send each reason to an OpenTelemetry collector as a span too (OTLP/HTTP protobuf;
    /// `/v1/traces` is added to a base URL) [default: $OTEL_EXPORTER_OTLP_ENDPOINT].
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,

    /// Forward each reason to the server too, as the call's
    /// `params._meta["io.modelcontextprotocol/aiInvocation"].invocationReason.text` (MCP
    /// SEP-2817, a draft), for servers that audit. Without it the server never sees a reason.
    #[arg(long)]
    pub meta: bool,

    /// Where the `reason` parameter goes among each declaration's properties: `first` asks the
    /// model for the reason before the arguments, `last` after them. Either way it is optional
    /// and the same request gives the same bytes.
    #[arg(long, value_enum, value_name = "PLACE", default_value_t = ReasonPlace::library_default())]
    pub reason_position: ReasonPlace,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub mask: NoMaskArgs,

    /// A remote MCP server's URL (Streamable HTTP), instead of a SERVER to run.
    #[arg(long, value_name = "URL", conflicts_with = "server")]
    pub url: Option<String>,

    /// Serve MCP's Streamable HTTP transport on ADDR instead of stdio, for clients configured
    /// with a URL (`http://ADDR/mcp`): in front of the --url server, or of SERVER, one process a
    /// session. `PORT` or `:PORT` is loopback (127.0.0.1); an address beyond loopback only when
    /// named. Port 0 picks a free port; the address is printed on stderr.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// A header sent with every request to the --url server, as 'NAME: VALUE' (repeatable). A
    /// `${VARIABLE}` in the value is taken from the environment, so that no secret sits in a
    /// client's config file: --header 'Authorization: Bearer ${GITHUB_TOKEN}'.
    // Conflicting with SERVER as well: clap does not hold an argument to its `requires` when
    // the required one conflicts with another that is present, as --url does with SERVER.
    #[arg(
        long,
        value_name = "NAME: VALUE",
        requires = "url",
        conflicts_with = "server"
    )]
    pub header: Vec<String>,

    /// Sign out of the --url server: delete the tokens a sign-in kept for it, say which file
    /// that was, and exit without starting anything. The next run signs in afresh.
    // SERVER too, as for --header.
    #[arg(long, requires = "url", conflicts_with_all = ["listen", "server"])]
    pub sign_out: bool,

    /// The MCP server to run, and its arguments (after `--`).
    #[arg(
        value_name = "SERVER",
        required_unless_present = "url",
        num_args = 1..,
        last = true
    )]
    pub server: Vec<String>,
}

/// Options of `reasons export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,

    /// The collector (OTLP/HTTP protobuf; `/v1/traces` is added to a base URL)
    /// [default: $OTEL_EXPORTER_OTLP_ENDPOINT].
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub mask: NoMaskArgs,
}

/// The address `reasons gateway` listens on when none is named.
pub const GATEWAY_LISTEN: &str = "127.0.0.1:4179";

/// The options of the gateway, which `gateway` runs and `run` starts for its agent.
#[derive(Debug, Args)]
pub struct GatewayOptions {
    /// The address to listen on; one that is not loopback only when named here. Port 0 picks a
    /// free port (the address is printed on stderr) [default: 127.0.0.1:4179; for `run`, a free
    /// port on 127.0.0.1].
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Where to forward (repeatable): URL sends every API there; API=URL sets one API's
    /// (anthropic, openai for Chat and Responses, gemini), with a path prefix if it has one.
    /// [default: for `run`, the base URL the agent is already given; else each provider's own
    /// API: `https://api.anthropic.com`, `https://api.openai.com`,
    /// `https://generativelanguage.googleapis.com`]
    #[arg(long, value_name = "[API=]URL")]
    pub upstream: Vec<String>,

    /// Append the reasons to FILE [default: $REASONS_LOG, else
    /// $XDG_STATE_HOME/reasons/reasons.jsonl, or ~/.local/state/reasons/reasons.jsonl].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// Leave each call as the model wrote it, reason included, for agents that accept an extra
    /// argument (their own logs then keep it); the reasons are still logged. For `run` the
    /// default for every agent but Claude Code, which rejects an argument its tools do not
    /// declare.
    #[arg(long)]
    pub no_strip: bool,

    /// Send the history each request carries as the agent wrote it. By default each call there
    /// whose id the reasons log holds, to a tool augmented in that request, and which carries no
    /// reason of its own, gets its logged reason back: a model that sees its own calls without
    /// reasons learns to leave them out.
    #[arg(long)]
    pub no_restore: bool,

    /// Where the `reason` parameter goes among each declaration's properties: `first` asks the
    /// model for the reason before the arguments, `last` after them. Either way it is optional
    /// and the same request gives the same bytes; a reason
    /// given back to the history goes at the same place among the call's arguments.
    #[arg(long, value_enum, value_name = "PLACE", default_value_t = ReasonPlace::library_default())]
    pub reason_position: ReasonPlace,

    /// The largest request body the gateway reads (to an API's path: it holds those whole to
    /// rewrite them); a larger one is answered 413 in the API's own error envelope, before it is
    /// read. SIZE in bytes, or with K, M or G (KiB, MiB, GiB).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    pub max_body: u64,

    /// Send each reason to an OpenTelemetry collector as a span (`execute_tool {tool}`, with
    /// `gen_ai.tool.call.id` and `reasons.reason`), OTLP/HTTP protobuf; `/v1/traces` is added to
    /// a base URL. Batched on a bounded queue that drops (and counts) rather than slows a
    /// request [default: $OTEL_EXPORTER_OTLP_ENDPOINT].
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,

    /// Print each reason on stderr as `tool: reason` as it is taken off, and each call a broken
    /// stream cut off. Without it the gateway writes nothing after its startup line but that an
    /// upstream cannot be reached, or the reasons log cannot be written (`reasons watch` is where
    /// reasons are seen).
    #[arg(short, long)]
    pub verbose: bool,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub mask: NoMaskArgs,
}

/// Options of `reasons gateway`.
#[derive(Debug, Args)]
pub struct GatewayArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub gateway: GatewayOptions,

    /// Answer `GET /reasons/v1/calls/{call_id}` with `{"call_id","tool","reason","touched",
    /// "time"}` (or 404), for `reasons hook AGENT --gateway URL` on a person's own machine. The
    /// call id is the capability: there is no listing, no search, no other route. See
    /// doc/team.md for who can read what.
    #[arg(long)]
    pub serve_reasons: bool,

    /// Keep every reason taken in Redis or Valkey too, by call id, so that replicas behind one
    /// load balancer restore and serve each other's reasons. A store that is down or slow never
    /// stops a request (it is waited for 25 ms at most): the gateway serves on, says so once,
    /// and uses it again once it answers.
    #[arg(long, value_name = "redis://HOST:PORT[/DB]")]
    pub store: Option<String>,

    /// How long the store keeps a reason: seconds, or a number with s, m, h or d.
    #[arg(long, value_name = "TIME", default_value = "7d")]
    pub store_ttl: String,
}

/// Options of `reasons run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The agent to start.
    #[arg(value_parser = AgentName::that_run())]
    pub agent: &'static Agent,

    /// The agent's program [default: the command it is installed as, found on PATH].
    #[arg(long, value_name = "PROGRAM")]
    pub program: Option<PathBuf>,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub gateway: GatewayOptions,

    /// Take each reason off the calls before the agent sees them [default: for Claude Code
    /// only, which rejects an argument its tools do not declare].
    #[arg(long, overrides_with = "no_strip")]
    pub strip: bool,

    /// Open `reasons watch` on this run's reasons log in a tmux split beside the agent (inside
    /// tmux only); it closes when the agent ends.
    #[arg(long)]
    pub watch: bool,

    /// Ask before each call, the model's reason in the question, for an agent that asks nothing
    /// by default (its line below says so).
    #[arg(long)]
    pub confirm: bool,

    /// The agent's own arguments (after `--`).
    #[arg(value_name = "AGENT_ARGS", last = true)]
    pub args: Vec<String>,
}

/// Where the layer puts the `reason` parameter (`--reason-position`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReasonPlace {
    /// Before every property the tool declares.
    First,
    /// After every property the tool declares.
    Last,
}

impl ReasonPlace {
    /// The library's default place, so that the command line never disagrees with it.
    pub fn library_default() -> ReasonPlace {
        match reasons::layer::ReasonPosition::default() {
            reasons::layer::ReasonPosition::First => ReasonPlace::First,
            reasons::layer::ReasonPosition::Last => ReasonPlace::Last,
        }
    }
}

/// A size as `--max-body` takes it: bytes, or a number followed by K, M or G (binary: KiB, MiB,
/// GiB, which are also taken).
fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let digits = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text}: give a number of bytes, as 1048576, 1024K or 64M"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        _ => return Err(format!("{text}: the unit is one of K, M, G")),
    };
    number
        .checked_mul(1 << shift)
        .filter(|size| *size > 0)
        .ok_or_else(|| format!("{text}: give a size above 0 and below 16 EiB"))
}

/// Options of `reasons hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The hook to run, or what to do with one.
    #[command(subcommand)]
    pub command: HookCommand,
}

/// What `reasons hook` does: answer an agent's hook (one subcommand per agent that has one, from
/// [`agents::ALL`]), or install or uninstall one.
#[derive(Debug)]
pub enum HookCommand {
    /// Answer `agent`'s hook.
    Answer {
        /// The agent whose hook event comes on stdin.
        agent: &'static Agent,
        /// How to answer it.
        args: HookRunArgs,
    },
    /// Write the hook into an agent's user settings, keeping everything else there.
    Install(HookInstallArgs),
    /// Take the hook out of an agent's user settings, keeping everything else there.
    Uninstall(HookUninstallArgs),
}

impl FromArgMatches for HookCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        match matches.subcommand() {
            Some(("install", sub)) => Ok(HookCommand::Install(HookInstallArgs::from_arg_matches(
                sub,
            )?)),
            Some(("uninstall", sub)) => Ok(HookCommand::Uninstall(
                HookUninstallArgs::from_arg_matches(sub)?,
            )),
            Some((name, sub)) => match agents::named(name).filter(|agent| agent.hook.is_some()) {
                Some(agent) => Ok(HookCommand::Answer {
                    agent,
                    args: HookRunArgs::from_arg_matches(sub)?,
                }),
                None => Err(clap::Error::new(ErrorKind::InvalidSubcommand)),
            },
            None => Err(clap::Error::new(ErrorKind::MissingSubcommand)),
        }
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = HookCommand::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for HookCommand {
    fn augment_subcommands(mut command: clap::Command) -> clap::Command {
        for agent in agents::ALL {
            let Some(hook) = &agent.hook else { continue };
            let mut names = agent.names();
            let name = names.next().expect("every agent has a name");
            // Args' own doc comment is the about of the command it augments: set after it.
            let answer = HookRunArgs::augment_args(clap::Command::new(name))
                .about(format!("{}'s `{}` hook.", agent.title, hook.event))
                .visible_aliases(names);
            command = command.subcommand(answer);
        }
        let install = HookInstallArgs::augment_args(clap::Command::new("install"))
            .about("Write the hook into an agent's user settings, keeping everything else there.")
            .long_about(install_help());
        let uninstall = HookUninstallArgs::augment_args(clap::Command::new("uninstall"))
            .about("Take the hook out of an agent's user settings, keeping everything else there.");
        command.subcommand(install).subcommand(uninstall)
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        HookCommand::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        matches!(name, "install" | "uninstall")
            || agents::named(name).is_some_and(|agent| agent.hook.is_some())
    }
}

/// `hook install`'s long help: where each agent's hook goes.
fn install_help() -> String {
    let mut help = String::from(
        "Write the hook into an agent's user settings, keeping everything else there.\n\n",
    );
    let places: Vec<String> = agents::ALL
        .iter()
        .filter_map(|agent| {
            Some(format!(
                "{}: {}",
                agent.title,
                agents::hook_settings_described(agent)?
            ))
        })
        .collect();
    help.push_str(&places.join("; "));
    help.push_str(
        ". The file and its folder are created when missing; installing twice is installing \
         once. The hook command is this binary's absolute path, with the --reasons-log and \
         --after given here.",
    );
    help
}

/// Options of a hook command.
#[derive(Debug, Args)]
pub struct HookRunArgs {
    /// The reasons log to look in [default: $REASONS_LOG, else the gateway's default log].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// Show the reason beside the call only, never inside the agent's approval dialog.
    #[arg(long)]
    pub after: bool,

    /// Ask this gateway first (one run with --serve-reasons, such as a team's) for a call's
    /// reason, by the call's id, waiting at most 300 ms; then the reasons log. A call without an
    /// id (Gemini CLI's) is looked for in the log.
    #[arg(long, value_name = "URL")]
    pub gateway: Option<String>,
}

/// Options of `reasons hook install`.
#[derive(Debug, Args)]
pub struct HookInstallArgs {
    /// The agent whose settings to change.
    #[arg(value_parser = AgentName::with_installed_hooks())]
    pub agent: &'static Agent,

    /// The settings file to change instead of the agent's user settings.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// The reasons log the installed hook looks in [default: the hook's own default].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// Install the hook that shows the reason beside the call only, never inside the agent's
    /// approval dialog [default: inside it, where the agent asks, for the agents whose dialog
    /// shows a hook's text].
    #[arg(long)]
    pub after: bool,

    /// The gateway the installed hook asks first for a call's reason (a team's, run with
    /// --serve-reasons); the log still answers when it cannot.
    #[arg(long, value_name = "URL")]
    pub gateway: Option<String>,
}

/// Options of `reasons hook uninstall`.
#[derive(Debug, Args)]
pub struct HookUninstallArgs {
    /// The agent whose settings to change.
    #[arg(value_parser = AgentName::with_installed_hooks())]
    pub agent: &'static Agent,

    /// The settings file to change instead of the agent's user settings.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Options of `reasons watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Session logs to follow beside the reasons log: files, directories, quoted glob patterns.
    /// With none and a terminal on stdin, the usual local agent log folders. A log its agent
    /// rewrites whole (one JSON document, a SQLite store) is read again whenever it changes.
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,

    /// The reasons log to follow [default: $REASONS_LOG, else the gateway's default log].
    #[arg(long, value_name = "FILE")]
    pub reasons_log: Option<PathBuf>,

    /// One line per call, even on a terminal.
    #[arg(long)]
    pub plain: bool,

    /// Show known credentials in reasons, what calls touched and arguments as `[masked: KIND]`,
    /// as they are masked where they leave the machine (for a shared screen).
    #[arg(long)]
    pub mask: bool,
}

/// Options of `reasons completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Options of `reasons generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What to write.
    #[command(subcommand)]
    pub what: Generate,
}

/// What `reasons generate` writes.
#[derive(Debug, Subcommand)]
pub enum Generate {
    /// The man pages, `reasons.1` and one `reasons-COMMAND.1` a subcommand, into DIR.
    Man {
        /// The folder to write them in.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

/// An agent named on the command line: the names of the agents of [`agents::ALL`] that serve
/// the command ([`Agent::names`]), each shown with its title.
#[derive(Clone)]
pub struct AgentName {
    serves: fn(&Agent) -> bool,
    /// What to say of an agent `reasons` knows that does not serve the command, where there is
    /// more to say than that it is not among the possible values.
    refusal: Option<fn(&Agent) -> String>,
}

impl AgentName {
    /// The agents `reasons run` starts.
    pub fn that_run() -> AgentName {
        AgentName {
            serves: |agent| agent.run.is_some(),
            refusal: None,
        }
    }

    /// The agents whose hook `reasons hook install` writes.
    pub fn with_installed_hooks() -> AgentName {
        AgentName {
            serves: |agent| {
                agent
                    .hook
                    .as_ref()
                    .is_some_and(|hook| !matches!(hook.installs, agents::Installs::RunOnly))
            },
            refusal: Some(no_hook_to_install),
        }
    }

    fn values(&self) -> impl Iterator<Item = PossibleValue> + '_ {
        agents::ALL
            .into_iter()
            .filter(|agent| (self.serves)(agent))
            .map(|agent| {
                let mut names = agent.names();
                let name = names.next().expect("every agent has a name");
                PossibleValue::new(name).aliases(names).help(agent.title)
            })
    }
}

impl TypedValueParser for AgentName {
    type Value = &'static Agent;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<&'static Agent, clap::Error> {
        let known = value.to_str().and_then(agents::named);
        if let (Some(agent), Some(refusal)) = (known, self.refusal) {
            if !(self.serves)(agent) {
                return Err(command
                    .clone()
                    .error(ErrorKind::InvalidValue, refusal(agent)));
            }
        }
        // clap's own parser of the names says what is wrong with a value, as for every other.
        let name = PossibleValuesParser::new(self.values()).parse_ref(command, arg, value)?;
        agents::named(&name).ok_or_else(|| clap::Error::new(ErrorKind::InvalidValue))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.values()))
    }
}

/// Why `reasons hook install` or `uninstall` has nothing to do for `agent`, and what shows its
/// reasons instead.
fn no_hook_to_install(agent: &Agent) -> String {
    let name = agent.names().next().expect("every agent has a name");
    if agent.hook.is_some() {
        return format!(
            "{}'s hook is wired by `reasons run {name}` for its run only: there is nothing to \
             install",
            agent.title
        );
    }
    let instead = if agent.run.is_some() {
        format!("`reasons run {name} --watch` (or `reasons watch` beside it) shows the reasons")
    } else {
        "`reasons watch` beside it shows the reasons".to_owned()
    };
    format!(
        "{} has no hook `reasons hook` installs; {instead}",
        agent.title
    )
}

fn parse_format(name: &str) -> Result<Format, String> {
    name.parse()
}

fn parse_status(name: &str) -> Result<Status, String> {
    name.parse()
}
