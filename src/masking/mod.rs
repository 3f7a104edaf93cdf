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

mod named;
mod tokens;

use named::{assigned_value, bearer, flag_value, named_value, secret_name, url_password, Context};
use tokens::{private_key_at, token_at, word_before};

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

#[cfg(test)]
mod tests;
