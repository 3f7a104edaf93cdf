//! Anthropic Messages.
//!
//! # Streamed calls
//!
//! A streamed answer sends each content block as `content_block_start` (the block, a `tool_use`
//! with its `id`, `name` and an `input`, empty unless a proxy sends it whole),
//! `content_block_delta`s (`input_json_delta` fragments of the input's JSON text) and
//! `content_block_stop`, each naming the block's `index`. [`StreamedBlocks`] is the one rule that
//! joins them:
//!
//! - a `tool_use` block starts at its index, ending a block left open there;
//! - `input_json_delta` fragments at an open block's index join its input's text;
//! - `content_block_stop` ends the block at its index; `message_start` and the end of the stream
//!   end every open block, in index order (a reader keeps what a recorded stream holds; the
//!   gateway, which must not send on a call a broken stream cut off, drops the blocks still open
//!   when a live stream breaks off: see `gateway/anthropic.rs`);
//! - a block's arguments are its fragments joined, or, when no fragment came, the input of its
//!   start.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{items, Api, ApiShape, History, ModelProvider};

/// A `tool_use` block whose input is still arriving, with what the reader of the stream keeps
/// beside it.
#[derive(Debug)]
pub struct StreamedBlock<T> {
    /// The block's `id`.
    pub id: Option<String>,
    /// Its tool's name.
    pub name: String,
    /// The `input` its start carried, as JSON text.
    pub input: String,
    /// The `input_json_delta` fragments, joined.
    pub json: String,
    /// What the reader of the stream keeps with the block.
    pub with: T,
}

impl<T> StreamedBlock<T> {
    /// The call's arguments as JSON text: the fragments joined, else the input of its start.
    pub fn arguments(&self) -> &str {
        if self.json.trim().is_empty() {
            &self.input
        } else {
            &self.json
        }
    }
}

/// The `tool_use` blocks of a stream not yet stopped, by index.
#[derive(Debug)]
pub struct StreamedBlocks<T> {
    open: BTreeMap<u64, StreamedBlock<T>>,
}

impl<T> Default for StreamedBlocks<T> {
    fn default() -> Self {
        StreamedBlocks {
            open: BTreeMap::new(),
        }
    }
}

impl<T> StreamedBlocks<T> {
    /// Whether no block is open.
    pub fn is_idle(&self) -> bool {
        self.open.is_empty()
    }

    /// Whether a block is open at `index`.
    pub fn is_open(&self, index: u64) -> bool {
        self.open.contains_key(&index)
    }

    /// The open blocks, in index order.
    pub fn iter(&self) -> impl Iterator<Item = &StreamedBlock<T>> {
        self.open.values()
    }

    /// What is kept beside each open block.
    pub fn kept_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.open.values_mut().map(|block| &mut block.with)
    }

    /// A `tool_use` block starts at `index`; returns the block it ends there, if one was open.
    pub fn start(&mut self, index: u64, block: StreamedBlock<T>) -> Option<StreamedBlock<T>> {
        self.open.insert(index, block)
    }

    /// An `input_json_delta` fragment at `index`; returns its block, when one is open there.
    pub fn fragment(&mut self, index: u64, fragment: &str) -> Option<&mut StreamedBlock<T>> {
        let block = self.open.get_mut(&index)?;
        block.json.push_str(fragment);
        Some(block)
    }

    /// `content_block_stop` at `index`: the block that ends, if one was open there.
    pub fn stop(&mut self, index: u64) -> Option<StreamedBlock<T>> {
        self.open.remove(&index)
    }

    /// `message_start`, or the end of the stream: every open block ends, in index order.
    pub fn end(&mut self) -> impl Iterator<Item = (u64, StreamedBlock<T>)> {
        std::mem::take(&mut self.open).into_iter()
    }
}

/// Anthropic Messages's shape.
pub struct Anthropic;

impl ApiShape for Anthropic {
    fn schema_key(&self, _body: &Map<String, Value>) -> Option<&'static str> {
        Some("input_schema")
    }

    fn arguments_key(&self) -> &'static str {
        "input"
    }

    fn declares_a_function(&self, tool: &Value) -> bool {
        // Server tools carry a versioned `type`; custom tools none, or `custom`.
        let kind = tool.get("type").and_then(Value::as_str);
        matches!(kind, None | Some("custom")) && Api::of_declaration(tool) == Some(Api::Anthropic)
    }

    /// `content[]` `tool_use` blocks (server tools' blocks are other types, left as they came).
    fn answer_calls<'a>(&self, answer: &'a mut Value) -> Vec<&'a mut Value> {
        items(answer, "content").collect()
    }

    /// `messages[].content[]` `tool_use` blocks.
    fn history(&self) -> Option<History> {
        Some(History {
            key: "messages",
            calls: Some("content"),
            kind: Some(("type", "tool_use")),
        })
    }

    /// `…/v1/messages`, and `…/v1/messages/count_tokens`, whose tools are augmented like the
    /// messages request's so that the count matches what the model is sent.
    fn serves(&self, path: &str) -> bool {
        path.ends_with("/v1/messages") || path.ends_with("/v1/messages/count_tokens")
    }

    fn answers_with_calls(&self, path: &str) -> bool {
        !path.trim_end_matches('/').ends_with("/count_tokens")
    }

    fn provider(&self) -> Option<ModelProvider> {
        Some(ModelProvider {
            name: "anthropic",
            default_upstream: "https://api.anthropic.com",
        })
    }

    /// Anthropic's clients send `anthropic-version` on every request, and `x-api-key` with a key.
    fn claims(&self, _path: &str, has_header: &dyn Fn(&str) -> bool) -> bool {
        has_header("anthropic-version") || has_header("x-api-key")
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        // The API's own types for these statuses, which the SDKs and Claude Code tell apart.
        let kind = match status {
            413 => "request_too_large",
            400..=499 => "invalid_request_error",
            _ => "api_error",
        };
        json!({"type": "error", "error": {"type": kind, "message": message}})
    }
}
