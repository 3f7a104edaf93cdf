//! `reasons report`: the page's structure, and the page in a real browser.

mod browser;
pub mod page;
