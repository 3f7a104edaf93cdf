//! reasons: every tool call an agent makes carries why.
#![deny(missing_docs)]

pub mod envelope;
pub mod formats;
pub mod layer;
pub mod record;
