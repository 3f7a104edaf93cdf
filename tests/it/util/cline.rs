//! Cline set up as a person sets it up once: `cline auth` with an OpenAI-compatible model.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::util::bounded::run_bounded_within;
use crate::util::real_parts::{part, CLINE};
use crate::util::sandbox::Sandbox;

/// Runs `cline auth` in `work`, in the sandbox, for the OpenAI-compatible model at `base_url`
/// (model `gpt-4.1`, key `key`), within `limit`; returns the file Cline saved it in. Local
/// mode, as every run of Cline here: without it Cline starts a hub daemon on the fixed port
/// 25463 that outlives the command (and would serve the next run, from another HOME).
#[track_caller]
pub fn cline_auth(
    sandbox: &Sandbox,
    work: &Path,
    base_url: &str,
    key: &str,
    limit: Duration,
) -> PathBuf {
    let mut auth = Command::new(part(CLINE));
    auth.args([
        "auth",
        "--provider",
        "openai",
        "--apikey",
        key,
        "--modelid",
        "gpt-4.1",
        "--baseurl",
        base_url,
    ])
    .current_dir(work);
    sandbox.apply(&mut auth);
    auth.env("CLINE_SESSION_BACKEND_MODE", "local");
    let output = run_bounded_within(auth, limit);
    assert!(
        output.status.success(),
        "cline auth failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    sandbox
        .path("home")
        .join(".cline/data/settings/providers.json")
}
