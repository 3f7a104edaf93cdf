//! The integration tests' scaffolding, in one place (as ripgrep's `tests/util.rs`): a test file
//! imports from here and never from another test file, so that each job is written once.
//!
//! - here: running the real `reasons` executable ([`reasons`], [`run`], [`Run`], and on a
//!   terminal of its own: [`reasons_on_a_terminal`]), the records of `--format jsonl`
//!   ([`records`], [`extract_records`]), reasons logs, small log files, and waiting for files;
//! - [`environment`]: the one environment every program a test starts runs in, this machine's
//!   cleared (no agent's home, `XDG_*` folder, reasons log or collector of the developer's);
//! - [`upstream`]: the scripted model API on loopback, and a small HTTP client;
//! - [`gemini_model`]: a scripted Gemini API model that makes one shell call;
//! - [`gateway`]: a running `reasons gateway` in front of it;
//! - [`real_parts`]: where the real third-party parts are (the agents, the SDKs, chromium);
//! - [`llama`]: a real model (llama.cpp's server with Qwen2.5-Coder), and a relay that keeps what
//!   passed between the gateway and it;
//! - [`mcp_session`]: an MCP client's stdio session with `reasons proxy`;
//! - [`eventually`]: waiting for a condition, never for a fixed time;
//! - [`bounded`]: running a program with a deadline, as every real part is;
//! - [`chat_model`]: a scripted Chat Completions model that makes one call;
//! - [`claude_code`]: a real Claude Code run, and the scripted Messages model it talks to;
//! - [`cline`]: Cline's one-time setup, `cline auth`, as a person runs it;
//! - [`sandbox`]: a temporary `HOME` and `XDG_*` folders for one agent run;
//! - [`stores`]: SQLite stores shaped like OpenCode's, Kilo's, Crush's and Goose's;
//! - [`release`]: the release's archive, installer and npm packages, made by its own scripts;
//! - [`report_page`]: reading the page `reasons report` writes;
//! - [`runner`]: a GitHub Actions runner running a composite action's steps;
//! - [`fake_credentials`]: fake credentials of every kind `reasons::masking` masks;
//! - [`phoenix`], [`redis`]: a real Arize Phoenix (an OpenTelemetry collector) and a real Redis;
//! - [`tmux`]: a program in a terminal of its own, and what its screen shows.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

#[cfg(unix)]
pub mod bounded;
pub mod chat_model;
#[cfg(unix)]
pub mod claude_code;
#[cfg(unix)]
pub mod cline;
pub mod environment;
pub mod fake_credentials;
pub mod gateway;
pub mod gemini_model;
pub mod listening_proxy;
#[cfg(unix)]
pub mod llama;
pub mod mcp_session;
pub mod phoenix;
pub mod real_parts;
pub mod redis;
pub mod release;
pub mod report_page;
#[cfg(unix)]
pub mod runner;
#[cfg(unix)]
pub mod sandbox;
pub mod stores;
#[cfg(unix)]
pub mod tmux;
pub mod upstream;

/// The crate's root, where `samples/` and `man/` live.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared corpus of real agent logs beside the crate (`../shared/corpus`), which is not part
/// of it: a test that reads it is ignored by a plain `cargo test`, and fails when it is not there.
#[track_caller]
/// Both folders of real files: `corpus/`, and `corpus-new-agents/`, the real files of the agents whose logs are not in `corpus/`
/// (`corpus-new-agents/`), each with its `SOURCES.md` of independent counts.
pub fn corpora() -> [PathBuf; 2] {
    [shared_folder("corpus"), shared_folder("corpus-new-agents")]
}

fn shared_folder(name: &str) -> PathBuf {
    let corpus = root().join("../shared").join(name);
    assert!(
        corpus.join("SOURCES.md").exists(),
        "no corpus at {}",
        corpus.display()
    );
    corpus
}

/// The MCP server test fixture (`examples/mcp_fixture.rs`). `cargo test` builds examples next to
/// the test binaries' own directory; a run limited to this test target does not, hence the hint.
pub fn mcp_fixture() -> PathBuf {
    let name = format!("mcp_fixture{}", std::env::consts::EXE_SUFFIX);
    let path = std::env::current_exe()
        .ok()
        .and_then(|test| Some(test.parent()?.parent()?.join("examples").join(name)))
        .expect("the test binary sits in a cargo target directory");
    assert!(
        path.exists(),
        "{} is missing: run `cargo test` (which builds examples) or `cargo build --example mcp_fixture`",
        path.display()
    );
    path
}

/// A `reasons` command ready to run, in the [`environment`] of its own every program a test
/// starts has (an empty HOME, no variable of this machine's but `PATH`) and without colour: what
/// else it sees (a HOME, an agent's home, `REASONS_LOG`, `COLUMNS`) its test names.
pub fn reasons() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reasons"));
    environment::clear(&mut command)
        .env("NO_COLOR", "1")
        .current_dir(root());
    command
}

/// `reasons ARGS` with a terminal for its standard input, as a person typing it has: run by
/// `script` (util-linux), in the same cleared [`environment`] as [`reasons`]. Fails when there
/// is no `script` rather than let a test pass unseen.
pub fn reasons_on_a_terminal(args: &[&str]) -> Command {
    Command::new("script")
        .arg("--version")
        .output()
        .expect("`script` (util-linux), to give the command a terminal");
    let mut line = quoted(env!("CARGO_BIN_EXE_reasons"));
    for word in args {
        line.push(' ');
        line.push_str(&quoted(word));
    }
    let mut command = Command::new("script");
    command.args(["-qec", &line, "/dev/null"]);
    environment::clear(&mut command)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    command
}

/// The outcome of one run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Runs `reasons ARGS` with `stdin` as its standard input.
#[track_caller]
pub fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Run {
    output_with_stdin(args, stdin).into()
}

/// Runs `reasons ARGS` with `stdin` as its standard input, keeping the output as bytes.
#[track_caller]
pub fn output_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = reasons()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the reasons binary starts");
    let mut input = child.stdin.take().expect("stdin is piped");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let output = child.wait_with_output().expect("reasons runs");
    writer.join().expect("stdin writer finishes");
    output
}

/// Runs `reasons ARGS` with empty standard input.
#[track_caller]
pub fn run(args: &[&str]) -> Run {
    run_with_stdin(args, b"")
}

/// A path as the `&str` the command line takes.
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// A word as a POSIX shell reads it back.
pub fn quoted(word: impl AsRef<Path>) -> String {
    let word = word.as_ref().to_string_lossy();
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// One Claude Code transcript line holding one `tool_use` call.
pub fn claude_call(session: &str, id: &str, tool: &str, input: serde_json::Value) -> String {
    serde_json::json!({
        "type": "assistant",
        "sessionId": session,
        "timestamp": "2026-11-30T09:00:00.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": id, "name": tool, "input": input}]
        }
    })
    .to_string()
}

/// One reasons-log line as the gateway writes it (at 10:11:12 UTC, which `watch` shows).
pub fn logged_line(call_id: &str, tool: &str, touched: &str, reason: &str) -> String {
    serde_json::json!({"time": "2026-12-01T10:11:12.000Z", "via": "gateway", "tool": tool,
        "call_id": call_id, "reason": reason, "touched": touched})
    .to_string()
}

/// A reasons log at `path` as the gateway writes it, one record per `(tool, call id, reason)`.
pub fn write_reasons_log(path: &Path, records: &[(&str, &str, &str)]) {
    let text: String = records
        .iter()
        .map(|(tool, call_id, reason)| logged_line(call_id, tool, "", reason) + "\n")
        .collect();
    std::fs::write(path, text).expect("the reasons log is written");
}

/// A log file written into a fresh temporary directory.
pub fn log_file(name: &str, lines: &[String]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join(name);
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(&path, text).expect("the log is written");
    (dir, path)
}

/// The JSON records of a `--format jsonl` run.
pub fn records(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is a JSON record"))
        .collect()
}

/// `reasons extract ARGS --format jsonl`, which must succeed: the records it found.
#[track_caller]
pub fn extract_records(args: &[&str]) -> Vec<Value> {
    extract_records_and_warnings(args).0
}

/// `reasons extract ARGS --format jsonl`, which must succeed: the records it found, and what it
/// wrote on stderr (its warnings), for a test that asserts there are none.
#[track_caller]
pub fn extract_records_and_warnings(args: &[&str]) -> (Vec<Value>, String) {
    let output = reasons()
        .arg("extract")
        .args(args)
        .args(["--format", "jsonl"])
        .output()
        .expect("reasons extract runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "extract {args:?}: {stderr}\n{stdout}"
    );
    (records(&stdout), stderr)
}

/// Appends `lines` to the log at `path` (made if it is not there), each ending in a newline, as
/// an agent writes on while a follower reads.
pub fn append_lines(path: &Path, lines: &[String]) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .expect("the log opens for appending");
    for line in lines {
        writeln!(file, "{line}").expect("the line is appended");
    }
}

/// The `reasons` binary by the absolute path `reasons hook install` writes into an agent's
/// settings.
pub fn installed_binary() -> PathBuf {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_reasons")).expect("the reasons binary is there")
}

/// Runs `reasons hook install AGENT --reasons-log LOG` as a person would, with `env` (the
/// agent's HOME or its own config folder) in place of this machine's, and checks what it says.
#[track_caller]
pub fn install_hook(agent: &str, env: &[(&str, &Path)], log: &Path) {
    let mut command = reasons();
    command.args(["hook", "install", agent, "--reasons-log", arg(log)]);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("reasons runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.starts_with("Added the "), "{stdout}");
    assert!(
        stdout.contains(&format!("reasons hook uninstall {agent}")),
        "{stdout}"
    );
}

/// The lines a child writes, read on a thread of their own, so a test can wait for the next one
/// with a deadline instead of hanging when it never comes.
pub fn lines_of(output: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (lines_out, lines_in) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if lines_out.send(line).is_err() {
                break;
            }
        }
    });
    lines_in
}

/// Waits until process `pid` has read `path` up to its current end: the readiness signal for a
/// follower (`--follow`) that has seen everything written so far and now waits for more. Read
/// from the file's offset in `/proc/PID/fdinfo`, so no test has to guess how long that takes.
#[cfg(target_os = "linux")]
#[track_caller]
pub fn wait_until_read(pid: u32, path: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let path = path.canonicalize().expect("the file is there");
    let end = std::fs::metadata(&path).expect("the file is there").len();
    loop {
        let read_to = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == path))
            .filter_map(|fd| {
                let info = format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy());
                let info = std::fs::read_to_string(info).ok()?;
                info.lines()
                    .find_map(|line| line.strip_prefix("pos:"))?
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .max();
        if read_to.is_some_and(|read_to| read_to >= end) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{pid} did not read {} to its end ({end} bytes) in time: at {read_to:?}",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The records of a reasons log, each without its `time` (checked to be RFC 3339 UTC).
pub fn read_reasons_log(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("the reasons log is written");
    text.lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).expect("a JSON record");
            let time = record
                .as_object_mut()
                .and_then(|record| record.shift_remove("time"))
                .expect("a time");
            let time = time.as_str().expect("time is text");
            assert!(time.len() == 24 && time.ends_with('Z'), "{time}");
            record
        })
        .collect()
}

/// The one file under `dir` (at any depth) whose name starts with `prefix` and ends with
/// `suffix`: where an agent put the log of the session a test ran.
#[track_caller]
pub fn only_file(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    fn walk(dir: &Path, matches: &dyn Fn(&str) -> bool, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, matches, found);
            } else if matches(&entry.file_name().to_string_lossy()) {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    let matches = |name: &str| name.starts_with(prefix) && name.ends_with(suffix);
    walk(dir, &matches, &mut found);
    assert_eq!(
        found.len(),
        1,
        "{prefix}*{suffix} under {}: {found:?}",
        dir.display()
    );
    found.remove(0)
}

/// Waits until `found` gives something, for what happens in the background (a record written, a
/// span sent, a line shown): asked every 20 ms, for at most 60 seconds, then the test fails
/// naming `what`. Tests wait for a condition this way, never for a fixed time.
#[track_caller]
/// A loopback port free a moment ago, for a program that must be told its port: one that
/// cannot be given port 0 and say which it took.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn eventually<T>(what: &str, mut found: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(found) = found() {
            return found;
        }
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
