//! Signing in to a remote MCP server as the MCP spec's authorization section describes it (what
//! `mcp-remote` does): on a 401, the server's protected-resource metadata (RFC 9728), its
//! authorization server's metadata (RFC 8414, or OpenID's), dynamic client registration (RFC
//! 7591), then the authorization code with PKCE S256 and the `resource` parameter (RFC 8707),
//! the browser sent back to a listener on 127.0.0.1. The tokens are kept in a file of the
//! person's own (mode 0600) and refreshed with the refresh token when they expire or are refused.
//!
//! Every request to the server goes through [`OAuth::send`], which gives it the token to send
//! and signs in on a 401; a sign-in or a refresh holds one lock, so that the requests waiting
//! meanwhile get the one new token rather than each opening the browser.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{
    HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE,
};
use hyper::{Method, Request, Response, StatusCode, Uri};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::program::http::{error_chain, HttpsClient};

/// How long the person has to sign in before the requests waiting on it are answered with an
/// error.
pub(super) const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// How long one request to the authorization server may take.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// A token this close to its expiry is refreshed before it is sent.
const EXPIRY_MARGIN: u64 = 30;

/// What is kept between runs, in the server's token file.
#[derive(Clone, Default)]
struct Tokens {
    server: String,
    token_endpoint: String,
    client_id: String,
    client_secret: Option<String>,
    resource: Option<String>,
    access_token: String,
    refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    expires_at: Option<u64>,
}

// Through `Value` rather than derived: the program reads and writes `Value`s already, and a
// derived pair would add its own copy of the JSON reader and writer to the binary.
impl Tokens {
    fn from_json(json: &Value) -> Option<Tokens> {
        let text = |name: &str| json.get(name).and_then(Value::as_str).map(str::to_owned);
        Some(Tokens {
            server: text("server")?,
            token_endpoint: text("token_endpoint")?,
            client_id: text("client_id")?,
            client_secret: text("client_secret"),
            resource: text("resource"),
            access_token: text("access_token")?,
            refresh_token: text("refresh_token"),
            expires_at: json.get("expires_at").and_then(Value::as_u64),
        })
    }

    fn to_json(&self) -> Value {
        let mut json = serde_json::json!({
            "server": self.server,
            "token_endpoint": self.token_endpoint,
            "client_id": self.client_id,
            "access_token": self.access_token,
        });
        let optional = [
            ("client_secret", self.client_secret.clone().map(Value::from)),
            ("resource", self.resource.clone().map(Value::from)),
            ("refresh_token", self.refresh_token.clone().map(Value::from)),
            ("expires_at", self.expires_at.map(Value::from)),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                json[name] = value;
            }
        }
        json
    }
}

#[derive(Default)]
struct State {
    tokens: Option<Tokens>,
    /// Why the sign-in failed: said to every request after, rather than opening the browser
    /// again for each, until a client starts a new session ([`OAuth::start_over`]).
    failed: Option<String>,
}

/// The sign-in state for one server, shared by every request to it (and, behind `--listen`, by
/// every client's session).
pub(super) struct OAuth {
    client: HttpsClient<Full<Bytes>>,
    server: Uri,
    shown: String,
    file: Option<PathBuf>,
    state: tokio::sync::Mutex<State>,
}

impl OAuth {
    /// The state for `server` (shown as `shown`), with the tokens a previous run kept for it;
    /// `None` when the person gave an `Authorization` of their own among `headers` (`--header`),
    /// which wins.
    pub(super) fn unless_given(
        client: HttpsClient<Full<Bytes>>,
        server: Uri,
        shown: String,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Option<Arc<OAuth>> {
        if headers.iter().any(|(name, _)| name == AUTHORIZATION) {
            return None;
        }
        let file = token_file(&server.to_string());
        let tokens = file
            .as_deref()
            .and_then(|file| std::fs::read(file).ok())
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .and_then(|json| Tokens::from_json(&json))
            .filter(|tokens| tokens.server == server.to_string());
        Some(Arc::new(OAuth {
            client,
            server,
            shown,
            file,
            state: tokio::sync::Mutex::new(State {
                tokens,
                failed: None,
            }),
        }))
    }

    /// Sends one request signed in. `send` sends it once with the `Authorization` it is given
    /// (none before any sign-in). A 401 that asks for OAuth gets a new token, refreshed or from
    /// the person signing in, and the request is sent once more with it; any other answer is
    /// the caller's. A sign-in that fails, or that nobody completes in time, is the error, in
    /// words for the person.
    pub(super) async fn send<B, F, Sent>(self: &Arc<Self>, send: F) -> Result<Response<B>, String>
    where
        F: Fn(Option<HeaderValue>) -> Sent,
        Sent: Future<Output = Result<Response<B>, String>>,
    {
        let bearer = self.bearer(None, None).await?;
        let response = send(bearer.clone()).await?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if !asks_for_sign_in(&challenge) {
            return Ok(response);
        }
        match self.bearer(bearer, Some(challenge)).await? {
            Some(renewed) => send(Some(renewed)).await,
            None => Ok(response),
        }
    }

    /// Forgets a sign-in that failed, so that the next 401 signs in afresh: what a client that
    /// starts a new session asks for, as the failure's message tells the person to.
    pub(super) async fn start_over(&self) {
        self.state.lock().await.failed = None;
    }

    /// The `Authorization` value to send. `refused` is the one the server just answered 401 to
    /// (with `challenge`, its WWW-Authenticate): then a new token is got, by refreshing or by
    /// signing in. `None` before any sign-in, when the server has not asked for one.
    async fn bearer(
        self: &Arc<Self>,
        refused: Option<HeaderValue>,
        challenge: Option<String>,
    ) -> Result<Option<HeaderValue>, String> {
        if let Some(at_hand) = at_hand(&*self.state.lock().await, refused.as_ref(), &challenge) {
            return at_hand;
        }
        // A refresh or a sign-in runs on a task of its own: a client that stops waiting for its
        // answer must not end a sign-in the person is in the middle of. The requests that come
        // meanwhile wait for the state's lock, then take the tokens it got.
        let oauth = Arc::clone(self);
        tokio::spawn(async move {
            oauth
                .current_or_new(refused.as_ref(), challenge.as_deref())
                .await
        })
        .await
        .unwrap_or_else(|error| Err(format!("the sign-in to {} stopped: {error}", self.shown)))
    }

    async fn current_or_new(
        &self,
        refused: Option<&HeaderValue>,
        challenge: Option<&str>,
    ) -> Result<Option<HeaderValue>, String> {
        let mut state = self.state.lock().await;
        if let Some(at_hand) = at_hand(&state, refused, &challenge) {
            return at_hand;
        }
        if let Some(tokens) = &state.tokens {
            if let Some(renewed) = self.refresh(tokens).await {
                let value = bearer_value(&renewed.access_token);
                self.keep(&mut state, renewed);
                return Ok(value);
            }
            if refused.is_none() && challenge.is_none() {
                // Expired by its clock and not refreshed: the server has the last word.
                return Ok(bearer_value(&tokens.access_token));
            }
        }
        match tokio::time::timeout(SIGN_IN_TIMEOUT, self.sign_in(challenge)).await {
            Ok(Ok(tokens)) => {
                let value = bearer_value(&tokens.access_token);
                self.keep(&mut state, tokens);
                Ok(value)
            }
            Ok(Err(cause)) => {
                let asks = challenge
                    .filter(|challenge| !challenge.is_empty())
                    .map(|challenge| format!(" (WWW-Authenticate: {challenge})"))
                    .unwrap_or_default();
                let cause = format!(
                    "{} answered 401 Unauthorized{asks} and the sign-in failed: {cause}; or give \
                     a token with --header 'Authorization: Bearer …' (a ${{VARIABLE}} in the \
                     value is taken from the environment)",
                    self.shown
                );
                state.failed = Some(cause.clone());
                Err(cause)
            }
            Err(_) => {
                let cause = format!(
                    "nobody signed in to {} within {} minutes: open the address printed on \
                     stderr in a browser and restart the MCP server in the client, or give a \
                     token with --header 'Authorization: Bearer …'",
                    self.shown,
                    SIGN_IN_TIMEOUT.as_secs() / 60
                );
                state.failed = Some(cause.clone());
                Err(cause)
            }
        }
    }

    /// Keeps the tokens for this run and the next; a file that cannot be written is said, and
    /// the run goes on with the tokens it has.
    fn keep(&self, state: &mut State, tokens: Tokens) {
        if let Some(file) = &self.file {
            if let Err(error) = write_private(file, &tokens) {
                crate::program::messages::message!(
                    "proxy: cannot keep the sign-in for {} in {}: {error}",
                    self.shown,
                    file.display()
                );
            }
        }
        state.tokens = Some(tokens);
    }

    /// New tokens from the refresh token; `None` when there is none or it is refused.
    async fn refresh(&self, tokens: &Tokens) -> Option<Tokens> {
        let refresh_token = tokens.refresh_token.as_deref()?;
        let mut form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", &tokens.client_id),
        ];
        if let Some(secret) = &tokens.client_secret {
            form.push(("client_secret", secret));
        }
        if let Some(resource) = &tokens.resource {
            form.push(("resource", resource));
        }
        let answer = self
            .token_request(&tokens.token_endpoint, &form)
            .await
            .ok()?;
        Some(tokens_from(answer, tokens.clone()))
    }

    /// The whole sign-in: metadata, registration, the browser, the code exchanged for tokens.
    async fn sign_in(&self, challenge: Option<&str>) -> Result<Tokens, String> {
        let challenge = challenge.map(parse_challenge).unwrap_or_default();
        let mut resource_metadata = None;
        for url in resource_metadata_urls(&self.server, challenge.resource_metadata.as_deref()) {
            if let Ok(metadata) = self.get_json(&url).await {
                resource_metadata = Some(metadata);
                break;
            }
        }
        let resource = resource_metadata
            .as_ref()
            .and_then(|metadata| metadata.get("resource"))
            .and_then(Value::as_str)
            .map_or_else(|| self.server.to_string(), str::to_owned);
        let issuer = resource_metadata
            .as_ref()
            .and_then(|metadata| metadata.pointer("/authorization_servers/0"))
            .and_then(Value::as_str)
            .map_or_else(|| origin(&self.server), str::to_owned);
        let issuer_uri: Uri = issuer
            .parse()
            .map_err(|_| format!("its authorization server {issuer:?} is not a URL"))?;
        let mut metadata = None;
        for url in authorization_server_metadata_urls(&issuer_uri) {
            if let Ok(found) = self.get_json(&url).await {
                metadata = Some(found);
                break;
            }
        }
        let metadata = metadata.ok_or_else(|| {
            format!("its authorization server {issuer} publishes no metadata (RFC 8414)")
        })?;
        let endpoint = |name: &str| {
            metadata
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let authorization_endpoint = endpoint("authorization_endpoint")
            .ok_or("its authorization server names no authorization_endpoint")?;
        let token_endpoint =
            endpoint("token_endpoint").ok_or("its authorization server names no token_endpoint")?;
        let scope = challenge.scope.or_else(|| {
            let scopes = resource_metadata
                .as_ref()?
                .get("scopes_supported")?
                .as_array()?;
            let scopes: Vec<&str> = scopes.iter().filter_map(Value::as_str).collect();
            (!scopes.is_empty()).then(|| scopes.join(" "))
        });

        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|error| format!("cannot listen on 127.0.0.1 for the browser: {error}"))?;
        let port = listener
            .local_addr()
            .map_err(|error| format!("cannot listen on 127.0.0.1 for the browser: {error}"))?
            .port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");

        let registration = endpoint("registration_endpoint")
            .ok_or("its authorization server offers no dynamic client registration (RFC 7591)")?;
        let registered = self
            .post_json(
                &registration,
                &serde_json::json!({
                    "client_name": "reasons proxy",
                    "redirect_uris": [redirect_uri],
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"],
                    "token_endpoint_auth_method": "none",
                }),
            )
            .await
            .map_err(|cause| format!("registration at {registration} failed: {cause}"))?;
        let client_id = registered
            .get("client_id")
            .and_then(Value::as_str)
            .ok_or("its registration answer holds no client_id")?
            .to_owned();
        let client_secret = registered
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_owned);

        let verifier = base64url(&random_bytes::<32>());
        let state = base64url(&random_bytes::<16>());
        let mut query = vec![
            ("response_type", "code"),
            ("client_id", client_id.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("state", state.as_str()),
            ("resource", resource.as_str()),
        ];
        let code_challenge = pkce_challenge(&verifier);
        query.push(("code_challenge", &code_challenge));
        query.push(("code_challenge_method", "S256"));
        if let Some(scope) = &scope {
            query.push(("scope", scope));
        }
        let separator = if authorization_endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        let address = format!("{authorization_endpoint}{separator}{}", form(&query));
        crate::program::messages::message!(
            "proxy: {} asks you to sign in; opening your browser at:\n  {address}",
            self.shown
        );
        open_browser(&address);
        let code = wait_for_code(&listener, &state).await?;

        let mut exchange = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("client_id", client_id.as_str()),
            ("code_verifier", verifier.as_str()),
            ("resource", resource.as_str()),
        ];
        if let Some(secret) = &client_secret {
            exchange.push(("client_secret", secret));
        }
        let answer = self.token_request(&token_endpoint, &exchange).await?;
        let kept = Tokens {
            server: self.server.to_string(),
            token_endpoint,
            client_id,
            client_secret,
            resource: Some(resource),
            ..Tokens::default()
        };
        let tokens = tokens_from(answer, kept);
        if tokens.access_token.is_empty() {
            return Err("its token endpoint gave no access_token".to_owned());
        }
        Ok(tokens)
    }

    async fn token_request(&self, url: &str, fields: &[(&str, &str)]) -> Result<Value, String> {
        self.request(
            Method::POST,
            url,
            "application/x-www-form-urlencoded",
            form(fields).into(),
        )
        .await
    }

    async fn get_json(&self, url: &str) -> Result<Value, String> {
        self.request(Method::GET, url, "", Bytes::new()).await
    }

    async fn post_json(&self, url: &str, body: &Value) -> Result<Value, String> {
        self.request(
            Method::POST,
            url,
            "application/json",
            body.to_string().into(),
        )
        .await
    }

    /// One request to a metadata, registration or token endpoint, its JSON answer when it
    /// succeeded.
    async fn request(
        &self,
        method: Method,
        url: &str,
        content_type: &str,
        body: Bytes,
    ) -> Result<Value, String> {
        let mut request = Request::builder()
            .method(method)
            .uri(url)
            .header(ACCEPT, "application/json");
        if !content_type.is_empty() {
            request = request.header(CONTENT_TYPE, content_type);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|error| format!("{url}: {error}"))?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|error| format!("cannot reach {url}: {}", error_chain(&error)))?;
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|error| format!("{url}: {}", error_chain(&error)))?
                .to_bytes();
            if !status.is_success() {
                let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
                return Err(format!("{url} answered {status}: {}", text.trim()));
            }
            serde_json::from_slice(&body).map_err(|_| format!("{url}: the answer is not JSON"))
        };
        tokio::time::timeout(EXCHANGE_TIMEOUT, exchange)
            .await
            .unwrap_or_else(|_| Err(format!("{url} did not answer")))
    }
}

/// `Bearer TOKEN`, kept out of debugging dumps.
fn bearer_value(token: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// What `state` answers without asking anyone: the failure already met; the token kept while it
/// is neither expired nor the one `refused`; nothing before a sign-in the server has not asked
/// for. `None` when a token must be got.
fn at_hand<T>(
    state: &State,
    refused: Option<&HeaderValue>,
    challenge: &Option<T>,
) -> Option<Result<Option<HeaderValue>, String>> {
    if let Some(failed) = &state.failed {
        return Some(Err(failed.clone()));
    }
    let Some(tokens) = &state.tokens else {
        return (refused.is_none() && challenge.is_none()).then_some(Ok(None));
    };
    let value = bearer_value(&tokens.access_token);
    let expired = tokens
        .expires_at
        .is_some_and(|at| at <= now() + EXPIRY_MARGIN);
    let is_refused = refused.is_some_and(|refused| Some(refused) == value.as_ref());
    (!expired && !is_refused).then_some(Ok(value))
}

/// Whether a 401's `WWW-Authenticate` asks for what this module does: a Bearer challenge, or
/// none at all (the MCP spec then has the client look for the server's metadata at the
/// well-known paths). Another scheme (Basic, say) is not ours to answer.
pub(super) fn asks_for_sign_in(challenge: &str) -> bool {
    challenge.trim().is_empty()
        || challenge.split(',').any(|part| {
            part.split_whitespace()
                .next()
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer"))
        })
}

/// `kept` with what a token endpoint answered.
fn tokens_from(answer: Value, mut kept: Tokens) -> Tokens {
    let text = |name: &str| answer.get(name).and_then(Value::as_str).map(str::to_owned);
    kept.access_token = text("access_token").unwrap_or_default();
    // A refresh answer may leave the refresh token out: the old one still holds.
    if let Some(refresh) = text("refresh_token") {
        kept.refresh_token = Some(refresh);
    }
    kept.expires_at = answer
        .get("expires_in")
        .and_then(Value::as_u64)
        .map(|seconds| now() + seconds);
    kept
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Where the tokens for `server` are kept: `$XDG_CONFIG_HOME/reasons/mcp-auth/<hash>.json`
/// (`~/.config` when unset), the hash of the server's URL so that no part of it shows in a
/// file name.
pub(super) fn token_file(server: &str) -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    let config = match set("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(config) if config.is_absolute() => config,
        _ => PathBuf::from(set("HOME")?).join(".config"),
    };
    let hash = Sha256::digest(server.as_bytes());
    let name: String = hash[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    Some(config.join("reasons/mcp-auth").join(format!("{name}.json")))
}

/// Deletes the tokens kept for `server`: the file they were in, and whether there was one.
pub(super) fn sign_out(server: &Uri) -> anyhow::Result<(PathBuf, bool)> {
    let file = token_file(&server.to_string())
        .context("cannot tell where sign-ins are kept: neither XDG_CONFIG_HOME nor HOME is set")?;
    match std::fs::remove_file(&file) {
        Ok(()) => Ok((file, true)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok((file, false)),
        Err(error) => Err(error).with_context(|| format!("cannot remove {}", file.display())),
    }
}

/// Writes `tokens` where only the person can read them: the folder 0700, the file 0600, whole
/// or not at all.
fn write_private(file: &Path, tokens: &Tokens) -> std::io::Result<()> {
    let folder = file.parent().unwrap_or(Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(folder)?;
    let partial = file.with_extension("json.partial");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(&partial)?;
    std::io::Write::write_all(&mut out, tokens.to_json().to_string().as_bytes())?;
    out.sync_all()?;
    std::fs::rename(partial, file)
}

/// What a `WWW-Authenticate: Bearer …` challenge names.
#[derive(Default, Debug, PartialEq)]
pub(super) struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
}

/// Reads the `Bearer` challenge's `resource_metadata` and `scope` parameters (RFC 9728 §5.1,
/// RFC 6750 §3); values quoted or not.
pub(super) fn parse_challenge(header: &str) -> Challenge {
    let mut challenge = Challenge::default();
    let Some(at) = header.to_ascii_lowercase().find("bearer") else {
        return challenge;
    };
    let mut rest = &header[at + "bearer".len()..];
    loop {
        rest = rest.trim_start_matches([' ', ',', '\t']);
        let Some(eq) = rest.find('=') else { break };
        let name = rest[..eq].trim().to_ascii_lowercase();
        rest = rest[eq + 1..].trim_start();
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut text = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((index, c)) = chars.next() {
                match c {
                    '\\' => text.extend(chars.next().map(|(_, c)| c)),
                    '"' => {
                        end = index + 1;
                        break;
                    }
                    c => text.push(c),
                }
            }
            value = text;
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find([',', ' ']).unwrap_or(rest.len());
            value = rest[..end].to_owned();
            rest = &rest[end..];
        }
        match name.as_str() {
            "resource_metadata" => challenge.resource_metadata = Some(value),
            "scope" => challenge.scope = Some(value),
            _ => {}
        }
    }
    challenge
}

/// `scheme://host[:port]` of `url`.
fn origin(url: &Uri) -> String {
    let port = url
        .port()
        .map(|port| format!(":{port}"))
        .unwrap_or_default();
    format!(
        "{}://{}{port}",
        url.scheme_str().unwrap_or("https"),
        url.host().unwrap_or_default()
    )
}

/// Where the server's protected-resource metadata may be, in order: the challenge's
/// `resource_metadata`, then RFC 9728's well-known path with the server's path, then without.
pub(super) fn resource_metadata_urls(server: &Uri, from_challenge: Option<&str>) -> Vec<String> {
    let base = format!("{}/.well-known/oauth-protected-resource", origin(server));
    let path = server.path().trim_end_matches('/');
    let mut urls: Vec<String> = from_challenge.map(str::to_owned).into_iter().collect();
    if !path.is_empty() {
        urls.push(format!("{base}{path}"));
    }
    urls.push(base);
    urls
}

/// Where an authorization server's metadata may be, in the MCP spec's order: RFC 8414's
/// well-known path, then OpenID's, each with the issuer's path inserted after the well-known
/// part and, for OpenID, appended too.
pub(super) fn authorization_server_metadata_urls(issuer: &Uri) -> Vec<String> {
    let origin = origin(issuer);
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// PKCE's S256 challenge for `verifier` (RFC 7636 §4.2).
pub(super) fn pkce_challenge(verifier: &str) -> String {
    base64url(&Sha256::digest(verifier.as_bytes()))
}

/// Base64url without padding (RFC 4648 §5).
pub(super) fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, byte)| n | u32::from(*byte) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            text.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    text
}

/// `name=value&…`, each percent-encoded as a form wants (RFC 3986's unreserved characters kept).
fn form(fields: &[(&str, &str)]) -> String {
    let encode = |text: &str| {
        text.bytes()
            .map(|byte| match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (byte as char).to_string()
                }
                _ => format!("%{byte:02X}"),
            })
            .collect::<String>()
    };
    fields
        .iter()
        .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A query's value, percent-decoded (`+` a space, as in a form).
fn query_value(query: &str, wanted: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        (name == wanted).then(|| {
            let bytes = value.as_bytes();
            let mut out = Vec::with_capacity(bytes.len());
            let mut i = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'+' => out.push(b' '),
                    b'%' if i + 2 < bytes.len() => {
                        let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                        match hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
                            Some(byte) => {
                                out.push(byte);
                                i += 2;
                            }
                            None => out.push(b'%'),
                        }
                    }
                    byte => out.push(byte),
                }
                i += 1;
            }
            String::from_utf8_lossy(&out).into_owned()
        })
    })
}

/// Unpredictable bytes, from the system's random source; where it cannot be read, from std's
/// randomly keyed hasher.
fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut random| std::io::Read::read_exact(&mut random, &mut bytes))
        .is_ok()
    {
        return bytes;
    }
    use std::hash::{BuildHasher, Hasher};
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(i);
        hasher.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| since.as_nanos()),
        );
        let value = hasher.finish().to_le_bytes();
        chunk.copy_from_slice(&value[..chunk.len()]);
    }
    bytes
}

/// Opens `address` in the person's browser: `$BROWSER` when set, else the system's opener. The
/// address is on stderr already, for a machine without one.
fn open_browser(address: &str) {
    let opener = std::env::var("BROWSER")
        .ok()
        .filter(|browser| !browser.trim().is_empty())
        .unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open".to_owned()
            } else if cfg!(windows) {
                "explorer".to_owned()
            } else {
                "xdg-open".to_owned()
            }
        });
    // `$BROWSER` may list several, separated by colons; the first is used.
    let opener = opener.split(':').next().unwrap_or_default().to_owned();
    let started = std::process::Command::new(&opener)
        .arg(address)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match started {
        // Waited for on a thread of its own, so that it never lingers as a zombie.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(error) => crate::program::messages::message!(
            "proxy: cannot open a browser ({opener}: {error}); open the address above yourself"
        ),
    }
}

/// Waits for the browser to come back to the listener with the code for `state`; answers it
/// with a page saying the person can go back to their client.
async fn wait_for_code(listener: &TcpListener, state: &str) -> Result<String, String> {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let mut head = Vec::new();
        let mut buffer = [0u8; 4096];
        while !head.windows(4).any(|window| window == b"\r\n\r\n") && head.len() < 65536 {
            match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer)).await {
                Ok(Ok(n)) if n > 0 => head.extend_from_slice(&buffer[..n]),
                _ => break,
            }
        }
        let head = String::from_utf8_lossy(&head);
        let target = head.split_whitespace().nth(1).unwrap_or_default();
        let query = target.split_once('?').map_or("", |(_, query)| query);
        let (outcome, page) = if query_value(query, "state").as_deref() != Some(state) {
            (None, "This is not the sign-in reasons is waiting for.")
        } else if let Some(code) = query_value(query, "code") {
            (Some(Ok(code)), "Signed in. You can close this tab.")
        } else {
            let error = query_value(query, "error").unwrap_or_else(|| "no code".to_owned());
            let description = query_value(query, "error_description")
                .map(|text| format!(": {text}"))
                .unwrap_or_default();
            (
                Some(Err(format!(
                    "the authorization server said {error}{description}"
                ))),
                "The sign-in failed; the reason is in the client's log.",
            )
        };
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
        if let Some(outcome) = outcome {
            return outcome;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pkce_challenge_is_rfc_7636s_example() {
        // RFC 7636, appendix B: the verifier from its 32 octets, then its challenge.
        let octets = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212,
            37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ];
        assert_eq!(
            base64url(&octets),
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        );
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn base64url_leaves_out_padding() {
        assert_eq!(base64url(b""), "");
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn a_bearer_challenge_names_its_metadata_and_scope() {
        let challenge = parse_challenge(
            r#"Bearer error="invalid_token", resource_metadata="https://x.test/.well-known/oauth-protected-resource/mcp", scope="read write""#,
        );
        assert_eq!(
            challenge,
            Challenge {
                resource_metadata: Some(
                    "https://x.test/.well-known/oauth-protected-resource/mcp".to_owned()
                ),
                scope: Some("read write".to_owned()),
            }
        );
        assert_eq!(parse_challenge("Basic realm=\"x\"").resource_metadata, None);
        assert_eq!(
            parse_challenge("Bearer resource_metadata=https://a.test/m").resource_metadata,
            Some("https://a.test/m".to_owned())
        );
    }

    #[test]
    fn a_bearer_challenge_or_none_asks_for_a_sign_in_and_another_scheme_does_not() {
        assert!(asks_for_sign_in(""));
        assert!(asks_for_sign_in(
            r#"Bearer error="invalid_token", resource_metadata="https://x.test/m""#
        ));
        assert!(asks_for_sign_in(r#"Basic realm="x", bearer scope="read""#));
        assert!(!asks_for_sign_in(r#"Basic realm="x""#));
        assert!(!asks_for_sign_in(r#"Negotiate, Digest realm="bearer""#));
    }

    #[test]
    fn metadata_urls_follow_rfc_9728_and_8414() {
        let server: Uri = "https://mcp.test:8443/v1/mcp".parse().expect("a URL");
        assert_eq!(
            resource_metadata_urls(&server, None),
            [
                "https://mcp.test:8443/.well-known/oauth-protected-resource/v1/mcp",
                "https://mcp.test:8443/.well-known/oauth-protected-resource",
            ]
        );
        let issuer: Uri = "https://auth.test/tenant".parse().expect("a URL");
        assert_eq!(
            authorization_server_metadata_urls(&issuer),
            [
                "https://auth.test/.well-known/oauth-authorization-server/tenant",
                "https://auth.test/.well-known/openid-configuration/tenant",
                "https://auth.test/tenant/.well-known/openid-configuration",
            ]
        );
        let issuer: Uri = "https://auth.test/".parse().expect("a URL");
        assert_eq!(
            authorization_server_metadata_urls(&issuer),
            [
                "https://auth.test/.well-known/oauth-authorization-server",
                "https://auth.test/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn a_form_encodes_what_is_not_unreserved_and_decodes_back() {
        let encoded = form(&[("redirect_uri", "http://127.0.0.1:1/callback?a=b c")]);
        assert_eq!(
            encoded,
            "redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback%3Fa%3Db%20c"
        );
        let (_, value) = encoded.split_once('=').expect("a field");
        assert_eq!(
            query_value(&format!("x=1&redirect_uri={value}"), "redirect_uri").as_deref(),
            Some("http://127.0.0.1:1/callback?a=b c")
        );
    }

    #[test]
    fn the_token_file_is_named_by_a_hash_of_the_url() {
        let file = token_file("https://mcp.test/mcp?key=secret").expect("a home");
        let name = file
            .file_name()
            .and_then(|name| name.to_str())
            .expect("a name");
        assert!(
            !name.contains("mcp.test") && name.ends_with(".json"),
            "{name}"
        );
        assert!(file
            .parent()
            .expect("a folder")
            .ends_with("reasons/mcp-auth"));
    }
}
