//! Credentials told by where they stand: the value of a name that says secret, token, password,
//! key or credential (`NAME=value`, `"name": "value"`, `--name value`), a URL's password, an
//! `Authorization` header's value.

use std::ops::Range;

use super::tokens::{private_key_at, run_end, token_at};
use super::{mark_length, Kind, Secret};

/// What a name says its value is, and how sure it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Name {
    pub(super) kind: Kind,
    /// Only a value that looks random is masked: a key named by what it is for (`STRIPE_KEY`)
    /// may as well be a cache's or a map's.
    random_only: bool,
    /// An `Authorization` header: its scheme stays.
    header: bool,
}

/// Words a name ends with that only say how its secret is written.
pub(super) const SPELLING_WORDS: [&str; 6] = ["base", "value", "b64", "base64", "hex", "raw"];

/// Words before `token` that make it a place in a sequence, not a credential.
pub(super) const NOT_CREDENTIAL_TOKENS: [&str; 17] = [
    "next",
    "page",
    "continuation",
    "pagination",
    "sync",
    "cancellation",
    "max",
    "min",
    "bos",
    "eos",
    "pad",
    "unk",
    "sep",
    "cls",
    "mask",
    "start",
    "end",
];

/// Words before `key` that make it a secret's.
pub(super) const SECRET_KEY_WORDS: [&str; 20] = [
    "api",
    "secret",
    "private",
    "access",
    "account",
    "shared",
    "signing",
    "encryption",
    "master",
    "client",
    "app",
    "auth",
    "service",
    "admin",
    "deploy",
    "webhook",
    "session",
    "license",
    "subscription",
    "consumer",
];

/// Words before `key` that make it anything but a secret's.
pub(super) const NOT_SECRET_KEY_WORDS: [&str; 32] = [
    "sort",
    "primary",
    "foreign",
    "partition",
    "range",
    "hash",
    "cache",
    "dict",
    "map",
    "lookup",
    "unique",
    "group",
    "index",
    "row",
    "item",
    "object",
    "s3",
    "public",
    "pub",
    "ssh",
    "gpg",
    "idempotency",
    "composite",
    "field",
    "column",
    "hot",
    "short",
    "cut",
    "esc",
    "route",
    "i18n",
    "translation",
];

/// The words of a name, lower case: split at `_`, `-`, `.`, spaces and case changes
/// (`clientSecret`, `APIKey`), at most 12.
pub(super) fn name_words(name: &[u8]) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for (at, &byte) in name.iter().enumerate() {
        if !byte.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        let previous = at.checked_sub(1).map(|before| name[before]);
        let next = name.get(at + 1);
        let case_change = byte.is_ascii_uppercase()
            && previous.is_some_and(|previous| {
                previous.is_ascii_lowercase()
                    || previous.is_ascii_digit()
                    || (previous.is_ascii_uppercase() && next.is_some_and(u8::is_ascii_lowercase))
            });
        if case_change && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        word.push(byte.to_ascii_lowercase() as char);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words.truncate(12);
    words
}

/// Whether a name may say it holds a credential: one of the words [`secret_name`] reads is in
/// it. Most names are not, and are let go without being split into words.
pub(super) fn may_name_secret(name: &[u8]) -> bool {
    const WORDS: [&[u8]; 7] = [
        b"pass",
        b"pwd",
        b"secret",
        b"token",
        b"key",
        b"credential",
        b"authorization",
    ];
    WORDS.iter().any(|word| {
        name.windows(word.len())
            .any(|window| window.eq_ignore_ascii_case(word))
    })
}

/// What `name` says its value is, if a credential.
pub(super) fn secret_name(name: &[u8]) -> Option<Name> {
    if !may_name_secret(name) {
        return None;
    }
    let mut words = name_words(name);
    // `PWD` and `OLDPWD` are the shell's working folders.
    if matches!(words.as_slice(), [only] if only == "pwd" || only == "oldpwd") {
        return None;
    }
    while words.len() > 1
        && words
            .last()
            .is_some_and(|last| SPELLING_WORDS.contains(&last.as_str()))
    {
        words.pop();
    }
    let (last, before) = words.split_last()?;
    let previous = before.last().map(String::as_str);
    let has = |word: &str| words.iter().any(|each| each == word);
    let sure = |kind| {
        Some(Name {
            kind,
            random_only: false,
            header: false,
        })
    };
    let last = last.as_str();
    if last.ends_with("authorization") {
        return Some(Name {
            kind: Kind::Authorization,
            random_only: false,
            header: true,
        });
    }
    if ["password", "passwd", "passphrase", "pwd"]
        .iter()
        .any(|word| last.ends_with(word))
        || (last == "pass" && previous.is_some())
    {
        return sure(Kind::Password);
    }
    if last.ends_with("secret") {
        return sure(Kind::Secret);
    }
    if last.ends_with("credential") || last.ends_with("credentials") {
        return sure(Kind::Credential);
    }
    if last.ends_with("token") {
        let places =
            last == "token" && previous.is_some_and(|word| NOT_CREDENTIAL_TOKENS.contains(&word));
        return if places { None } else { sure(Kind::Token) };
    }
    if last.ends_with("apikey") {
        return sure(Kind::Key);
    }
    let key_word = if last == "key" {
        previous
    } else {
        // One word for two: `secretkey`, `accountkey`.
        let qualifier = last.strip_suffix("key")?;
        SECRET_KEY_WORDS.contains(&qualifier).then_some(qualifier)
    };
    let key_word = key_word?;
    if has("secret") && has("access") || last == "secretaccesskey" {
        return sure(Kind::AwsSecretKey);
    }
    if matches!(words.as_slice(), [a, b] if a == "account" && b == "key")
        || matches!(words.as_slice(), [a, b, c] if a == "shared" && b == "access" && c == "key")
        || last == "accountkey"
    {
        return sure(Kind::AzureKey);
    }
    if SECRET_KEY_WORDS.contains(&key_word) {
        return sure(Kind::Key);
    }
    (!NOT_SECRET_KEY_WORDS.contains(&key_word)).then_some(Name {
        kind: Kind::Key,
        random_only: true,
        header: false,
    })
}

/// How a value stands after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Context {
    /// A string of its own (a JSON value, or quoted after its name): it is literal text.
    Quoted,
    /// `NAME=value` without spaces, `--name value`: a shell's or a file's literal value.
    Tight,
    /// `name = value` or `name: value` unquoted: code's expression as often as a value.
    Loose,
}

/// The bytes that end an unquoted value.
pub(super) fn ends_value(byte: u8) -> bool {
    byte.is_ascii_whitespace()
        || matches!(
            byte,
            b'"' | b'\''
                | b'`'
                | b';'
                | b'&'
                | b'|'
                | b'<'
                | b'>'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'\\'
                | b','
        )
}

/// The most bytes a quoted value is looked through for its closing quote.
pub(super) const QUOTED_MOST: usize = 4096;

/// The value after a separator, from `at` (spaces skipped): its range inside any quotes, and
/// whether it was quoted.
pub(super) fn value_after(bytes: &[u8], at: usize) -> Option<(Range<usize>, bool)> {
    let at = run_end(bytes, at, |b| b == b' ' || b == b'\t');
    let (quote, open) = match bytes.get(at..)? {
        [b'\\', quote @ (b'"' | b'\''), ..] => (*quote, 2),
        [quote @ (b'"' | b'\''), ..] => (*quote, 1),
        _ => {
            let end = run_end(bytes, at, |b| !ends_value(b));
            return (end > at).then_some((at..end, false));
        }
    };
    let start = at + open;
    let window = &bytes[start..bytes.len().min(start + QUOTED_MOST)];
    let mut from = 0;
    while let Some(offset) = memchr::memchr2(quote, b'\n', &window[from..]) {
        let close = from + offset;
        if window[close] == b'\n' {
            break;
        }
        let escaped = close > 0 && window[close - 1] == b'\\';
        match (open, escaped) {
            // `\"…\"`: a string inside an escaped string ends with an escaped quote.
            (2, true) => return Some((start..start + close - 1, true)),
            (1, false) => return Some((start..start + close, true)),
            _ => from = close + 1,
        }
    }
    // No closing quote on its line: the value as if unquoted.
    let end = run_end(bytes, start, |b| !ends_value(b));
    (end > start).then_some((start..end, false))
}

/// Whether `value` only refers to a secret, holds none, or is a mark already. (A value that
/// reaches into a mark is found, so that it is passed over as the masking that marked it passed
/// over it: [`Secrets`] does not hand it on.)
pub(super) fn is_no_secret(value: &[u8]) -> bool {
    let lower = value.to_ascii_lowercase();
    let refers = matches!(
        value,
        [b'$', b'{' | b'(' | b'_' | b'A'..=b'Z' | b'a'..=b'z', ..]
    ) || value.starts_with(b"{{")
        || value.starts_with(b"%(")
        || value.starts_with(b"%s")
        || mark_length(value) == Some(value.len())
        || (value.first() == Some(&b'<') && value.last() == Some(&b'>'));
    let placeholder = value
        .iter()
        .all(|&b| matches!(b, b'*' | b'x' | b'X' | b'.' | b'-' | b'#'))
        || value.starts_with("•".as_bytes())
        || value.starts_with("…".as_bytes())
        || value.ends_with(b"...")
        || lower.windows(8).any(|window| window == b"redacted");
    let word = matches!(
        lower.as_slice(),
        b"true"
            | b"false"
            | b"null"
            | b"none"
            | b"nil"
            | b"undefined"
            | b"yes"
            | b"no"
            | b"on"
            | b"off"
            | b"redacted"
            | b"[redacted]"
            | b"hidden"
            | b"required"
            | b"optional"
    );
    value.len() < 3 || refers || placeholder || word
}

/// Whether `value` looks random, as a key does: 16 bytes or more of a token's characters,
/// letters and digits both, and not a path.
pub(super) fn looks_random(value: &[u8]) -> bool {
    value.len() >= 16
        && value.iter().all(|&b| {
            b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'.' | b'~' | b'-')
        })
        && value.iter().any(u8::is_ascii_digit)
        && value.iter().any(u8::is_ascii_alphabetic)
        && !matches!(value.first(), Some(b'/' | b'.' | b'~'))
}

/// Whether an unquoted value reads as code rather than a literal secret: a dotted name
/// (`self.token`, `os.environ`), a name called, indexed or passed on (`password=password,`), and
/// with `short_words_too` a short word without a digit (`token: string`, `password: str`).
pub(super) fn reads_as_code(bytes: &[u8], value: Range<usize>, short_words_too: bool) -> bool {
    let text = &bytes[value.clone()];
    let identifier = |part: &[u8]| {
        part.first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
            && part.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    let path = text.split(|&b| b == b'.').all(identifier);
    let followed_by = bytes.get(value.end).copied();
    path && (text.contains(&b'.')
        || matches!(followed_by, Some(b'(' | b'[' | b',' | b')'))
        || short_words_too && !text.iter().any(u8::is_ascii_digit) && text.len() < 12)
}

/// The credential a name's value is, given the value's range and how it stands.
pub(super) fn named_value(
    bytes: &[u8],
    value: Range<usize>,
    name: Name,
    context: Context,
) -> Option<Secret> {
    let mut start = value.start;
    let mut end = value.end;
    // A value that starts as a provider's token or a private key is masked as that, whole (a
    // key block's lines may run past the value's line).
    if let Some(found) = token_at(bytes, start).or_else(|| private_key_at(bytes, start)) {
        return Some(Secret {
            range: start..found.range.end.max(end),
            kind: found.kind,
        });
    }
    let mut context = context;
    if name.header {
        // `Bearer abc`, `Basic abc`: the scheme stays, and what follows it is literal.
        let scheme = run_end(bytes, start, |b| b.is_ascii_alphabetic());
        if scheme > start && scheme < end && bytes.get(scheme) == Some(&b' ') {
            start = run_end(bytes, scheme, |b| b == b' ').min(end);
            context = Context::Quoted;
        }
        end = start + bytes[start..end].trim_ascii_end().len();
        if let Some(found) = token_at(bytes, start) {
            return Some(found);
        }
    }
    let text = &bytes[start..end];
    if is_no_secret(text) {
        return None;
    }
    let literal = match context {
        Context::Quoted => true,
        Context::Tight => !reads_as_code(bytes, start..end, false),
        Context::Loose => !reads_as_code(bytes, start..end, true),
    };
    let masked = if name.random_only {
        looks_random(text)
    } else {
        literal
    };
    masked.then_some(Secret {
        range: start..end,
        kind: name.kind,
    })
}

/// The most bytes a name is read back over.
pub(super) const NAME_MOST: usize = 64;

pub(super) fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

/// `NAME=value`, `NAME: value`, `"NAME": "value"` at the separator at `at`.
pub(super) fn assigned_value(bytes: &[u8], at: usize) -> Option<Secret> {
    let separator = bytes[at];
    let next = bytes.get(at + 1).copied();
    let before = at.checked_sub(1).map(|before| bytes[before]);
    // `==`, `!=`, `<=`, `::`, `:=` compare or declare; they assign no literal.
    if next == Some(b'=')
        || next == Some(separator)
        || matches!(before, Some(b'=' | b'!' | b'<' | b'>' | b':'))
    {
        return None;
    }
    // Back over spaces, then a closing quote (escaped or not), to the name's end.
    let mut name_end = at;
    while name_end > 0 && matches!(bytes[name_end - 1], b' ' | b'\t') && at - name_end < 8 {
        name_end -= 1;
    }
    let spaced = name_end < at;
    let mut quoted_name = false;
    if name_end > 0 && matches!(bytes[name_end - 1], b'"' | b'\'') {
        name_end -= 1;
        quoted_name = true;
        if name_end > 0 && bytes[name_end - 1] == b'\\' {
            name_end -= 1;
        }
    }
    let mut name_start = name_end;
    while name_start > 0 && is_name_byte(bytes[name_start - 1]) && name_end - name_start < NAME_MOST
    {
        name_start -= 1;
    }
    let name = secret_name(&bytes[name_start..name_end])?;
    let (value, quoted) = if name.header
        && !matches!(
            bytes.get(run_end(bytes, at + 1, |b| b == b' ')),
            Some(b'"' | b'\'' | b'\\')
        ) {
        // A header's value runs to the end of its line: `Authorization: Bearer abc`.
        let start = run_end(bytes, at + 1, |b| b == b' ' || b == b'\t');
        let end = run_end(bytes, start, |b| {
            !matches!(b, b'\n' | b'\r' | b'"' | b'\'' | b'\\')
        });
        (start..end, false)
    } else {
        value_after(bytes, at + 1)?
    };
    let context = if quoted {
        Context::Quoted
    } else if separator == b'=' && !spaced && bytes.get(at + 1) != Some(&b' ') && !quoted_name {
        Context::Tight
    } else {
        Context::Loose
    };
    named_value(bytes, value, name, context)
}

/// `--NAME value` at the first `-` at `at`, and `-u user:password` / `--user user:password`.
pub(super) fn flag_value(bytes: &[u8], at: usize) -> Option<Secret> {
    if at > 0 && !matches!(bytes[at - 1], b' ' | b'\t' | b'\n' | b'"' | b'\'') {
        return None;
    }
    let rest = &bytes[at..];
    if rest.starts_with(b"-u ") || rest.starts_with(b"--user ") {
        let start = run_end(bytes, at + if rest[1] == b'u' { 3 } else { 7 }, |b| {
            b == b' '
        });
        let (value, _) = value_after(bytes, start)?;
        let colon = memchr::memchr(b':', &bytes[value.clone()])? + value.start + 1;
        let password = &bytes[colon..value.end];
        let numeric = password.iter().all(u8::is_ascii_digit);
        return (!numeric && !is_no_secret(password)).then_some(Secret {
            range: colon..value.end,
            kind: Kind::Password,
        });
    }
    let name_start = at + 2;
    if !rest.starts_with(b"--") {
        return None;
    }
    let name_end = run_end(bytes, name_start, |b| {
        b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
    });
    let name = secret_name(&bytes[name_start..name_end])?;
    if !matches!(bytes.get(name_end), Some(b' ')) {
        return None;
    }
    let (value, quoted) = value_after(bytes, name_end)?;
    if bytes[value.start] == b'-' && !quoted {
        return None;
    }
    let context = if quoted {
        Context::Quoted
    } else {
        Context::Tight
    };
    named_value(bytes, value, name, context)
}

/// The most bytes a URL's user and password are looked through for their `@`.
pub(super) const AUTHORITY_MOST: usize = 512;

/// `scheme://user:password@host` at the `:` of `://`: the password.
pub(super) fn url_password(bytes: &[u8], at: usize) -> Option<Secret> {
    let start = at + 3;
    let window = &bytes[start..bytes.len().min(start + AUTHORITY_MOST)];
    let authority_end = window
        .iter()
        .position(|&b| {
            matches!(
                b,
                b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'\\' | b'`'
            ) || b.is_ascii_whitespace()
        })
        .unwrap_or(window.len());
    let authority = &window[..authority_end];
    let at_sign = memchr::memrchr(b'@', authority)?;
    let colon = memchr::memchr(b':', &authority[..at_sign])?;
    let password = &authority[colon + 1..at_sign];
    let refers = matches!(
        password.first(),
        None | Some(b'$' | b'{' | b'%' | b'<' | b'[')
    ) || password.iter().all(|&b| b == b'*' || b == b'x');
    if refers {
        return None;
    }
    Some(Secret {
        range: start + colon + 1..start + at_sign,
        kind: Kind::Password,
    })
}

/// `Bearer TOKEN` at the `B` or `b` at `at`: a token of 16 bytes or more that mixes cases or
/// holds a digit.
pub(super) fn bearer(bytes: &[u8], at: usize) -> Option<Secret> {
    let word = bytes.get(at..at + 6)?;
    if !word.eq_ignore_ascii_case(b"bearer") || (at > 0 && bytes[at - 1].is_ascii_alphanumeric()) {
        return None;
    }
    let start = run_end(bytes, at + 6, |b| b == b' ');
    if start == at + 6 || start - at > 10 {
        return None;
    }
    if let Some(found) = token_at(bytes, start) {
        return Some(found);
    }
    let end = run_end(bytes, start, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
    });
    let token = &bytes[start..end];
    let random = token.iter().any(u8::is_ascii_digit)
        || token.iter().any(u8::is_ascii_uppercase) && token.iter().any(u8::is_ascii_lowercase);
    (token.len() >= 16 && random).then_some(Secret {
        range: start..end,
        kind: Kind::BearerToken,
    })
}
