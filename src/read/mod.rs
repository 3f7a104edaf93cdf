//! Reading lines of JSON fast, whatever they hold: a reader whose buffer the kernel copies into
//! at full speed, a search that skips the lines without a token, and the loop over lines and
//! documents that hands each event to whoever makes sense of it (`crate::formats`).

pub(crate) mod aligned;
pub(crate) mod lines;
pub(crate) mod prefilter;

pub use aligned::AlignedBufReader;
