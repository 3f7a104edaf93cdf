//! `reasons stats` through the real binary.

use serde_json::{json, Value};

use crate::util::{arg, claude_call, log_file, run};

fn session(name: &str) -> Vec<String> {
    vec![
        claude_call(
            name,
            &format!("{name}1"),
            "Bash",
            json!({"command": "ls", "reason": "Look at the tree"}),
        ),
        claude_call(name, &format!("{name}2"), "Bash", json!({"command": "ls"})),
        claude_call(
            name,
            &format!("{name}3"),
            "Read",
            json!({"file_path": "a", "reason": "Read it"}),
        ),
    ]
}

fn json_stats(args: &[&str]) -> Value {
    let run = run(&[&["stats", "--format", "json"][..], args].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("stats --format json writes one object")
}

#[test]
fn json_report_has_the_documented_shape() {
    let (_dir, path) = log_file("s.jsonl", &session("a"));
    let report = json_stats(&[arg(&path)]);
    let totals = &report["totals"];
    for key in [
        "calls", "present", "blank", "invalid", "missing", "declared", "freeform", "coverage",
    ] {
        assert!(totals.get(key).is_some(), "totals.{key}");
    }
    assert_eq!(totals["calls"], 3);
    assert_eq!(totals["present"], 2);
    assert!((totals["coverage"].as_f64().unwrap() - 200.0 / 3.0).abs() < 1e-9);
    assert_eq!(report["by"], "tool");
    assert_eq!(report["files"], 1);
    assert_eq!(report["malformed_lines"], 0);
    assert_eq!(report["groups"][0]["key"], "Bash");
    assert_eq!(report["groups"][0]["calls"], 2);
    assert_eq!(report["groups"][0]["coverage"], 50.0);
}

#[test]
fn groups_by_file_session_format_and_day() {
    let (_dir, a) = log_file("a.jsonl", &session("a"));
    let (_dir2, b) = log_file("b.jsonl", &session("b"));
    let keys = |by: &str| -> Vec<String> {
        json_stats(&["--by", by, arg(&a), arg(&b)])["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["key"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(keys("file"), [arg(&a), arg(&b)]);
    assert_eq!(keys("session"), ["a", "b"]);
    assert_eq!(keys("format"), ["claude-code"]);
    assert_eq!(keys("day"), ["2026-11-30"]);
}

#[test]
fn coverage_is_null_when_nothing_is_audited() {
    let (_dir, path) = log_file("empty.jsonl", &["{}".to_owned()]);
    let report = json_stats(&[arg(&path)]);
    assert_eq!(report["totals"]["calls"], 0);
    assert_eq!(report["totals"]["coverage"], Value::Null);
}

#[test]
fn min_coverage_gates_the_build() {
    let (_dir, path) = log_file("s.jsonl", &session("a"));
    let pass = run(&["stats", "--min-coverage", "60", arg(&path)]);
    assert_eq!(pass.code, 0, "{}", pass.stderr);
    let fail = run(&["stats", "--min-coverage", "70", arg(&path)]);
    assert_eq!(fail.code, 1);
    assert!(
        fail.stderr
            .contains("coverage 66.7% is below the minimum of 70%"),
        "{}",
        fail.stderr
    );
    let bad = run(&["stats", "--min-coverage", "170", arg(&path)]);
    assert_eq!(bad.code, 2);
}

#[test]
fn markdown_fits_a_step_summary() {
    let (_dir, path) = log_file("s.jsonl", &session("a"));
    let run = run(&["stats", "--format", "markdown", arg(&path)]);
    assert_eq!(run.code, 0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "### Reason coverage: 66.7%");
    assert_eq!(lines[2], "| tool | calls | present | blank | invalid | missing | declared | freeform | coverage | median len |");
    assert_eq!(
        lines[3],
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    assert_eq!(
        lines[4],
        "| Bash | 2 | 1 | 0 | 0 | 1 | 0 | 0 | 50.0% | 16 |"
    );
    assert_eq!(
        lines[6],
        "| total | 3 | 2 | 0 | 0 | 1 | 0 | 0 | 66.7% | 11.5 |"
    );
}

#[test]
fn csv_has_a_header_and_plain_numbers() {
    let (_dir, path) = log_file("s.jsonl", &session("a"));
    let run = run(&["stats", "--format", "csv", arg(&path)]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "tool,calls,present,blank,invalid,missing,declared,freeform,coverage,median_reason_length"
    );
    assert_eq!(lines[1], "Bash,2,1,0,0,1,0,0,50.0,16");
}

#[test]
fn merging_per_file_reports_equals_one_run_over_all_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut logs = Vec::new();
    for name in ["a", "b", "c"] {
        let (_keep, path) = log_file("s.jsonl", &session(name));
        let target = dir.path().join(format!("{name}.jsonl"));
        std::fs::copy(&path, &target).unwrap();
        logs.push(target);
    }
    std::fs::write(dir.path().join("bad.jsonl"), "not json\n").unwrap();
    logs.push(dir.path().join("bad.jsonl"));
    for by in ["tool", "file", "session", "day"] {
        let mut reports = Vec::new();
        for log in &logs {
            let run = run(&["stats", "--by", by, "--format", "json", arg(log)]);
            let report = dir.path().join(format!("{by}-{}.json", reports.len()));
            std::fs::write(&report, run.stdout).unwrap();
            reports.push(report);
        }
        let report_args: Vec<&str> = reports.iter().map(|p| arg(p)).collect();
        let merged = json_stats(&[&["--by", by, "--merge"][..], &report_args].concat());
        let log_args: Vec<&str> = logs.iter().map(|p| arg(p)).collect();
        let whole = json_stats(&[&["--by", by][..], &log_args].concat());
        assert_eq!(merged, whole, "--by {by}");
        assert_eq!(whole["malformed_lines"], 1);
        assert_eq!(whole["files"], 4);
    }
}

#[test]
fn merging_reports_grouped_differently_is_an_error() {
    let (_dir, path) = log_file("s.jsonl", &session("a"));
    let dir = tempfile::tempdir().unwrap();
    let by_tool = run(&["stats", "--format", "json", arg(&path)]).stdout;
    let by_day = run(&["stats", "--by", "day", "--format", "json", arg(&path)]).stdout;
    std::fs::write(dir.path().join("t.json"), by_tool).unwrap();
    std::fs::write(dir.path().join("d.json"), by_day).unwrap();
    let t = dir.path().join("t.json");
    let d = dir.path().join("d.json");
    let run = run(&["stats", "--merge", arg(&t), arg(&d)]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("cannot merge"), "{}", run.stderr);
}

/// Reasons Qwen2.5-Coder-0.5B-Instruct wrote behind the gateway (`tests/lint/`): `--lint` counts
/// the ones `check --lint` flags, each once however many hints it gets, per group and in total.
#[test]
fn lint_counts_the_reasons_check_flags_and_merge_adds_them_up() {
    let sample = "tests/lint/qwen2.5-coder-0.5b.jsonl";
    let report = json_stats(&["--lint", sample]);
    assert_eq!(report["totals"]["lint_flagged"], 8, "{report}");
    let group = |key: &str| {
        report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|group| group["key"] == key)
            .cloned()
            .unwrap()
    };
    assert_eq!(group("bash")["lint_flagged"], 6);
    assert_eq!(group("read_file")["lint_flagged"], 2);
    // As many as `check --lint` names calls.
    let check = run(&["check", "--lint", "--format", "jsonl", sample]);
    let flagged: std::collections::BTreeSet<String> = crate::util::records(&check.stdout)
        .iter()
        .map(|record| record["call_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(flagged.len(), 8);
    // Without --lint the count is not there at all, rather than a zero that was never counted.
    let plain = json_stats(&[sample]);
    assert!(plain["totals"].get("lint_flagged").is_none(), "{plain}");
    let table = run(&["stats", "--lint", sample]);
    assert!(
        table.stdout.lines().next().unwrap().ends_with("flagged"),
        "{}",
        table.stdout
    );

    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("one.json");
    std::fs::write(&saved, report.to_string()).unwrap();
    let merged = json_stats(&["--merge", arg(&saved), arg(&saved)]);
    assert_eq!(merged["totals"]["lint_flagged"], 16);
    assert_eq!(
        merged["groups"][0]["lint_flagged"],
        2 * report["groups"][0]["lint_flagged"].as_u64().unwrap()
    );
}
