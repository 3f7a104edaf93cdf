//! Every tool call an agent makes carries *why*.
//!
//! A tool call says what an agent is about to do; it does not say why, and why is most of what a
//! person approving the call needs. The **reasons layer** gets the why with the smallest change
//! that works: it adds one optional `reason` string parameter to every tool declaration the model
//! sees, and removes that parameter from each call before the tool's server receives it. The
//! model fills it in because it is declared where the model looks; the person approving the call
//! reads it; the server never learns it existed; the recorded transcript keeps it.
//!
//! The layer is [`layer::Reasons`], a provider composer: it wraps any [`layer::Provider`] and is
//! one itself, so it stacks wherever a provider goes.
//!
//! ```
//! use reasons::layer::{ListError, Provider, Reasons, ToolResult, REASON_PARAM};
//! use serde_json::{json, Value};
//! use std::sync::Mutex;
//!
//! /// A server with one tool, which remembers the arguments it was called with.
//! #[derive(Default)]
//! struct Server {
//!     received: Mutex<Vec<Value>>,
//! }
//!
//! impl Provider for Server {
//!     fn list_tools(&self) -> Result<Vec<Value>, ListError> {
//!         Ok(vec![json!({
//!             "type": "function",
//!             "function": {
//!                 "name": "fs_write",
//!                 "parameters": {
//!                     "type": "object",
//!                     "properties": { "path": { "type": "string" } },
//!                     "required": ["path"]
//!                 }
//!             }
//!         })])
//!     }
//!
//!     fn execute(&self, calls: Vec<Value>) -> Vec<ToolResult> {
//!         calls
//!             .into_iter()
//!             .map(|call| {
//!                 let id = call["id"].as_str().map(str::to_owned);
//!                 self.received.lock().unwrap().push(call["function"]["arguments"].clone());
//!                 ToolResult { call_id: id, content: json!("written"), is_error: false }
//!             })
//!             .collect()
//!     }
//! }
//!
//! let layer = Reasons::new(Server::default());
//!
//! // On the way out, the model sees an optional `reason` on every tool it can read.
//! let catalogue = layer.list_tools().unwrap();
//! let parameters = &catalogue[0]["function"]["parameters"];
//! assert_eq!(parameters["properties"][REASON_PARAM]["type"], "string");
//! assert_eq!(parameters["required"], json!(["path"]));
//! assert_eq!(layer.augmented_tools(), ["fs_write"]);
//!
//! // On the way in, the call carries its reason up to the layer, and not past it.
//! let call = json!({
//!     "id": "call_1",
//!     "type": "function",
//!     "function": {
//!         "name": "fs_write",
//!         "arguments": r#"{"path":"config/app.yml","reason":"Add the retry setting you asked for"}"#
//!     }
//! });
//! let results = layer.execute(vec![call]);
//! assert!(!results[0].is_error);
//! assert_eq!(
//!     layer.inner().received.lock().unwrap()[0],
//!     json!(r#"{"path":"config/app.yml"}"#)
//! );
//! ```
//!
//! [`stream`] applies the same rules to live streams of newline-delimited JSON, one line at a time:
//! the `filter` and `proxy` commands are built on it.
//!
//! Beyond the layer, the crate reads recorded agent sessions of many formats
//! ([`formats`]) into [`record::CallRecord`]s, one per tool call, each with the status of its
//! reason.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// The library never prints: messages are the binary's, and go through its `messages` module.
#![deny(clippy::print_stderr, clippy::print_stdout)]

// The crate's API: the layer (on providers, and on streams of JSON lines), the readers of
// recorded sessions and the records they give, and the reasons log.
pub mod formats;
pub mod layer;
pub mod reasons_log;
pub mod record;
pub mod stream;

// What the `reasons` program is built from beside the API. Public because the program is a crate
// of its own; hidden from the documentation, and not part of the API: it changes with the
// program.
#[doc(hidden)]
pub mod apis;
#[doc(hidden)]
pub mod call_arguments;
#[doc(hidden)]
pub mod dates;
#[doc(hidden)]
pub mod followed_file;
#[doc(hidden)]
pub mod gateway;
#[doc(hidden)]
pub mod jsonl;
#[doc(hidden)]
pub mod lint;
#[doc(hidden)]
pub mod masking;
#[doc(hidden)]
pub mod stats;
#[doc(hidden)]
pub mod touched;
#[doc(hidden)]
pub mod visible;

mod json;
mod reason_parameter;

/// The private JSON parser, held against serde_json by the `json` fuzz target.
#[cfg(any(fuzzing, feature = "fuzzing"))]
#[doc(hidden)]
pub use json::differential as fuzz_json;
