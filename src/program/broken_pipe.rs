//! A write into a closed pipe (`reasons extract … | head`) is how a reader says it has seen
//! enough: `main` ends such a run quietly.

use std::io;

/// Whether an error is, at bottom, a write into a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|error| error.kind() == io::ErrorKind::BrokenPipe)
    })
}
