//! `reasons proxy --url` signing in to a server that asks for OAuth, as the MCP spec's
//! authorization section describes: the Python MCP SDK's own authorization server and
//! Streamable HTTP server (`tests/it/python/mcp_oauth_server.py`), and a "browser" that follows
//! the authorization URL to the proxy's loopback listener (`oauth_browser.py`), so that the whole
//! sign-in runs without a person. Then the token is reused by the next run, and refreshed when
//! the server no longer takes it. `--listen --url` signs in the same way for the SDK's own
//! Streamable HTTP client, which sends no token, while a client that sends one of its own gets
//! the server's answer to it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::util::listening_proxy::ListeningProxy;
use crate::util::mcp_session::McpSession;
use crate::util::real_parts::{part, python_script, PYTHON};
use crate::util::{arg, eventually, read_reasons_log, reasons, root};

/// The SDK's server, ended when its stdin closes (when this is dropped).
struct OAuthServer {
    child: Child,
    url: String,
    events: PathBuf,
}

impl OAuthServer {
    fn start(dir: &Path) -> OAuthServer {
        let events = dir.join("events.jsonl");
        let mut command = Command::new(part(PYTHON));
        crate::util::environment::clear(&mut command);
        let mut child = command
            .arg(root().join("tests/it/python/mcp_oauth_server.py"))
            .arg(&events)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the venv's python runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout is piped"))
            .read_line(&mut line)
            .expect("the server says where it listens");
        let said: Value = serde_json::from_str(&line).expect("a JSON line");
        let url = said["url"].as_str().expect("its url").to_owned();
        OAuthServer { child, url, events }
    }

    fn events(&self, kind: &str) -> Vec<Value> {
        std::fs::read_to_string(&self.events)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| event["event"] == kind)
            .collect()
    }

    /// The HTTP request the server received whose body holds `text`.
    fn received(&self, text: &str) -> Value {
        self.events("http")
            .into_iter()
            .find(|event| {
                event["body"]
                    .as_str()
                    .is_some_and(|body| body.contains(text))
            })
            .unwrap_or_else(|| panic!("no request holding {text:?} reached the server"))
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// The scripted browser, as a program `$BROWSER` can name.
fn browser(dir: &Path) -> PathBuf {
    let browser = dir.join("browser");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nexec '{}' '{}' \"$1\"\n",
            part(PYTHON).display(),
            root().join("tests/it/python/oauth_browser.py").display()
        ),
    )
    .expect("the browser script is written");
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("the browser script runs");
    browser
}

/// One session through the proxy: initialize, list the tools, call `echo` with a reason.
fn session(server: &OAuthServer, dir: &Path, log: &Path) -> (Value, Value, String) {
    let browser = browser(dir);
    let mut command = reasons();
    command
        .args(["proxy", "--url", &server.url, "--reasons-log", arg(log)])
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("BROWSER", &browser)
        .env("OPENED", dir.join("opened"));
    let mut session = McpSession::start(command);
    let initialized = session.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "reasons-test", "version": "1"}}}));
    assert!(
        initialized["result"]["protocolVersion"].is_string(),
        "{initialized}"
    );
    session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let listing = session.request(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let answer = session.request(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo",
            "arguments": {"message": "signed in", "reason": "to check the sign-in"}}}));
    let ended = session.close();
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    (listing, answer, ended.stderr)
}

fn opened(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("opened"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_proxy_remote_signs_in_with_oauth_keeps_the_token_and_refreshes_it() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let server = OAuthServer::start(dir.path());
    let log = dir.path().join("reasons.jsonl");

    // The first run: a 401, the sign-in through the browser, then the session as usual.
    let (listing, answer, stderr) = session(&server, dir.path(), &log);
    let echo = &listing["result"]["tools"][0];
    assert_eq!(echo["name"], "echo", "{listing}");
    assert!(
        echo["inputSchema"]["properties"]["reason"].is_object(),
        "{listing}"
    );
    assert_eq!(
        answer["result"]["content"][0]["text"], "Echo: signed in",
        "{answer}"
    );
    assert!(stderr.contains("opening your browser at"), "{stderr}");
    assert_eq!(opened(dir.path()), 1);
    assert_eq!(server.events("authorize").len(), 1);
    let authorize = &server.events("authorize")[0];
    assert_eq!(authorize["resource"], server.url.as_str(), "{authorize}");
    let reasons_logged = read_reasons_log(&log);
    assert!(
        reasons_logged
            .iter()
            .any(|entry| entry.to_string().contains("to check the sign-in")),
        "{reasons_logged:?}"
    );
    let call = server.received("signed in");
    assert!(
        !call["body"].as_str().unwrap_or_default().contains("reason"),
        "{call}"
    );
    // Every request once signed in carries the token: the GET stream and the DELETE too.
    let http = server.events("http");
    let signed_in: Vec<&Value> = http
        .iter()
        .filter(|event| event["bearer"] == true)
        .collect();
    for method in ["POST", "GET", "DELETE"] {
        assert!(
            signed_in.iter().any(|event| event["method"] == method),
            "no {method} with a token: {http:?}"
        );
    }

    let token_file = &token_file(&dir.path().join("config"));
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(token_file), 0o600);
    assert_eq!(mode(&dir.path().join("config/reasons/mcp-auth")), 0o700);

    // The second run: the kept token, no browser.
    let (_, answer, stderr) = session(&server, dir.path(), &log);
    assert_eq!(
        answer["result"]["content"][0]["text"], "Echo: signed in",
        "{answer}"
    );
    assert_eq!(opened(dir.path()), 1, "{stderr}");
    assert_eq!(server.events("token").len(), 1);

    // A token the server no longer takes: refreshed with the refresh token, no browser.
    let mut kept: Value =
        serde_json::from_slice(&std::fs::read(token_file).expect("the token file")).expect("JSON");
    kept["access_token"] = json!("revoked-by-the-test");
    std::fs::write(token_file, kept.to_string()).expect("the token file is rewritten");
    let (_, answer, stderr) = session(&server, dir.path(), &log);
    assert_eq!(
        answer["result"]["content"][0]["text"], "Echo: signed in",
        "{answer}"
    );
    assert_eq!(opened(dir.path()), 1, "{stderr}");
    assert_eq!(server.events("refresh").len(), 1);
    let refreshed = eventually("the refreshed token kept", || {
        let kept: Value = serde_json::from_slice(&std::fs::read(token_file).ok()?).ok()?;
        (kept["access_token"] != "revoked-by-the-test").then_some(kept)
    });
    assert!(refreshed["refresh_token"].is_string(), "{refreshed}");
    assert_eq!(mode(token_file), 0o600);
}

/// The one token file under `config`, where a sign-in kept its tokens.
fn token_file(config: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(config.join("reasons/mcp-auth"))
        .expect("the token folder")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_proxy_listen_signs_in_for_the_python_sdks_http_client_and_reuses_the_token() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let server = OAuthServer::start(dir.path());
    let log = dir.path().join("reasons.jsonl");
    let config = dir.path().join("config");
    let browser = browser(dir.path());
    let opened_file = dir.path().join("opened");
    let listening = || {
        ListeningProxy::start_with(
            &["--url", &server.url, "--reasons-log", arg(&log)],
            &[
                ("XDG_CONFIG_HOME", config.as_os_str()),
                ("BROWSER", browser.as_os_str()),
                ("OPENED", opened_file.as_os_str()),
            ],
        )
    };
    let call = |proxy: &ListeningProxy, message: &str| {
        python_script(
            "mcp_http_echo.py",
            &[
                &proxy.url(),
                message,
                "to check the sign-in through --listen",
            ],
        )
    };

    // The first run: the client sends no token; the proxy signs in through the browser and
    // sends the request again with its token.
    let proxy = listening();
    let got = call(&proxy, "signed in through the face");
    let echo = &got["tools"][0];
    assert_eq!(echo["name"], "echo", "{got}");
    assert!(
        echo["inputSchema"]["properties"]["reason"].is_object(),
        "{got}"
    );
    assert_eq!(
        got["echo"]["content"][0]["text"], "Echo: signed in through the face",
        "{got}"
    );
    proxy.stderr_once("opening your browser at");
    assert_eq!(opened(dir.path()), 1);
    assert_eq!(server.events("authorize").len(), 1);
    assert_eq!(server.events("token").len(), 1);
    let logged = eventually("the reason is logged", || {
        log.exists()
            .then(|| read_reasons_log(&log))
            .filter(|records| !records.is_empty())
    });
    assert_eq!(logged[0]["tool"], "echo", "{logged:?}");
    assert_eq!(
        logged[0]["reason"], "to check the sign-in through --listen",
        "{logged:?}"
    );
    let call_received = server.received("through the face");
    assert_eq!(call_received["bearer"], true, "{call_received}");
    assert!(
        !call_received["body"]
            .as_str()
            .unwrap_or_default()
            .contains("reason"),
        "{call_received}"
    );
    let kept = token_file(&config);

    // A client that sends a token of its own keeps it: the server's 401 to it comes back as it
    // was, and nobody is asked to sign in.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "reasons-test", "version": "1"}}});
    let refused = proxy.post(
        None,
        &initialize,
        &[("authorization", "Bearer the-clients-own")],
    );
    assert_eq!(refused.status, 401, "{refused:?}");
    assert!(
        refused
            .header("www-authenticate")
            .is_some_and(|challenge| challenge.contains("Bearer")),
        "{refused:?}"
    );
    drop(proxy);

    // The second run: the kept token, no browser.
    let proxy = listening();
    let got = call(&proxy, "signed in before");
    assert_eq!(
        got["echo"]["content"][0]["text"], "Echo: signed in before",
        "{got}"
    );
    assert_eq!(opened(dir.path()), 1);
    assert_eq!(server.events("token").len(), 1);
    assert_eq!(token_file(&config), kept);

    // Signing out deletes the very file both faces used.
    let signed_out = reasons()
        .args(["proxy", "--url", &server.url, "--sign-out"])
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .expect("reasons runs");
    assert_eq!(signed_out.status.code(), Some(0), "{signed_out:?}");
    assert!(
        String::from_utf8_lossy(&signed_out.stdout)
            .contains(&format!("removed {}", kept.display())),
        "{signed_out:?}"
    );
    assert!(!kept.exists());
}
