//! Records the reasons log's tests write: a reason taken off a call that ran `ls`.

use serde_json::{json, Value};

use super::record::{Record, Via};
use crate::layer::TakenReason;

/// A reason for `call_id`, taken off a call to `tool` whose arguments are `{"command": "ls"}`.
pub fn taken(tool: &str, call_id: &str, reason: Value) -> TakenReason {
    TakenReason::new(
        tool.into(),
        Some(call_id.into()),
        None,
        reason,
        json!({"command": "ls"}),
    )
}

/// The line a gateway logs for `call_id`, at a fixed time.
pub fn logged_line(id: &str) -> String {
    let mut record = Record::now(Via::Gateway, taken("Bash", id, json!("r")), None);
    record.time = "2026-12-01T00:00:00.000Z".into();
    String::from_utf8(record.to_line()).unwrap()
}
