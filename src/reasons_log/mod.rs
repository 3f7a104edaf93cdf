//! The reasons log: one JSON object per line for each reason the layer took off a call.
//!
//! `filter`, `proxy` and `gateway` write it; `hook`, `watch` and the audit commands read it. A
//! line is `{"time","via","tool","call_id","reason","touched","request_id"?,"session"?}`:
//! `call_id` is the id the agent's own transcript records for the call, so a transcript and a
//! reasons log join on it; `touched` says what the call does, so the log alone shows each reason
//! beside its call.
//!
//! Which log: the one a command is given, else the one `REASONS_LOG` names, else the default,
//! as the command's [`Purpose`] allows; [`which`] is the one place that decides it.
//!
//! Each record is appended with a single `write` to a file opened for appending, so that several
//! writers (a gateway per provider, a proxy per MCP server) can share one log without cutting
//! through each other's lines.
//!
//! A transcript recorded behind the gateway holds its calls without their reasons; the log gives
//! each back by call id:
//!
//! ```
//! use reasons::formats::{read_log, Event, ReadOptions};
//! use reasons::reasons_log::Index;
//! use reasons::record::{ReasonFrom, Status};
//!
//! // What the gateway logged when it took the reason off the call…
//! let log = r#"{"time":"2026-12-04T10:00:00.000Z","via":"gateway","tool":"Bash","call_id":"toolu_1","reason":"See what is here","touched":"ls"}"#;
//! let mut index = Index::default();
//! index.add(log.as_bytes())?;
//!
//! // …and the call as the agent recorded it, without its reason.
//! let transcript = r#"{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}"#;
//! let mut calls = Vec::new();
//! read_log("-", transcript.as_bytes(), &ReadOptions::default(), &mut |event| {
//!     if let Event::Call(call) = event {
//!         calls.push(call);
//!     }
//!     Ok(())
//! })?;
//! assert_eq!(calls[0].status, Status::Missing);
//!
//! assert!(index.join(&mut calls[0]));
//! assert_eq!(calls[0].reason.as_deref(), Some("See what is here"));
//! assert_eq!((calls[0].status, calls[0].reason_from), (Status::Present, ReasonFrom::Log));
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! One file a concern, none importing another in a circle: `record` (a line, written and read
//! back) and `matching` (how a logged reason meets its call) below the rest; `which_log`,
//! `writer`, `index` (the reasons by call id), `search` (the hooks' look at the log's end), `recent` (the
//! records a starting gateway remembers) and `tail` (`watch`'s follower) on them. Callers name everything from here.

mod index;
mod matching;
mod recent;
mod record;
mod search;
mod tail;
#[cfg(test)]
mod test_records;
mod which_log;
mod writer;

pub use index::{note_first, Index};
pub use matching::{gemini_api_id, responses_call_id, same_tool_same_touched};
pub use recent::read_end;
pub use record::{Logged, Record, Via};
pub use search::{find_from_end, find_touched_from_end, SEARCH_FROM_END};
pub use tail::{Tail, TAIL_FROM_END};
pub use which_log::{which, Purpose, ENVIRONMENT};
pub use writer::Writer;
