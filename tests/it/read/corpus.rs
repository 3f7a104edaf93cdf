//! Every file of the shared corpus, and of `corpus-new-agents/` beside it, yields the number of
//! calls counted independently in its `SOURCES.md`. Ignored by a plain `cargo test`, since the corpus is not part of the crate; run
//! with `--ignored`, it fails when the corpus is not beside the crate.

use crate::util::{arg, corpora, run};

/// `(folder/file, tool calls)` for each row of the tables in `SOURCES.md`, like
/// `shared/bin/corpus-check` reads them.
fn expected(sources: &str) -> Vec<(String, u64)> {
    let mut rows = Vec::new();
    let mut folder = None;
    for line in sources.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            folder = heading.strip_suffix('/').map(str::to_owned);
            continue;
        }
        let (Some(folder), Some(row)) = (&folder, line.strip_prefix("| `")) else {
            continue;
        };
        let cells: Vec<&str> = row.trim_end().trim_end_matches('|').split('|').collect();
        let file = cells[0].trim().trim_end_matches('`');
        let calls = cells[cells.len() - 2]
            .trim()
            .parse()
            .expect("a count of tool calls");
        rows.push((format!("{folder}/{file}"), calls));
    }
    rows
}

#[test]
#[ignore = "reads ../shared/corpus, which is not part of the crate: run with --ignored (.ci/run does)"]
fn every_corpus_file_yields_its_counted_calls() {
    let mut rows = Vec::new();
    for corpus in corpora() {
        let sources =
            std::fs::read_to_string(corpus.join("SOURCES.md")).expect("SOURCES.md is read");
        let read = expected(&sources);
        assert!(!read.is_empty(), "no rows read from {}", corpus.display());
        rows.extend(read.into_iter().map(|row| (corpus.clone(), row)));
    }
    let mut differ = Vec::new();
    for (corpus, (file, want)) in &rows {
        // Through the binary, as `shared/bin/corpus-check` does: some entries are SQLite
        // stores, one a folder (OpenCode's legacy storage tree).
        let path = corpus.join(file);
        let run = run(&["stats", "--format", "json", arg(&path)]);
        let calls = serde_json::from_str::<serde_json::Value>(&run.stdout)
            .ok()
            .and_then(|stats| stats["totals"]["calls"].as_u64());
        if calls != Some(*want) {
            differ.push(format!(
                "{file}: {calls:?} calls found, {want} expected; {}",
                run.stderr
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{}/{} corpus files match:\n{}",
        rows.len() - differ.len(),
        rows.len(),
        differ.join("\n")
    );
}
