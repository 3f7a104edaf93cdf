//! The README and the guides in `doc/`: every relative link leads to a file that is there, and
//! every `#anchor` to a heading of that file.

use std::path::{Path, PathBuf};

use crate::util::root;

/// The pages a person reads: README.md and doc/*.md.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("doc")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "md") {
            pages.push(path);
        }
    }
    pages.sort();
    pages
}

/// The targets of the Markdown links and images of `text`, outside code.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // Inline code spans hold examples, not links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    targets
}

/// GitHub's anchor for a heading: lower-cased, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|character| match character {
            ' ' => Some('-'),
            '-' | '_' => Some(character),
            _ if character.is_alphanumeric() => Some(character),
            _ => None,
        })
        .collect()
}

fn anchors(page: &Path) -> Vec<String> {
    let mut in_fence = false;
    std::fs::read_to_string(page)
        .unwrap()
        .lines()
        .filter(|line| {
            if line.starts_with("```") {
                in_fence = !in_fence;
            }
            !in_fence && line.starts_with('#')
        })
        .map(|line| anchor(line.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_relative_link_of_the_readme_and_the_guides_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, fragment) = match target.split_once('#') {
                Some((file, fragment)) => (file, Some(fragment)),
                None => (target.as_str(), None),
            };
            let linked = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !linked.exists() {
                broken.push(format!("{}: {target}: no such file", page.display()));
                continue;
            }
            if let Some(fragment) = fragment {
                if !anchors(&linked).iter().any(|anchor| anchor == fragment) {
                    broken.push(format!("{}: {target}: no such heading", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    assert!(checked >= 10, "only {checked} links checked");
}

#[test]
fn the_readme_is_a_front_page_with_the_two_commands_and_the_picture_first() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.lines().count() < 100, "the README is a front page");
    let first_screen: String = readme.lines().take(45).collect::<Vec<_>>().join("\n");
    for needed in [
        "cargo install --path .",
        "cargo run --release -- extract samples/claude-code.jsonl",
        "cargo test",
        "](doc/report.png)",
    ] {
        assert!(
            first_screen.contains(needed),
            "not on the first screen: {needed}"
        );
    }
    for guide in [
        "doc/ci.md",
        "doc/gateway-agents.md",
        "doc/mcp.md",
        "doc/pipes.md",
        "doc/library.md",
        "doc/internals.md",
    ] {
        assert!(
            readme.contains(&format!("]({guide})")),
            "no link to {guide}"
        );
    }
}

#[test]
fn the_hook_guide_says_where_its_message_shows_and_that_both_name_one_log() {
    let guide = std::fs::read_to_string(root().join("doc/gateway-agents.md")).unwrap();
    assert!(guide.contains("interactive") && guide.contains("`claude -p`"));
    assert!(guide.contains("both must name the same log"));
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(anchor(" The layer, as a library"), "the-layer-as-a-library");
    assert_eq!(
        anchor(" On a live stream: `reasons filter`"),
        "on-a-live-stream-reasons-filter"
    );
}

/// The release binary's size (it was 51 MB, most of it debug info; the Redis client of `gateway
/// --store` added 1.2 MB to 9.5; the decoders of compressed answers, zstd, brotli and flate2, with
/// `proxy --url` and `run pi`/`run hermes`, took it past 12 to 12.6; `proxy --listen` and
/// `proxy --url`'s OAuth sign-in to 13.1). Only a release build says anything about it: `.ci/run`
/// runs this in one.
#[test]
#[ignore = "measures the release binary: run by .ci/run in a release build"]
fn the_installed_binary_is_at_most_13_5_mb() {
    if cfg!(debug_assertions) {
        panic!(
            "run in a release build: cargo test --release --test it -- --ignored installed_binary"
        );
    }
    let size = std::fs::metadata(env!("CARGO_BIN_EXE_reasons"))
        .unwrap()
        .len();
    eprintln!("the release binary: {:.1} MB", size as f64 / 1e6);
    assert!(size <= 13_500_000, "the release binary is {size} bytes");
}
