//! Every message to stderr goes through [`line`]. A line is one write, so lines from other
//! writers (a proxied server's stderr) never cut through it; and a stderr that is closed, full or
//! a pipe nobody reads loses the message, where `eprintln!` would end the run with a panic.

use std::io::{self, Write};

/// Writes `text` and a newline to stderr in one write; a stderr that cannot take it is ignored.
pub fn line(text: &str) {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(b'\n');
    let _ = io::stderr().lock().write_all(&bytes);
}

/// `reasons: ` and a message formatted as `format!` does, written by [`line`].
macro_rules! message {
    ($($arg:tt)*) => {
        $crate::program::messages::line(&format!("reasons: {}", format_args!($($arg)*)))
    };
}

pub(crate) use message;
