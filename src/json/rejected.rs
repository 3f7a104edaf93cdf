//! The parser's one verdict against a text, shared by the tree and the string scanner.

/// The text is not JSON as serde_json reads it (or the parser is not sure): ask serde_json.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rejected;

/// What a step of the parser gives: a value, or [`Rejected`].
pub(crate) type Parsed<T> = Result<T, Rejected>;
