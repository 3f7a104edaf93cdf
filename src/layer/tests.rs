//! Tests of the layer, one per rule of SPEC §1, each named for the rule it proves.
//!
//! Every rule is checked in every envelope: the fixtures in `support` build the same declaration
//! or call in the OpenAI function, OpenAI Responses, MCP, Anthropic and Gemini shapes, and each test runs
//! over all of them.

mod augment;
mod concurrency;
mod gemini;
mod never_throws;
mod properties;
mod stack;
mod strip;
mod support;
