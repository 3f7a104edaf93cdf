//! A streamed answer's body, rewritten as the client's connection asks for it.
//!
//! Each time the client's connection is ready for more, the body takes every piece the upstream
//! has sent by then, rewrites it, logs the reasons it took off and hands the bytes on, all in the
//! client connection's own task: no task and channel between the two connections, and an upstream
//! read no faster than the client reads.
//!
//! A client that goes away drops the body, and the upstream's answer with it, even while the
//! upstream sends nothing. A stream that breaks off (see `StreamedAnswer::end`) sends nothing it
//! held, and the client's stream breaks off after what was sent.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame};
use reasons::gateway::{Output, StreamedAnswer};

use super::decoded_body::DecodedBody;
use super::{BoxError, Gateway};
use crate::program::http::error_chain;

/// How long the last bytes are given to leave before the client's stream breaks off: hyper
/// drops what it has not yet written when a body fails.
const LAST_BYTES_LEAVE: Duration = Duration::from_millis(50);

pub(super) struct StreamedBody {
    gateway: Arc<Gateway>,
    path: String,
    session: Option<String>,
    upstream: DecodedBody,
    answer: StreamedAnswer,
    state: State,
}

enum State {
    /// Passing the upstream's answer on.
    Streaming,
    /// The upstream's answer broke off: what was sent is leaving, then the client's breaks off.
    BreakingOff {
        why: String,
        leaving: Pin<Box<tokio::time::Sleep>>,
    },
    /// All of it was sent, or the break-off was.
    Done,
}

impl StreamedBody {
    pub(super) fn new(
        gateway: Arc<Gateway>,
        path: String,
        session: Option<String>,
        upstream: DecodedBody,
        answer: StreamedAnswer,
    ) -> StreamedBody {
        StreamedBody {
            gateway,
            path,
            session,
            upstream,
            answer,
            state: State::Streaming,
        }
    }
}

impl Body for StreamedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        loop {
            match &mut this.state {
                State::Streaming => {}
                State::BreakingOff { why, leaving } => {
                    ready!(leaving.as_mut().poll(cx));
                    let error = format!("the upstream's stream broke off: {why}");
                    this.state = State::Done;
                    return Poll::Ready(Some(Err(error.into())));
                }
                State::Done => return Poll::Ready(None),
            }
            let (pieces, ended) = ready!(ready_frames(&mut this.upstream, cx));
            let mut out = Output::default();
            for piece in pieces {
                out.append(this.answer.push(&piece));
            }
            if let Some(ended) = &ended {
                out.append(this.answer.end(ended.is_ok()));
            }
            if this.answer.is_broken() {
                let why = match &ended {
                    Some(Err(error)) => error_chain(error.as_ref()),
                    Some(Ok(())) => "it ended before it was complete".to_owned(),
                    None => "it sent an event that is not JSON".to_owned(),
                };
                this.gateway.said_cut(&this.path, &why, &out);
                let leaving = Box::pin(tokio::time::sleep(LAST_BYTES_LEAVE));
                this.state = State::BreakingOff { why, leaving };
            } else if ended.is_some() {
                this.state = State::Done;
            }
            // Logged before the call they came off is sent on.
            this.gateway.log(&out.reasons, this.session.as_deref());
            if !out.bytes.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out.bytes)))));
            }
        }
    }
}

impl Drop for StreamedBody {
    fn drop(&mut self) {
        if matches!(self.state, State::Streaming) {
            let out = self.answer.abandon();
            self.gateway
                .said_cut(&self.path, "the client went away", &out);
        }
    }
}

/// Pieces of the upstream's body, and whether it ended (and how) after them.
type Ready = (Vec<Bytes>, Option<Result<(), BoxError>>);

/// Every piece of body the upstream has sent so far, once there is one, so that a burst of
/// events is rewritten and sent on in one write instead of one each; nothing waits for more than
/// what is there. Says too whether the body ended, and how.
fn ready_frames(body: &mut DecodedBody, cx: &mut Context<'_>) -> Poll<Ready> {
    let mut pieces = Vec::new();
    loop {
        match Pin::new(&mut *body).poll_frame(cx) {
            // Trailers: an event stream has none worth keeping.
            Poll::Ready(Some(Ok(frame))) => pieces.extend(frame.into_data().ok()),
            Poll::Ready(Some(Err(error))) => return Poll::Ready((pieces, Some(Err(error)))),
            Poll::Ready(None) => return Poll::Ready((pieces, Some(Ok(())))),
            Poll::Pending if pieces.is_empty() => return Poll::Pending,
            Poll::Pending => return Poll::Ready((pieces, None)),
        }
    }
}
