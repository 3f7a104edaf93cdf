//! A GitHub Actions runner, as far as a composite action's steps need one: action.yml read, each
//! step's `${{ inputs.… }}` filled in, its `run` executed as the runner does (`bash --noprofile
//! --norc -eo pipefail`) in the workspace, with the files and variables a runner sets
//! (`GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`, `GITHUB_PATH`, `GITHUB_ENV`, `GITHUB_WORKSPACE`,
//! `GITHUB_ACTION_PATH`, `RUNNER_TEMP`…), what a step adds to `GITHUB_PATH` and `GITHUB_ENV`
//! given to the steps after it, the job stopping at the first step that fails, and the
//! workflow commands of a step's output read as the run's page shows them.
//!
//! action.yml is read by a small reader of the YAML it is written in (block maps and lists,
//! plain and quoted scalars); anything else in it fails the test rather than being misread.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A YAML value of the subset action.yml is written in.
#[derive(Debug, Clone)]
pub enum Yaml {
    Scalar(String),
    Map(Vec<(String, Yaml)>),
    List(Vec<Yaml>),
}

impl Yaml {
    /// The value at `key` of a map.
    #[track_caller]
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            other => panic!("not a map: {other:?}"),
        }
    }

    #[track_caller]
    pub fn scalar(&self) -> &str {
        match self {
            Yaml::Scalar(text) => text,
            other => panic!("not a scalar: {other:?}"),
        }
    }

    #[track_caller]
    pub fn entries(&self) -> &[(String, Yaml)] {
        match self {
            Yaml::Map(entries) => entries,
            other => panic!("not a map: {other:?}"),
        }
    }

    #[track_caller]
    pub fn items(&self) -> &[Yaml] {
        match self {
            Yaml::List(items) => items,
            other => panic!("not a list: {other:?}"),
        }
    }
}

/// Reads `text`, a YAML document of block maps, block lists and one-line scalars.
#[track_caller]
pub fn parse_yaml(text: &str) -> Yaml {
    let mut lines: Vec<(usize, String)> = text
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .map(|line| {
            let indent = line.len() - line.trim_start_matches(' ').len();
            (indent, line[indent..].to_owned())
        })
        .collect();
    let mut at = 0;
    let value = block(&mut lines, &mut at, 0);
    assert_eq!(
        at,
        lines.len(),
        "action.yml: unread from {:?}",
        lines.get(at)
    );
    value
}

fn block(lines: &mut [(usize, String)], at: &mut usize, indent: usize) -> Yaml {
    if lines[*at].1.starts_with("- ") {
        let mut items = Vec::new();
        while *at < lines.len() && lines[*at].0 == indent && lines[*at].1.starts_with("- ") {
            // The item's first key stands after the dash: read it as a map two columns in.
            let rest = lines[*at].1[2..].to_owned();
            lines[*at] = (indent + 2, rest);
            items.push(block(lines, at, indent + 2));
        }
        return Yaml::List(items);
    }
    let mut entries = Vec::new();
    while *at < lines.len() && lines[*at].0 == indent && !lines[*at].1.starts_with("- ") {
        let line = lines[*at].1.clone();
        let (key, rest) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("action.yml: not `key: value`: {line}"));
        let rest = rest.trim();
        *at += 1;
        let value = if rest.is_empty() {
            let inner = lines.get(*at).map(|(i, _)| *i).unwrap_or(0);
            assert!(inner > indent, "action.yml: {key} has no value");
            block(lines, at, inner)
        } else {
            Yaml::Scalar(scalar(rest))
        };
        entries.push((key.to_owned(), value));
    }
    assert!(
        *at == lines.len() || lines[*at].0 < indent,
        "action.yml: unexpected indentation at {:?}",
        lines[*at]
    );
    Yaml::Map(entries)
}

fn scalar(text: &str) -> String {
    if let Some(inner) = text.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .expect("a closed single-quoted scalar");
        return inner.replace("''", "'");
    }
    if let Some(inner) = text.strip_prefix('"') {
        let inner = inner
            .strip_suffix('"')
            .expect("a closed double-quoted scalar");
        assert!(
            !inner.contains('\\'),
            "escapes this reader does not read: {text}"
        );
        return inner.to_owned();
    }
    assert!(
        !text.starts_with(['|', '>', '[', '{', '&', '*', '!']) && !text.contains(" #"),
        "YAML this reader does not read: {text}"
    );
    text.to_owned()
}

/// One workflow command a step wrote (`::warning file=…,line=…::message`), as the runner reads
/// it: its properties and message unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub level: String,
    pub properties: BTreeMap<String, String>,
    pub message: String,
}

/// The annotations among a step's output lines.
pub fn annotations(stdout: &str) -> Vec<Annotation> {
    let unescape_data = |text: &str| {
        text.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%25", "%")
    };
    let unescape_property =
        |text: &str| unescape_data(&text.replace("%3A", ":").replace("%2C", ","));
    stdout
        .lines()
        .filter_map(|line| {
            let command = line.strip_prefix("::")?;
            let (head, message) = command.split_once("::")?;
            let (level, properties) = head.split_once(' ').unwrap_or((head, ""));
            if !matches!(level, "error" | "warning" | "notice") {
                return None;
            }
            let properties = properties
                .split(',')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair.split_once('=').expect("key=value");
                    (key.to_owned(), unescape_property(value))
                })
                .collect();
            Some(Annotation {
                level: level.to_owned(),
                properties,
                message: unescape_data(message),
            })
        })
        .collect()
}

/// What one step did.
#[derive(Debug)]
pub struct StepRun {
    pub name: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// One job on a runner: its workspace, temporary folder, HOME, and what its steps have added.
pub struct Job {
    dir: tempfile::TempDir,
    /// The job's environment besides what the runner sets (a workflow's `env:`).
    pub env: Vec<(String, String)>,
    /// `PATH` before any step adds to it.
    pub base_path: String,
    added_paths: Vec<String>,
    added_env: Vec<(String, String)>,
    /// The job summary: every step's `GITHUB_STEP_SUMMARY`, in order.
    pub summary: String,
    steps_run: usize,
}

impl Job {
    pub fn new() -> Job {
        let dir = tempfile::tempdir().unwrap();
        for folder in ["workspace", "temp", "home", "files"] {
            std::fs::create_dir(dir.path().join(folder)).unwrap();
        }
        Job {
            dir,
            env: Vec::new(),
            base_path: std::env::var("PATH").unwrap_or_default(),
            added_paths: Vec::new(),
            added_env: Vec::new(),
            summary: String::new(),
            steps_run: 0,
        }
    }

    /// `GITHUB_WORKSPACE`, where the repository is checked out and steps run.
    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }

    /// `RUNNER_TEMP`.
    pub fn temp(&self) -> PathBuf {
        self.dir.path().join("temp")
    }

    /// What the steps so far added to `GITHUB_PATH`, most recent first.
    pub fn added_paths(&self) -> &[String] {
        &self.added_paths
    }

    /// Runs the steps of the composite action in `action_dir` with `inputs` (the `with:` of a
    /// workflow; the others take their defaults), those named in `only` or all, stopping at
    /// the first that fails, as the runner does.
    #[track_caller]
    pub fn run_action(
        &mut self,
        action_dir: &Path,
        inputs: &[(&str, &str)],
        only: Option<&[&str]>,
    ) -> Vec<StepRun> {
        let action = parse_yaml(&std::fs::read_to_string(action_dir.join("action.yml")).unwrap());
        let declared = action.get("inputs").expect("inputs");
        let mut values = BTreeMap::new();
        for (name, input) in declared.entries() {
            let default = input.get("default").map(|d| d.scalar().to_owned());
            values.insert(name.clone(), default.unwrap_or_default());
        }
        for (name, value) in inputs {
            assert!(
                values.contains_key(*name),
                "action.yml declares no input {name}"
            );
            values.insert((*name).to_owned(), (*value).to_owned());
        }
        for (name, input) in declared.entries() {
            if input.get("required").map(Yaml::scalar) == Some("true") {
                assert!(
                    !values[name].is_empty(),
                    "the required input {name} is not given"
                );
            }
        }
        let runs = action.get("runs").expect("runs");
        assert_eq!(runs.get("using").map(Yaml::scalar), Some("composite"));
        let mut done = Vec::new();
        for step in runs.get("steps").expect("steps").items() {
            let name = step.get("name").expect("a step's name").scalar().to_owned();
            if only.is_some_and(|only| !only.contains(&name.as_str())) {
                continue;
            }
            assert!(step.get("if").is_none(), "a step's `if` is not read here");
            assert_eq!(step.get("shell").map(Yaml::scalar), Some("bash"), "{name}");
            let run = step.get("run").expect("a step's run").scalar();
            let mut env = Vec::new();
            if let Some(step_env) = step.get("env") {
                for (key, value) in step_env.entries() {
                    env.push((key.clone(), expand(value.scalar(), &values)));
                }
            }
            let outcome = self.run_step(&name, &expand(run, &values), action_dir, &env);
            let failed = outcome.code != Some(0);
            done.push(outcome);
            if failed {
                break;
            }
        }
        done
    }

    fn run_step(
        &mut self,
        name: &str,
        run: &str,
        action_dir: &Path,
        env: &[(String, String)],
    ) -> StepRun {
        self.steps_run += 1;
        let files = self
            .dir
            .path()
            .join("files")
            .join(self.steps_run.to_string());
        std::fs::create_dir(&files).unwrap();
        let script = files.join("step.sh");
        std::fs::write(&script, run).unwrap();
        for file in ["summary", "output", "path", "env"] {
            std::fs::write(files.join(file), "").unwrap();
        }
        let mut path = self.added_paths.clone();
        path.push(self.base_path.clone());
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .current_dir(self.workspace())
            .env_clear()
            .env("PATH", path.join(":"))
            .env("HOME", self.dir.path().join("home"))
            .env("LANG", "C.UTF-8")
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_TEMP", self.temp())
            .env("GITHUB_WORKSPACE", self.workspace())
            .env("GITHUB_ACTION_PATH", action_dir)
            .env("GITHUB_STEP_SUMMARY", files.join("summary"))
            .env("GITHUB_OUTPUT", files.join("output"))
            .env("GITHUB_PATH", files.join("path"))
            .env("GITHUB_ENV", files.join("env"))
            .envs(self.env.iter().cloned())
            .envs(self.added_env.iter().cloned())
            .envs(env.iter().cloned());
        let output = command.output().expect("bash runs the step");
        let read = |file: &str| std::fs::read_to_string(files.join(file)).unwrap();
        self.summary.push_str(&read("summary"));
        for line in read("path").lines().filter(|line| !line.is_empty()) {
            self.added_paths.insert(0, line.to_owned());
        }
        for line in read("env").lines() {
            let (key, value) = line.split_once('=').expect("GITHUB_ENV: KEY=VALUE");
            self.added_env.push((key.to_owned(), value.to_owned()));
        }
        StepRun {
            name: name.to_owned(),
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// `text` with its `${{ inputs.NAME }}` filled in; any other expression fails the test.
#[track_caller]
fn expand(text: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("a closed expression") + start;
        let expression = rest[start + 3..end].trim();
        let name = expression
            .strip_prefix("inputs.")
            .unwrap_or_else(|| panic!("an expression this runner does not evaluate: {expression}"));
        out.push_str(
            inputs
                .get(name)
                .unwrap_or_else(|| panic!("no input {name}")),
        );
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}
