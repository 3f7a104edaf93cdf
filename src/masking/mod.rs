//! Credentials in a text, masked: the one rule for everything that sends or shows a record
//! *elsewhere* (OTLP spans, a team's Redis store and reasons route, the report page).
//!
//! A reason and what a call touched are written by a model that has just read the person's files
//! and environment, so they can quote a credential: `curl -H "Authorization: Bearer …"`, `export
//! AWS_SECRET_ACCESS_KEY=…`, `git push https://x:ghp_…@github.com/…`. [`mask`] replaces each
//! credential it recognises with `[masked: KIND]` and keeps the words around it, so the reason
//! still reads. What it recognises, each written from the issuer's own documented format:
//!
//! | kind | shape |
//! | --- | --- |
//! | `aws-access-key` | `AKIA` or `ASIA` and 16 upper-case letters or digits |
//! | `aws-secret-key` | the value of a name that says secret, access and key (`aws_secret_access_key`, `SecretAccessKey`) |
//! | `google-api-key` | `AIza` and 35 letters, digits, `_` or `-` |
//! | `azure-key` | the value of `AccountKey=` or `SharedAccessKey=` in a connection string |
//! | `openai-key` | `sk-` (`sk-proj-`, `sk-svcacct-`, …) and at least 20 mixed-case letters and digits |
//! | `anthropic-key` | `sk-ant-` and at least 32 more |
//! | `github-token` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and 30 or more; `github_pat_` and 40 or more |
//! | `gitlab-token` | `glpat-`, `glrt-`, `gldt-`, `glptt-` and 20 or more |
//! | `slack-token` | `xoxa-`, `xoxb-`, `xoxe-`, `xoxo-`, `xoxp-`, `xoxr-`, `xoxs-`, `xapp-` and 10 or more |
//! | `stripe-key` | `sk_live_`, `sk_test_`, `rk_live_`, `rk_test_` and 16 or more; `whsec_` and 24 or more |
//! | `npm-token` | `npm_` and 30 or more letters and digits |
//! | `pypi-token` | `pypi-AgEIcHlwaS5vcmc` (a macaroon for pypi.org; test.pypi.org's too) and 50 or more |
//! | `huggingface-token` | `hf_` and 30 or more letters |
//! | `jwt` | three base64url parts joined by dots, the first starting `eyJ` |
//! | `private-key` | a PEM block whose label says `PRIVATE KEY`, from `-----BEGIN` to its `-----END …-----` |
//! | `authorization` | an `Authorization:` header's credentials (its scheme, `Bearer` or `Basic`, kept) |
//! | `bearer-token` | what follows `Bearer ` when it looks like a token |
//! | `password` | a URL's password (`scheme://user:PASSWORD@host`), `curl -u user:PASSWORD` |
//! | `password`, `secret`, `token`, `key`, `credential` | the value of `NAME=value`, `NAME: value`, `"NAME": "value"`, `--NAME value` where NAME says so |
//!
//! A NAME says so by its last word (split at `_`, `-`, `.` and case changes, and read without
//! regard to case): `DB_PASSWORD`, `PGPASSWORD`, `clientSecret`, `GITHUB_TOKEN`, `X-Api-Key`,
//! `aws_secret_access_key`, `credentials` do; `keyboard`, `monkey`, `max_tokens`, `key_file`,
//! `password_file`, `token_type` and a bare `key` (`sorted(xs, key=len)`) do not. A key named only
//! by what it is for (`STRIPE_KEY`, `cache_key`) is masked only when its value looks random.
//! A value that only refers to a secret (`$TOKEN`, `${{ secrets.X }}`, `<your key>`, `****`) or
//! is code (`password=password`, `token: string`, `api_key = os.environ[…]`) is left as it is.
//!
//! Masking is one pass over the text. Every shape starts at, or is told by, one of a few bytes
//! (`_ - = : I J B b`), found 16 at a time: a text without one is returned as it is, without a
//! copy, at memory speed.
//!
//! ```
//! use reasons::masking::mask;
//!
//! assert_eq!(
//!     mask("Push with https://bot:ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789@github.com/o/r"),
//!     "Push with https://bot:[masked: password]@github.com/o/r"
//! );
//! assert_eq!(
//!     mask("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY && aws s3 ls"),
//!     "export AWS_SECRET_ACCESS_KEY=[masked: aws-secret-key] && aws s3 ls"
//! );
//! assert_eq!(mask("git push origin main"), "git push origin main");
//! ```

use std::borrow::Cow;
use std::ops::Range;

use serde_json::Value;
use wide::u8x16;

use crate::record::CallRecord;

/// How every mark begins: `[masked: KIND]`.
pub const MARK_OPENING: &str = "[masked: ";

/// What a masked credential was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// An AWS access key id.
    AwsAccessKey,
    /// An AWS secret access key.
    AwsSecretKey,
    /// A Google API key.
    GoogleApiKey,
    /// An Azure storage account or shared access key.
    AzureKey,
    /// An OpenAI API key.
    OpenAiKey,
    /// An Anthropic API key.
    AnthropicKey,
    /// A GitHub token.
    GithubToken,
    /// A GitLab token.
    GitlabToken,
    /// A Slack token.
    SlackToken,
    /// A Stripe secret, restricted or webhook key.
    StripeKey,
    /// An npm access token.
    NpmToken,
    /// A PyPI API token.
    PypiToken,
    /// A Hugging Face access token.
    HuggingFaceToken,
    /// A JSON Web Token.
    Jwt,
    /// A PEM private key block.
    PrivateKey,
    /// An `Authorization` header's credentials.
    Authorization,
    /// A bearer token.
    BearerToken,
    /// A password.
    Password,
    /// A value named a secret.
    Secret,
    /// A value named a token.
    Token,
    /// A value named a key.
    Key,
    /// A value named a credential.
    Credential,
}

impl Kind {
    /// Every kind, in the order of the table above.
    pub const ALL: [Kind; 22] = [
        Kind::AwsAccessKey,
        Kind::AwsSecretKey,
        Kind::GoogleApiKey,
        Kind::AzureKey,
        Kind::OpenAiKey,
        Kind::AnthropicKey,
        Kind::GithubToken,
        Kind::GitlabToken,
        Kind::SlackToken,
        Kind::StripeKey,
        Kind::NpmToken,
        Kind::PypiToken,
        Kind::HuggingFaceToken,
        Kind::Jwt,
        Kind::PrivateKey,
        Kind::Authorization,
        Kind::BearerToken,
        Kind::Password,
        Kind::Secret,
        Kind::Token,
        Kind::Key,
        Kind::Credential,
    ];

    /// The kind's name in its mark: short, stable, lower case.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::AwsAccessKey => "aws-access-key",
            Kind::AwsSecretKey => "aws-secret-key",
            Kind::GoogleApiKey => "google-api-key",
            Kind::AzureKey => "azure-key",
            Kind::OpenAiKey => "openai-key",
            Kind::AnthropicKey => "anthropic-key",
            Kind::GithubToken => "github-token",
            Kind::GitlabToken => "gitlab-token",
            Kind::SlackToken => "slack-token",
            Kind::StripeKey => "stripe-key",
            Kind::NpmToken => "npm-token",
            Kind::PypiToken => "pypi-token",
            Kind::HuggingFaceToken => "huggingface-token",
            Kind::Jwt => "jwt",
            Kind::PrivateKey => "private-key",
            Kind::Authorization => "authorization",
            Kind::BearerToken => "bearer-token",
            Kind::Password => "password",
            Kind::Secret => "secret",
            Kind::Token => "token",
            Kind::Key => "key",
            Kind::Credential => "credential",
        }
    }

    /// `[masked: KIND]`.
    pub fn mark(self) -> String {
        format!("{MARK_OPENING}{}]", self.as_str())
    }
}

/// Whether what leaves the machine is masked: the option every way out is given once, where
/// the record leaves (`--no-mask` turns it off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Masking {
    /// Credentials are masked ([`mask`]): the default.
    #[default]
    Masked,
    /// The text goes as the model wrote it.
    AsWritten,
}

impl Masking {
    /// `Masked` unless `as_written`.
    pub fn masked_unless(as_written: bool) -> Masking {
        if as_written {
            Masking::AsWritten
        } else {
            Masking::Masked
        }
    }

    /// `text`, masked when this says so.
    pub fn text(self, text: &str) -> Cow<'_, str> {
        match self {
            Masking::Masked => mask(text),
            Masking::AsWritten => Cow::Borrowed(text),
        }
    }

    /// `value` masked in place when this says so ([`mask_json`]).
    pub fn json(self, value: &mut Value) {
        if self == Masking::Masked {
            mask_json(value);
        }
    }

    /// A call's reason and arguments masked in place when this says so: what it touched, read
    /// off the arguments, is then masked too.
    pub fn call(self, record: &mut CallRecord) {
        if self == Masking::AsWritten {
            return;
        }
        if let Some(reason) = &mut record.reason {
            if let Cow::Owned(masked) = mask(reason) {
                *reason = masked;
            }
        }
        if let Some(arguments) = &mut record.arguments {
            mask_json(arguments);
        }
    }
}

/// A credential found in a text: where, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// The bytes the mark replaces.
    pub range: Range<usize>,
    /// What they are.
    pub kind: Kind,
}

/// `text` with every credential it holds replaced by `[masked: KIND]`; the text itself, without
/// a copy, when it holds none. Masking a masked text changes nothing: a credential found over a
/// longer one's place (`-u PASSWORD=user:sk-…`: the password, then the name's value) is masked
/// by a second look, which is only taken when the first found something. Each look masks bytes
/// no mark holds, so the looks end.
pub fn mask(text: &str) -> Cow<'_, str> {
    let Cow::Owned(mut masked) = mask_once(text) else {
        return Cow::Borrowed(text);
    };
    while let Cow::Owned(again) = mask_once(&masked) {
        masked = again;
    }
    Cow::Owned(masked)
}

/// One look: every credential [`secrets`] finds, replaced.
fn mask_once(text: &str) -> Cow<'_, str> {
    let mut masked = String::new();
    let mut copied = 0;
    for found in secrets(text) {
        if copied == 0 && masked.is_empty() {
            masked.reserve(text.len() + 16);
        }
        masked.push_str(&text[copied..found.range.start]);
        masked.push_str(MARK_OPENING);
        masked.push_str(found.kind.as_str());
        masked.push(']');
        copied = found.range.end;
    }
    if masked.is_empty() {
        return Cow::Borrowed(text);
    }
    masked.push_str(&text[copied..]);
    Cow::Owned(masked)
}

/// Every credential in `text`, in order, none overlapping: what [`mask`] replaces.
pub fn secrets(text: &str) -> Secrets<'_> {
    Secrets {
        bytes: text.as_bytes(),
        at: 0,
        floor: 0,
        marks: None,
    }
}

/// Where the marks of an earlier masking are: `[masked: KIND]` of a kind there is, exactly (a
/// text that only looks like one, `[masked: sk_live_…]`, is no mark and is looked into).
fn marks(bytes: &[u8]) -> Vec<Range<usize>> {
    memchr::memmem::find_iter(bytes, MARK_OPENING.as_bytes())
        .filter_map(|start| Some(start..start + mark_length(&bytes[start..])?))
        .collect()
}

/// The length of the mark `bytes` starts with, if it starts with one.
fn mark_length(bytes: &[u8]) -> Option<usize> {
    let inside = bytes.strip_prefix(MARK_OPENING.as_bytes())?;
    Kind::ALL.iter().find_map(|kind| {
        let name = kind.as_str().as_bytes();
        (inside.starts_with(name) && inside.get(name.len()) == Some(&b']'))
            .then_some(MARK_OPENING.len() + name.len() + 1)
    })
}

/// The credentials of a text, found one at a time ([`secrets`]).
pub struct Secrets<'a> {
    bytes: &'a [u8],
    /// Where the search goes on.
    at: usize,
    /// The end of the last credential found: none may start before it.
    floor: usize,
    /// The marks of an earlier masking, which nothing found may overlap: looked for once
    /// something is found, so a text with no credential pays nothing for them.
    marks: Option<Vec<Range<usize>>>,
}

impl Iterator for Secrets<'_> {
    type Item = Secret;

    fn next(&mut self) -> Option<Secret> {
        while let Some(at) = next_candidate(self.bytes, self.at) {
            self.at = at + 1;
            if let Some(found) = secret_at(self.bytes, at) {
                if found.range.start >= self.floor && found.range.end > found.range.start {
                    self.at = found.range.end;
                    self.floor = found.range.end;
                    let bytes = self.bytes;
                    let in_a_mark = self
                        .marks
                        .get_or_insert_with(|| marks(bytes))
                        .iter()
                        .any(|mark| mark.start < found.range.end && found.range.start < mark.end);
                    // What is masked already is passed over, as the masking that marked it
                    // passed over what it held.
                    if !in_a_mark {
                        return Some(found);
                    }
                }
            }
        }
        self.at = self.bytes.len();
        None
    }
}

/// Masks a JSON value in place: every string in it ([`mask`]), and whole the string value of a
/// key that names a secret (`{"password": "hunter2"}`). Returns whether anything changed.
pub fn mask_json(value: &mut Value) -> bool {
    match value {
        Value::String(text) => match mask(text) {
            Cow::Borrowed(_) => false,
            Cow::Owned(masked) => {
                *text = masked;
                true
            }
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| mask_json(item) | changed),
        Value::Object(map) => map.iter_mut().fold(false, |changed, (key, item)| {
            let named = match (&*item, secret_name(key.as_bytes())) {
                (Value::String(text), Some(name)) => {
                    named_value(text.as_bytes(), 0..text.len(), name, Context::Quoted)
                }
                _ => None,
            };
            let masked = match (named, &mut *item) {
                (Some(found), Value::String(text)) => {
                    let rest = mask(&text[found.range.end..]).into_owned();
                    *text = format!("{}{}{rest}", &text[..found.range.start], found.kind.mark());
                    true
                }
                _ => mask_json(item),
            };
            masked | changed
        }),
        _ => false,
    }
}

/// The bytes a credential can start at or be told by: each rule below is tried only there.
const CANDIDATES: [u8; 8] = [b'_', b'-', b'=', b':', b'I', b'J', b'B', b'b'];

fn is_candidate(byte: u8) -> bool {
    CANDIDATES.contains(&byte)
}

/// The first candidate byte at or after `at`, sixteen bytes at a time.
fn next_candidate(bytes: &[u8], mut at: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(at..at + 16) {
        let mut sixteen = [0; 16];
        sixteen.copy_from_slice(chunk);
        let lane = u8x16::from(sixteen);
        // `B` and `b` differ by 0x20, `-` and `=` by 0x10: one compare finds each pair.
        let hits = (lane | u8x16::splat(0x20)).simd_eq(u8x16::splat(b'b'))
            | (lane | u8x16::splat(0x10)).simd_eq(u8x16::splat(b'='))
            | lane.simd_eq(u8x16::splat(b'_'))
            | lane.simd_eq(u8x16::splat(b':'))
            | lane.simd_eq(u8x16::splat(b'I'))
            | lane.simd_eq(u8x16::splat(b'J'));
        let mask = hits.to_bitmask();
        if mask != 0 {
            return Some(at + mask.trailing_zeros() as usize);
        }
        at += 16;
    }
    let rest = bytes.get(at..)?;
    rest.iter()
        .position(|&byte| is_candidate(byte))
        .map(|offset| at + offset)
}

/// The credential told by the candidate byte at `at`, if any.
fn secret_at(bytes: &[u8], at: usize) -> Option<Secret> {
    match bytes[at] {
        b'_' | b'-' => word_before(bytes, at)
            .and_then(|start| token_at(bytes, start))
            .or_else(|| {
                (bytes[at] == b'-')
                    .then(|| private_key_at(bytes, at).or_else(|| flag_value(bytes, at)))
                    .flatten()
            }),
        b':' if bytes[at + 1..].starts_with(b"//") => url_password(bytes, at),
        b'=' | b':' => assigned_value(bytes, at),
        b'I' => at
            .checked_sub(2)
            .and_then(|start| token_at(bytes, start))
            .or_else(|| at.checked_sub(1).and_then(|start| token_at(bytes, start))),
        b'J' => at.checked_sub(2).and_then(|start| token_at(bytes, start)),
        _ => bearer(bytes, at),
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens a provider issues, told by their prefix.

/// Where the word whose first `_` or `-` is at `at` starts: a run of at most 6 letters and
/// digits after a byte that cannot be part of a token.
fn word_before(bytes: &[u8], at: usize) -> Option<usize> {
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
fn starts_token(bytes: &[u8], at: usize) -> bool {
    at == 0
        || !matches!(bytes[at - 1], b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'+' | b'/')
}

fn is_base64url(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

/// The end of the run of bytes passing `test` from `at`.
fn run_end(bytes: &[u8], at: usize, test: impl Fn(u8) -> bool) -> usize {
    at + bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&byte| test(byte))
        .count()
}

/// What random keys hold: a digit, an upper-case and a lower-case letter.
fn mixes_cases_and_digits(text: &[u8]) -> bool {
    text.iter().any(u8::is_ascii_digit)
        && text.iter().any(u8::is_ascii_uppercase)
        && text.iter().any(u8::is_ascii_lowercase)
}

/// A provider's token starting at `start` (a word's start), with its kind.
fn token_at(bytes: &[u8], start: usize) -> Option<Secret> {
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
const CUT_LEAST: usize = 4;

/// `end` without the dots a token's run ends with (the full stop of a sentence).
fn trim_dots(bytes: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && bytes[end - 1] == b'.' {
        end -= 1;
    }
    end
}

/// A JSON Web Token from `start` (its `eyJ`): three base64url parts of 10 bytes or more.
fn jwt(bytes: &[u8], start: usize) -> Option<Secret> {
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
const PEM_MOST: usize = 64 * 1024;

/// A PEM private key block starting at `at` (`-----BEGIN … PRIVATE KEY-----`): to the end of its
/// `-----END …-----` line, or, with no end in sight (a cut text), to the end of its body.
fn private_key_at(bytes: &[u8], at: usize) -> Option<Secret> {
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
fn pem_body_end(bytes: &[u8], header_end: usize) -> usize {
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

// ---------------------------------------------------------------------------------------------
// Credentials told by where they stand.

/// What a name says its value is, and how sure it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Name {
    kind: Kind,
    /// Only a value that looks random is masked: a key named by what it is for (`STRIPE_KEY`)
    /// may as well be a cache's or a map's.
    random_only: bool,
    /// An `Authorization` header: its scheme stays.
    header: bool,
}

/// Words a name ends with that only say how its secret is written.
const SPELLING_WORDS: [&str; 6] = ["base", "value", "b64", "base64", "hex", "raw"];

/// Words before `token` that make it a place in a sequence, not a credential.
const NOT_CREDENTIAL_TOKENS: [&str; 17] = [
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
const SECRET_KEY_WORDS: [&str; 20] = [
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
const NOT_SECRET_KEY_WORDS: [&str; 32] = [
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
fn name_words(name: &[u8]) -> Vec<String> {
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
fn may_name_secret(name: &[u8]) -> bool {
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
fn secret_name(name: &[u8]) -> Option<Name> {
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
enum Context {
    /// A string of its own (a JSON value, or quoted after its name): it is literal text.
    Quoted,
    /// `NAME=value` without spaces, `--name value`: a shell's or a file's literal value.
    Tight,
    /// `name = value` or `name: value` unquoted: code's expression as often as a value.
    Loose,
}

/// The bytes that end an unquoted value.
fn ends_value(byte: u8) -> bool {
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
const QUOTED_MOST: usize = 4096;

/// The value after a separator, from `at` (spaces skipped): its range inside any quotes, and
/// whether it was quoted.
fn value_after(bytes: &[u8], at: usize) -> Option<(Range<usize>, bool)> {
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
fn is_no_secret(value: &[u8]) -> bool {
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
fn looks_random(value: &[u8]) -> bool {
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
fn reads_as_code(bytes: &[u8], value: Range<usize>, short_words_too: bool) -> bool {
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
fn named_value(bytes: &[u8], value: Range<usize>, name: Name, context: Context) -> Option<Secret> {
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
const NAME_MOST: usize = 64;

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

/// `NAME=value`, `NAME: value`, `"NAME": "value"` at the separator at `at`.
fn assigned_value(bytes: &[u8], at: usize) -> Option<Secret> {
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
fn flag_value(bytes: &[u8], at: usize) -> Option<Secret> {
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
const AUTHORITY_MOST: usize = 512;

/// `scheme://user:password@host` at the `:` of `://`: the password.
fn url_password(bytes: &[u8], at: usize) -> Option<Secret> {
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
fn bearer(bytes: &[u8], at: usize) -> Option<Secret> {
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

#[cfg(test)]
mod tests;
