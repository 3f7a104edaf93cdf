//! Fake credentials of every kind `reasons::masking` masks, shaped as their issuers document
//! them, each in a sentence a model could write: the one list the masking's unit tests and the
//! end-to-end tests (gateway to Phoenix, Redis, the reasons route and the report page) send.
//!
//! None is real: each is built here from a fixed pseudo-random filler, so that no credential
//! shape is written out in the source for a secret scanner to report. Uses std only, so the
//! library's unit tests include this file too (`#[path]`).

/// One fake credential: its kind's name in the mark, the secret (what must never leave
/// masked), and a sentence that holds it.
pub struct Fake {
    pub kind: &'static str,
    pub secret: String,
    pub sentence: String,
}

/// `length` characters of `alphabet`, the same for the same `seed`.
pub fn filler(seed: &str, length: usize, alphabet: &str) -> String {
    let alphabet = alphabet.as_bytes();
    let mut state = seed.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
    });
    (0..length)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            alphabet[(state >> 33) as usize % alphabet.len()] as char
        })
        .collect()
}

const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const BASE64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const BASE64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn fake(kind: &'static str, secret: String, sentence: impl Fn(&str) -> String) -> Fake {
    Fake {
        kind,
        sentence: sentence(&secret),
        secret,
    }
}

/// A PEM private key block of `label` (`PRIVATE KEY`, `RSA PRIVATE KEY`, …), lines of 64.
pub fn pem(label: &str, seed: &str, line_end: &str) -> String {
    let body = filler(seed, 64 * 6 + 20, BASE64);
    let mut block = format!("-----BEGIN {label}-----{line_end}");
    for line in body.as_bytes().chunks(64) {
        block.push_str(std::str::from_utf8(line).unwrap());
        block.push_str(line_end);
    }
    block.push_str(&format!("-----END {label}-----"));
    block
}

/// Every kind, at least once.
pub fn fakes() -> Vec<Fake> {
    let gcp_body = filler("gcp", 64 * 6, BASE64);
    let mut gcp_key = String::from("-----BEGIN PRIVATE KEY-----\\n");
    for line in gcp_body.as_bytes().chunks(64) {
        gcp_key.push_str(std::str::from_utf8(line).unwrap());
        gcp_key.push_str("\\n");
    }
    gcp_key.push_str("-----END PRIVATE KEY-----\\n");
    vec![
        fake(
            "aws-access-key",
            format!("AKIA{}", filler("akia", 16, UPPER_DIGITS)),
            |secret| format!("Configure the deploy user whose key id is {secret} before syncing"),
        ),
        fake(
            "aws-access-key",
            format!("ASIA{}", filler("asia", 16, UPPER_DIGITS)),
            |secret| format!("AWS_ACCESS_KEY_ID={secret} aws sts get-caller-identity"),
        ),
        fake(
            "aws-secret-key",
            filler("aws-secret", 40, BASE64),
            |secret| format!("export AWS_SECRET_ACCESS_KEY={secret} && aws s3 ls s3://releases"),
        ),
        fake(
            "aws-secret-key",
            filler("aws-secret-json", 40, BASE64),
            |secret| {
                format!(
                    r#"Read the STS answer {{"AccessKeyId": "x", "SecretAccessKey": "{secret}"}}"#
                )
            },
        ),
        fake(
            "google-api-key",
            format!("AIza{}", filler("aiza", 35, BASE64URL)),
            |secret| {
                format!("curl 'https://maps.googleapis.com/maps/api/geocode/json?address=x&key={secret}'")
            },
        ),
        fake("private-key", gcp_body[..64].to_owned(), |_| {
            format!(
                r#"Check the service account file: {{"type": "service_account", "project_id": "demo", "private_key": "{gcp_key}", "client_email": "ci@demo.iam.gserviceaccount.com"}}"#
            )
        }),
        fake(
            "azure-key",
            format!("{}==", filler("azure", 86, BASE64)),
            |secret| {
                format!("Use DefaultEndpointsProtocol=https;AccountName=builds;AccountKey={secret};EndpointSuffix=core.windows.net for the artifacts")
            },
        ),
        fake(
            "azure-key",
            format!("{}=", filler("servicebus", 43, BASE64)),
            |secret| {
                format!("Endpoint=sb://orders.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={secret}")
            },
        ),
        fake(
            "openai-key",
            format!("sk-proj-{}", filler("openai-proj", 156, BASE64URL)),
            |secret| format!("Set OPENAI_API_KEY to {secret} in the CI secrets"),
        ),
        fake(
            "openai-key",
            format!("sk-{}", filler("openai-legacy", 48, ALNUM)),
            |secret| format!("The old key {secret} still works for the batch job"),
        ),
        fake(
            "anthropic-key",
            format!(
                "sk-ant-api03-{}-{}AA",
                filler("anthropic", 86, BASE64URL),
                filler("anthropic-end", 6, BASE64URL)
            ),
            |secret| format!("Check that {secret} is the key the staging proxy uses"),
        ),
        fake(
            "github-token",
            format!("ghp_{}", filler("ghp", 36, ALNUM)),
            |secret| format!("Clone with the token {secret} since SSH is blocked"),
        ),
        fake(
            "github-token",
            format!(
                "github_pat_{}_{}",
                filler("pat-a", 22, ALNUM),
                filler("pat-b", 59, ALNUM)
            ),
            |secret| format!("gh auth login --with-token <<< {secret}"),
        ),
        fake(
            "github-token",
            format!("gho_{}", filler("gho", 36, ALNUM)),
            |secret| format!("The OAuth app returned {secret}; store it"),
        ),
        fake(
            "gitlab-token",
            format!("glpat-{}", filler("glpat", 20, BASE64URL)),
            |secret| {
                format!(
                    "git clone https://gitlab.example.com/team/app.git with PRIVATE-TOKEN {secret}"
                )
            },
        ),
        fake(
            "slack-token",
            format!(
                "xoxb-{}-{}-{}",
                filler("slack-a", 12, "0123456789"),
                filler("slack-b", 13, "0123456789"),
                filler("slack-c", 24, ALNUM)
            ),
            |secret| format!("Post the release note with the bot token {secret}"),
        ),
        fake(
            "stripe-key",
            format!("sk_live_{}", filler("stripe", 99, ALNUM)),
            |secret| format!("Check that STRIPE_KEY={secret} is the one the deploy uses"),
        ),
        fake(
            "stripe-key",
            format!("rk_test_{}", filler("stripe-rk", 24, ALNUM)),
            |secret| format!("The restricted key {secret} can only read charges"),
        ),
        fake(
            "npm-token",
            format!("npm_{}9", filler("npm", 35, ALNUM)),
            |secret| format!("echo //registry.npmjs.org/:_authToken={secret} > .npmrc"),
        ),
        fake(
            "pypi-token",
            format!("pypi-AgEIcHlwaS5vcmc{}", filler("pypi", 160, BASE64URL)),
            |secret| format!("twine upload dist/* -u __token__ -p {secret}"),
        ),
        fake(
            "huggingface-token",
            format!("hf_{}", filler("hf", 34, LETTERS)),
            |secret| format!("Download the weights with HF_TOKEN set to {secret}"),
        ),
        fake(
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{}.{}",
                filler("jwt-payload", 60, BASE64URL),
                filler("jwt-signature", 43, BASE64URL)
            ),
            |secret| format!("The session cookie is {secret}, decode it to see the expiry"),
        ),
        fake(
            "private-key",
            pem("RSA PRIVATE KEY", "rsa", "\n")[32..96].to_owned(),
            |_| {
                format!(
                    "cat > deploy_key <<'EOF'\n{}\nEOF",
                    pem("RSA PRIVATE KEY", "rsa", "\n")
                )
            },
        ),
        fake(
            "private-key",
            pem("OPENSSH PRIVATE KEY", "openssh", "\n")[36..100].to_owned(),
            |_| {
                format!(
                    "The key file holds {} and is used by CI",
                    pem("OPENSSH PRIVATE KEY", "openssh", "\n")
                )
            },
        ),
        fake("authorization", filler("basic", 28, BASE64), |secret| {
            format!("curl -H \"Authorization: Basic {secret}\" https://api.example.com/v1/me")
        }),
        fake("bearer-token", filler("bearer", 40, ALNUM), |secret| {
            format!("Retry with Bearer {secret} since the old one expired")
        }),
        fake(
            "password",
            format!("Tr0ub4dor{}", filler("url-password", 8, ALNUM)),
            |secret| format!("psql postgres://app:{secret}@db.internal:5432/app -c 'select 1'"),
        ),
        fake(
            "password",
            format!("hunter2{}", filler("curl-password", 8, ALNUM)),
            |secret| format!("curl -u admin:{secret} https://jenkins.internal/api/json"),
        ),
        fake(
            "password",
            format!("S3cure{}", filler("db-password", 10, ALNUM)),
            |secret| format!("Load .env with DB_PASSWORD={secret} for the migration"),
        ),
        fake(
            "password",
            format!("pa55{}", filler("flag-password", 10, ALNUM)),
            |secret| format!("mysql --user root --password {secret} shop"),
        ),
        fake("secret", filler("client-secret", 32, ALNUM), |secret| {
            format!(r#"Write {{"client_id": "web", "client_secret": "{secret}"}} to the config"#)
        }),
        fake("token", filler("yaml-token", 24, ALNUM), |secret| {
            format!("Add to the workflow env: SENTRY_AUTH_TOKEN: {secret}")
        }),
        fake("key", filler("api-key", 32, ALNUM), |secret| {
            format!("Call the API with X-Api-Key: {secret} as the docs say")
        }),
        fake("credential", filler("credentials", 24, ALNUM), |secret| {
            format!("registry_credentials='{secret}' docker compose up")
        }),
    ]
}
