//! What a person sees of the reason in Pi's and Hermes Agent's own screens, started by `reasons
//! run` in a terminal (tmux) against a scripted Chat Completions model, each set up as a person
//! would have it. Pi asks nothing: the reason is shown under the call; with `--confirm`, inside
//! Pi's own confirm box. Hermes asks before a dangerous command: the reason is inside that box,
//! the only one asked (the plugin reaches it through a private name of Hermes's, which this test
//! pins at the version `.ci/real-parts` installs). Each screen is kept under `target/screens/`.
//!
//! Installed by `.ci/real-parts target/real-parts`; ignored by a plain `cargo test`, and failing
//! (never skipping) when a part is missing.

use std::path::Path;

use serde_json::json;

use crate::real::real_more_agents::{SHARED_CALL_ID as CALL_ID, SHARED_KEY as KEY};
use crate::real::real_run::{screen_when, TERMINAL};
use crate::util::chat_model::one_call_model;
use crate::util::real_parts::{part, HERMES, PI};
use crate::util::sandbox::Sandbox;
use crate::util::tmux::Tmux;
use crate::util::upstream::Upstream;
use crate::util::{quoted, read_reasons_log};

/// The model's reason.
const REASON: &str = "Clear the old build";
/// What the model's final turn says, once the call's result is back.
const FINAL: &str = "Done: the folder is gone.";

/// `reasons run ARGS` in tmux, in the sandbox's environment: the agent's terminal.
fn run_in_terminal(sandbox: &Sandbox, run: &[&str], program: &Path, args: &[&str]) -> Tmux {
    let mut line = vec!["run"];
    line.extend_from_slice(run);
    line.extend(["--program", program.to_str().unwrap(), "--"]);
    line.extend_from_slice(args);
    let script = sandbox.script(&[], Path::new(env!("CARGO_BIN_EXE_reasons")), &line);
    let (width, height) = TERMINAL;
    Tmux::start(&format!("bash {}", quoted(&script)), width, height)
}

/// The end of the run, once the agent has quit: its summary counts the one call, and the run
/// passes on the agent's status.
#[track_caller]
fn check_the_end(tmux: &Tmux, sandbox: &Sandbox, name: &str) {
    let end = screen_when(tmux, name, |screen| screen.contains("exit status "));
    let flat = end.replace('\n', "");
    assert!(flat.contains("reasons: 1 call, 1 with a reason"), "{end}");
    assert!(end.contains("exit status 0"), "{end}");
    let logged = read_reasons_log(&sandbox.default_reasons_log());
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["reason"], REASON);
}

// ---- Pi ---------------------------------------------------------------------------------------

/// Pi, interactive, with the person's provider in `models.json` and the task given on its
/// command line.
fn pi_in_terminal(confirm: bool) {
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(one_call_model(
        CALL_ID,
        "bash",
        json!({"command": "rm -rf old-build", "reason": REASON}),
        FINAL,
    ));
    let work = sandbox.path("work");
    std::fs::create_dir(work.join("old-build")).unwrap();
    let models = json!({"providers": {"mine": {
        "baseUrl": format!("{}/v1", upstream.url()),
        "api": "openai-completions",
        "apiKey": KEY,
        "models": [{"id": "gpt-4.1"}],
    }}});
    let folder = sandbox.path("home").join(".pi/agent");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("models.json"), models.to_string()).unwrap();
    let run: &[&str] = if confirm {
        &["pi", "--confirm"]
    } else {
        &["pi"]
    };
    let args = ["--model", "mine/gpt-4.1", "Remove the old build folder"];
    let tmux = run_in_terminal(&sandbox, run, &part(PI), &args);
    if confirm {
        // Pi's own confirm box, the reason inside it; the call waits for the person.
        let asked = screen_when(&tmux, "pi-confirm", |screen| screen.contains("Run bash?"));
        assert!(
            asked.contains(&format!("Why (the model's claim): {REASON}")),
            "{asked}"
        );
        assert!(work.join("old-build").exists(), "ran before it was allowed");
        tmux.keys(&["Enter"]);
    }
    let after = screen_when(
        &tmux,
        if confirm {
            "pi-confirm-after"
        } else {
            "pi-notice"
        },
        |screen| screen.contains(FINAL),
    );
    assert!(!work.join("old-build").exists(), "{after}");
    if !confirm {
        // Under the call, as Pi's own notice.
        let call = after.find("$ rm -rf old-build").expect("the call is shown");
        let notice = after
            .find(&format!("model's reason for bash: {REASON}"))
            .unwrap_or_else(|| panic!("no reason under the call:\n{after}"));
        assert!(call < notice, "{after}");
    }
    // Ctrl-D in the empty editor quits Pi.
    tmux.keys(&["C-d"]);
    check_the_end(
        &tmux,
        &sandbox,
        if confirm { "pi-confirm-end" } else { "pi-end" },
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (tmux)"]
fn real_pi_in_a_terminal_shows_the_reason_under_the_call_and_asks_nothing() {
    pi_in_terminal(false);
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (tmux)"]
fn real_pi_with_confirm_asks_in_its_own_box_with_the_reason_in_it() {
    pi_in_terminal(true);
}

/// The text in a box drawn with `│` sides, its lines joined as the box wrapped them.
fn box_text(screen: &str) -> String {
    screen
        .lines()
        .filter_map(|line| line.trim().strip_prefix('│')?.strip_suffix('│'))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

// ---- Hermes -----------------------------------------------------------------------------------

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts (tmux)"]
fn real_hermes_asks_once_in_its_own_dangerous_command_box_with_the_reason_in_it() {
    let sandbox = Sandbox::new();
    let upstream = Upstream::start(one_call_model(
        CALL_ID,
        "terminal",
        json!({"command": "rm -rf old-build", "reason": REASON}),
        FINAL,
    ));
    let home = sandbox.path("home");
    let work = sandbox.path("work");
    std::fs::create_dir(work.join("old-build")).unwrap();
    // The person's endpoint, and Hermes asking them before dangerous commands (its `manual`
    // mode; `smart` asks the model first).
    let config = format!(
        "model:\n  default: gpt-4.1\n  provider: custom\n  base_url: {}/v1\n  api_key: {KEY}\n  \
         api_mode: chat_completions\napprovals:\n  mode: manual\n",
        upstream.url()
    );
    std::fs::create_dir_all(home.join(".hermes")).unwrap();
    std::fs::write(home.join(".hermes/config.yaml"), &config).unwrap();
    let tmux = run_in_terminal(&sandbox, &["hermes"], &part(HERMES), &["chat"]);
    screen_when(&tmux, "hermes-ready", |screen| {
        screen.contains("Type your message")
    });
    tmux.keys(&["Remove the old build folder", "Enter"]);

    // Hermes's own box, the reason on its last line.
    let asked = screen_when(&tmux, "hermes-dangerous-command", |screen| {
        screen.contains("Dangerous Command") && screen.contains("Deny")
    });
    assert!(
        box_text(&asked).contains(&format!("Why (the model's claim): {REASON}")),
        "{asked}"
    );
    assert_eq!(asked.matches("Dangerous Command").count(), 1, "{asked}");
    assert!(work.join("old-build").exists(), "ran before it was allowed");
    // "Allow once", chosen already.
    tmux.keys(&["Enter"]);
    let after = screen_when(&tmux, "hermes-after", |screen| screen.contains(FINAL));
    assert!(!work.join("old-build").exists(), "{after}");
    assert!(after.contains("allowed once"), "{after}");
    assert!(
        !after.contains("Dangerous Command"),
        "asked twice:\n{after}"
    );
    tmux.keys(&["/exit", "Enter"]);
    check_the_end(&tmux, &sandbox, "hermes-end");
    // Hermes's first run made its store in the run's home; it is the person's now, and their
    // config is as it was.
    assert!(home.join(".hermes/state.db").is_file());
    assert_eq!(
        std::fs::read_to_string(home.join(".hermes/config.yaml")).unwrap(),
        config
    );
}
