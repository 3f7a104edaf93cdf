//! Bytes to JSON events, fast, whatever the events hold: the first stage of reading a log. A
//! reader whose buffer the kernel copies into at full speed (`aligned`), a search that skips
//! the lines without a token (`prefilter`), and the loop over JSONL lines, or the values of one
//! JSON document, that hands each parsed event to whoever makes sense of it (`lines`; the
//! calls in them are `crate::formats`' business), told apart once by the source's first line
//! (`start`).

pub(crate) mod aligned;
pub(crate) mod lines;
pub(crate) mod prefilter;
pub(crate) mod start;

pub use aligned::AlignedBufReader;
