//! The reasons layer at a model's API: what `reasons gateway` does to the requests an agent sends
//! and the answers it gets back, without any I/O of its own.
//!
//! Each request is its own listing. Its `tools` are augmented with the layer's rules, and its
//! answer — a whole JSON body or a stream of server-sent events — has the reason taken off every
//! call to a tool augmented *in that request*: nothing is shared between requests, so concurrent
//! sessions cannot disturb each other.
//!
//! ```
//! use reasons::gateway::Exchange;
//!
//! let request = br#"{"model":"m","tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}]}"#;
//! let (exchange, augmented) = Exchange::new("/v1/messages", request, true, None).unwrap();
//! let augmented = String::from_utf8(augmented.unwrap()).unwrap();
//! assert!(augmented.contains(r#""reason":{"type":"string""#));
//!
//! let answer = br#"{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls","reason":"See what is here"}}]}"#;
//! let stripped = exchange.answer(answer);
//! assert_eq!(
//!     stripped.body.unwrap(),
//!     br#"{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}"#
//! );
//! assert_eq!(stripped.reasons[0].to_string(), "Bash: See what is here");
//! ```

#[cfg(test)]
mod agreement;
mod anthropic;
mod chat;
mod gemini;
mod history;
mod request;
mod responses;
mod rewrite;
mod splices;
pub mod sse;

pub use history::{Lookup, Recall, Recalled, RECALL_BYTES, RECALL_TAIL};
use rewrite::EventRewriter;
pub use rewrite::Output;

use std::sync::Arc;

use serde_json::Value;

use crate::apis::Api;
use crate::layer::wire::strip_answer;
use crate::layer::{TakenReason, ToolNames};

/// Headers in which agents name their session: Claude Code's, and Codex CLI's.
pub const SESSION_HEADERS: [&str; 2] = ["x-claude-code-session-id", "session-id"];

/// One request and its answer, as the gateway sees them.
#[derive(Debug, Clone)]
pub struct Exchange {
    api: Api,
    /// Whether the answer carries calls (a token count does not).
    answers_with_calls: bool,
    /// The tools the request's listing left the layer responsible for.
    tracked: Arc<ToolNames>,
    /// Whether calls lose their reason (`--no-strip` logs the reasons and leaves the calls).
    strip: bool,
    /// The agent's session, when the request names it.
    pub session: Option<String>,
    /// Why the request's tools were left as they came, when they were not readable.
    pub problem: Option<String>,
    /// How many calls of the request's history were given their reason back.
    pub restored: usize,
}

impl Exchange {
    /// Reads the body of a request to `path` (without its query), returning the exchange and
    /// the body to forward when it changed; `None` when the path is no API's the gateway
    /// rewrites.
    ///
    /// With `recall`, the calls of the request's history get back the reasons it remembers
    /// (see [`Recall`]). The same body and recall always give the same bytes, so that a
    /// provider's prompt cache keeps hitting; a body that is not JSON, or holds no `tools`
    /// array, goes on as it came.
    pub fn new(
        path: &str,
        body: &[u8],
        strip: bool,
        recall: Option<&dyn Lookup>,
    ) -> Option<(Exchange, Option<Vec<u8>>)> {
        let api = Api::of_path(path)?;
        let request = request::augment(api, body, recall);
        let exchange = Exchange {
            api,
            answers_with_calls: api.answers_with_calls(path),
            tracked: Arc::new(request.tracked),
            strip,
            session: request.session,
            problem: request.problem,
            restored: request.restored,
        };
        Some((exchange, request.body))
    }

    /// The tools whose calls lose their reason in this exchange's answer.
    pub fn tracked(&self) -> &ToolNames {
        &self.tracked
    }

    /// Takes the reasons off a whole JSON answer.
    pub fn answer(&self, body: &[u8]) -> Answer {
        let mut reasons = Vec::new();
        if self.tracked.is_empty() || !self.answers_with_calls {
            return Answer {
                body: None,
                reasons,
            };
        }
        let Ok(mut value) = serde_json::from_slice::<Value>(body) else {
            return Answer {
                body: None,
                reasons,
            };
        };
        let changed = strip_answer(self.api, &mut value, &self.tracked, &mut reasons);
        let body = (changed && self.strip).then(|| value.to_string().into_bytes());
        Answer { body, reasons }
    }

    /// A rewriter for an answer that streams as server-sent events.
    pub fn stream(&self) -> Stream {
        let tracked = Arc::clone(&self.tracked);
        let rewriter: Box<dyn EventRewriter> = match self.api {
            _ if tracked.is_empty() || !self.answers_with_calls => Box::new(Unchanged),
            Api::Anthropic => Box::new(anthropic::MessageStream::new(tracked, self.strip)),
            Api::OpenAiChat => Box::new(chat::ChunkStream::new(tracked, self.strip)),
            Api::OpenAiResponses => Box::new(responses::EventStream::new(tracked, self.strip)),
            Api::Gemini => Box::new(gemini::ChunkStream::new(tracked, self.strip)),
            Api::Mcp => Box::new(Unchanged),
        };
        Stream {
            splitter: sse::Splitter::new(),
            rewriter,
        }
    }
}

/// A whole answer after the layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The body to send on, when it changed.
    pub body: Option<Vec<u8>>,
    /// The reasons taken off its calls (also with `--no-strip`, where the calls keep them).
    pub reasons: Vec<TakenReason>,
}

/// The stream of an exchange with nothing to take off.
struct Unchanged;

impl EventRewriter for Unchanged {
    fn event(&mut self, event: &[u8], out: &mut Output) {
        out.bytes.extend_from_slice(event);
    }

    fn end(&mut self, _out: &mut Output) {}
}

/// An answer streaming as server-sent events, rewritten as its bytes arrive.
///
/// Only a call's argument fragments are held back, until the call is complete; every other event
/// is handed on as soon as its last byte has arrived.
pub struct Stream {
    splitter: sse::Splitter,
    rewriter: Box<dyn EventRewriter>,
}

impl Stream {
    /// The next bytes from the upstream.
    pub fn push(&mut self, bytes: &[u8]) -> Output {
        let mut out = Output::default();
        let rewriter = &mut self.rewriter;
        self.splitter
            .push(bytes, &mut |event| rewriter.event(event, &mut out));
        out
    }

    /// The upstream's stream ended (or broke off): what was held back, and any incomplete last
    /// event, go out as they came.
    pub fn end(&mut self) -> Output {
        let mut out = Output::default();
        self.rewriter.end(&mut out);
        out.bytes.extend_from_slice(&self.splitter.rest());
        out
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").finish_non_exhaustive()
    }
}
