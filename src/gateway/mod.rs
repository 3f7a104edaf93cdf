//! The reasons layer at a model's API: what `reasons gateway` does to the requests an agent sends
//! and the answers it gets back, without any I/O of its own.
//!
//! Each request is its own listing. Its `tools` are augmented with the layer's rules, and its
//! answer — a whole JSON body or a stream of server-sent events — has the reason taken off every
//! call to a tool augmented *in that request*: nothing is shared between requests, so concurrent
//! sessions cannot disturb each other.
//!
//! ```
//! use reasons::apis::Api;
//! use reasons::gateway::Exchange;
//! use reasons::layer::ReasonPosition;
//!
//! let path = "/v1/messages";
//! let api = Api::of_path(path).unwrap();
//! let request = br#"{"model":"m","tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}]}"#;
//! let (exchange, augmented) = Exchange::new(api, path, request, true, None, ReasonPosition::Last);
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
mod classifier;
mod gemini;
mod history;
mod openai_chat;
mod openai_responses;
mod request;
mod rewrite;
mod splices;
pub mod sse;

pub use classifier::BETA_HEADER;
pub use history::{Lookup, Recall, Recalled, RECALL_BYTES, RECALL_TAIL};
use rewrite::EventRewriter;
pub use rewrite::{CutCall, Output};

use std::sync::Arc;

use serde_json::Value;

use crate::apis::Api;
use crate::json::Parser;
use crate::layer::wire::strip_answer;
use crate::layer::{ReasonPosition, TakenReason, ToolNames};

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
    /// Reads the body of a request for `api` (the API its `path`, without the query, belongs
    /// to: the caller decided it once, at the door), returning the exchange and the body to
    /// forward when it changed.
    ///
    /// With `recall`, the calls of the request's history get back the reasons it remembers
    /// (see [`Recall`]). The same body and recall always give the same bytes, so that a
    /// provider's prompt cache keeps hitting; a body that is not JSON, or holds no `tools`
    /// array, goes on as it came. The parameter goes at `position` among each declaration's
    /// properties, and a reason given back goes at the same place among a call's arguments.
    pub fn new(
        api: Api,
        path: &str,
        body: &[u8],
        strip: bool,
        recall: Option<&dyn Lookup>,
        position: ReasonPosition,
    ) -> (Exchange, Option<Vec<u8>>) {
        let request = request::augment(api, body, recall, position);
        let exchange = Exchange {
            api,
            answers_with_calls: api.answers_with_calls(path),
            tracked: Arc::new(request.tracked),
            strip,
            session: request.session,
            problem: request.problem,
            restored: request.restored,
        };
        (exchange, request.body)
    }

    /// The tools whose calls lose their reason in this exchange's answer.
    pub fn tracked(&self) -> &ToolNames {
        &self.tracked
    }

    /// The values of the request's [`BETA_HEADER`] to send instead of the ones it came with, or
    /// `None` to send them as they came. An Anthropic request whose tools the layer took on must
    /// not ask the provider to classify its answer's tool calls (SPEC §4.2: no classifier reads
    /// a reason): its body already lost the tool-use safeguard, and the classifier's token goes
    /// from this header too.
    pub fn beta_headers<'a>(
        &self,
        values: impl IntoIterator<Item = &'a [u8]>,
    ) -> Option<Vec<Vec<u8>>> {
        if self.api != Api::Anthropic || self.tracked.is_empty() {
            return None;
        }
        classifier::beta_headers_without_the_tool_use_classifier(values)
    }

    /// Takes the reasons off a whole JSON answer.
    pub fn answer(&self, body: &[u8]) -> Answer {
        let mut reasons = Vec::new();
        if self.tracked.is_empty() || !self.answers_with_calls {
            return Answer {
                body: None,
                reasons,
                withheld: false,
            };
        }
        let Ok(mut value) = serde_json::from_slice::<Value>(body) else {
            return Answer {
                body: None,
                reasons,
                withheld: self.strip,
            };
        };
        let changed = strip_answer(self.api, &mut value, &self.tracked, &mut reasons);
        let body = (changed && self.strip).then(|| value.to_string().into_bytes());
        Answer {
            body,
            reasons,
            withheld: false,
        }
    }

    /// A rewriter for an answer that streams as server-sent events.
    pub fn streamed_answer(&self) -> StreamedAnswer {
        let tracked = Arc::clone(&self.tracked);
        let rewriter: Box<dyn EventRewriter> = match self.api {
            _ if tracked.is_empty() || !self.answers_with_calls => Box::new(Unchanged),
            Api::Anthropic => Box::new(anthropic::AnthropicRewriter::new(tracked, self.strip)),
            Api::OpenAiChat => Box::new(openai_chat::OpenAiChatRewriter::new(tracked, self.strip)),
            Api::OpenAiResponses => Box::new(openai_responses::OpenAiResponsesRewriter::new(
                tracked, self.strip,
            )),
            Api::Gemini => Box::new(gemini::GeminiRewriter::new(tracked, self.strip)),
            Api::Mcp => Box::new(Unchanged),
        };
        StreamedAnswer {
            splitter: sse::Splitter::new(),
            rewriter,
            broken: false,
            checker: Parser::default(),
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
    /// Whether the body must not be passed on: it is not JSON (an answer the upstream cut off
    /// before its end), so the layer cannot take the reasons off its calls, and its bytes may
    /// hold one. The client could not have read it either.
    pub withheld: bool,
}

/// The stream of an exchange with nothing to take off.
struct Unchanged;

impl EventRewriter for Unchanged {
    fn event(&mut self, event: &[u8], out: &mut Output) {
        out.bytes.extend_from_slice(event);
    }

    fn cut(&mut self, _out: &mut Output) {}

    fn holds(&self) -> bool {
        false
    }
}

/// An answer streaming as server-sent events, rewritten as its bytes arrive.
///
/// Only a call's argument fragments are held back, until the call is complete; every other event
/// is handed on as soon as its last byte has arrived. A stream that breaks off releases nothing
/// it held: see [`StreamedAnswer::end`].
pub struct StreamedAnswer {
    splitter: sse::Splitter,
    rewriter: Box<dyn EventRewriter>,
    /// Whether the stream broke: nothing more is sent, and the client's stream is to break off.
    broken: bool,
    /// Tells whether an event is JSON, while a call is held.
    checker: Parser,
}

impl StreamedAnswer {
    /// The next bytes from the upstream. Once the stream is broken, nothing more goes out.
    pub fn push(&mut self, bytes: &[u8]) -> Output {
        let mut out = Output::default();
        if self.broken {
            return out;
        }
        let rewriter = &mut self.rewriter;
        let broken = &mut self.broken;
        let checker = &mut self.checker;
        self.splitter.push(bytes, &mut |event| {
            if *broken {
                return;
            }
            if rewriter.unreadable_breaks(event) && is_unreadable(event, checker) {
                // It may be a piece of the held call (an event split in two, a line broken
                // inside a string): the gateway cannot take a reason off what it cannot read,
                // and every client's SDK fails on it too.
                rewriter.cut(&mut out);
                *broken = true;
                return;
            }
            rewriter.event(event, &mut out);
        });
        out
    }

    /// The upstream's stream ended, `cleanly` when its HTTP body came to its end rather than
    /// failing (a reset, a timeout, a body shorter than it said).
    ///
    /// An incomplete last event is dropped, as every client drops it (an event is dispatched at
    /// its empty line). The stream is broken — [`StreamedAnswer::is_broken`] — when the body failed,
    /// when it ended inside an event, or when it ended while a call was held (the API's
    /// terminal event completes every call): the calls held are then dropped, never sent, and
    /// noted in [`Output::cut`]; nothing of them is logged.
    pub fn end(&mut self, cleanly: bool) -> Output {
        let mut out = Output::default();
        if self.broken {
            return out;
        }
        let rest = self.splitter.rest();
        let inside_an_event = rest.iter().any(|byte| !byte.is_ascii_whitespace());
        self.rewriter.cut(&mut out);
        self.broken = !cleanly || inside_an_event || !out.cut.is_empty();
        out
    }

    /// Whether the stream broke off: the client's stream must break off too, so that no client
    /// takes what it received for a complete answer.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Whether a call's fragments are held back now: a client that leaves cuts it off.
    pub fn holds(&self) -> bool {
        self.rewriter.holds()
    }

    /// The calls held back now, dropped: the stream ends here (the client went away).
    pub fn abandon(&mut self) -> Output {
        let mut out = Output::default();
        if !self.broken {
            self.rewriter.cut(&mut out);
            self.broken = true;
        }
        out
    }
}

/// Whether an event carries data that is not JSON (nor Chat's closing `[DONE]`). An event with
/// no data (a comment, a keep-alive) is readable: it says nothing.
fn is_unreadable(event: &[u8], checker: &mut Parser) -> bool {
    let Some(fields) = sse::Fields::parse(event) else {
        return true;
    };
    let data = fields.data.trim();
    // The tree accepts exactly what serde_json accepts.
    !data.is_empty() && data != "[DONE]" && checker.parse(data).is_err()
}

impl std::fmt::Debug for StreamedAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamedAnswer").finish_non_exhaustive()
    }
}
