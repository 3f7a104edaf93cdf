//! Listings refreshed while batches run: each batch is stripped against one listing, whole.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::support::*;
use crate::layer::{ListError, Provider, Reasons, ToolResult};

const TOOLS_PER_LISTING: usize = 8;

/// Alternates between two catalogues that track disjoint sets of names: `even_*` tools in one,
/// `odd_*` in the other. Each lists the other's tools as collisions, so a stale name would show.
struct Alternating {
    listings: AtomicUsize,
}

fn catalogue(tracked: &str, left_alone: &str) -> Vec<Value> {
    (0..TOOLS_PER_LISTING)
        .flat_map(|n| {
            [
                Shape::OpenAi.declare(&format!("{tracked}_{n}"), path_schema()),
                Shape::OpenAi.declare(&format!("{left_alone}_{n}"), declaring_reason_schema()),
            ]
        })
        .collect()
}

impl Provider for Alternating {
    fn list_tools(&self) -> Result<Vec<Value>, ListError> {
        Ok(match self.listings.fetch_add(1, Ordering::SeqCst) % 2 {
            0 => catalogue("even", "odd"),
            _ => catalogue("odd", "even"),
        })
    }

    /// Answers each call with the arguments it received.
    fn execute(&self, calls: Vec<Value>) -> Vec<ToolResult> {
        calls
            .into_iter()
            .map(|call| ToolResult {
                call_id: call["id"].as_str().map(str::to_owned),
                content: call["function"]["arguments"].clone(),
                is_error: false,
            })
            .collect()
    }
}

/// A batch that calls every tool of both listings, interleaved, each call carrying a reason.
fn batch() -> Vec<Value> {
    (0..TOOLS_PER_LISTING)
        .flat_map(|n| ["even", "odd"].map(|set| format!("{set}_{n}")))
        .enumerate()
        .map(|(i, name)| {
            let arguments = json!({ "n": i, "reason": "why" }).to_string();
            CallShape::OpenAi.call(i as u64, &name, json!(arguments))
        })
        .collect()
}

/// Which listing a batch was stripped against: `"even"` or `"odd"`; panics on a mixed batch.
fn stripped_against(calls: &[Value], results: &[ToolResult]) -> &'static str {
    assert_eq!(results.len(), calls.len());
    let stripped: Vec<bool> = results
        .iter()
        .map(|result| {
            let arguments: Value = serde_json::from_str(result.content.as_str().unwrap()).unwrap();
            arguments.get("reason").is_none()
        })
        .collect();
    let names: Vec<&str> = calls
        .iter()
        .map(|call| call["function"]["name"].as_str().unwrap())
        .collect();
    for set in ["even", "odd"] {
        let expected: Vec<bool> = names.iter().map(|name| name.starts_with(set)).collect();
        if stripped == expected {
            return set;
        }
    }
    panic!("a batch stripped against no single listing: {names:?} {stripped:?}");
}

#[test]
fn every_batch_is_stripped_against_exactly_one_listing() {
    let layer = Reasons::new(Alternating {
        listings: AtomicUsize::new(0),
    });
    layer.list_tools().unwrap();
    let done = AtomicBool::new(false);
    let deadline = Instant::now() + Duration::from_secs(20);

    let seen: Vec<[usize; 2]> = thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                layer.list_tools().unwrap();
                assert!(matches!(
                    layer.augmented_tools().first().map(String::as_str),
                    Some("even_0" | "odd_0")
                ));
                assert_eq!(layer.augmented_tools().len(), TOOLS_PER_LISTING);
            }
        });
        let runners: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    let mut seen = [0, 0];
                    let mut batches = 0;
                    // At least 200 batches each, and on until both listings were met.
                    while batches < 200 || (seen.contains(&0) && Instant::now() < deadline) {
                        let calls = batch();
                        let results = layer.execute(calls.clone());
                        match stripped_against(&calls, &results) {
                            "even" => seen[0] += 1,
                            _ => seen[1] += 1,
                        }
                        batches += 1;
                    }
                    seen
                })
            })
            .collect();
        let joined: Vec<_> = runners.into_iter().map(|runner| runner.join()).collect();
        // Stop the refresher before reporting a failed runner, or the scope would wait forever.
        done.store(true, Ordering::SeqCst);
        joined
            .into_iter()
            .map(|seen| seen.expect("a batch runner failed"))
            .collect()
    });

    let even: usize = seen.iter().map(|counts| counts[0]).sum();
    let odd: usize = seen.iter().map(|counts| counts[1]).sum();
    assert!(
        even > 0 && odd > 0,
        "both listings met: {even} even, {odd} odd"
    );
}
