//! `reasons hook AGENT --gateway URL`: a hook on a person's own machine asks a team's gateway
//! (one run with `--serve-reasons`) for the reason of the call it is about to show, by the call's
//! id, and falls back to the local reasons log.
//!
//! A hook runs before every call the agent makes and must never be what the person waits for:
//! the question has [`TIMEOUT`] to be answered, connecting included, and whatever goes wrong
//! (no answer in time, a refused connection, an answer that is not the call's) is the same as
//! no reason from the gateway.

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::{Request, StatusCode, Uri};
use reasons::reasons_log::{self, Logged};
use serde_json::Value;

use crate::program::http;
use crate::program::reasons_route::question_url;

/// How long the gateway has to answer.
pub const TIMEOUT: Duration = Duration::from_millis(300);

/// The longest answer read: a record is a few kilobytes at most.
const LONGEST_ANSWER: usize = 1 << 20;

/// The reason of call `call_id`: the gateway's when it knows it, else the local log's.
pub fn reason_by_call_id(
    gateway: Option<&str>,
    log: Option<&Path>,
    call_id: &str,
) -> Option<Value> {
    if let Some(reason) = gateway.and_then(|gateway| ask(gateway, call_id, TIMEOUT)) {
        return Some(reason);
    }
    reasons_log::find_from_end(log?, call_id).ok()?
}

/// Asks the gateway, waiting at most `timeout` for the whole answer.
pub fn ask(gateway: &str, call_id: &str, timeout: Duration) -> Option<Value> {
    let uri: Uri = question_url(gateway, call_id).parse().ok()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let answer =
        runtime.block_on(async { tokio::time::timeout(timeout, fetch(uri)).await.ok()? })?;
    let answer = Logged::parse(&answer)?;
    // An answer about another call is no answer.
    (answer.call_id.as_deref() == Some(call_id)).then_some(answer.reason)
}

async fn fetch(uri: Uri) -> Option<Bytes> {
    let client = http::client::<Empty<Bytes>>(TIMEOUT);
    let request = Request::get(uri)
        .header(hyper::header::ACCEPT, "application/json")
        .body(Empty::new())
        .ok()?;
    let answer = client.request(request).await.ok()?;
    if answer.status() != StatusCode::OK {
        return None;
    }
    let body = Limited::new(answer.into_body(), LONGEST_ANSWER);
    Some(body.collect().await.ok()?.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_that_is_not_there_is_no_reason_and_the_log_answers() {
        // A port nothing listens on: refused at once.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let gateway = format!("http://{address}");
        assert_eq!(ask(&gateway, "toolu_1", TIMEOUT), None);
        assert_eq!(reason_by_call_id(Some(&gateway), None, "toolu_1"), None);
    }

    #[test]
    fn a_gateway_that_never_answers_is_given_up_on_in_time() {
        // Accepts the connection and says nothing.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let gateway = format!("http://{}", listener.local_addr().unwrap());
        let start = std::time::Instant::now();
        assert_eq!(ask(&gateway, "toolu_1", Duration::from_millis(200)), None);
        assert!(start.elapsed() < Duration::from_secs(2));
        drop(listener);
    }
}
