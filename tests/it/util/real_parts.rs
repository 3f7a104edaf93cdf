//! Where the real third-party parts are: every program an `#[ignore]`d end-to-end test drives
//! (the agents, the MCP server, the Python SDKs, playwright, chromium), named once here so that a
//! pin moved in `.ci/real-parts` is followed in one place.
//!
//! `.ci/real-parts target/real-parts` installs them (`.ci/run` runs it before the ignored tests).
//! A part that is missing fails the test that needs it, naming that script: no test passes by
//! skipping what it needs.

use std::path::{Path, PathBuf};

use crate::util::root;

/// Claude Code's command line.
pub const CLAUDE_CODE: &str = "npm/node_modules/.bin/claude";
/// The Codex CLI.
pub const CODEX: &str = "npm/node_modules/.bin/codex";
/// The Gemini CLI.
pub const GEMINI_CLI: &str = "npm/node_modules/.bin/gemini";
/// The reference MCP server (`@modelcontextprotocol/server-everything`), run by node.
pub const MCP_SERVER_EVERYTHING: &str =
    "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
/// OpenCode (`agents` block).
pub const OPENCODE: &str = "agents/node_modules/.bin/opencode";
/// Kilo, OpenCode's fork (`agents` block).
pub const KILO: &str = "agents/node_modules/.bin/kilo";
/// Qwen Code (`agents` block), run with the node 22 it needs by the wrapper `.ci/real-parts` writes.
pub const QWEN_CODE: &str = "agents/qwen";
/// Cline's command line (`agents` block).
pub const CLINE: &str = "agents/node_modules/.bin/cline";
/// GitHub Copilot CLI (`agents` block).
pub const COPILOT: &str = "agents/node_modules/.bin/copilot";
/// Copilot's own package, unpacked once (235 MB) rather than into each run's HOME.
pub const COPILOT_CACHE: &str = "agents/copilot-cache";
/// Pi's command line (`pi` block).
pub const PI: &str = "pi/node_modules/.bin/pi";
/// Hermes Agent's command line, in a venv of its own (`hermes-venv` block).
pub const HERMES: &str = "hermes-venv/bin/hermes";
/// Factory Droid's command.
pub const DROID: &str = "droid/node_modules/.bin/droid";
/// Grok Build's command (a link to the binary its wheel carries).
pub const GROK: &str = "grok-venv/bin/grok";
/// OpenClaw's command: a wrapper that runs it with the node 24 installed beside it.
pub const OPENCLAW: &str = "openclaw/openclaw";
/// uv's `uvx`, in a venv of its own (`uv-venv` block).
pub const UVX: &str = "uv-venv/bin/uvx";
/// The npm cache OpenCode and Kilo fetch their provider packages into.
pub const NPM_CACHE: &str = "npm-cache";
/// The venv with the `anthropic`, `openai`, `google-genai` and `mcp` SDKs.
pub const PYTHON: &str = "venv/bin/python";
/// The venv with playwright, which drives Debian's chromium.
pub const BROWSER_PYTHON: &str = "browser-venv/bin/python";
/// The venv with llama.cpp's server (`xllamacpp`).
pub const LLAMA_PYTHON: &str = "llama-venv/bin/python";
/// The venv with bfcl-eval (its data, answers and AST checker; installed without its dependencies).
pub const BFCL_PYTHON: &str = "bfcl-venv/bin/python";
/// Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, joined from its PyPI parts and checked by SHA-256.
pub const QWEN_0_5B: &str = "models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

/// Debian's chromium, which `.ci/real-parts` installs with apt when it is missing.
const CHROMIUM: &str = "/usr/bin/chromium";

/// Where `.ci/real-parts` put the parts.
fn real_parts() -> PathBuf {
    root().join("target").join("real-parts")
}

/// One installed part (one of the constants above), which must be there.
#[track_caller]
pub fn part(path: &str) -> PathBuf {
    let path = real_parts().join(path);
    assert!(
        path.exists(),
        "{} is missing: install the real parts with `.ci/real-parts target/real-parts`",
        path.display()
    );
    path
}

/// Debian's chromium, which must be there.
#[track_caller]
pub fn chromium() -> &'static Path {
    let chromium = Path::new(CHROMIUM);
    assert!(
        chromium.exists(),
        "{CHROMIUM} is missing: install the real parts with `.ci/real-parts target/real-parts` \
         (it runs `apt-get install -y chromium`)"
    );
    chromium
}

/// Runs one of the playwright scripts in `tests/it/python` with the browser's venv, `plan` on
/// its standard input, and parses the one JSON object it prints. In the cleared
/// [`crate::util::environment`], as [`python_script`].
#[cfg(unix)]
#[track_caller]
pub fn browser_script(script: &str, plan: &serde_json::Value) -> serde_json::Value {
    let python = part(BROWSER_PYTHON);
    // playwright drives Debian's chromium, which must be there too.
    chromium();
    let plan_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(plan_file.path(), plan.to_string()).unwrap();
    // Through a shell: the plan on its stdin, which run_bounded gives no other way.
    let mut command = std::process::Command::new("sh");
    crate::util::environment::clear(&mut command)
        .arg("-c")
        .arg("exec \"$0\" \"$1\" < \"$2\"")
        .arg(python)
        .arg(root().join("tests/it/python").join(script))
        .arg(plan_file.path());
    printed_json(script, crate::util::bounded::run_bounded(command))
}

/// Runs one of the Python scripts in `tests/it/python` with the SDKs' venv, and parses the JSON
/// it prints. In the cleared [`crate::util::environment`]: nothing of this machine's but `PATH`
/// reaches it (no `ANTHROPIC_*`, `OPENAI_*`, `GEMINI_*` or `GOOGLE_*` settings, no HTTP
/// proxies), the scripts name everything they need.
#[cfg(unix)]
#[track_caller]
pub fn python_script(script: &str, args: &[&str]) -> serde_json::Value {
    python_script_within(script, args, crate::util::bounded::LIMIT)
}

/// `python_script` with a limit of the caller's (a real model takes its time).
#[cfg(unix)]
#[track_caller]
pub fn python_script_within(
    script: &str,
    args: &[&str],
    limit: std::time::Duration,
) -> serde_json::Value {
    let mut command = std::process::Command::new(part(PYTHON));
    crate::util::environment::clear(&mut command)
        .arg(root().join("tests/it/python").join(script))
        .args(args);
    printed_json(
        script,
        crate::util::bounded::run_bounded_within(command, limit),
    )
}

/// The one JSON object `script` printed, once it ended well.
#[track_caller]
fn printed_json(script: &str, output: std::process::Output) -> serde_json::Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script} failed: {stderr}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{script} printed no JSON ({error}): {}\nstderr: {stderr}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}
