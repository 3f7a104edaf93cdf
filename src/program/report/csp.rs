//! The page's Content-Security-Policy: its own inline style and script, allowed by their
//! SHA-256 hashes, and nothing else.

use sha2::{Digest, Sha256};

fn csp_hash(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// Standard base64, as CSP hash sources write digests (and the page its packed calls).
pub(super) fn base64(bytes: &[u8]) -> String {
    let mut encoded = String::new();
    base64_into(bytes, &mut encoded);
    encoded
}

/// [`base64`], written at the end of `encoded`.
pub(super) fn base64_into(bytes: &[u8], encoded: &mut String) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    encoded.reserve(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let word = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for at in 0..4 {
            if at <= chunk.len() {
                encoded.push(ALPHABET[(word >> (18 - 6 * at) & 63) as usize] as char);
            } else {
                encoded.push('=');
            }
        }
    }
}

/// The Content-Security-Policy of a page: nothing may load, connect or run but its own inline
/// `style` and `script`.
pub fn content_security_policy(style: &str, script: &str) -> String {
    format!(
        "default-src 'none'; style-src {}; script-src {}; base-uri 'none'; form-action 'none'",
        csp_hash(style),
        csp_hash(script)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn the_policy_allows_exactly_the_page_s_own_style_and_script() {
        let policy = content_security_policy("p { }", "let x;");
        assert!(
            policy.starts_with("default-src 'none'; style-src 'sha256-"),
            "{policy}"
        );
        assert!(!policy.contains("unsafe"), "{policy}");
        // sha256 of the empty string, as a browser computes it.
        assert_eq!(
            csp_hash(""),
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
        );
    }
}
