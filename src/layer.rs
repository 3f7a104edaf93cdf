//! The reasons layer.

/// The name of the parameter the layer adds to every declaration it can read.
pub const REASON_PARAM: &str = "reason";
