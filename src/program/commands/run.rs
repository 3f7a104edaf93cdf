//! `reasons run AGENT`: a gateway of the run's own on a free loopback port, the agent pointed at
//! it its own way (its file in [`crate::program::agents`] says how, [`crate::program::wiring`]
//! what that may change) and started in the foreground with the terminal, then one line saying
//! what the run's calls carried.

use std::ffi::OsString;
use std::fs;
use std::io::{self, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context};
use reasons::formats::ReadOptions;
use reasons::layer::ReasonPosition;
use reasons::reasons_log;
use reasons::stats::Counts;

use crate::program::agents::hook_settings::{hook_command, shell_quote};
use crate::program::agents::{Agent, Placement, Run};
use crate::program::exit_codes::ExitCode;
use crate::program::gateway_server;
use crate::program::messages::message;
use crate::program::read::schedule::{read_each_in_order, SourceOptions};
use crate::program::read::sources::{self, Source};
use crate::program::wiring::{self, Given, Pointing, Wiring};

/// How the run goes.
#[derive(Debug)]
pub struct Options {
    pub agent: &'static Agent,
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
    /// `--reason-position`, as the gateway takes it.
    pub position: ReasonPosition,
    /// `--max-body`, as the gateway takes it.
    pub max_body: u64,
    /// The collector spans go to (`--otlp`, else where the environment sends them).
    pub otlp: Option<String>,
    /// Whether to open `reasons watch` in a tmux split.
    pub watch: bool,
    /// Whether the agent asks the person before each call, the reason in the question.
    pub confirm: bool,
    /// Whether the spans sent are masked (`--no-mask` turns it off).
    pub masking: reasons::masking::Masking,
    /// The agent's own arguments.
    pub args: Vec<String>,
}

/// Runs the agent through a gateway of its own, and says what its calls carried.
pub fn run(options: Options) -> anyhow::Result<ExitCode> {
    let agent = options.agent;
    let Some(starts) = &agent.run else {
        bail!("{} is not an agent `reasons run` starts", agent.title);
    };
    let Run {
        command,
        strips,
        given,
        wire,
        confirms,
        pointed: _,
    } = starts;
    let name = agent.title;
    if options.confirm && !confirms {
        bail!(
            "--confirm: {name} asks before calls its own way, which `reasons run` does not change"
        );
    }
    let program = match &options.program {
        Some(program) => program.clone(),
        None => on_path(command).with_context(|| {
            format!("{name} is not installed: no `{command}` on PATH (name it with --program)")
        })?,
    };
    let mut args = options.args.clone();
    let given = wiring::given(given(&args)?)?;
    let upstreams = upstreams_with(&options.upstreams, &given);
    let strip = options.strip.unwrap_or(*strips);
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
        position: options.position,
        max_body: options.max_body,
        // A run is one person's: no route for other machines, no store shared with replicas.
        serve_reasons: false,
        store: None,
        store_ttl: None,
        otlp: options.otlp.clone(),
        masking: options.masking,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the gateway's runtime")?;
    let bound = runtime.block_on(gateway_server::bind(&gateway_options))?;
    let address = bound.address()?;
    let gateway_url = format!("http://{address}");
    // The hook as `hook install` writes it, in the prompt where the agent asks.
    let hook_command = match agent.hook {
        Some(_) => Some(hook_command(
            agent.name(),
            Some(&options.reasons_log),
            Placement::InPrompt,
            None,
        )?),
        None => None,
    };
    let pointing = Pointing {
        gateway: &gateway_url,
        given: &given,
        hook_command,
        confirm: options.confirm,
    };
    let mut wiring = Wiring::new(format!(
        "{name} takes no hook for one run: `reasons watch` shows its reasons"
    ));
    wire(&mut wiring, &pointing, &mut args)?;
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

/// The gateway's upstreams: the person's `--upstream`s, and the origin of each base URL the
/// agent was given for an API none of them sets (an `--upstream` for every API, or for this one,
/// is the person's word over the agent's).
fn upstreams_with(named: &[String], given: &[Given]) -> Vec<String> {
    let mut upstreams = named.to_vec();
    for given in given {
        let set = named.iter().any(|upstream| {
            gateway_server::named_upstream(upstream).is_none_or(|(api, _)| api == given.provider)
        });
        if !set {
            upstreams.push(format!("{}={}", given.provider, given.url.origin));
        }
    }
    upstreams
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
    agent: &Agent,
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
    let format = agent.format;
    // An agent can keep a call in two logs (Hermes: its store and its session files): it is one
    // call of the run.
    let mut counted = std::collections::HashSet::new();
    let _ = read_each_in_order(
        &sources,
        &options,
        Vec::new,
        |calls, record| {
            let during = record
                .timestamp
                .as_deref()
                .is_none_or(|time| !before(time, since));
            if record.format == format && during {
                calls.push(record);
            }
        },
        |_, calls, _| {
            for call in calls {
                let first = call
                    .call_id
                    .as_ref()
                    .is_none_or(|id| counted.insert(id.clone()));
                if first {
                    counts.add(&call);
                }
            }
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

/// Whether a record's timestamp, as its log writes it, is before the run started; one that
/// names no instant (a local time without its offset) is not.
fn before(time: &str, started: SystemTime) -> bool {
    let started = started
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    reasons::dates::epoch_nanos(time)
        .is_some_and(|nanos| u128::try_from(nanos).map_or(true, |nanos| nanos < started))
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
    use crate::program::wiring::BaseUrl;

    #[test]
    fn timestamps_before_the_start_are_told_in_every_way_logs_write_them() {
        // 2027-01-15T08:00:00Z
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert!(before("2027-01-15T08:30:00+01:00", start));
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
    fn a_bare_upstream_with_an_equals_sign_in_its_query_is_every_api_s() {
        let given = [Given {
            provider: "openai",
            url: BaseUrl::parse("http://agent.example/v1").unwrap(),
        }];
        let bare = vec!["http://proxy.example/?route=a".to_owned()];
        assert_eq!(upstreams_with(&bare, &given), bare);
        let other_api = vec!["anthropic=http://a.example".to_owned()];
        assert_eq!(
            upstreams_with(&other_api, &given),
            ["anthropic=http://a.example", "openai=http://agent.example"]
        );
        let this_api = vec!["openai=http://o.example/?k=v".to_owned()];
        assert_eq!(upstreams_with(&this_api, &given), this_api);
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
