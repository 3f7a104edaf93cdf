//! The tables a person reads at a terminal: `extract`'s, one per log, and `stats`'s, laid out to
//! the terminal's width (`$COLUMNS` stands in for the terminal here). Golden files at 80 and 160
//! columns in `tests/golden/tables/`; `REASONS_BLESS=1` rewrites them.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use crate::util::{claude_call, lines_of, reasons, root, Run};

/// Runs `reasons ARGS` with `$COLUMNS` set to `width` and empty standard input.
fn run_at(width: u16, args: &[&str]) -> Run {
    reasons()
        .env("COLUMNS", width.to_string())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("reasons runs")
        .into()
}

/// Compares `got` with `tests/golden/tables/NAME`, or writes it there when blessing.
#[track_caller]
fn golden(name: &str, got: &str) {
    let path = root().join("tests/golden/tables").join(name);
    if std::env::var_os("REASONS_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} is missing: REASONS_BLESS=1 writes it", path.display()));
    assert_eq!(got, want, "differs from {}", path.display());
}

/// The lines of `text` that are a table's header row.
fn headers(text: &str) -> usize {
    text.lines()
        .filter(|line| line.trim_start().starts_with("line ") && line.contains("reason"))
        .count()
}

/// The column on screen where `text` starts in `line`.
fn column_of(line: &str, text: &str) -> Option<usize> {
    Some(line[..line.find(text)?].chars().count())
}

#[track_caller]
fn assert_fits(text: &str, width: usize) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= width,
            "wider than {width} columns: {line:?}"
        );
    }
}

#[test]
fn the_first_command_prints_one_table_per_file_not_one_per_call() {
    // `--line-buffered` writes each call as it is read, as a terminal does, yet one table a
    // file: not a table of its own for each call, with its own header and widths.
    for width in [80u16, 160] {
        let run = run_at(
            width,
            &[
                "extract",
                "--format",
                "table",
                "--line-buffered",
                "samples/claude-code.jsonl",
            ],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(headers(&run.stdout), 1, "{}", run.stdout);
        assert_fits(&run.stdout, usize::from(width));
        golden(&format!("extract-claude-code.{width}.txt"), &run.stdout);
    }
}

#[test]
fn tables_are_one_per_file_and_fit_the_terminal_at_80_and_160_columns() {
    for width in [80u16, 160] {
        let run = run_at(
            width,
            &[
                "extract",
                "--format",
                "table",
                "samples/codex.jsonl",
                "samples/mcp.jsonl",
                "samples/openai-responses.json",
            ],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(headers(&run.stdout), 3, "{}", run.stdout);
        assert_fits(&run.stdout, usize::from(width));
        golden(&format!("extract-three-files.{width}.txt"), &run.stdout);
    }
}

#[test]
fn a_reason_gets_the_room_it_needs_and_wraps_at_word_boundaries() {
    let reason = "Check that the migration left every invoice total unchanged before the release";
    let log = tempfile::tempdir().unwrap();
    let path = log.path().join("s.jsonl");
    std::fs::write(
        &path,
        claude_call(
            "s",
            "t1",
            "Bash",
            json!({"command": "cargo test --workspace", "reason": reason}),
        ) + "\n",
    )
    .unwrap();
    let path = path.to_str().unwrap();
    // Wide enough: the reason is on one line.
    let wide = run_at(160, &["extract", "--format", "table", path]);
    assert!(wide.stdout.contains(reason), "{}", wide.stdout);
    // Narrow: it wraps between words, every word whole, and gets more room than what the call
    // touched.
    let narrow = run_at(80, &["extract", "--format", "table", path]);
    assert_fits(&narrow.stdout, 80);
    let rows: Vec<&str> = narrow.stdout.lines().skip(3).collect();
    assert!(rows.len() > 1, "{}", narrow.stdout);
    let column = column_of(rows[0], "Check").unwrap();
    let words: Vec<String> = rows
        .iter()
        .flat_map(|row| {
            let reason: String = row.chars().skip(column).collect();
            reason
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(words.join(" "), reason, "{}", narrow.stdout);
    assert!(
        column < 80 - 30,
        "the reason is squeezed: {}",
        narrow.stdout
    );
}

#[test]
fn stats_tables_are_laid_out_at_80_and_160_columns() {
    for width in [80u16, 160] {
        let run = run_at(width, &["stats", "samples"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        golden(&format!("stats-by-tool.{width}.txt"), &run.stdout);
        let by_file = run_at(width, &["stats", "--by", "file", "samples"]);
        golden(&format!("stats-by-file.{width}.txt"), &by_file.stdout);
    }
    // At 160 every column is shown and a path is on one line.
    let wide = run_at(160, &["stats", "--by", "file", "samples"]).stdout;
    assert!(
        wide.contains(" samples/gemini-cli-session.jsonl "),
        "{wide}"
    );
    assert_fits(&wide, 160);
    // A key of a usual length (a session id) stays on one line: the least needed numbers make
    // room for it, and the last line names them.
    let sessions = run_at(110, &["stats", "--by", "session", "samples"]).stdout;
    assert_fits(&sessions, 110);
    assert!(
        sessions.contains(" 0199b6e4-3c2a-7d10-8e55-4f0a2c9d1b77 "),
        "{sessions}"
    );
    assert!(
        sessions.contains("not shown at 110 columns: declared, median len"),
        "{sessions}"
    );
    // Where even the key, the calls and the coverage leave no room for it, the key wraps, and
    // the table still fits.
    let narrow = run_at(50, &["stats", "--by", "file", "samples"]).stdout;
    assert_fits(&narrow, 50);
    assert!(
        !narrow.contains("samples/gemini-cli-session.jsonl"),
        "{narrow}"
    );
    golden("stats-by-session.110.txt", &sessions);
}

/// The header row of a `stats` table: its first line's words.
fn stats_header(text: &str) -> Vec<String> {
    let first = text.lines().next().unwrap_or_default();
    first
        .split("   ")
        .map(str::trim)
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_stats_table_at_80_columns_fits_leaving_out_the_least_needed_columns_and_says_which() {
    for args in [&["stats", "samples"][..], &["stats", "--lint", "samples"]] {
        let narrow = run_at(80, args);
        assert_eq!(narrow.code, 0, "{}", narrow.stderr);
        assert_fits(&narrow.stdout, 80);
        let header = stats_header(&narrow.stdout);
        for kept in ["tool", "calls", "missing", "coverage"] {
            assert!(
                header.contains(&kept.to_owned()),
                "{kept}: {}",
                narrow.stdout
            );
        }
        assert!(
            !header.contains(&"median len".to_owned()),
            "{}",
            narrow.stdout
        );
        // What was left out is said after the footer, on as many lines as it takes.
        let (_, said) = narrow
            .stdout
            .split_once(" malformed lines skipped\n")
            .unwrap();
        let said = said.replace('\n', " ");
        assert!(
            said.starts_with("not shown at 80 columns: ") && said.contains("median len"),
            "{}",
            narrow.stdout
        );
        // The rows still say what the whole table says of the calls and their coverage.
        let whole = run_at(140, args).stdout;
        let cells = |text: &str, tool: &str| -> Vec<String> {
            let header = stats_header(text);
            let row = text
                .lines()
                .find(|line| line.starts_with(&format!(" {tool} ")))
                .unwrap();
            let cells: Vec<&str> = row.split_whitespace().collect();
            ["calls", "coverage"]
                .iter()
                .map(|name| cells[header.iter().position(|h| h == name).unwrap()].to_owned())
                .collect()
        };
        for tool in ["read_file", "bash", "total"] {
            assert_eq!(cells(&narrow.stdout, tool), cells(&whole, tool), "{tool}");
        }
    }
    golden(
        "stats-lint.80.txt",
        &run_at(80, &["stats", "--lint", "samples"]).stdout,
    );
}

#[test]
fn a_stats_table_is_whole_at_140_columns_and_in_a_pipe_with_no_width_known() {
    let wide = run_at(140, &["stats", "samples"]).stdout;
    assert_eq!(wide, run_at(160, &["stats", "samples"]).stdout);
    assert!(!wide.contains("not shown"), "{wide}");
    assert_fits(&wide, 140);
    let lint = run_at(140, &["stats", "--lint", "samples"]).stdout;
    assert!(
        stats_header(&lint).contains(&"flagged".to_owned()),
        "{lint}"
    );
    assert!(
        stats_header(&lint).contains(&"median len".to_owned()),
        "{lint}"
    );
    // Stdout a pipe and no `$COLUMNS`: whatever the terminal around, the table is whole.
    let piped = reasons()
        .args(["stats", "samples"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&piped.stdout), wide);
}

#[test]
fn a_live_stream_is_one_table_whose_rows_come_as_their_lines_do() {
    let mut child = reasons()
        .env("COLUMNS", "100")
        .args(["extract", "--format", "table"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = lines_of(child.stdout.take().unwrap());
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(10))
            .expect("a line in time")
    };
    let call = |id: &str, command: &str, reason: &str| {
        claude_call(
            "s",
            id,
            "Bash",
            json!({"command": command, "reason": reason}),
        ) + "\n"
    };
    stdin
        .write_all(call("t1", "ls", "Look around first").as_bytes())
        .unwrap();
    assert_eq!(next(), "standard input");
    let header = next();
    assert!(header.trim_start().starts_with("line"), "{header}");
    next(); // the rule under the header
    let first = next();
    assert!(first.contains("Look around first"), "{first}");
    // The next call comes later, in a batch of its own: a row of the same table, in its widths.
    stdin
        .write_all(
            call(
                "t2",
                "cargo build --release --locked",
                "Build what will be measured",
            )
            .as_bytes(),
        )
        .unwrap();
    let second = next();
    assert!(second.contains("Build what will be measured"), "{second}");
    assert_eq!(
        column_of(&first, "Look around"),
        column_of(&second, "Build what"),
        "{first}\n{second}"
    );
    assert_eq!(
        column_of(&header, "reason"),
        column_of(&first, "Look around"),
        "{header}"
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert!(lines.recv_timeout(Duration::from_secs(5)).is_err());
}
