//! What a gateway shares of the reasons it takes beyond its log: `--serve-reasons` (a hook on a
//! person's own machine asks for a call's reason by its id), `--store` (replicas share the
//! reasons they take, for the history's restoration and for those questions) and `--otlp` (a
//! span each).
//!
//! `GET /reasons/v1/calls/{call_id}` is the one route: the call id is the capability (an agent's
//! ids are long random tokens), so there is no listing and no search. It answers
//! `{"call_id","tool","reason","touched","time"}` from what this gateway took (its `Recall`: the
//! end of its reasons log when it started, then every reason it takes, bounded), else from the
//! store, else 404.
//!
//! Both are ways out of the machine: what the store keeps and what the route answers has its
//! reason and what its call touched masked ([`reasons::masking`]) unless `--no-mask` was given.

use std::sync::RwLock;

use hyper::header::{self, HeaderValue};
use hyper::{Method, Response, StatusCode};
use reasons::gateway::Recall;
use reasons::masking::Masking;
use reasons::reasons_log::{Logged, Record};
use serde_json::json;

use super::store::Store;
use super::{full, ProxyBody};
use crate::program::reasons_route::{answer, asked_call_id, ROUTE};

/// What a gateway shares of its reasons beyond its log, each part optional: the route
/// (`--serve-reasons`), the store (`--store`) and the spans (`--otlp`).
#[derive(Default)]
pub struct Sharing {
    /// Whether this gateway answers questions about the reasons it knows (`--serve-reasons`).
    serve: bool,
    /// The store the replicas share (`--store`).
    pub store: Option<Store>,
    /// The OpenTelemetry collector each reason goes to as a span (`--otlp`).
    spans: Option<crate::program::otlp::Exporter>,
    /// Whether what the store keeps and the route answers is masked.
    masking: Masking,
}

impl Sharing {
    /// The parts asked for; what leaves through the store and the route is masked as
    /// `masking` says.
    pub fn new(
        serve: bool,
        store: Option<Store>,
        spans: Option<crate::program::otlp::Exporter>,
        masking: Masking,
    ) -> Sharing {
        Sharing {
            serve,
            store,
            spans,
            masking,
        }
    }

    /// What the startup line adds: where reasons are served and kept.
    pub fn describe(&self) -> String {
        let mut said = String::new();
        if self.serve {
            said.push_str(&format!(", serving {ROUTE}{{call_id}}"));
        }
        if let Some(store) = &self.store {
            said.push_str(&format!(", kept in {}", store.shown()));
        }
        said
    }

    /// Keeps a reason just taken (and logged): written to the store, sent as a span.
    pub fn took(&self, record: &Record) {
        if let Some(spans) = &self.spans {
            spans.span(record);
        }
        let (Some(store), Some(call_id)) = (&self.store, &record.taken.call_id) else {
            return;
        };
        store.keep(call_id, &answer(&record.logged().masked(self.masking)));
    }

    /// The answer to a question about a call's reason, when `path` asks one and reasons are
    /// served; `None` for every other request, which goes on to the upstream. `recall` is what
    /// this gateway knows itself.
    pub async fn answer(
        &self,
        method: &Method,
        path: &str,
        recall: Option<&RwLock<Recall>>,
    ) -> Option<Response<ProxyBody>> {
        if !self.serve {
            return None;
        }
        if !path.starts_with(ROUTE) {
            return None;
        }
        let found = match (method, asked_call_id(path)) {
            (&Method::GET, Some(call_id)) => {
                let remembered = recall.and_then(|recall| {
                    let recall = recall.read().unwrap_or_else(|e| e.into_inner());
                    Some(recall.get(&call_id)?.logged.clone())
                });
                match (remembered, &self.store) {
                    (Some(remembered), _) => Some(remembered),
                    (None, Some(store)) => store
                        .records(&[&call_id])
                        .await
                        .pop()
                        .flatten()
                        .and_then(Logged::from_json),
                    (None, None) => None,
                }
                .filter(|found| found.call_id.as_deref() == Some(call_id.as_str()))
            }
            _ => None,
        };
        let (status, body) = match found {
            Some(found) => (StatusCode::OK, answer(&found.masked(self.masking))),
            None => (
                StatusCode::NOT_FOUND,
                json!({"error": "no reason is known for this call id"}),
            ),
        };
        let mut answer = Response::new(full(body.to_string()));
        *answer.status_mut() = status;
        answer.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        // Reasons can quote what a person works on: no cache between them and the hook keeps one.
        answer
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        Some(answer)
    }
}
