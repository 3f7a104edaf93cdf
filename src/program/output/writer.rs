//! The one trait every rendering is behind, whatever the command: records for `extract`,
//! findings for `check`, coverage reports for `stats`.

use std::io::{self, Write};

/// Writes what a command produces, one `T` at a time, in one output format.
pub trait Writer<T: ?Sized>: Send {
    /// Writes one item (or queues it, for a table that is laid out in batches).
    fn write(&mut self, out: &mut dyn Write, item: &T) -> io::Result<()>;

    /// Writes whatever is queued: called before a read that may block, and at the end.
    fn flush(&mut self, out: &mut dyn Write) -> io::Result<()> {
        out.flush()
    }

    /// Writes what is held back until the end of a log (a table laid out for all its rows):
    /// called after each log's items, and at the end.
    fn finish(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}
