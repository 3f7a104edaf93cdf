//! `reasons run AGENT`: a gateway of the run's own on a free loopback port, the agent pointed at
//! it its own way and started in the foreground with the terminal, then one line saying what the
//! run's calls carried.
//!
//! Nothing here writes a settings file of the person's: each agent is pointed at the gateway by
//! an environment variable or a command-line flag of this run only, and reads its settings files
//! only to find a base URL already set (which becomes the gateway's upstream) or a hook already
//! installed (which is then not wired twice).

use std::ffi::OsString;
use std::fs;
use std::io::{self, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context};
use reasons::formats::ReadOptions;
use reasons::reasons_log;
use reasons::record::Format;
use reasons::stats::Counts;
use serde_json::{json, Value};

use super::hook::{self, Placement};
use super::hook_install::{self, shell_quote};
use crate::program::agent_asks;
use crate::program::agent_homes;
use crate::program::exit_codes::ExitCode;
use crate::program::gateway_server;
use crate::program::messages::message;
use crate::program::schedule::{read_each_in_order, SourceOptions};
use crate::program::sources::{self, Source};

/// The agents `reasons run` starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
    OpenCode,
    Kilo,
    QwenCode,
    CopilotCli,
    Cline,
}

/// How the run goes.
#[derive(Debug)]
pub struct Options {
    pub agent: Agent,
    /// The agent's program, when named; else its usual command on PATH.
    pub program: Option<PathBuf>,
    /// The gateway's address, when named; else a free loopback port.
    pub listen: Option<String>,
    /// `--upstream [API=]URL`, as given: these win over a base URL the agent was given.
    pub upstreams: Vec<String>,
    pub reasons_log: PathBuf,
    /// `--strip` / `--no-strip`, when given; else what the agent accepts.
    pub strip: Option<bool>,
    pub verbose: bool,
    pub restore: bool,
    /// `--max-body`, as the gateway takes it.
    pub max_body: u64,
    /// Whether to open `reasons watch` in a tmux split.
    pub watch: bool,
    /// The agent's own arguments.
    pub args: Vec<String>,
}

impl Agent {
    /// The command it is installed as, and how the person knows it.
    fn command(self) -> (&'static str, &'static str) {
        match self {
            Agent::ClaudeCode => ("claude", "Claude Code"),
            Agent::Codex => ("codex", "Codex CLI"),
            Agent::GeminiCli => ("gemini", "Gemini CLI"),
            Agent::OpenCode => ("opencode", "OpenCode"),
            Agent::Kilo => ("kilo", "Kilo"),
            Agent::QwenCode => ("qwen", "Qwen Code"),
            Agent::CopilotCli => ("copilot", "GitHub Copilot CLI"),
            Agent::Cline => ("cline", "Cline"),
        }
    }

    /// The log format its own session logs are read as.
    fn format(self) -> Format {
        match self {
            Agent::ClaudeCode => Format::ClaudeCode,
            Agent::Codex => Format::Codex,
            Agent::GeminiCli => Format::GeminiCli,
            Agent::OpenCode => Format::Opencode,
            Agent::Kilo => Format::Kilo,
            Agent::QwenCode => Format::QwenCode,
            Agent::CopilotCli => Format::CopilotCli,
            Agent::Cline => Format::Cline,
        }
    }

    /// Whether calls lose their reason by default: only Claude Code validates its tools' input
    /// strictly (SPEC §4); the others run a call with an extra `reason` and keep it in their
    /// own logs, which is then where the audit finds it.
    fn strips_by_default(self) -> bool {
        self == Agent::ClaudeCode
    }
}

/// What the run changes for the agent: its arguments before the person's, its environment, and
/// the folder of files made for this run only (removed at its end).
struct Wiring {
    args: Vec<String>,
    env: Vec<(String, String)>,
    folder: Option<PathBuf>,
    /// Whether the hook is wired for this run, and why not when it is not.
    hook: Result<(), String>,
}

impl Wiring {
    /// The folder of this run's files, made on first use where only its owner can enter: Gemini
    /// CLI skips a settings file whose folder others may write to, such as `/tmp` itself.
    fn run_folder(&mut self) -> io::Result<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        if let Some(folder) = &self.folder {
            return Ok(folder.clone());
        }
        let folder = std::env::temp_dir().join(format!("reasons-run-{}", std::process::id()));
        // One left by an earlier process of this pid is no longer anyone's.
        let _ = fs::remove_dir_all(&folder);
        fs::DirBuilder::new().mode(0o700).create(&folder)?;
        self.folder = Some(folder.clone());
        Ok(folder)
    }

    /// Makes a folder for this run only, `name` in the run's folder.
    fn private_folder(&mut self, name: &str) -> io::Result<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        let path = self.run_folder()?.join(name);
        fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(path)
    }

    /// Writes a file for this run only, `name` in the run's folder.
    fn private_file(&mut self, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.run_folder()?.join(name);
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        file.write_all(bytes)?;
        Ok(path)
    }
}

impl Drop for Wiring {
    fn drop(&mut self) {
        if let Some(folder) = &self.folder {
            let _ = fs::remove_dir_all(folder);
        }
    }
}

/// A base URL split where the gateway takes over: the origin goes upstream, the path stays the
/// agent's (the gateway forwards to the upstream + the request's path).
#[derive(Debug, Clone, PartialEq)]
struct BaseUrl {
    origin: String,
    path: String,
}

impl BaseUrl {
    fn parse(url: &str) -> Option<BaseUrl> {
        let url = url.trim();
        let (scheme, rest) = url.split_once("://")?;
        if !matches!(scheme, "http" | "https") {
            return None;
        }
        let (authority, path) = match rest.find('/') {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if authority.is_empty() || path.contains(['?', '#']) {
            return None;
        }
        Some(BaseUrl {
            origin: format!("{scheme}://{authority}"),
            path: path.trim_end_matches('/').to_owned(),
        })
    }
}

/// A base URL the agent was already given, for one provider's API.
struct Given {
    provider: &'static str,
    url: BaseUrl,
}

/// Runs the agent through a gateway of its own, and says what its calls carried.
pub fn run(options: Options) -> anyhow::Result<ExitCode> {
    let agent = options.agent;
    let (command, name) = agent.command();
    let program = match &options.program {
        Some(program) => program.clone(),
        None => on_path(command).with_context(|| {
            format!("{name} is not installed: no `{command}` on PATH (name it with --program)")
        })?,
    };
    let mut args = options.args.clone();
    let given = given_base_urls(agent, &mut args)?;
    let mut upstreams = options.upstreams.clone();
    for given in &given {
        // An --upstream for every API, or for this one, is the person's word over the agent's.
        let named = options.upstreams.iter().any(|upstream| {
            !upstream.contains('=') || upstream.starts_with(&format!("{}=", given.provider))
        });
        if !named {
            upstreams.push(format!("{}={}", given.provider, given.url.origin));
        }
    }
    let strip = options.strip.unwrap_or(agent.strips_by_default());
    let gateway_options = gateway_server::Options {
        listen: options
            .listen
            .clone()
            .unwrap_or_else(|| "127.0.0.1:0".to_owned()),
        upstreams,
        reasons_log: options.reasons_log.clone(),
        strip,
        verbose: options.verbose,
        restore: options.restore,
        max_body: options.max_body,
        // A run is one person's: no route for other machines, no store shared with replicas;
        // spans go where the environment sends the agent's own telemetry, if anywhere.
        serve_reasons: false,
        store: None,
        store_ttl: "7d".to_owned(),
        otlp: crate::program::otlp::endpoint(None),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the gateway's runtime")?;
    let bound = runtime.block_on(gateway_server::bind(&gateway_options))?;
    let address = bound.address()?;
    let gateway_url = format!("http://{address}");
    let wiring = wire(agent, &gateway_url, &given, &options.reasons_log, &mut args)?;
    if let Err(why) = &wiring.hook {
        if options.verbose {
            message!("{why}");
        }
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = runtime.spawn(gateway_server::serve_until(bound, async {
        let _ = stopped.await;
    }));

    let watch_pane = if options.watch {
        open_watch(&options.reasons_log)
    } else {
        None
    };
    let log_start = fs::metadata(&options.reasons_log).map_or(0, |meta| meta.len());
    let started = SystemTime::now();

    let mut child_command = Command::new(&program);
    child_command
        .args(&wiring.args)
        .args(&args)
        .envs(wiring.env.iter().map(|(k, v)| (k, v)));
    // Caught before the agent starts, so that no Ctrl-C can end `reasons` before it.
    let signals = {
        let _entered = runtime.enter();
        Signals::catch()?
    };
    let mut child = match child_command.spawn() {
        Ok(child) => child,
        Err(error) => {
            let _ = stop.send(());
            bail!("cannot start {}: {error}", program.display());
        }
    };
    let forwarding = runtime.spawn(signals.forward_to(child.id()));
    let status = child
        .wait()
        .with_context(|| format!("cannot wait for {}", program.display()))?;
    forwarding.abort();
    let _ = stop.send(());
    let _ = runtime.block_on(serving);
    runtime.shutdown_timeout(Duration::from_secs(1));
    if let Some(pane) = watch_pane {
        let _ = Command::new("tmux")
            .args(["kill-pane", "-t", &pane])
            .status();
    }
    drop(wiring);

    let counts = calls_of_the_run(agent, started, &options.reasons_log, log_start);
    message!("{}", summary(&counts, &options.reasons_log));
    Ok(ExitCode::Child(exit_status(status)))
}

/// The program's path, from PATH.
fn on_path(command: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The value of an environment variable that is set and not empty.
fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// The base URLs the agent is already given (its environment, its own flags in `args`, the
/// settings that set one), each to become the upstream of its API.
fn given_base_urls(agent: Agent, args: &mut [String]) -> anyhow::Result<Vec<Given>> {
    let mut found: Vec<(&'static str, String, String)> = Vec::new();
    match agent {
        Agent::ClaudeCode => {
            if let Some((url, from)) = claude_settings_base_url() {
                found.push(("anthropic", url, from));
            } else if let Some(url) = env("ANTHROPIC_BASE_URL") {
                found.push(("anthropic", url, "ANTHROPIC_BASE_URL".into()));
            }
        }
        Agent::Codex => {
            if let Some(url) = env("OPENAI_BASE_URL") {
                found.push(("openai", url, "OPENAI_BASE_URL".into()));
            }
        }
        Agent::Cline => found = cline_base_urls(),
        Agent::GeminiCli => {
            if let Some(url) = env("GOOGLE_GEMINI_BASE_URL") {
                found.push(("gemini", url, "GOOGLE_GEMINI_BASE_URL".into()));
            }
        }
        Agent::QwenCode => {
            if let Some(url) = flag_value(args, "--openai-base-url") {
                found.push(("openai", url, "--openai-base-url".into()));
            } else if let Some(url) = env("OPENAI_BASE_URL") {
                found.push(("openai", url, "OPENAI_BASE_URL".into()));
            }
        }
        Agent::CopilotCli => {
            let Some(url) = env("COPILOT_PROVIDER_BASE_URL") else {
                bail!(
                    "GitHub Copilot CLI goes through the gateway with a model provider of your own: \
                     set COPILOT_PROVIDER_BASE_URL (with COPILOT_PROVIDER_TYPE, \
                     COPILOT_PROVIDER_API_KEY and COPILOT_MODEL), as Copilot CLI documents"
                );
            };
            found.push((copilot_provider(), url, "COPILOT_PROVIDER_BASE_URL".into()));
        }
        Agent::OpenCode | Agent::Kilo => found = opencode_base_urls(agent),
    }
    let mut given: Vec<Given> = Vec::new();
    for (provider, url, from) in found {
        let Some(url) = BaseUrl::parse(&url) else {
            bail!("{from}: {url} is not an http:// or https:// base URL");
        };
        // The first place found for an API is its upstream.
        if given.iter().all(|earlier| earlier.provider != provider) {
            given.push(Given { provider, url });
        }
    }
    Ok(given)
}

/// The API Copilot CLI's own provider speaks.
fn copilot_provider() -> &'static str {
    match env("COPILOT_PROVIDER_TYPE").as_deref() {
        Some("anthropic") => "anthropic",
        _ => "openai",
    }
}

/// The value of `--flag VALUE` or `--flag=VALUE` among the agent's arguments.
fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let at = args
        .iter()
        .position(|arg| arg == flag || arg.starts_with(&format!("{flag}=")))?;
    match args[at].split_once('=') {
        Some((_, value)) => Some(value.to_owned()),
        None => args.get(at + 1).cloned(),
    }
}

/// Sets the value of `--flag VALUE` or `--flag=VALUE` among the agent's arguments.
fn set_flag_value(args: &mut [String], flag: &str, value: &str) -> bool {
    let Some(at) = args
        .iter()
        .position(|arg| arg == flag || arg.starts_with(&format!("{flag}=")))
    else {
        return false;
    };
    if args[at].contains('=') {
        args[at] = format!("{flag}={value}");
        true
    } else if at + 1 < args.len() {
        args[at + 1] = value.to_owned();
        true
    } else {
        false
    }
}

/// The person's home folder.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

/// A JSON settings file, when it is there and is JSON.
fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// Claude Code's user settings, in its home (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
fn claude_settings() -> Option<Value> {
    read_json(&agent_homes::CLAUDE_CODE.folder()?.join("settings.json"))
}

/// `env.ANTHROPIC_BASE_URL` in Claude Code's settings files, which it applies over its
/// environment: the local project's, the project's, then the user's, the first that sets it
/// (`--settings`, which the run gives, comes before them all), and where it was found.
fn claude_settings_base_url() -> Option<(String, String)> {
    let mut files = vec![
        PathBuf::from(".claude/settings.local.json"),
        PathBuf::from(".claude/settings.json"),
    ];
    files.extend(
        agent_homes::CLAUDE_CODE
            .folder()
            .map(|home| home.join("settings.json")),
    );
    files.into_iter().find_map(|file| {
        let url = read_json(&file)?["env"]["ANTHROPIC_BASE_URL"]
            .as_str()
            .filter(|url| !url.trim().is_empty())?
            .to_owned();
        Some((url, format!("{} env.ANTHROPIC_BASE_URL", file.display())))
    })
}

/// Whether an agent's settings already run `reasons hook AGENT` (installed by `reasons hook
/// install`): the run then wires no second one.
fn runs_our_hook(settings: &Value, hook: &str) -> bool {
    settings["hooks"]
        .as_object()
        .into_iter()
        .flat_map(|events| events.values())
        .filter_map(|entries| agent_asks::hook_handlers(entries).ok())
        .flatten()
        .any(|(_, handler)| agent_asks::is_our_hook(handler, hook))
}

/// Whether Copilot CLI's user hooks (every `*.json` of `hooks/` in its home) already run the
/// hook.
fn copilot_runs_our_hook() -> bool {
    let Some(hooks) = agent_homes::COPILOT_CLI
        .folder()
        .map(|home| home.join("hooks"))
    else {
        return false;
    };
    fs::read_dir(hooks)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "json"))
        .filter_map(|entry| read_json(&entry.path()))
        .any(|hooks| runs_our_hook(&hooks, "copilot-cli"))
}

/// Codex's hooks file, `$CODEX_HOME/hooks.json` (`~/.codex` without the variable).
fn codex_hooks() -> Option<Value> {
    read_json(&agent_homes::CODEX.folder()?.join("hooks.json"))
}

/// OpenCode's and Kilo's configuration files, in the order they apply (global, then the
/// project's): where a provider's `baseURL` may be set.
fn opencode_config_files(agent: Agent) -> Vec<PathBuf> {
    let (name, variable) = match agent {
        Agent::Kilo => ("kilo", "KILO_CONFIG"),
        _ => ("opencode", "OPENCODE_CONFIG"),
    };
    let mut files = Vec::new();
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| home().map(|home| home.join(".config")));
    for file in [format!("{name}.json"), "config.json".to_owned()] {
        if let Some(config) = &config {
            files.push(config.join(name).join(&file));
        }
    }
    if let Some(named) = std::env::var_os(variable) {
        files.push(PathBuf::from(named));
    }
    files.push(PathBuf::from(format!("{name}.json")));
    files
}

/// The API each AI SDK provider package speaks.
fn opencode_package_provider(package: &str) -> Option<&'static str> {
    match package {
        "@ai-sdk/anthropic" => Some("anthropic"),
        "@ai-sdk/google" => Some("gemini"),
        "@ai-sdk/openai" | "@ai-sdk/openai-compatible" => Some("openai"),
        _ => None,
    }
}

/// The built-in providers OpenCode and Kilo take a `baseURL` for, with their API's default path.
const OPENCODE_BUILT_IN: [(&str, &str, &str); 3] = [
    ("anthropic", "anthropic", "/v1"),
    ("openai", "openai", "/v1"),
    ("google", "gemini", "/v1beta"),
];

/// Every provider of the person's OpenCode or Kilo configuration that sets a `baseURL`: its
/// API, the URL, and where it was found.
fn opencode_base_urls(agent: Agent) -> Vec<(&'static str, String, String)> {
    let mut found = Vec::new();
    for file in opencode_config_files(agent) {
        let Some(config) = read_json(&file) else {
            continue;
        };
        let Some(providers) = config["provider"].as_object() else {
            continue;
        };
        for (id, provider) in providers {
            let Some(url) = provider["options"]["baseURL"].as_str() else {
                continue;
            };
            let api = provider["npm"]
                .as_str()
                .and_then(opencode_package_provider)
                .or_else(|| {
                    OPENCODE_BUILT_IN
                        .iter()
                        .find(|(name, _, _)| name == id)
                        .map(|(_, api, _)| *api)
                });
            if let Some(api) = api {
                found.push((
                    api,
                    url.to_owned(),
                    format!("{} provider.{id}.options.baseURL", file.display()),
                ));
            }
        }
    }
    found
}

/// The agent's arguments, environment and files that point it at the gateway (and wire the
/// hook) for this run.
fn wire(
    agent: Agent,
    gateway: &str,
    given: &[Given],
    reasons_log: &Path,
    args: &mut [String],
) -> anyhow::Result<Wiring> {
    let mut wiring = Wiring {
        args: Vec::new(),
        env: Vec::new(),
        folder: None,
        hook: Err(format!(
            "{} takes no hook for one run: `reasons watch` shows its reasons",
            agent.command().1
        )),
    };
    // The gateway's URL with the path of the base URL the agent had, else its API's usual one.
    let through = |provider: &str, usual: &str| {
        let path = given
            .iter()
            .find(|given| given.provider == provider)
            .map_or(usual, |given| given.url.path.as_str());
        format!("{gateway}{path}")
    };
    // The hook as `hook install` writes it, in the prompt where the agent asks.
    let hook_command = |agent: hook::Agent| {
        hook_install::hook_command(agent, Some(reasons_log), Placement::InPrompt, None)
    };
    match agent {
        Agent::ClaudeCode => {
            let url = through("anthropic", "");
            wiring.env.push(("ANTHROPIC_BASE_URL".into(), url.clone()));
            // The gateway takes the API's classifier request off (no policy may read a reason):
            // without this, Claude Code's auto mode waits for a verdict that never comes instead
            // of classifying each call itself, on its own copy, which the gateway stripped.
            wiring
                .env
                .push(("CLAUDE_CODE_AUTO_MODE_SERVER".into(), "0".into()));
            // Settings given on the command line come before the user's: their `env` too.
            let mut settings =
                json!({"env": {"ANTHROPIC_BASE_URL": url, "CLAUDE_CODE_AUTO_MODE_SERVER": "0"}});
            if claude_settings().is_some_and(|user| runs_our_hook(&user, "claude-code")) {
                wiring.hook = Err("Claude Code's settings already run the hook".into());
            } else {
                let handler =
                    json!({"type": "command", "command": hook_command(hook::Agent::ClaudeCode)?});
                settings["hooks"] = json!({"PreToolUse": [{"matcher": "*", "hooks": [handler]}]});
                wiring.hook = Ok(());
            }
            wiring.args = vec!["--settings".into(), settings.to_string()];
        }
        Agent::Codex => {
            let url = through("openai", "/v1");
            let mut provider = format!(
                "{{ name = \"OpenAI through reasons\", base_url = {}, wire_api = \"responses\"",
                toml_string(&url)
            );
            // The person's key, as Codex's own OpenAI provider takes it; without one, the
            // login Codex keeps.
            if env("OPENAI_API_KEY").is_some() {
                provider.push_str(", env_key = \"OPENAI_API_KEY\" }");
            } else {
                provider.push_str(", requires_openai_auth = true }");
            }
            wiring.args = vec![
                "-c".into(),
                "model_provider=\"reasons-run\"".into(),
                "-c".into(),
                format!("model_providers.reasons-run={provider}"),
            ];
            // A hook given as a flag is one of the run's settings (Codex's "session flags"),
            // under Codex's hook trust: it asks the person to review it before it first runs.
            if codex_hooks().is_some_and(|hooks| runs_our_hook(&hooks, "codex")) {
                wiring.hook = Err("Codex's hooks.json already runs the hook".into());
            } else {
                wiring.args.push("-c".into());
                wiring.args.push(format!(
                    "hooks.PreToolUse=[{{ hooks = [{{ type = \"command\", command = {} }}] }}]",
                    toml_string(&hook_command(hook::Agent::Codex)?)
                ));
                wiring.hook = Ok(());
            }
        }
        Agent::GeminiCli => {
            wiring
                .env
                .push(("GOOGLE_GEMINI_BASE_URL".into(), through("gemini", "")));
            // Its only settings file above the user's that an environment variable names, the
            // system settings (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`), is read only when root owns
            // it and every folder above it (Gemini CLI 0.61): no hook for one run.
            wiring.hook = Err("Gemini CLI takes no hook for one run (`reasons hook install gemini-cli` installs it)".into());
        }
        Agent::QwenCode => {
            let url = through("openai", "/v1");
            if !set_flag_value(args, "--openai-base-url", &url) {
                wiring.env.push(("OPENAI_BASE_URL".into(), url));
            }
        }
        Agent::Cline => cline_providers(&mut wiring, gateway, given)?,
        Agent::CopilotCli => {
            let provider = copilot_provider();
            wiring
                .env
                .push(("COPILOT_PROVIDER_BASE_URL".into(), through(provider, "/v1")));
            // A plugin of this run's, loaded with --plugin-dir (Copilot CLI 1.0.102): its
            // `hooks/hooks.json` holds the hook, in the shape of Copilot CLI's hooks files.
            if copilot_runs_our_hook() {
                wiring.hook = Err("Copilot CLI's hooks already run the hook".into());
            } else {
                let manifest = json!({"name": "reasons-run", "version": env!("CARGO_PKG_VERSION"),
                    "description": "The model's reason in the approval dialog, for this run of reasons run"});
                let handler =
                    json!({"type": "command", "bash": hook_command(hook::Agent::CopilotCli)?});
                let hooks = json!({"version": 1, "hooks": {"preToolUse": [handler]}});
                let plugin = wiring.private_folder("copilot-plugin")?;
                wiring.private_file(
                    "copilot-plugin/plugin.json",
                    manifest.to_string().as_bytes(),
                )?;
                wiring.private_folder("copilot-plugin/hooks")?;
                wiring.private_file(
                    "copilot-plugin/hooks/hooks.json",
                    hooks.to_string().as_bytes(),
                )?;
                wiring.args = vec!["--plugin-dir".into(), plugin.to_string_lossy().into_owned()];
                wiring.hook = Ok(());
            }
        }
        Agent::OpenCode | Agent::Kilo => {
            let mut providers = serde_json::Map::new();
            for (name, api, usual) in OPENCODE_BUILT_IN {
                providers.insert(
                    name.to_owned(),
                    json!({"options": {"baseURL": through(api, usual)}}),
                );
            }
            for file in opencode_config_files(agent) {
                let Some(config) = read_json(&file) else {
                    continue;
                };
                for (id, provider) in config["provider"].as_object().into_iter().flatten() {
                    let Some(url) = provider["options"]["baseURL"].as_str() else {
                        continue;
                    };
                    let Some(url) = BaseUrl::parse(url) else {
                        continue;
                    };
                    let api = provider["npm"]
                        .as_str()
                        .and_then(opencode_package_provider)
                        .unwrap_or("openai");
                    // Only a provider whose origin is the one its API goes to upstream: two
                    // places for one API cannot share a gateway, the later keeps its own.
                    let upstream = given.iter().find(|given| given.provider == api);
                    if upstream.is_some_and(|given| given.url.origin == url.origin) {
                        providers.insert(
                            id.clone(),
                            json!({"options": {"baseURL": format!("{gateway}{}", url.path)}}),
                        );
                    }
                }
            }
            let variable = if agent == Agent::Kilo {
                "KILO_CONFIG_CONTENT"
            } else {
                "OPENCODE_CONFIG_CONTENT"
            };
            let mut content = json!({"provider": providers});
            // Inline configuration the person already gives keeps everything but the URLs.
            if let Some(Value::Object(mut theirs)) = env(variable)
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok())
            {
                let mut merged = theirs.remove("provider").unwrap_or(json!({}));
                merge(&mut merged, content["provider"].take());
                theirs.insert("provider".into(), merged);
                content = Value::Object(theirs);
            }
            wiring.env.push((variable.into(), content.to_string()));
        }
    }
    Ok(wiring)
}

/// Cline's provider settings: `$CLINE_PROVIDER_SETTINGS_PATH`, else `settings/providers.json`
/// in its data folder (`$CLINE_DATA_DIR`, else `~/.cline/data`).
fn cline_providers_path() -> Option<PathBuf> {
    if let Some(path) = env("CLINE_PROVIDER_SETTINGS_PATH") {
        return Some(PathBuf::from(path));
    }
    let data = env("CLINE_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| Some(home()?.join(".cline/data")))?;
    Some(data.join("settings/providers.json"))
}

/// The API a Cline provider speaks, by its name.
fn cline_provider_api(name: &str) -> &'static str {
    if name.contains("anthropic") {
        "anthropic"
    } else if name.contains("gemini") {
        "gemini"
    } else {
        "openai"
    }
}

/// Every Cline provider whose settings name a base URL (`cline auth --baseurl`).
fn cline_base_urls() -> Vec<(&'static str, String, String)> {
    let Some(path) = cline_providers_path() else {
        return Vec::new();
    };
    let Some(settings) = read_json(&path) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (name, provider) in settings["providers"].as_object().into_iter().flatten() {
        if let Some(url) = provider["settings"]["baseUrl"].as_str() {
            let from = format!("{} providers.{name}.settings.baseUrl", path.display());
            found.push((cline_provider_api(name), url.to_owned(), from));
        }
    }
    found
}

/// Cline reads its providers from the file `CLINE_PROVIDER_SETTINGS_PATH` names: the run's is a
/// copy of the person's, each base URL that goes upstream pointed at the gateway instead.
fn cline_providers(wiring: &mut Wiring, gateway: &str, given: &[Given]) -> anyhow::Result<()> {
    let Some(path) = cline_providers_path() else {
        return Ok(());
    };
    let Some(mut settings) = read_json(&path) else {
        message!(
            "{} holds no provider settings of Cline's: it starts without the gateway (set one up with `cline auth --baseurl URL`)",
            path.display()
        );
        return Ok(());
    };
    let mut pointed = false;
    for (name, provider) in settings["providers"].as_object_mut().into_iter().flatten() {
        let api = cline_provider_api(name);
        let Some(url) = provider["settings"]["baseUrl"]
            .as_str()
            .and_then(BaseUrl::parse)
        else {
            continue;
        };
        let upstream = given.iter().find(|given| given.provider == api);
        if upstream.is_some_and(|given| given.url.origin == url.origin) {
            provider["settings"]["baseUrl"] = json!(format!("{gateway}{}", url.path));
            pointed = true;
        }
    }
    if !pointed {
        message!(
            "Cline's providers ({}) name no base URL: it starts without the gateway (set one with `cline auth --baseurl URL`)",
            path.display()
        );
        return Ok(());
    }
    let copy = wiring
        .private_file("cline-providers.json", settings.to_string().as_bytes())
        .context("cannot write the run's copy of Cline's provider settings")?;
    wiring.env.push((
        "CLINE_PROVIDER_SETTINGS_PATH".into(),
        copy.to_string_lossy().into_owned(),
    ));
    Ok(())
}

/// Adds `over` into `base`, object by object, `over` winning where both hold a value.
fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                merge(base.entry(key).or_insert(Value::Null), value);
            }
        }
        (base, over) => *base = over,
    }
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// Opens `reasons watch` on the log in a tmux split below the agent, keeping the agent's pane
/// focused; the pane's id, to close it when the agent ends. Outside tmux, says how to watch.
fn open_watch(reasons_log: &Path) -> Option<String> {
    let log = std::path::absolute(reasons_log).unwrap_or_else(|_| reasons_log.to_owned());
    let watch_command = |binary: &str| {
        format!(
            "{} watch --reasons-log {}",
            shell_quote(binary),
            shell_quote(&log.to_string_lossy())
        )
    };
    if std::env::var_os("TMUX").is_none_or(|tmux| tmux.is_empty()) {
        message!(
            "--watch opens a tmux split, and this terminal is not inside tmux: run `{}` in another terminal",
            watch_command("reasons")
        );
        return None;
    }
    let binary = std::env::current_exe()
        .map(|binary| binary.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "reasons".to_owned());
    let output = Command::new("tmux")
        .args([
            "split-window",
            "-d",
            "-v",
            "-l",
            "30%",
            "-P",
            "-F",
            "#{pane_id}",
        ])
        .arg(watch_command(&binary))
        .output();
    match output {
        Ok(output) if output.status.success() => {
            Some(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        }
        Ok(output) => {
            message!(
                "--watch: tmux could not split the window: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
            None
        }
        Err(error) => {
            message!("--watch: cannot run tmux: {error}");
            None
        }
    }
}

/// While the agent runs, `reasons` lives on to report: Ctrl-C and Ctrl-\ reach the agent from
/// the terminal (the same process group), so here they are only caught (a caught signal is the
/// default again in the agent, an ignored one would stay ignored); SIGTERM and SIGHUP sent to
/// `reasons` alone are passed on to the agent.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Catches them from now on (within a runtime).
    fn catch() -> io::Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            quit: signal(SignalKind::quit())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// Passes SIGTERM and SIGHUP on to the agent `pid`, until aborted.
    async fn forward_to(mut self, pid: u32) {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return;
        };
        loop {
            let forward = tokio::select! {
                _ = self.interrupt.recv() => None,
                _ = self.quit.recv() => None,
                _ = self.terminate.recv() => Some(rustix::process::Signal::TERM),
                _ = self.hangup.recv() => Some(rustix::process::Signal::HUP),
            };
            if let Some(signal) = forward {
                // The agent's pid, which this process started and has not yet waited for, so it
                // names no other process.
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
    }
}

/// The status to exit with: the agent's, or 128 + the signal that ended it, as shells report it.
fn exit_status(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(2)
}

/// The counts of the calls the agent recorded during the run, read from its own session logs
/// (those written since it started) joined with the reasons the gateway logged meanwhile.
fn calls_of_the_run(
    agent: Agent,
    started: SystemTime,
    reasons_log: &Path,
    log_start: u64,
) -> Counts {
    let mut counts = Counts::default();
    let Ok(found) = sources::local_logs(&mut |_| {}) else {
        return counts;
    };
    // A second's slack: some file systems keep modification times in whole seconds.
    let since = started - Duration::from_secs(1);
    let sources: Vec<Source> = found
        .sources
        .into_iter()
        .filter(|source| {
            source
                .path()
                .is_some_and(|path| modified_since(path, since))
        })
        .collect();
    let options = SourceOptions {
        read: ReadOptions::default(),
        strict: false,
        follow: false,
        reasons: reasons_since(reasons_log, log_start).map(Arc::new),
    };
    let format = agent.format();
    let _ = read_each_in_order(
        &sources,
        &options,
        Counts::default,
        |counts, record| {
            let during = record
                .timestamp
                .as_deref()
                .is_none_or(|time| !before(time, since));
            if record.format == format && during {
                counts.add(&record);
            }
        },
        |_, file, _| {
            counts.merge(&file);
            Ok(())
        },
    );
    counts
}

/// Whether the file (or a SQLite store's write-ahead log beside it) changed since `since`.
fn modified_since(path: &Path, since: SystemTime) -> bool {
    let mut wal = OsString::from(path.as_os_str());
    wal.push("-wal");
    [path.to_owned(), PathBuf::from(wal)].iter().any(|path| {
        fs::metadata(path)
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| modified >= since)
    })
}

/// Whether a record's timestamp, as its log writes it (RFC 3339 in UTC, or seconds or
/// milliseconds since the epoch), is before the run started; one it cannot read is not.
fn before(time: &str, started: SystemTime) -> bool {
    let started = started
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    if let Ok(number) = time.trim().parse::<u64>() {
        // Milliseconds from 2001 on have 12 digits or more; seconds have 10 until 2286.
        return if number >= 100_000_000_000 {
            u128::from(number) < started.as_millis()
        } else {
            number < started.as_secs()
        };
    }
    let utc = time.ends_with('Z') || time.ends_with("+00:00");
    utc && utc_seconds(time).is_some_and(|seconds| seconds < started.as_secs())
}

/// The seconds since the epoch of `YYYY-MM-DDTHH:MM:SS…` (days from the civil date by Howard
/// Hinnant's algorithm).
fn utc_seconds(time: &str) -> Option<u64> {
    let number = |range: std::ops::Range<usize>| time.get(range)?.parse::<i64>().ok();
    let bytes = time.as_bytes();
    if bytes.len() < 19 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[13] != b':' {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    u64::try_from(days * 86_400 + hour * 3600 + minute * 60 + second).ok()
}

/// The reasons the log gained during the run (from where it ended when the run began; the whole
/// file when it was replaced meanwhile), to join with the calls.
fn reasons_since(log: &Path, start: u64) -> Option<reasons_log::Index> {
    let mut file = fs::File::open(log).ok()?;
    let length = file.metadata().ok()?.len();
    let from = if length >= start { start } else { 0 };
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut index = reasons_log::Index::default();
    index.add(BufReader::new(file)).ok()?;
    Some(index)
}

/// The line at the end of the run.
fn summary(counts: &Counts, reasons_log: &Path) -> String {
    let log = reasons_log.display();
    if counts.calls == 0 {
        return format!("no calls recorded during the run; reasons log {log}");
    }
    let calls = if counts.calls == 1 { "call" } else { "calls" };
    let coverage = counts.coverage.map_or_else(
        || "no audited calls".to_owned(),
        |coverage| format!("coverage {}", reasons::stats::percent(coverage)),
    );
    format!(
        "{} {calls}, {} with a reason, {coverage}; reasons log {log}",
        counts.calls, counts.present
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_keeps_its_path_for_the_agent_and_its_origin_goes_upstream() {
        let url = BaseUrl::parse("https://proxy.example:8443/anthropic/").unwrap();
        assert_eq!(url.origin, "https://proxy.example:8443");
        assert_eq!(url.path, "/anthropic");
        assert_eq!(BaseUrl::parse("http://127.0.0.1:9/v1").unwrap().path, "/v1");
        assert_eq!(BaseUrl::parse("http://h").unwrap().path, "");
        assert!(BaseUrl::parse("ftp://h/v1").is_none());
        assert!(BaseUrl::parse("http:///v1").is_none());
        assert!(BaseUrl::parse("not a url").is_none());
    }

    #[test]
    fn a_flag_is_found_and_set_in_both_spellings() {
        let mut args: Vec<String> = ["-m", "x", "--openai-base-url", "http://a/v1", "go"]
            .map(String::from)
            .into();
        assert_eq!(
            flag_value(&args, "--openai-base-url").unwrap(),
            "http://a/v1"
        );
        assert!(set_flag_value(
            &mut args,
            "--openai-base-url",
            "http://g/v1"
        ));
        assert_eq!(args[3], "http://g/v1");
        let mut args = vec!["--openai-base-url=http://a".to_owned()];
        assert_eq!(flag_value(&args, "--openai-base-url").unwrap(), "http://a");
        assert!(set_flag_value(&mut args, "--openai-base-url", "http://g"));
        assert_eq!(args[0], "--openai-base-url=http://g");
        assert!(!set_flag_value(
            &mut ["--openai-base-url".to_owned()],
            "--openai-base-url",
            "x"
        ));
    }

    #[test]
    fn timestamps_before_the_start_are_told_in_every_way_logs_write_them() {
        // 2027-01-15T08:00:00Z
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(utc_seconds("2027-01-15T08:00:00.000Z"), Some(1_800_000_000));
        assert_eq!(utc_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(utc_seconds("2024-02-29T00:00:00Z"), Some(1_709_164_800));
        assert!(before("2020-01-01T00:00:00Z", start));
        assert!(before("2027-01-15T07:59:59.999Z", start));
        assert!(!before("2027-01-15T08:00:00Z", start));
        assert!(!before("2030-01-01T00:00:00.000+00:00", start));
        assert!(before("1799999999", start));
        assert!(!before("1800000001", start));
        assert!(before("1799999999000", start));
        assert!(!before("1800000000500", start));
        // A local time without its offset, or text that is no time, is never left out.
        assert!(!before("2020-01-01T00:00:00", start));
        assert!(!before("t1", start));
    }

    #[test]
    fn a_hook_already_installed_is_seen() {
        let settings = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "/usr/bin/reasons hook claude-code"}]}]}});
        assert!(runs_our_hook(&settings, "claude-code"));
        assert!(!runs_our_hook(&settings, "gemini-cli"));
        assert!(!runs_our_hook(&json!({"hooks": "no"}), "claude-code"));
    }

    #[test]
    fn the_summary_says_calls_reasons_coverage_and_the_log() {
        let mut counts = Counts {
            calls: 3,
            present: 2,
            missing: 1,
            ..Counts::default()
        };
        counts.coverage = Some(200.0 / 3.0);
        assert_eq!(
            summary(&counts, Path::new("/l.jsonl")),
            "3 calls, 2 with a reason, coverage 66.7%; reasons log /l.jsonl"
        );
        assert_eq!(
            summary(&Counts::default(), Path::new("/l.jsonl")),
            "no calls recorded during the run; reasons log /l.jsonl"
        );
    }
}
