//! Where the layer sits in a stack: under the permission layer, so the human asked about a call
//! sees its reason; over it, and the question is asked about a call that has lost it.

use std::sync::Mutex;

use serde_json::{json, Value};

use super::support::*;
use crate::layer::{ListError, Provider, Reasons, ToolResult, REASON_PARAM};

/// A permission layer in the shape of the seed's: before a batch runs, its "ask the human" hook is
/// handed a copy of each call. This one approves everything and remembers what it was shown.
struct Policy<P: Provider> {
    inner: P,
    asked: Mutex<Vec<Value>>,
}

impl<P: Provider> Policy<P> {
    fn new(inner: P) -> Policy<P> {
        Policy {
            inner,
            asked: Mutex::default(),
        }
    }

    fn on_ask(&self, call: &Value) -> bool {
        self.asked.lock().unwrap().push(call.clone());
        true
    }

    fn asked(&self) -> Vec<Value> {
        self.asked.lock().unwrap().clone()
    }
}

impl<P: Provider> Provider for Policy<P> {
    fn list_tools(&self) -> Result<Vec<Value>, ListError> {
        self.inner.list_tools()
    }

    fn execute(&self, calls: Vec<Value>) -> Vec<ToolResult> {
        let approved = calls.iter().all(|call| self.on_ask(call));
        assert!(approved);
        self.inner.execute(calls)
    }
}

/// The reason in a call's arguments, read the way a permission prompt would.
fn reason_of(call: &Value) -> Option<Value> {
    let arguments = &call["function"]["arguments"];
    let arguments = match arguments {
        Value::String(text) => serde_json::from_str(text).ok()?,
        other => other.clone(),
    };
    arguments.get(REASON_PARAM).cloned()
}

fn server() -> Server {
    Server::new(vec![Shape::OpenAi.declare("fs_write", path_schema())])
}

fn fs_write_with_reason() -> Value {
    CallShape::OpenAi.call(
        1,
        "fs_write",
        json!(r#"{"path":"src/app.rs","content":"...","reason":"Add the missing guard clause you asked for"}"#),
    )
}

#[test]
fn policy_over_reasons_asks_the_human_with_the_reason() {
    let stack = Policy::new(Reasons::new(server()));
    let catalogue = stack.list_tools().unwrap();
    assert!(catalogue[0]["function"]["parameters"]["properties"]
        .get(REASON_PARAM)
        .is_some());

    stack.execute(vec![fs_write_with_reason()]);

    let asked = stack.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        reason_of(&asked[0]),
        Some(json!("Add the missing guard clause you asked for"))
    );
    let received = stack.inner.inner().last_batch();
    assert_eq!(reason_of(&received[0]), None);
    assert_eq!(
        received[0]["function"]["arguments"],
        json!(r#"{"path":"src/app.rs","content":"..."}"#)
    );
}

#[test]
fn reasons_over_policy_asks_the_human_without_the_reason() {
    let stack = Reasons::new(Policy::new(server()));
    stack.list_tools().unwrap();

    stack.execute(vec![fs_write_with_reason()]);

    let asked = stack.inner().asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(reason_of(&asked[0]), None, "stripped before the question");
    let received = stack.inner().inner.last_batch();
    assert_eq!(reason_of(&received[0]), None);
}
