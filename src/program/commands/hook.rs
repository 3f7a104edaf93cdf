//! `reasons hook AGENT`, `reasons hook install AGENT` and `reasons hook uninstall AGENT`: the
//! hook itself and its settings are [`crate::program::hook`]'s; this turns the command line into
//! their calls.

use std::io;

use reasons::reasons_log::{self, Purpose};

use super::with_stdout;
use crate::program::agents::asks::Surroundings;
use crate::program::agents::Placement;
use crate::program::cli::HookCommand;
use crate::program::exit_codes::ExitCode;
use crate::program::hook::{self, install};

/// Runs `reasons hook …`.
pub fn run(command: HookCommand) -> anyhow::Result<ExitCode> {
    match command {
        HookCommand::Install(args) => {
            let options = install::Options {
                agent: args.agent,
                file: args.file,
                reasons_log: args.reasons_log,
                placement: placement(args.after),
                gateway: args.gateway,
            };
            with_stdout(|out| install::install(options, out))
        }
        HookCommand::Uninstall(args) => {
            with_stdout(|out| install::uninstall(args.agent, args.file, out))
        }
        HookCommand::Answer { agent, args } => {
            // A hook never gets in the way: whatever goes wrong, the agent carries on.
            let log = reasons_log::which(args.reasons_log, Purpose::Always);
            let is_agent = match agent.hook.as_ref().and_then(|hook| hook.ask.as_ref()) {
                Some(ask) => ask.is_agent,
                None => |_: &[String]| false,
            };
            hook::run(
                agent,
                placement(args.after),
                io::stdin().lock(),
                io::stdout().lock(),
                hook::Where {
                    gateway: args.gateway.as_deref(),
                    log: log.as_deref(),
                },
                || Surroundings::of_this_process(is_agent),
            );
            Ok(ExitCode::Success)
        }
    }
}

fn placement(after: bool) -> Placement {
    if after {
        Placement::After
    } else {
        Placement::InPrompt
    }
}
