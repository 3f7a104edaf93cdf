//! The borrowed JSON parser against serde_json: whatever one accepts the other accepts, and
//! both read the same value. The readers trust the parser's verdict on every line, and hand
//! what it rejects to serde_json; a line it accepted wrongly would be read as something else.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        reasons::fuzz_json::check(text);
    }
});
