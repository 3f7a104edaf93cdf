//! Which logs to read: files, directories, glob patterns, stdin, or the usual local folders.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// One log to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Standard input, shown as `-`.
    Stdin,
    /// A file, shown as the path it was found under.
    File(PathBuf),
}

impl Source {
    /// How records and messages name this source.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "-".to_owned(),
            Source::File(path) => path.display().to_string(),
        }
    }
}

/// File names a directory walk picks up.
const LOG_EXTENSIONS: [&str; 3] = ["jsonl", "json", "traj"];

/// Where agents keep their logs, relative to the home directory.
const LOCAL_LOG_FOLDERS: [&str; 3] = [".claude/projects", ".codex/sessions", ".gemini/tmp"];

/// A path the user named that holds no log, or that could not be read: reported, never skipped
/// silently, and the run goes on with the rest.
#[derive(Debug)]
pub struct Problem {
    /// The path as given.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

/// The logs named on the command line, in the order given (a directory in sorted path order).
pub struct Sources {
    /// The logs to read.
    pub sources: Vec<Source>,
    /// Paths that could not be expanded.
    pub problems: Vec<Problem>,
}

/// Expands the PATH arguments.
///
/// With no paths: stdin when it is not a terminal, otherwise the usual local log folders, which
/// are announced through `announce`.
pub fn expand(paths: &[String], announce: &mut dyn FnMut(&str)) -> anyhow::Result<Sources> {
    if paths.is_empty() {
        if !std::io::stdin().is_terminal() {
            return Ok(Sources {
                sources: vec![Source::Stdin],
                problems: Vec::new(),
            });
        }
        return local_logs(announce);
    }
    let mut expanded = Sources {
        sources: Vec::new(),
        problems: Vec::new(),
    };
    for path in paths {
        if let Err(error) = expand_one(path, &mut expanded.sources) {
            expanded.problems.push(Problem {
                path: path.clone(),
                message: format!("{error:#}"),
            });
        }
    }
    Ok(expanded)
}

fn expand_one(path: &str, sources: &mut Vec<Source>) -> anyhow::Result<()> {
    if path == "-" {
        sources.push(Source::Stdin);
        return Ok(());
    }
    let as_path = Path::new(path);
    // One look at the file system per path: `reasons stats logs/*.jsonl` may name thousands.
    if let Ok(metadata) = std::fs::metadata(as_path) {
        if metadata.is_dir() {
            walk(as_path, sources)?;
        } else {
            sources.push(Source::File(as_path.to_path_buf()));
        }
        return Ok(());
    }
    if !is_glob(path) {
        bail!("no such file or directory");
    }
    let mut matched = Vec::new();
    for entry in glob::glob(path).context("not a valid glob pattern")? {
        let found = entry.context("cannot read a folder the pattern goes through")?;
        if found.is_dir() {
            walk(&found, &mut matched)?;
        } else {
            matched.push(Source::File(found));
        }
    }
    if matched.is_empty() {
        bail!("no files match this pattern");
    }
    sources.extend(matched);
    Ok(())
}

fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// Every log file under `dir`, in sorted path order. Symbolic links to directories are not
/// followed, so a link loop cannot make a walk endless.
fn walk(dir: &Path, sources: &mut Vec<Source>) -> anyhow::Result<()> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .with_context(|| format!("cannot read {}", path.display()))?;
            if kind.is_dir() {
                pending.push(path);
            } else if is_log_file(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    sources.extend(found.into_iter().map(Source::File));
    Ok(())
}

fn is_log_file(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| LOG_EXTENSIONS.contains(&extension))
}

fn local_logs(announce: &mut dyn FnMut(&str)) -> anyhow::Result<Sources> {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        bail!("no PATH given, and HOME is not set to find the local agent logs in");
    };
    let mut sources = Vec::new();
    for folder in LOCAL_LOG_FOLDERS {
        let folder = home.join(folder);
        if folder.is_dir() {
            announce(&format!("reading {}", folder.display()));
            walk(&folder, &mut sources)?;
        }
    }
    if sources.is_empty() {
        bail!(
            "no PATH given, and no agent logs found in ~/{}",
            LOCAL_LOG_FOLDERS.join(", ~/")
        );
    }
    Ok(Sources {
        sources,
        problems: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sources: &[Source]) -> Vec<String> {
        sources.iter().map(Source::name).collect()
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("b/inner")).unwrap();
        for file in [
            "b/inner/z.jsonl",
            "b/a.json",
            "c.traj",
            "notes.txt",
            "a.jsonl",
        ] {
            std::fs::write(dir.path().join(file), "").unwrap();
        }
        dir
    }

    #[test]
    fn directories_are_walked_for_log_files_in_sorted_order() {
        let dir = tree();
        let root = dir.path().to_str().unwrap().to_owned();
        let expanded = expand(std::slice::from_ref(&root), &mut |_| {}).unwrap();
        let want = ["a.jsonl", "b/a.json", "b/inner/z.jsonl", "c.traj"]
            .map(|file| format!("{root}/{file}"));
        assert_eq!(names(&expanded.sources), want);
    }

    #[test]
    fn globs_are_expanded_by_the_tool() {
        let dir = tree();
        let pattern = format!("{}/**/*.jsonl", dir.path().display());
        let expanded = expand(&[pattern], &mut |_| {}).unwrap();
        assert_eq!(expanded.sources.len(), 2);
        assert!(expanded.problems.is_empty());
    }

    #[test]
    fn a_glob_matching_nothing_is_a_problem_not_silence() {
        let dir = tree();
        let pattern = format!("{}/*.nothing", dir.path().display());
        let expanded = expand(std::slice::from_ref(&pattern), &mut |_| {}).unwrap();
        assert!(expanded.sources.is_empty());
        assert_eq!(expanded.problems[0].path, pattern);
        assert!(expanded.problems[0].message.contains("no files match"));
    }

    #[test]
    fn a_missing_path_is_a_problem_and_the_others_are_still_read() {
        let dir = tree();
        let good = dir.path().join("a.jsonl").display().to_string();
        let expanded = expand(&["nope.jsonl".to_owned(), good], &mut |_| {}).unwrap();
        assert_eq!(expanded.sources.len(), 1);
        assert_eq!(expanded.problems[0].path, "nope.jsonl");
    }

    #[test]
    fn a_named_file_is_read_whatever_its_extension() {
        let dir = tree();
        let notes = dir.path().join("notes.txt").display().to_string();
        let expanded = expand(&[notes.clone(), "-".to_owned()], &mut |_| {}).unwrap();
        assert_eq!(names(&expanded.sources), [notes, "-".to_owned()]);
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_symlink_loop_ends() {
        let dir = tree();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("b/loop")).unwrap();
        let root = dir.path().display().to_string();
        let expanded = expand(&[root], &mut |_| {}).unwrap();
        assert_eq!(expanded.sources.len(), 4);
    }
}
