//! `cargo bench`: how fast `reasons` reads agent logs, next to `jq` doing the same job and `cat`.
//!
//! Generates realistic logs once (deterministically, under `target/bench-data/`), then times the
//! release `reasons stats --format json` and `reasons check` on one and on two threads, a `jq`
//! one-liner extracting each call's id, name and reason, and `cat`, all on the same files, and
//! prints MB/s (10^6 bytes per second) and the ratios. Each big log is dropped from the page
//! cache and read back once before it is timed (see [`cache_as_read`]). Three workloads:
//!
//! - `claude`: one Claude-Code-style transcript, one content block per line, most bytes in tool
//!   results of several KB (escaped quotes, non-ASCII text), ~30% of calls without a reason;
//! - `chat`: one OpenAI-chat-style conversation per line, arguments as JSON strings;
//! - `files`: many small Claude-Code-style session files in one folder.
//!
//! Settings, from the environment: `REASONS_BENCH_MB` (size of each big log in MiB, default 1024;
//! the small files add up to a quarter of it), `REASONS_BENCH_FILES` (how many small files,
//! default 10000), `REASONS_BENCH_RUNS` (rounds of runs, every command once a round, the best of
//! each is kept, default 3; `jq` runs once), `REASONS_BENCH_DIR` (where the logs go). Arguments
//! name the workloads to run: `cargo bench --bench throughput -- claude`.
//!
//! `cargo bench --bench throughput -- generate` only writes the Claude-Code-style and
//! OpenAI-chat-style logs and prints, for each, its workload, calls (all, with a reason, without)
//! and path: `benches/peers` reads them.
//!
//! `cargo bench --bench throughput -- against OTHER [claude|chat]` times this build's `stats`
//! against another build's binary (`OTHER`, say an older commit's `target/release/reasons`) on
//! the same big logs, on one thread, alternately, and prints the ratio of their medians.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Bumped whenever the generated logs change, so stale ones are not measured.
const GENERATOR_VERSION: u32 = 1;

const REASONS: &str = env!("CARGO_BIN_EXE_reasons");

const JQ_CLAUDE: &str = r#"select(.type == "assistant") | .message.content[]? | select(.type == "tool_use") | [.id, .name, .input.reason]"#;
const JQ_CHAT: &str = r#".messages[]? | .tool_calls[]? | [.id, .function.name, (.function.arguments | fromjson? | .reason)]"#;

fn main() -> io::Result<()> {
    let settings = Settings::from_env();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `against OTHER`: this build against another build's binary, on the same logs.
    let other = args
        .iter()
        .skip_while(|arg| *arg != "against")
        .nth(1)
        .cloned();
    let wanted: Vec<String> = args
        .iter()
        .filter(|arg| !arg.starts_with("--") && Some(*arg) != other.as_ref() && *arg != "against")
        .cloned()
        .collect();
    let runs = |name: &str| wanted.is_empty() || wanted.iter().any(|want| want == name);
    fs::create_dir_all(&settings.dir)?;
    // `generate`: only write the two big logs (benches/peers reads them with its peers) and
    // print each one's path and the calls it holds.
    if args.iter().any(|arg| arg == "generate") {
        let claude = settings.dir.join(format!(
            "claude-code-v{GENERATOR_VERSION}-{}MiB.jsonl",
            settings.mib
        ));
        let expected = cached(&claude, |out| {
            generate::claude_code(out, settings.mib << 20, 1, &mut 0)
        })?;
        println!("claude {} {}", expected.line(), claude.display());
        let chat = settings.dir.join(format!(
            "openai-chat-v{GENERATOR_VERSION}-{}MiB.jsonl",
            settings.mib
        ));
        let expected = cached(&chat, |out| generate::openai_chat(out, settings.mib << 20))?;
        println!("chat {} {}", expected.line(), chat.display());
        return Ok(());
    }
    let jq = which("jq");
    let jq = jq.as_deref();
    if jq.is_none() {
        println!("jq not found: its column and the ratios are left out");
    }
    println!(
        "reasons {REASONS}\n{} MiB per log, best of {} runs, {} cores\n",
        settings.mib,
        settings.runs,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    if runs("claude") {
        let path = settings.dir.join(format!(
            "claude-code-v{GENERATOR_VERSION}-{}MiB.jsonl",
            settings.mib
        ));
        let expected = cached(&path, |out| {
            generate::claude_code(out, settings.mib << 20, 1, &mut 0)
        })?;
        cache_as_read(&path)?;
        if let Some(other) = &other {
            against("Claude-Code style", &path, other, &settings)?;
        } else {
            compare(
                "Claude-Code style",
                &[path],
                None,
                expected,
                jq.map(|jq| (jq, JQ_CLAUDE)),
                &settings,
            )?;
        }
    }
    if runs("chat") {
        let path = settings.dir.join(format!(
            "openai-chat-v{GENERATOR_VERSION}-{}MiB.jsonl",
            settings.mib
        ));
        let expected = cached(&path, |out| generate::openai_chat(out, settings.mib << 20))?;
        cache_as_read(&path)?;
        if let Some(other) = &other {
            against("OpenAI-chat style", &path, other, &settings)?;
        } else {
            compare(
                "OpenAI-chat style",
                &[path],
                None,
                expected,
                jq.map(|jq| (jq, JQ_CHAT)),
                &settings,
            )?;
        }
    }
    if runs("files") {
        let folder = settings.dir.join(format!(
            "sessions-v{GENERATOR_VERSION}-{}MiB-{}",
            settings.mib / 4,
            settings.files
        ));
        let (paths, expected) = session_files(&folder, settings.files, (settings.mib << 20) / 4)?;
        compare(
            &format!("{} small session files", settings.files),
            &paths,
            Some(&folder),
            expected,
            jq.map(|jq| (jq, JQ_CLAUDE)),
            &settings,
        )?;
    }
    Ok(())
}

struct Settings {
    mib: u64,
    files: u64,
    runs: usize,
    dir: PathBuf,
}

impl Settings {
    fn from_env() -> Settings {
        let number = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|value| value.parse().ok())
                .filter(|&value| value > 0)
                .unwrap_or(default)
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        Settings {
            mib: number("REASONS_BENCH_MB", 1024),
            files: number("REASONS_BENCH_FILES", 10_000),
            runs: number("REASONS_BENCH_RUNS", 3) as usize,
            dir: std::env::var_os("REASONS_BENCH_DIR")
                .map_or_else(|| root.join("target/bench-data"), PathBuf::from),
        }
    }
}

/// How many calls of each kind a generated log holds: what `reasons stats` must find.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Expected {
    calls: u64,
    present: u64,
    missing: u64,
}

impl Expected {
    fn add(&mut self, other: Expected) {
        self.calls += other.calls;
        self.present += other.present;
        self.missing += other.missing;
    }

    fn line(self) -> String {
        format!("{} {} {}", self.calls, self.present, self.missing)
    }

    fn parse(text: &str) -> Option<Expected> {
        let mut numbers = text.split_whitespace().map(|n| n.parse().ok());
        Some(Expected {
            calls: numbers.next()??,
            present: numbers.next()??,
            missing: numbers.next()??,
        })
    }
}

/// Generates `path` unless a complete earlier generation is there; its counts sit beside it.
fn cached(
    path: &Path,
    generate: impl FnOnce(&mut dyn Write) -> io::Result<Expected>,
) -> io::Result<Expected> {
    let counts = path.with_extension("calls");
    if let Some(expected) = fs::read_to_string(&counts)
        .ok()
        .and_then(|text| Expected::parse(&text))
    {
        if path.exists() {
            return Ok(expected);
        }
    }
    let started = Instant::now();
    eprint!("generating {} …", path.display());
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let expected = generate(&mut out)?;
    out.flush()?;
    fs::write(&counts, expected.line())?;
    eprintln!(" {:.1} s", started.elapsed().as_secs_f64());
    Ok(expected)
}

fn session_files(folder: &Path, count: u64, bytes: u64) -> io::Result<(Vec<PathBuf>, Expected)> {
    let paths: Vec<PathBuf> = (0..count)
        .map(|n| folder.join(format!("session-{n:05}.jsonl")))
        .collect();
    let counts = folder.join("calls");
    if let Some(expected) = fs::read_to_string(&counts)
        .ok()
        .and_then(|text| Expected::parse(&text))
    {
        return Ok((paths, expected));
    }
    let started = Instant::now();
    eprint!("generating {count} files in {} …", folder.display());
    fs::create_dir_all(folder)?;
    let mut expected = Expected::default();
    let mut ids = 0;
    for (n, path) in paths.iter().enumerate() {
        let mut out = BufWriter::new(File::create(path)?);
        expected.add(generate::claude_code(
            &mut out,
            bytes / count,
            n as u64 + 1,
            &mut ids,
        )?);
        out.flush()?;
    }
    fs::write(&counts, expected.line())?;
    eprintln!(" {:.1} s", started.elapsed().as_secs_f64());
    Ok((paths, expected))
}

/// One measured command.
struct Measurement {
    seconds: f64,
    peak_rss_kib: Option<u64>,
    stdout: Vec<u8>,
}

/// One command to time.
struct Timed<'a> {
    program: &'a str,
    args: Vec<&'a str>,
    threads: Option<usize>,
    keep_stdout: bool,
}

/// `against OTHER`: this build's `reasons stats --format json` and another build's (`OTHER`, a
/// `reasons` binary) on the same log, on one thread, alternately, every other round in the other
/// order (the one that runs second meets the file just read by the first), and the ratio of
/// their medians. Both must print the same report.
fn against(title: &str, path: &Path, other: &str, settings: &Settings) -> io::Result<()> {
    let path = path.to_str().expect("a UTF-8 path");
    let ours = Timed {
        program: REASONS,
        args: vec!["stats", "--format", "json", path],
        threads: Some(1),
        keep_stdout: true,
    };
    let theirs = Timed {
        program: other,
        args: ours.args.clone(),
        threads: Some(1),
        keep_stdout: true,
    };
    if run_once(&ours)?.stdout != run_once(&theirs)?.stdout {
        return Err(io::Error::other(format!(
            "{title}: {REASONS} and {other} print different reports"
        )));
    }
    let bytes = fs::metadata(path)?.len() as f64;
    let rounds = settings.runs.max(5);
    let (mut our_times, mut their_times) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let ours_first = round % 2 == 0;
        for ours_now in [ours_first, !ours_first] {
            if ours_now {
                our_times.push(run_once(&ours)?.seconds);
            } else {
                their_times.push(run_once(&theirs)?.seconds);
            }
        }
    }
    let median = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let (ours_median, theirs_median) = (median(&mut our_times), median(&mut their_times));
    println!(
        "{title}, {:.0} MiB, one thread, median of {rounds}: this build {:.0} ms ({:.2} GB/s), \
         {other} {:.0} ms ({:.2} GB/s): {:.3}x its time",
        bytes / f64::from(1 << 20),
        ours_median * 1e3,
        bytes / ours_median / 1e9,
        theirs_median * 1e3,
        bytes / theirs_median / 1e9,
        ours_median / theirs_median,
    );
    Ok(())
}

/// Runs every command `runs` times, round by round, and keeps each one's fastest run. Rounds,
/// not one command's runs in a row: a slow spell of the machine then falls on every command
/// alike instead of on whichever was running, and the ratios stay fair.
fn measure_rounds(commands: &[Timed<'_>], runs: usize) -> io::Result<Vec<Measurement>> {
    let mut best: Vec<Option<Measurement>> = commands.iter().map(|_| None).collect();
    for _ in 0..runs {
        for (command, best) in commands.iter().zip(&mut best) {
            let run = run_once(command)?;
            if best.as_ref().is_none_or(|best| run.seconds < best.seconds) {
                *best = Some(run);
            }
        }
    }
    best.into_iter()
        .map(|best| best.ok_or_else(|| io::Error::other("no runs")))
        .collect()
}

/// Runs one command with stdout kept (or thrown away), timing it.
fn run_once(timed: &Timed<'_>) -> io::Result<Measurement> {
    // `time -f %M` reports the peak resident set of the command it runs, in KiB.
    let wrapped = Path::new("/usr/bin/time").exists();
    let mut command = if wrapped {
        let mut command = Command::new("/usr/bin/time");
        command.args(["-f", "%M", timed.program]);
        command
    } else {
        Command::new(timed.program)
    };
    command.args(&timed.args);
    if let Some(threads) = timed.threads {
        command.env("RAYON_NUM_THREADS", threads.to_string());
    }
    command
        .stdin(Stdio::null())
        .stdout(if timed.keep_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped());
    let started = Instant::now();
    let output = command.output()?;
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // `check` exits 1 when it flags calls, which the generated logs always have.
    if !matches!(output.status.code(), Some(0 | 1)) {
        return Err(io::Error::other(format!(
            "{} failed: {stderr}",
            timed.program
        )));
    }
    let peak_rss_kib = wrapped
        .then(|| stderr.lines().last()?.trim().parse().ok())
        .flatten();
    Ok(Measurement {
        seconds,
        peak_rss_kib,
        stdout: output.stdout,
    })
}

/// Times `cat`, `jq` and `reasons` on `paths`. Given the `folder` that holds them, `reasons`
/// reads the folder, the way its users name a folder of logs, and then also the paths named
/// one by one, as a shell's `logs/*.jsonl` names them.
/// Puts a big log in the page cache the way a log read before is: dropped from it, then read
/// once. How a file came into the cache matters here (Linux caches it in folios as large as its
/// writes or reads allow; README, "Benchmarks", has the measurements). Either way is a warm
/// cache: this makes every run measure the same one. Needs GNU `dd`; without it the cache is left as it is.
fn cache_as_read(path: &Path) -> io::Result<()> {
    let mut operand = std::ffi::OsString::from("if=");
    operand.push(path);
    let dropped = Command::new("dd")
        .args([
            operand.as_os_str(),
            "iflag=nocache".as_ref(),
            "count=0".as_ref(),
        ])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !dropped {
        println!(
            "{}: not dropped from the page cache (no GNU dd): timed as it is cached",
            path.display()
        );
    }
    io::copy(&mut File::open(path)?, &mut io::sink())?;
    Ok(())
}

fn compare(
    title: &str,
    paths: &[PathBuf],
    folder: Option<&Path>,
    expected: Expected,
    jq: Option<(&str, &str)>,
    settings: &Settings,
) -> io::Result<()> {
    let bytes: u64 = paths
        .iter()
        .map(|path| fs::metadata(path).map(|meta| meta.len()))
        .sum::<io::Result<u64>>()?;
    let files: Vec<&str> = paths.iter().filter_map(|path| path.to_str()).collect();
    let target = if paths.len() == 1 {
        files[0].to_owned()
    } else {
        paths[0]
            .parent()
            .and_then(Path::to_str)
            .unwrap_or_default()
            .to_owned()
    };
    println!(
        "{title}: {target}\n  {:.1} MB in {} file{}, {} calls ({} with a reason, {} without)",
        bytes as f64 / 1e6,
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        expected.calls,
        expected.present,
        expected.missing
    );
    println!(
        "  {:<34} {:>7} {:>9} {:>8} {:>9}",
        "command", "threads", "MB/s", "× jq", "peak RSS"
    );
    let rate = |seconds: f64| bytes as f64 / seconds / 1e6;
    let row = |name: &str, threads: &str, seconds: f64, jq: Option<f64>, rss: Option<u64>| {
        let ratio = jq.map_or(String::new(), |jq| format!("{:.1}×", jq / seconds));
        let rss = rss.map_or(String::new(), |kib| {
            format!("{:.1} MiB", kib as f64 / 1024.0)
        });
        println!(
            "  {name:<34} {threads:>7} {:>9.0} {ratio:>8} {rss:>9}",
            rate(seconds)
        );
    };

    let jq_seconds = match jq {
        Some((jq, filter)) => {
            let mut args = vec!["-c", filter];
            args.extend(&files);
            // jq takes many times longer than the rest together: one run.
            let run = run_once(&Timed {
                program: jq,
                args,
                threads: None,
                keep_stdout: false,
            })?;
            Some((run.seconds, run.peak_rss_kib))
        }
        None => None,
    };
    let mut commands = vec![Timed {
        program: "cat",
        args: files.clone(),
        threads: None,
        keep_stdout: false,
    }];
    let folder = folder.and_then(Path::to_str);
    let inputs = folder.map_or_else(|| files.clone(), |folder| vec![folder]);
    let mut reasons_commands = vec![
        (
            "reasons stats --format json".to_owned(),
            ["stats", "--format", "json"].as_slice(),
            inputs.clone(),
        ),
        ("reasons check".to_owned(), ["check"].as_slice(), inputs),
    ];
    if folder.is_some() {
        reasons_commands.push((
            format!("reasons stats (the {} paths)", files.len()),
            ["stats", "--format", "json"].as_slice(),
            files.clone(),
        ));
    }
    for (_, args, inputs) in &reasons_commands {
        for threads in [1, 2] {
            let mut all = args.to_vec();
            all.extend(inputs);
            commands.push(Timed {
                program: REASONS,
                args: all,
                threads: Some(threads),
                keep_stdout: args[0] == "stats",
            });
        }
    }
    let mut runs = measure_rounds(&commands, settings.runs)?.into_iter();
    if let Some(cat) = runs.next() {
        row("cat", "-", cat.seconds, None, cat.peak_rss_kib);
    }
    if let Some((seconds, rss)) = jq_seconds {
        row("jq (id, name, reason)", "1", seconds, None, rss);
    }
    let jq_seconds = jq_seconds.map(|(seconds, _)| seconds);
    let mut by_threads = Vec::new();
    for (command, args, _) in &reasons_commands {
        for threads in [1, 2] {
            let run = runs
                .next()
                .ok_or_else(|| io::Error::other("a run is missing"))?;
            if args[0] == "stats" {
                verify(&run.stdout, expected)?;
            }
            row(
                command,
                &threads.to_string(),
                run.seconds,
                jq_seconds,
                run.peak_rss_kib,
            );
            by_threads.push((command, threads, run.seconds));
        }
    }
    for pair in by_threads.chunks(2) {
        if let [(command, 1, one), (_, 2, two)] = pair {
            println!("  {command}: {:.2}× from the second core", one / two);
        }
    }
    println!();
    Ok(())
}

/// The report must count exactly the calls the generator wrote.
fn verify(report: &[u8], expected: Expected) -> io::Result<()> {
    let report: serde_json::Value = serde_json::from_slice(report).map_err(io::Error::other)?;
    let count = |key: &str| report["totals"][key].as_u64().unwrap_or(u64::MAX);
    let found = Expected {
        calls: count("calls"),
        present: count("present"),
        missing: count("missing"),
    };
    if found != expected {
        return Err(io::Error::other(format!(
            "reasons found {found:?}, the generator wrote {expected:?}"
        )));
    }
    Ok(())
}

/// Where `program` is on the `PATH`, or in `/usr/bin`.
fn which(program: &str) -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|folder| folder.join(program))
        .find(|candidate| candidate.is_file())
        .and_then(|found| found.to_str().map(str::to_owned))
}

/// Deterministic logs that look like the real ones where it matters for speed: line lengths,
/// where the bytes are, escapes and non-ASCII text inside strings, calls with and without reasons.
mod generate {
    use super::*;

    /// SplitMix64: small, fast and the same everywhere.
    pub struct Rng(u64);

    impl Rng {
        pub fn new(seed: u64) -> Rng {
            Rng(seed)
        }

        pub fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        pub fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }

        pub fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }
    }

    const CODE: &[&str] = &[
        "fn total(&self) -> Money {",
        "    let label = format!(\"{} → {}\", from, to);",
        "    return Err(Error::new(\"could not open \\\"config.yml\\\"\"));",
        "// Größe der Rechnung: pro Zeile berechnet, nicht pro Beleg",
        "    self.lines.iter().map(|l| l.amount * l.rate).sum()",
        "}",
        "import { readFile } from \"node:fs/promises\";",
        "const message = `Élément introuvable : ${name}`;",
        "    assert_eq!(parse(\"1,5 €\"), Some(Money::cents(150)));",
        "# 設定ファイルを読み込む",
        "def load(path: str) -> dict:",
        "    with open(path, encoding=\"utf-8\") as f:",
        "        return json.load(f)  # naïve but fine",
        "    \"name\": \"invoice-api\", \"version\": \"0.4.2\",",
        "SELECT id, total FROM invoices WHERE currency = 'EUR';",
        "    println!(\"✅ {} tests passed\", count);",
        "",
    ];
    const OUTPUT: &[&str] = &[
        "running 42 tests",
        "test invoice::tests::rounds_half_even ... ok",
        "test invoice::tests::sums_lines ... FAILED",
        "---- invoice::tests::sums_lines stdout ----",
        "thread 'main' panicked at src/invoice.rs:91:9: assertion `left == right` failed",
        "  left: \"10.01\"",
        " right: \"10.00\"",
        "drwxr-xr-x  5 dev dev  4096 Nov  3 09:14 src",
        "-rw-r--r--  1 dev dev  1204 Nov  3 09:12 Cargo.toml",
        "warning: unused variable: `rate` — did you mean `_rate`?",
        "   Compiling invoice-api v0.4.2 (/home/dev/src/invoice-api)",
        "src/invoice.rs:88:pub fn total(&self) -> Money {",
        "error[E0308]: mismatched types: expected `Money`, found `f64`",
        "Résumé : 3 fichiers modifiés, 12 insertions(+), 4 suppressions(-)",
    ];
    const PROSE: &[&str] = &[
        "Let me look at where the totals are computed.",
        "The rounding happens per line instead of per invoice, which loses a cent.",
        "I'll run the tests again to see whether the fix holds.",
        "Now the currency table — ¥ and € both have special cases.",
        "That worked. Next, the CSV export.",
        "Der Test schlägt fehl, weil die Summe gerundet wird.",
    ];
    const REASONS: &[&str] = &[
        "Find where invoice totals are computed before changing anything.",
        "Read the rounding code the failing test points at.",
        "Run the tests to see whether the fix holds.",
        "Check which files the export touches.",
        "Apply the one-line fix: round once, per invoice.",
        "List the source folder to see how the crate is laid out.",
        "Confirm no other caller depends on per-line rounding.",
    ];
    const PATHS: &[&str] = &[
        "/home/dev/src/invoice-api/src/invoice.rs",
        "/home/dev/src/invoice-api/src/currency.rs",
        "/home/dev/src/invoice-api/src/export/csv.rs",
        "/home/dev/src/invoice-api/tests/rounding.rs",
        "/home/dev/src/invoice-api/Cargo.toml",
    ];
    const COMMANDS: &[&str] = &[
        "cargo test --quiet",
        "ls -la src",
        "git diff --stat",
        "rg -n \"fn total\" src",
        "cargo build --release 2>&1 | tail -20",
    ];

    /// A JSON string literal, quotes and escapes included.
    fn quoted(text: &str) -> String {
        serde_json::to_string(text).unwrap_or_default()
    }

    /// Tool output of about `bytes` bytes, unescaped.
    fn result_text(rng: &mut Rng, bytes: usize) -> String {
        let mut text = String::with_capacity(bytes + 100);
        let code = rng.chance(50);
        let mut number = 1 + rng.below(400);
        while text.len() < bytes {
            if code {
                let _ = writeln!(text, "{number:>6}\t{}", rng.pick(CODE));
                number += 1;
            } else {
                text.push_str(rng.pick(OUTPUT));
                text.push('\n');
            }
        }
        text
    }

    /// A result size: several KB, sometimes much more, sometimes tiny.
    fn result_size(rng: &mut Rng) -> usize {
        match rng.below(20) {
            0 | 1 => 100 + rng.below(400),
            2 => 8_000 + rng.below(8_000),
            _ => 1_200 + rng.below(3_200),
        }
    }

    /// A tool and its input object (as JSON), with a reason for about 70% of calls.
    fn claude_input(rng: &mut Rng) -> (&'static str, String, bool) {
        let (tool, mut input) = match rng.below(6) {
            0 | 1 => (
                "Bash",
                format!(
                    "{{\"command\":{},\"description\":{}",
                    quoted(rng.pick(COMMANDS)),
                    quoted("Run the test suite")
                ),
            ),
            2 => (
                "Read",
                format!("{{\"file_path\":{}", quoted(rng.pick(PATHS))),
            ),
            3 => (
                "Grep",
                "{\"pattern\":\"fn total|round\",\"path\":\"src\",\"output_mode\":\"content\""
                    .to_owned(),
            ),
            4 => (
                "Edit",
                format!(
                    "{{\"file_path\":{},\"old_string\":{},\"new_string\":{}",
                    quoted(rng.pick(PATHS)),
                    quoted(rng.pick(CODE)),
                    quoted(rng.pick(CODE))
                ),
            ),
            _ => (
                "TodoWrite",
                format!(
                    "{{\"todos\":[{{\"content\":{},\"status\":\"in_progress\",\"activeForm\":\"Fixing\"}}]",
                    quoted(rng.pick(PROSE))
                ),
            ),
        };
        let reasoned = rng.chance(70);
        if reasoned {
            let _ = write!(input, ",\"reason\":{}", quoted(rng.pick(REASONS)));
        }
        input.push('}');
        (tool, input, reasoned)
    }

    /// A Claude Code transcript of about `bytes` bytes: each turn a user or assistant text
    /// line, one `tool_use` line and one `tool_result` line that carries the output twice (the
    /// message, and `toolUseResult`), as Claude Code writes it. `ids` numbers calls across files.
    pub fn claude_code(
        out: &mut dyn Write,
        bytes: u64,
        seed: u64,
        ids: &mut u64,
    ) -> io::Result<Expected> {
        let mut rng = Rng::new(seed);
        let mut written = 0u64;
        let mut expected = Expected::default();
        let mut session = String::new();
        let mut turn = 0u64;
        let mut uuid = 0u64;
        let header = |rng: &mut Rng, session: &str, uuid: &mut u64, kind: &str| {
            *uuid += 1;
            let second = *uuid / 3;
            format!(
                "{{\"parentUuid\":\"{:08x}-6b1c-4d2a-9e0f-{:012x}\",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/home/dev/src/invoice-api\",\"sessionId\":\"{session}\",\"version\":\"2.0.76\",\"gitBranch\":\"fix/rounding\",\"type\":\"{kind}\",\"uuid\":\"{:08x}-6b1c-4d2a-9e0f-{:012x}\",\"timestamp\":\"2025-11-{:02}T{:02}:{:02}:{:02}.{:03}Z\"",
                *uuid - 1,
                rng.next() & 0xFFFF_FFFF_FFFF,
                *uuid,
                rng.next() & 0xFFFF_FFFF_FFFF,
                1 + (second / 86_400) % 28,
                (second / 3600) % 24,
                (second / 60) % 60,
                second % 60,
                rng.below(1000)
            )
        };
        while written < bytes {
            if turn.is_multiple_of(150) {
                session = format!("{:08x}-7f2b-4c19-9a60-{:012x}", seed, turn);
            }
            turn += 1;
            let mut lines = String::new();
            let text = (0..1 + rng.below(3))
                .map(|_| rng.pick(PROSE))
                .collect::<Vec<_>>()
                .join(" ");
            if rng.chance(15) {
                let _ = writeln!(
                    lines,
                    "{},\"message\":{{\"role\":\"user\",\"content\":{}}}}}",
                    header(&mut rng, &session, &mut uuid, "user"),
                    quoted(&text)
                );
            } else if rng.chance(75) {
                let _ = writeln!(
                    lines,
                    "{},\"requestId\":\"req_{:016x}\",\"message\":{{\"model\":\"claude-sonnet-4-5\",\"id\":\"msg_{:016x}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{{\"input_tokens\":4,\"cache_read_input_tokens\":{},\"output_tokens\":{}}}}}}}",
                    header(&mut rng, &session, &mut uuid, "assistant"),
                    rng.next(),
                    rng.next(),
                    quoted(&text),
                    rng.below(90_000),
                    rng.below(900)
                );
            }
            *ids += 1;
            let id = format!("toolu_01{:016x}{:06}", rng.next(), *ids);
            let (tool, input, reasoned) = claude_input(&mut rng);
            let _ = writeln!(
                lines,
                "{},\"requestId\":\"req_{:016x}\",\"message\":{{\"model\":\"claude-sonnet-4-5\",\"id\":\"msg_{:016x}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"{tool}\",\"input\":{input}}}],\"stop_reason\":\"tool_use\",\"stop_sequence\":null,\"usage\":{{\"input_tokens\":4,\"cache_creation_input_tokens\":{},\"cache_read_input_tokens\":{},\"output_tokens\":{}}}}}}}",
                header(&mut rng, &session, &mut uuid, "assistant"),
                rng.next(),
                rng.next(),
                rng.below(9000),
                rng.below(90_000),
                rng.below(900)
            );
            expected.calls += 1;
            if reasoned {
                expected.present += 1;
            } else {
                expected.missing += 1;
            }
            let size = result_size(&mut rng);
            let output = quoted(&result_text(&mut rng, size));
            let _ = writeln!(
                lines,
                "{},\"message\":{{\"role\":\"user\",\"content\":[{{\"tool_use_id\":\"{id}\",\"type\":\"tool_result\",\"content\":{output},\"is_error\":false}}]}},\"toolUseResult\":{{\"stdout\":{output},\"stderr\":\"\",\"interrupted\":false,\"isImage\":false}}}}",
                header(&mut rng, &session, &mut uuid, "user"),
            );
            out.write_all(lines.as_bytes())?;
            written += lines.len() as u64;
        }
        Ok(expected)
    }

    const CHAT_TOOLS: &[(&str, &str)] = &[
        ("read_file", "{\"path\":{\"type\":\"string\"}}"),
        (
            "run_shell",
            "{\"command\":{\"type\":\"string\"},\"timeout\":{\"type\":\"integer\"}}",
        ),
        (
            "search",
            "{\"pattern\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"}}",
        ),
        (
            "write_file",
            "{\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"}}",
        ),
    ];

    /// OpenAI-chat-style conversations, one per line, each a request body: the messages with
    /// assistant `tool_calls` (arguments as JSON strings) and `role: tool` results, and the
    /// catalogue, recorded behind the reasons layer.
    pub fn openai_chat(out: &mut dyn Write, bytes: u64) -> io::Result<Expected> {
        let mut rng = Rng::new(7);
        let mut written = 0u64;
        let mut expected = Expected::default();
        let mut calls = 0u64;
        let layer =
            quoted("One short sentence: why this call. Shown to the human reviewing the session.");
        let tools: Vec<String> = CHAT_TOOLS
            .iter()
            .map(|(name, properties)| {
                let properties = properties.strip_suffix('}').unwrap_or(properties);
                let reason = format!("{{\"type\":\"string\",\"description\":{layer}}}");
                let parameters =
                    format!("{{\"type\":\"object\",\"properties\":{properties},\"reason\":{reason}}}}}");
                format!(
                    "{{\"type\":\"function\",\"function\":{{\"name\":\"{name}\",\"description\":\"Runs {name}.\",\"parameters\":{parameters}}}}}"
                )
            })
            .collect();
        let tools = tools.join(",");
        let mut conversation = 0u64;
        while written < bytes {
            conversation += 1;
            let mut line = format!(
                "{{\"id\":\"conv-{conversation:08}\",\"model\":\"gpt-4o-2024-08-06\",\"messages\":[{{\"role\":\"system\",\"content\":\"You are a careful coding agent. Réponds en anglais.\"}},{{\"role\":\"user\",\"content\":{}}}",
                quoted(rng.pick(PROSE))
            );
            for _ in 0..3 + rng.below(8) {
                let mut results = Vec::new();
                line.push_str(",{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[");
                for n in 0..1 + rng.below(2) {
                    calls += 1;
                    let id = format!("call_{:012x}{calls:08}", rng.next() & 0xFFFF_FFFF_FFFF);
                    let (name, _) = CHAT_TOOLS[rng.below(CHAT_TOOLS.len())];
                    let mut arguments = match name {
                        "run_shell" => {
                            format!(
                                "{{\"command\":{},\"timeout\":60",
                                quoted(rng.pick(COMMANDS))
                            )
                        }
                        "search" => "{\"pattern\":\"fn total\",\"path\":\"src\"".to_owned(),
                        "write_file" => format!(
                            "{{\"path\":{},\"content\":{}",
                            quoted(rng.pick(PATHS)),
                            quoted(&result_text(&mut rng, 300))
                        ),
                        _ => format!("{{\"path\":{}", quoted(rng.pick(PATHS))),
                    };
                    let reasoned = rng.chance(70);
                    if reasoned {
                        let _ = write!(arguments, ",\"reason\":{}", quoted(rng.pick(REASONS)));
                    }
                    arguments.push('}');
                    expected.calls += 1;
                    if reasoned {
                        expected.present += 1;
                    } else {
                        expected.missing += 1;
                    }
                    if n > 0 {
                        line.push(',');
                    }
                    let _ = write!(
                        line,
                        "{{\"id\":\"{id}\",\"type\":\"function\",\"function\":{{\"name\":\"{name}\",\"arguments\":{}}}}}",
                        quoted(&arguments)
                    );
                    let size = result_size(&mut rng);
                    results.push(format!(
                        ",{{\"role\":\"tool\",\"tool_call_id\":\"{id}\",\"content\":{}}}",
                        quoted(&result_text(&mut rng, size))
                    ));
                }
                line.push_str("]}");
                results.iter().for_each(|result| line.push_str(result));
            }
            let _ = writeln!(
                line,
                ",{{\"role\":\"assistant\",\"content\":{}}}],\"tools\":[{tools}],\"temperature\":0.2}}",
                quoted(rng.pick(PROSE))
            );
            out.write_all(line.as_bytes())?;
            written += line.len() as u64;
        }
        Ok(expected)
    }
}
