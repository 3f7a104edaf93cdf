//! Qwen Code: its chats in `projects/` of its runtime folder, `$QWEN_RUNTIME_DIR`, else its
//! global folder `$QWEN_HOME`, else `~/.qwen` (as Qwen Code 0.24 documents both variables: the
//! runtime folder holds the conversations and defaults to the global one); pointed at the
//! gateway by `--openai-base-url` (when the person gives it) or `OPENAI_BASE_URL`; no hook for
//! one run. Nothing else is read from its global folder, so the home here is the chats' one.

use reasons::record::Format;

use super::{Agent, Base, Home, Run};
use crate::program::wiring::{env, flag_value, set_flag_value, GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "Qwen Code",
    format: Format::QwenCode,
    home: Home {
        variables: &["QWEN_RUNTIME_DIR", "QWEN_HOME"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".qwen",
    },
    logs: &["projects"],
    hook: None,
    run: Some(Run {
        command: "qwen",
        pointed: "`--openai-base-url`, or `OPENAI_BASE_URL`; no hook for one run (`--watch` shows the reasons).",
        strips: false,
        confirms: false,
        given,
        wire,
    }),
};

/// Its flag wins over its environment.
fn given(args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    let found = match flag_value(args, "--openai-base-url") {
        Some(url) => Some(GivenBaseUrl::new("openai", url, "--openai-base-url")),
        None => {
            env("OPENAI_BASE_URL").map(|url| GivenBaseUrl::new("openai", url, "OPENAI_BASE_URL"))
        }
    };
    Ok(found.into_iter().collect())
}

fn wire(wiring: &mut Wiring, to: &Pointing, args: &mut [String]) -> anyhow::Result<()> {
    let url = to.through("openai", "/v1");
    if !set_flag_value(args, "--openai-base-url", &url) {
        wiring.env.push(("OPENAI_BASE_URL".into(), url));
    }
    Ok(())
}
