//! The GitHub Action (action.yml): its steps run as a runner runs them, on copies of the samples
//! in a workspace, and what a person sees on the run's page: the annotations on the log files'
//! lines, the job summary, the page kept as an artifact, the step failing below the coverage
//! asked for.

use std::path::Path;

use crate::util::release::{build_archive, VERSION};
use crate::util::runner::{annotations, Annotation, Job};
use crate::util::{reasons, root};

const AUDIT: &str = "Audit the agent logs";

/// The logs a workflow audits: two samples by a glob, and a folder whose name has a space.
const PATHS: &str = "agent-logs/*.jsonl\n\n  more logs/  \n";

/// A job whose workspace holds agent logs, and `reasons` (the binary under test) on its PATH
/// as if the install step had run.
fn job_with_logs() -> Job {
    let job = Job::new();
    let workspace = job.workspace();
    for (sample, place) in [
        ("claude-code.jsonl", "agent-logs/claude-code.jsonl"),
        ("codex.jsonl", "agent-logs/codex.jsonl"),
        ("gemini.jsonl", "more logs/gemini.jsonl"),
    ] {
        let to = workspace.join(place);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root().join("samples").join(sample), to).unwrap();
    }
    job
}

fn with_reasons_on_path(mut job: Job) -> Job {
    let binary = Path::new(env!("CARGO_BIN_EXE_reasons"));
    job.base_path = format!("{}:{}", binary.parent().unwrap().display(), job.base_path);
    job
}

/// `reasons ARGS` on the logs of the workspace, as a person runs it there.
fn reasons_in(workspace: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = reasons()
        .args(args)
        .args(["--", "agent-logs/*.jsonl", "more logs/"])
        .current_dir(workspace)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

/// Each annotation as the run's page shows it (file, line, title, message), checked against the
/// log: the line it points at holds the call it names.
#[track_caller]
fn shown(workspace: &Path, found: &[Annotation]) -> Vec<String> {
    found
        .iter()
        .map(|annotation| {
            let file = &annotation.properties["file"];
            let line: usize = annotation.properties["line"].parse().unwrap();
            assert!(
                !file.starts_with('/'),
                "a path the run's page cannot link: {file}"
            );
            let log = std::fs::read_to_string(workspace.join(file)).unwrap();
            let call_id = annotation.message.split([' ', ':']).nth(1).unwrap();
            let at = log.lines().nth(line - 1).unwrap();
            assert!(
                at.contains(call_id),
                "{file}:{line} does not hold {call_id}: {at}"
            );
            format!(
                "{}: {file}:{line}: {}: {}",
                annotation.level, annotation.properties["title"], annotation.message
            )
        })
        .collect()
}

#[test]
fn action_annotates_each_flagged_call_and_writes_coverage_into_the_job_summary() {
    let mut job = with_reasons_on_path(job_with_logs());
    let workspace = job.workspace();
    let steps = job.run_action(
        &root(),
        &[
            ("paths", PATHS),
            ("report", "artifacts/reasons report.html"),
        ],
        Some(&[AUDIT]),
    );
    assert_eq!(steps.len(), 1);
    let audit = &steps[0];
    assert_eq!(audit.code, Some(0), "{}", audit.stderr);

    // One warning per call `reasons check` flags, on its file and line, saying what it lacks.
    let (checked, flagged) = reasons_in(&workspace, &["check"]);
    assert_eq!(checked, Some(1));
    let expected: Vec<String> = flagged
        .lines()
        .map(|line| {
            let (place, what) = line.split_once(": ").unwrap();
            let finding = what.rsplit(": ").next().unwrap();
            format!("warning: {place}: reasons: {finding}: {what}")
        })
        .collect();
    assert!(expected.len() >= 2, "{flagged}");
    let found = annotations(&audit.stdout);
    assert_eq!(shown(&workspace, &found), expected);

    // The job summary is coverage per tool as a Markdown table, the same as `stats` says.
    let (_, stats) = reasons_in(&workspace, &["stats", "--format", "markdown"]);
    assert_eq!(job.summary, stats);
    let table: Vec<&str> = job.summary.lines().filter(|l| l.starts_with('|')).collect();
    assert!(table.len() >= 4, "{}", job.summary);
    assert!(table[0].to_lowercase().contains("coverage"), "{}", table[0]);
    assert!(
        table[1].starts_with("|-") || table[1].starts_with("| -") || table[1].starts_with("|:")
    );

    // The review page, where the workflow's upload-artifact step will look for it.
    let page = std::fs::read_to_string(workspace.join("artifacts/reasons report.html")).unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>"),
        "{}",
        &page[..100.min(page.len())]
    );
}

#[test]
fn action_fails_below_the_coverage_asked_for_and_says_so_on_the_run_page() {
    let (_, json) = reasons_in(&job_with_logs().workspace(), &["stats", "--format", "json"]);
    let coverage = serde_json::from_str::<serde_json::Value>(&json).unwrap()["totals"]["coverage"]
        .as_f64()
        .unwrap();
    assert!(coverage > 0.0 && coverage < 100.0, "{coverage}");

    let mut job = with_reasons_on_path(job_with_logs());
    let above = format!("{}", coverage.ceil() + 1.0);
    let steps = job.run_action(
        &root(),
        &[("paths", PATHS), ("min-coverage", &above)],
        Some(&[AUDIT]),
    );
    assert_eq!(steps[0].code, Some(1), "{}", steps[0].stderr);
    let errors: Vec<_> = annotations(&steps[0].stdout)
        .into_iter()
        .filter(|a| a.level == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{}", steps[0].stdout);
    assert!(
        errors[0].message.contains(&format!("below {above}%")),
        "{:?}",
        errors[0]
    );
    // The summary still tells which tools fell short.
    assert!(job.summary.contains('|'), "{}", job.summary);

    let mut job = with_reasons_on_path(job_with_logs());
    let below = format!("{}", coverage.floor());
    let steps = job.run_action(
        &root(),
        &[("paths", PATHS), ("min-coverage", &below), ("lint", "true")],
        Some(&[AUDIT]),
    );
    assert_eq!(steps[0].code, Some(0), "{}", steps[0].stderr);
    // `lint` adds the lint's findings to the annotations, as `check --lint` has them.
    let (_, linted) = reasons_in(&job.workspace(), &["check", "--lint"]);
    let warnings = annotations(&steps[0].stdout)
        .into_iter()
        .filter(|a| a.level == "warning")
        .count();
    assert_eq!(warnings, linted.lines().count());

    // An input that is neither true nor false is an error, not a guess.
    let mut job = with_reasons_on_path(job_with_logs());
    let steps = job.run_action(
        &root(),
        &[("paths", PATHS), ("lint", "yes")],
        Some(&[AUDIT]),
    );
    assert_eq!(steps[0].code, Some(2));
    assert!(
        steps[0].stdout.starts_with("::error"),
        "{}",
        steps[0].stdout
    );
}

#[test]
#[ignore = "packages the release build: cargo test --release -- --ignored"]
fn action_installs_the_release_binary_then_audits() {
    let dist = tempfile::tempdir().unwrap();
    build_archive(dist.path());
    let mut job = job_with_logs();
    // No reasons on the runner until the action installs it.
    job.base_path = "/usr/bin:/bin".to_owned();
    let found = std::process::Command::new("bash")
        .args(["-c", "command -v reasons"])
        .env("PATH", &job.base_path)
        .output()
        .unwrap();
    assert!(
        !found.status.success(),
        "a reasons on the runner's PATH already"
    );
    // Where install.sh takes the release from, instead of GitHub: a mirror, here a folder.
    job.env.push((
        "REASONS_INSTALL_FROM".to_owned(),
        dist.path().display().to_string(),
    ));

    let steps = job.run_action(&root(), &[("paths", PATHS), ("min-coverage", "1")], None);
    let names: Vec<&str> = steps.iter().map(|step| step.name.as_str()).collect();
    assert_eq!(names, ["Install reasons", AUDIT]);
    let install = &steps[0];
    assert_eq!(install.code, Some(0), "{}", install.stderr);
    assert_eq!(install.stdout, format!("reasons {VERSION}\n"));
    let bin = job.temp().join("reasons/bin");
    assert_eq!(job.added_paths(), [bin.display().to_string()]);
    assert!(bin.join("reasons").is_file());

    assert_eq!(steps[1].code, Some(0), "{}", steps[1].stderr);
    assert!(
        !annotations(&steps[1].stdout).is_empty(),
        "{}",
        steps[1].stdout
    );
    let (_, stats) = reasons_in(&job.workspace(), &["stats", "--format", "markdown"]);
    assert_eq!(job.summary, stats);
}
