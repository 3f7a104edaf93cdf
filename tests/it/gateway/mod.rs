//! `reasons gateway`: the layer at the model's API, its requests, answers, history and faults,
//! and what it shares beyond its log (the route, the store, spans, masking).

mod basics;
mod faults;
mod gateway_openai;
mod gateway_transport;
mod history;
mod masking;
mod otlp;
mod reason_position;
mod rotation;
mod streamed_calls;
mod team;
