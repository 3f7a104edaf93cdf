//! The model APIs, one room each: where an API keeps its declarations, its calls, their ids and
//! their arguments, and the one rule by which its streamed calls are assembled (when a call
//! starts, continues and ends). The log readers (`formats/shapes/`) and the gateway's stream
//! rewriters (`gateway/`) both follow these rules, so that what a reader finds in a recorded
//! stream is exactly what the gateway takes off the live one.

pub mod anthropic;
pub mod openai_chat;
