//! Tokens a provider issues, told by their prefix (`sk-…`, `ghp_…`, `AKIA…`), JSON Web Tokens and
//! private key blocks.

use super::{Kind, Secret};

/// Where the word whose first `_` or `-` is at `at` starts: a run of at most 6 letters and
/// digits after a byte that cannot be part of a token.
pub(super) fn word_before(bytes: &[u8], at: usize) -> Option<usize> {
    let mut start = at;
    while start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
        start -= 1;
        if at - start > 6 {
            return None;
        }
    }
    (start < at && starts_token(bytes, start)).then_some(start)
}

/// Whether a token may start at `at`: the byte before is none of a token's own, nor base64's
/// (a key is not a piece of a longer encoded blob).
pub(super) fn starts_token(bytes: &[u8], at: usize) -> bool {
    at == 0
        || !matches!(bytes[at - 1], b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'+' | b'/')
}

pub(super) fn is_base64url(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

/// The end of the run of bytes passing `test` from `at`.
pub(super) fn run_end(bytes: &[u8], at: usize, test: impl Fn(u8) -> bool) -> usize {
    at + bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&byte| test(byte))
        .count()
}

/// What random keys hold: a digit, an upper-case and a lower-case letter.
pub(super) fn mixes_cases_and_digits(text: &[u8]) -> bool {
    text.iter().any(u8::is_ascii_digit)
        && text.iter().any(u8::is_ascii_uppercase)
        && text.iter().any(u8::is_ascii_lowercase)
}

/// A provider's token starting at `start` (a word's start), with its kind.
pub(super) fn token_at(bytes: &[u8], start: usize) -> Option<Secret> {
    if !starts_token(bytes, start) {
        return None;
    }
    let rest = &bytes[start..];
    let found = |end: usize, kind| {
        Some(Secret {
            range: start..end,
            kind,
        })
    };
    // Cut short by a summary (`…`): what shows of it is masked, however little.
    let cut = |end: usize| bytes[end..].starts_with("…".as_bytes());
    // A body of at least `least` bytes passing `test`, after a prefix of `prefix` bytes.
    let body = |prefix: usize, least: usize, test: fn(u8) -> bool| {
        let end = run_end(bytes, start + prefix, test);
        let length = end - start - prefix;
        (length >= least || length >= CUT_LEAST && cut(end)).then_some(end)
    };
    match rest {
        [b'A', b'K' | b'S', b'I', b'A', ..] => {
            let end = run_end(bytes, start + 4, |b| {
                b.is_ascii_uppercase() || b.is_ascii_digit()
            });
            (end - start == 20 && !bytes.get(end).is_some_and(u8::is_ascii_alphanumeric))
                .then(|| found(end, Kind::AwsAccessKey))
                .flatten()
        }
        [b'A', b'I', b'z', b'a', ..] => {
            let end = run_end(bytes, start + 4, is_base64url);
            (end - start == 39)
                .then(|| found(end, Kind::GoogleApiKey))
                .flatten()
        }
        [b'e', b'y', b'J', ..] => jwt(bytes, start),
        _ if rest.starts_with(b"sk-ant-") => found(body(7, 32, is_base64url)?, Kind::AnthropicKey),
        _ if rest.starts_with(b"sk-") => {
            let end = body(3, 20, is_base64url)?;
            (cut(end) || mixes_cases_and_digits(&bytes[start + 3..end]))
                .then(|| found(end, Kind::OpenAiKey))
                .flatten()
        }
        [b'g', b'h', b'p' | b'o' | b'u' | b's' | b'r', b'_', ..] => found(
            body(4, 30, |b| b.is_ascii_alphanumeric())?,
            Kind::GithubToken,
        ),
        _ if rest.starts_with(b"github_pat_") => found(
            body(11, 40, |b| b.is_ascii_alphanumeric() || b == b'_')?,
            Kind::GithubToken,
        ),
        _ if [&b"glpat-"[..], b"glrt-", b"gldt-", b"glptt-"]
            .iter()
            .any(|prefix| rest.starts_with(prefix)) =>
        {
            let prefix = rest.iter().position(|&b| b == b'-')? + 1;
            let end = body(prefix, 20, |b| is_base64url(b) || b == b'.')?;
            found(trim_dots(bytes, start, end), Kind::GitlabToken)
        }
        [b'x', b'o', b'x', b'a' | b'b' | b'e' | b'o' | b'p' | b'r' | b's', b'-', ..]
        | [b'x', b'a', b'p', b'p', b'-', ..] => {
            let end = body(5, 10, |b| b.is_ascii_alphanumeric() || b == b'-')?;
            (cut(end) || bytes[start + 5..end].iter().any(u8::is_ascii_digit))
                .then(|| found(end, Kind::SlackToken))
                .flatten()
        }
        [b's' | b'r', b'k', b'_', b'l', b'i', b'v', b'e', b'_', ..]
        | [b's' | b'r', b'k', b'_', b't', b'e', b's', b't', b'_', ..] => {
            found(body(8, 16, |b| b.is_ascii_alphanumeric())?, Kind::StripeKey)
        }
        _ if rest.starts_with(b"whsec_") => {
            found(body(6, 24, |b| b.is_ascii_alphanumeric())?, Kind::StripeKey)
        }
        _ if rest.starts_with(b"npm_") => {
            let end = body(4, 30, |b| b.is_ascii_alphanumeric())?;
            (cut(end) || bytes[start + 4..end].iter().any(u8::is_ascii_digit))
                .then(|| found(end, Kind::NpmToken))
                .flatten()
        }
        _ if rest.starts_with(b"pypi-AgEIcHlwaS5vcmc")
            || rest.starts_with(b"pypi-AgENdGVzdC5weXBpLm9yZw") =>
        {
            found(body(5, 50, is_base64url)?, Kind::PypiToken)
        }
        _ if rest.starts_with(b"hf_") => {
            let end = body(3, 30, |b| b.is_ascii_alphabetic())?;
            let letters = &bytes[start + 3..end];
            (cut(end)
                || letters.iter().any(u8::is_ascii_uppercase)
                    && letters.iter().any(u8::is_ascii_lowercase))
            .then(|| found(end, Kind::HuggingFaceToken))
            .flatten()
        }
        _ => None,
    }
}

/// The fewest bytes of a token's body that, cut short by a summary's `…`, are masked.
pub(super) const CUT_LEAST: usize = 4;

/// `end` without the dots a token's run ends with (the full stop of a sentence).
pub(super) fn trim_dots(bytes: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && bytes[end - 1] == b'.' {
        end -= 1;
    }
    end
}

/// A JSON Web Token from `start` (its `eyJ`): three base64url parts of 10 bytes or more.
pub(super) fn jwt(bytes: &[u8], start: usize) -> Option<Secret> {
    let mut end = start;
    for part in 0..3 {
        if part > 0 {
            if bytes.get(end) != Some(&b'.') {
                return None;
            }
            end += 1;
        }
        let part_end = run_end(bytes, end, is_base64url);
        if part_end - end < 10 {
            return None;
        }
        end = part_end;
    }
    Some(Secret {
        range: start..end,
        kind: Kind::Jwt,
    })
}

/// The most bytes a private key block may span: a 4096-bit RSA key is about 3.3 KB of PEM.
pub(super) const PEM_MOST: usize = 64 * 1024;

/// A PEM private key block starting at `at` (`-----BEGIN … PRIVATE KEY-----`): to the end of its
/// `-----END …-----` line, or, with no end in sight (a cut text), to the end of its body.
pub(super) fn private_key_at(bytes: &[u8], at: usize) -> Option<Secret> {
    let rest = &bytes[at..];
    let label = rest.strip_prefix(b"-----BEGIN ")?;
    let label_end = label.iter().take(64).position(|&b| b == b'-')?;
    if !label[..label_end].ends_with(b"PRIVATE KEY")
        && !label[..label_end].ends_with(b"PRIVATE KEY BLOCK")
    {
        return None;
    }
    let header_end = at + 11 + label_end;
    let header_end = run_end(bytes, header_end, |b| b == b'-');
    let window = &bytes[header_end..bytes.len().min(header_end + PEM_MOST)];
    let closing = memchr::memmem::find(window, b"-----END ").and_then(|offset| {
        let label = header_end + offset + 9;
        let dashes = memchr::memchr(b'-', &bytes[label..bytes.len().min(label + 64)])?;
        Some(run_end(bytes, label + dashes, |b| b == b'-'))
    });
    let end = closing.unwrap_or_else(|| pem_body_end(bytes, header_end));
    Some(Secret {
        range: at..end,
        kind: Kind::PrivateKey,
    })
}

/// The end of a PEM body from `at`: lines of base64 (and `Name: value` headers), the line ends
/// real or escaped (`\n` inside a JSON string).
pub(super) fn pem_body_end(bytes: &[u8], header_end: usize) -> usize {
    let mut end = header_end;
    loop {
        let after_break = match bytes.get(end..) {
            Some([b'\r', b'\n', ..]) => end + 2,
            Some([b'\n' | b'\r', ..]) => end + 1,
            Some([b'\\', b'r', b'\\', b'n', ..]) => end + 4,
            Some([b'\\', b'n', ..]) => end + 2,
            // The body may follow its header on the same line.
            _ if end == header_end => end,
            _ => return end,
        };
        let line_end = run_end(bytes, after_break, |b| {
            b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b':' | b',' | b'-' | b' ')
        });
        if line_end == after_break || line_end - after_break > PEM_MOST {
            return end;
        }
        // A line of prose after the block is not part of it: a body line holds no two words.
        if bytes[after_break..line_end]
            .windows(2)
            .any(|pair| pair[0] == b' ' && pair[1].is_ascii_lowercase())
        {
            return end;
        }
        end = line_end;
    }
}
