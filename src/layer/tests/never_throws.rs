//! Executing a batch never fails: whatever the inner provider does, every call gets one result,
//! in the caller's order.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

use super::support::*;
use crate::layer::{ListError, Provider, Reasons, ToolResult};

/// A provider whose `execute` does whatever the test says, counting how often it is woken.
struct Scripted<F> {
    execute: F,
    woken: AtomicUsize,
}

impl<F> Scripted<F>
where
    F: Fn(Vec<Value>) -> Vec<ToolResult> + Send + Sync,
{
    fn new(execute: F) -> Reasons<Scripted<F>> {
        let layer = Reasons::new(Scripted {
            execute,
            woken: AtomicUsize::new(0),
        });
        layer.list_tools().unwrap();
        layer
    }
}

impl<F> Provider for Scripted<F>
where
    F: Fn(Vec<Value>) -> Vec<ToolResult> + Send + Sync,
{
    fn list_tools(&self) -> Result<Vec<Value>, ListError> {
        Ok(vec![Shape::OpenAi.declare("fs_write", path_schema())])
    }

    fn execute(&self, calls: Vec<Value>) -> Vec<ToolResult> {
        self.woken.fetch_add(1, Ordering::SeqCst);
        (self.execute)(calls)
    }
}

/// One call in every envelope, numbered from 1, and the ids their results must carry.
fn one_call_per_shape() -> (Vec<Value>, Vec<Option<String>>) {
    CallShape::ALL
        .iter()
        .zip(1..)
        .map(|(shape, n)| {
            let call = shape.call(n, "fs_write", json!({ "reason": "why", "path": "a" }));
            (call, shape.expected_id(n))
        })
        .unzip()
}

#[test]
fn panicking_provider_answers_each_call_with_an_error_in_order() {
    let (calls, ids) = one_call_per_shape();
    let with_message = Scripted::new(|_| panic!("the server went away"));
    let with_any_payload = Scripted::new(|_| std::panic::panic_any(42_u8));
    for results in [
        with_message.execute(calls.clone()),
        with_any_payload.execute(calls.clone()),
    ] {
        assert_eq!(results.len(), calls.len());
        for (result, id) in results.iter().zip(&ids) {
            assert!(result.is_error);
            assert_eq!(&result.call_id, id);
            assert!(result.content.is_string());
        }
    }
}

#[test]
fn panic_message_reaches_the_error_result() {
    let (calls, _) = one_call_per_shape();
    let static_message = Scripted::new(|_| panic!("the server went away"));
    let formatted = Scripted::new(|calls| panic!("{} calls lost", calls.len()));
    for result in static_message.execute(calls.clone()) {
        assert_eq!(
            result.content,
            json!("tool provider failed: the server went away")
        );
    }
    for result in formatted.execute(calls) {
        let message = format!("tool provider failed: {} calls lost", CallShape::ALL.len());
        assert_eq!(result.content, json!(message));
    }
}

#[test]
fn numeric_json_rpc_ids_are_carried_into_error_results() {
    let layer = Scripted::new(|_| panic!("down"));
    let calls = [
        json!(0),
        json!(-3),
        json!(9_007_199_254_740_993_u64),
        json!(2.5),
    ]
    .into_iter()
    .map(|id| {
        with(
            &CallShape::McpRequest.call(0, "fs_write", json!({})),
            "/id",
            id,
        )
    })
    .collect();
    let ids: Vec<_> = layer
        .execute(calls)
        .into_iter()
        .map(|result| result.call_id)
        .collect();
    assert_eq!(
        ids,
        [
            Some("0".to_owned()),
            Some("-3".to_owned()),
            Some("9007199254740993".to_owned()),
            Some("2.5".to_owned())
        ]
    );
}

#[test]
fn layer_keeps_working_after_a_panicking_batch() {
    let layer = Scripted::new(|calls| {
        if calls[0]["id"] == "call_1" {
            panic!("first batch dies");
        }
        echoed(calls)
    });
    let first = CallShape::OpenAi.call(1, "fs_write", json!({ "reason": "r" }));
    assert!(layer.execute(vec![first])[0].is_error);
    let second = CallShape::OpenAi.call(2, "fs_write", json!({ "reason": "r", "a": 1 }));
    let results = layer.execute(vec![second]);
    assert!(!results[0].is_error);
    assert_eq!(
        results[0].content["function"]["arguments"],
        json!({ "a": 1 })
    );
    assert_eq!(layer.augmented_tools(), ["fs_write"]);
}

#[test]
fn too_few_results_are_filled_with_no_result_errors() {
    let (calls, ids) = one_call_per_shape();
    let answered = ToolResult {
        call_id: Some("whatever the server said".into()),
        content: json!({ "ok": true }),
        is_error: false,
    };
    for returned in 0..calls.len() {
        let given = vec![answered.clone(); returned];
        let layer = Scripted::new(move |_| given.clone());
        let results = layer.execute(calls.clone());
        assert_eq!(results.len(), calls.len());
        assert_eq!(results[..returned], vec![answered.clone(); returned]);
        for (result, id) in results[returned..].iter().zip(&ids[returned..]) {
            assert_eq!(result, &ToolResult::error(id.clone(), "no result"));
        }
    }
}

#[test]
fn results_pass_through_as_they_came() {
    let (calls, _) = one_call_per_shape();
    let answers: Vec<ToolResult> = (0..calls.len())
        .map(|n| ToolResult {
            // Not the call's id, on purpose: the layer does not second-guess the provider.
            call_id: (n % 2 == 0).then(|| format!("server-{n}")),
            content: json!({ "n": n, "reason": "the server's own field" }),
            is_error: n % 3 == 0,
        })
        .collect();
    let given = answers.clone();
    let layer = Scripted::new(move |_| given.clone());
    assert_eq!(layer.execute(calls), answers);
}

#[test]
fn empty_batch_is_answered_without_calling_the_inner_provider() {
    let layer = Scripted::new(|_| panic!("must not be woken"));
    assert_eq!(layer.execute(Vec::new()), Vec::new());
    assert_eq!(layer.inner().woken.load(Ordering::SeqCst), 0);

    let unlisted = Reasons::new(Server::default());
    assert_eq!(unlisted.execute(Vec::new()), Vec::new());
    assert!(unlisted.inner().batches().is_empty());
}

#[test]
fn extra_results_are_cut_to_one_per_call() {
    let layer = Scripted::new(|calls| {
        let mut results: Vec<ToolResult> = calls
            .iter()
            .map(|_| ToolResult {
                call_id: None,
                content: json!("ok"),
                is_error: false,
            })
            .collect();
        results.push(ToolResult::error(None, "answers no call"));
        results
    });
    let (calls, _) = one_call_per_shape();
    let count = calls.len();
    let results = layer.execute(calls);
    assert_eq!(results.len(), count);
    assert!(results.iter().all(|result| !result.is_error));
}

/// A provider that dies while listing.
struct PanicsWhileListing;

impl Provider for PanicsWhileListing {
    fn list_tools(&self) -> Result<Vec<Value>, ListError> {
        panic!("catalogue unavailable")
    }

    fn execute(&self, _calls: Vec<Value>) -> Vec<ToolResult> {
        Vec::new()
    }
}

#[test]
fn provider_panicking_while_listing_is_a_failed_listing() {
    let layer = Reasons::new(PanicsWhileListing);
    let error = layer
        .list_tools()
        .expect_err("a listing that died is an error");
    assert!(
        error.to_string().contains("catalogue unavailable"),
        "{error}"
    );
    assert!(layer.augmented_tools().is_empty());
}
