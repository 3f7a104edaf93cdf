//! Which logs to read: files, directories, glob patterns, stdin, or the usual local folders.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context};
use rayon::prelude::*;
use reasons::formats::store::{self, Store, StoreError};

use crate::program::agents;

/// One log to read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    /// Standard input, shown as `-`.
    Stdin,
    /// A file, shown as the path it was found under.
    File(PathBuf),
    /// An agent's store a folder walk found: opened to tell it is one, and read through that
    /// connection rather than opened again.
    Store(FoundStore),
}

impl Source {
    /// How records and messages name this source.
    pub fn name(&self) -> String {
        match self.path() {
            None => "-".to_owned(),
            Some(path) => path.display().to_string(),
        }
    }

    /// The file it is; `None` for stdin.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::Stdin => None,
            Source::File(path) => Some(path),
            Source::Store(found) => Some(&found.path),
        }
    }
}

/// An agent's store found in a folder, and its connection until it is read. Two are the same
/// source when their paths are.
#[derive(Clone)]
pub struct FoundStore {
    path: PathBuf,
    store: Arc<Mutex<Option<Store>>>,
}

impl FoundStore {
    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection opened when the store was found; `None` once it was taken (the source is
    /// read again: then it is opened again).
    pub fn take(&self) -> Option<Store> {
        self.store.lock().ok()?.take()
    }
}

impl std::fmt::Debug for FoundStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FoundStore").field(&self.path).finish()
    }
}

impl PartialEq for FoundStore {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for FoundStore {}

impl std::hash::Hash for FoundStore {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.path.hash(state);
    }
}

/// Whether standard input is a pipe, a socket or a file: something a log can come through,
/// unlike `/dev/null` (a device) or a closed descriptor.
fn stdin_holds_input() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::FileTypeExt;
        let Ok(stdin) = std::io::stdin().as_fd().try_clone_to_owned() else {
            return false;
        };
        std::fs::File::from(stdin).metadata().is_ok_and(|metadata| {
            let kind = metadata.file_type();
            kind.is_fifo() || kind.is_socket() || kind.is_file()
        })
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// File names a directory walk picks up.
const LOG_EXTENSIONS: [&str; 3] = ["jsonl", "json", "traj"];

/// Files a directory walk picks up when they are an agent's SQLite store (OpenClaw's is a
/// `.sqlite`).
const STORE_EXTENSIONS: [&str; 2] = ["db", "sqlite"];

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
    /// Whether the logs are the usual local folders', read because no path was given.
    pub local: bool,
}

/// Expands the PATH arguments.
///
/// With no paths: the usual local log folders when stdin is a terminal, else stdin when it is a
/// pipe or a file (both announced through `announce`), else an error asking for a PATH — a
/// script or CI step with stdin at `/dev/null`, or closed, has named nothing to read.
pub fn expand(paths: &[String], announce: &mut dyn FnMut(&str)) -> anyhow::Result<Sources> {
    if paths.is_empty() {
        if !std::io::stdin().is_terminal() {
            if !stdin_holds_input() {
                bail!(
                    "no PATH given, and standard input is neither a terminal, a pipe nor a file: \
                     give the logs to read as PATHs (files, folders, globs; - for stdin)"
                );
            }
            announce("reading standard input");
            return Ok(Sources {
                sources: vec![Source::Stdin],
                problems: Vec::new(),
                local: false,
            });
        }
        return local_logs(announce);
    }
    let mut expanded = Sources {
        sources: Vec::new(),
        problems: Vec::new(),
        local: false,
    };
    // One look at the file system per path, on every core: `reasons stats logs/*.jsonl` may
    // name ten thousand files, and one at a time their looks held up the reading that follows.
    let kinds: Vec<Option<bool>> = paths
        .par_iter()
        .map(|path| {
            (path != "-").then(|| std::fs::metadata(path).ok().map(|meta| meta.is_dir()))?
        })
        .collect();
    for (path, is_dir) in paths.iter().zip(kinds) {
        if let Err(error) = expand_one(path, is_dir, &mut expanded.sources) {
            expanded.problems.push(Problem {
                path: path.clone(),
                message: format!("{error:#}"),
            });
        }
    }
    Ok(expanded)
}

/// Expands one PATH; `is_dir` says whether it names a folder, and is `None` when it names
/// nothing in the file system (or is `-`).
fn expand_one(path: &str, is_dir: Option<bool>, sources: &mut Vec<Source>) -> anyhow::Result<()> {
    if path == "-" {
        sources.push(Source::Stdin);
        return Ok(());
    }
    let as_path = Path::new(path);
    match is_dir {
        Some(true) => return walk(as_path, sources),
        Some(false) => {
            sources.push(Source::File(as_path.to_path_buf()));
            return Ok(());
        }
        None => {}
    }
    if !is_glob(path) {
        bail!("no such file or directory");
    }
    let pattern = glob::Pattern::new(path).context("not a valid glob pattern")?;
    let mut found = Vec::new();
    if path.contains("**") {
        // The glob crate's own `**` follows links to directories: a link loop has it list the
        // same files again at every level until the path is too long, and two loops in one
        // folder make that exponential. Walk from the folder before the first wildcard instead,
        // never through a link to a directory, and match every path on the way.
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..glob::MatchOptions::new()
        };
        let base = literal_prefix(path);
        let mut listed = Vec::new();
        if base.as_os_str().is_empty() {
            listed = entries(&base)?;
        } else if base.is_dir() {
            // `**` matches no folder too: `logs/**` names `logs` itself.
            listed.push((base.clone(), true));
            listed.extend(entries(&base)?);
        }
        // As with the glob crate, a pattern ending in `**` names folders only.
        let folders_only = Path::new(path).file_name().is_none_or(|last| last == "**");
        found.extend(
            listed
                .into_iter()
                .filter(|(found, is_dir)| match is_dir {
                    true => {
                        let with_separator = format!("{}/", found.display());
                        pattern.matches_path_with(found, options)
                            || pattern.matches_with(&with_separator, options)
                    }
                    false => !folders_only && pattern.matches_path_with(found, options),
                })
                .map(|(path, _)| path),
        );
    } else {
        for entry in glob::glob(path).context("not a valid glob pattern")? {
            found.push(entry.context("cannot read a folder the pattern goes through")?);
        }
    }
    let mut matched = Vec::new();
    for found in found {
        if found.is_dir() {
            walk(&found, &mut matched)?;
        } else if found.is_file() {
            // Like a directory walk, a pattern picks only regular files: a FIFO it happens to
            // match would block the run until something writes to it.
            matched.push(Source::File(found));
        }
    }
    if matched.is_empty() {
        bail!("no files match this pattern");
    }
    // A pattern that matches a folder and files inside it (`logs/**`) names them twice: each log
    // is read once, at its first place.
    let mut seen = HashSet::new();
    matched.retain(|source| seen.insert(source.path().map(Path::to_path_buf)));
    sources.extend(matched);
    Ok(())
}

fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// The folder a pattern starts in: its components before the first with a wildcard (empty for
/// the current folder).
fn literal_prefix(pattern: &str) -> PathBuf {
    Path::new(pattern)
        .components()
        .take_while(|component| !is_glob(&component.as_os_str().to_string_lossy()))
        .collect()
}

/// Every log file under `dir`, in sorted path order: JSON logs by their names, and SQLite
/// files that are an agent's store (any other database in the folder is none of ours, and left
/// unsaid).
fn walk(dir: &Path, sources: &mut Vec<Source>) -> anyhow::Result<()> {
    let files = entries(dir)?.into_iter().filter(|(_, is_dir)| !is_dir);
    sources.extend(files.filter_map(|(path, _)| log_in_folder(path)));
    Ok(())
}

/// A file a folder walk reads, if it is one: a JSON log by its name, or a `.db` or `.sqlite` file
/// that starts as SQLite does and is, or may be, an agent's store. A store is kept open for its reading; one
/// SQLite cannot read (damaged, locked) is kept as a file, so that reading it says what is wrong.
fn log_in_folder(path: PathBuf) -> Option<Source> {
    if is_log_file(&path) {
        return Some(Source::File(path));
    }
    let is_database = path
        .extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| STORE_EXTENSIONS.contains(&extension))
        && store::is_sqlite(&path);
    if !is_database {
        return None;
    }
    match Store::open(&path) {
        Ok(store) => Some(Source::Store(FoundStore {
            path,
            store: Arc::new(Mutex::new(Some(store))),
        })),
        Err(StoreError::NotAStore) => None,
        Err(StoreError::Sqlite(_)) => Some(Source::File(path)),
    }
}

/// Every folder and regular file under `dir` (the current folder when empty), with whether it is
/// a folder, in sorted path order. Symbolic links to directories are not followed, so a link
/// loop cannot make a walk endless; links to files are. Anything else (a FIFO, a socket, a
/// device) is left out: opening a FIFO blocks until something writes to it.
///
/// Sorted path order is a depth-first walk that lists each folder's entries by name, a folder
/// just before what it holds; sorting names folder by folder gives it without comparing whole
/// paths component by component, which over ten thousand files held up the first read by
/// several milliseconds.
fn entries(dir: &Path) -> anyhow::Result<Vec<(PathBuf, bool)>> {
    let mut found = Vec::new();
    // Entries still to hand out, the next one last.
    let mut pending: Vec<(PathBuf, bool)> = Vec::new();
    let mut listing = Some(dir.to_path_buf());
    loop {
        if let Some(dir) = listing.take() {
            let listed = list(&dir)?;
            pending.extend(
                listed
                    .into_iter()
                    .rev()
                    .map(|(name, is_dir)| (dir.join(name), is_dir)),
            );
        }
        let Some((path, is_dir)) = pending.pop() else {
            return Ok(found);
        };
        if is_dir {
            listing = Some(path.clone());
        }
        found.push((path, is_dir));
    }
}

/// The names of the folders and regular files (or links to files) directly in `dir`, sorted.
fn list(dir: &Path) -> anyhow::Result<Vec<(OsString, bool)>> {
    let listed = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut found = Vec::new();
    let entries =
        std::fs::read_dir(listed).with_context(|| format!("cannot list {}", listed.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", listed.display()))?;
        let kind = entry
            .file_type()
            .with_context(|| format!("cannot read {}", entry.path().display()))?;
        if kind.is_dir() {
            found.push((entry.file_name(), true));
        } else if kind.is_file() || (kind.is_symlink() && entry.path().is_file()) {
            found.push((entry.file_name(), false));
        }
    }
    found.sort_unstable();
    Ok(found)
}

fn is_log_file(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| LOG_EXTENSIONS.contains(&extension))
}

/// The usual local folders: each agent's logs in its home ([`agents::ALL`]). Crush keeps its
/// store in each project's `.crush/`, so no usual place holds it.
pub fn local_logs(announce: &mut dyn FnMut(&str)) -> anyhow::Result<Sources> {
    if std::env::var_os("HOME").is_none_or(|home| home.is_empty()) {
        bail!("no PATH given, and HOME is not set to find the local agent logs in");
    }
    let mut sources = Vec::new();
    let mut places = Vec::new();
    for agent in agents::ALL {
        let (base, shown) = (agent.home.folder().unwrap_or_default(), agent.home.shown());
        for place in agent.logs {
            places.push(format!("{shown}/{place}"));
            let place = base.join(place);
            let found = if is_glob(&place.to_string_lossy()) {
                glob::glob(&place.to_string_lossy())
                    .map(|paths| paths.filter_map(Result::ok).collect())
                    .unwrap_or_default()
            } else {
                vec![place]
            };
            for place in found {
                if place.is_dir() {
                    announce(&format!("reading {}", place.display()));
                    walk(&place, &mut sources)?;
                } else if place.is_file() {
                    announce(&format!("reading {}", place.display()));
                    sources.push(Source::File(place));
                }
            }
        }
    }
    if sources.is_empty() {
        bail!(
            "no PATH given, and no agent logs found in {}",
            places.join(", ")
        );
    }
    Ok(Sources {
        sources,
        problems: Vec::new(),
        local: true,
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

    /// The glob crate's `**` followed the loop: every file came back once per level, 40 levels
    /// deep, and two loops in one folder would have made it exponential.
    #[cfg(unix)]
    #[test]
    fn a_double_star_glob_through_symlink_loops_finds_each_file_once() {
        let dir = tree();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("b/loop")).unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("b/inner/loop")).unwrap();
        let pattern = format!("{}/**/*.jsonl", dir.path().display());
        let expanded = expand(&[pattern], &mut |_| {}).unwrap();
        let root = dir.path().display();
        assert_eq!(
            names(&expanded.sources),
            [format!("{root}/a.jsonl"), format!("{root}/b/inner/z.jsonl")]
        );
    }

    #[test]
    fn a_pattern_matching_a_folder_and_its_files_names_each_file_once() {
        let dir = tree();
        let pattern = format!("{}/**", dir.path().display());
        let expanded = expand(&[pattern], &mut |_| {}).unwrap();
        assert_eq!(expanded.sources.len(), 4);
    }

    #[test]
    fn a_double_star_glob_under_a_missing_folder_matches_nothing() {
        let expanded = expand(&["no/where/**/*.jsonl".to_owned()], &mut |_| {}).unwrap();
        assert!(expanded.problems[0].message.contains("no files match"));
    }

    /// Opening a FIFO blocks until something writes to it: a walk that picked one up hung.
    #[cfg(unix)]
    #[test]
    fn a_fifo_in_a_walked_folder_or_matched_by_a_glob_is_left_out() {
        let dir = tree();
        let fifo = dir.path().join("b/pipe.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(
            made.as_ref().is_ok_and(|status| status.success()),
            "mkfifo: {made:?}"
        );
        let root = dir.path().display().to_string();
        let walked = expand(std::slice::from_ref(&root), &mut |_| {}).unwrap();
        assert_eq!(walked.sources.len(), 4);
        for pattern in [format!("{root}/b/*.jsonl"), format!("{root}/**/pipe.jsonl")] {
            let globbed = expand(std::slice::from_ref(&pattern), &mut |_| {}).unwrap();
            assert!(!names(&globbed.sources).contains(&fifo.display().to_string()));
        }
        // Named on its own, it is read: that is how `<(command)` reaches the tool.
        let named = expand(&[fifo.display().to_string()], &mut |_| {}).unwrap();
        assert_eq!(named.sources, [Source::File(fifo)]);
    }
}
