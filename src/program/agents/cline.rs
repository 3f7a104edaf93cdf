//! Cline's command line: its data folder `~/.cline/data` (`$CLINE_DATA_DIR`), its sessions in
//! `sessions/`, pointed at the gateway by a copy of its provider settings
//! (`CLINE_PROVIDER_SETTINGS_PATH`) with the base URL set by `cline auth --baseurl` pointed at
//! the gateway; no hook for one run.

use std::path::PathBuf;

use anyhow::Context;
use reasons::record::Format;
use serde_json::{json, Value};

use super::{Agent, Base, Home, Run};
use crate::program::json_settings::read_json;
use crate::program::messages::message;
use crate::program::wiring::{env, GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "Cline",
    format: Format::Cline,
    home: Home {
        variables: &["CLINE_DATA_DIR"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".cline/data",
    },
    logs: &["sessions"],
    hook: None,
    run: Some(Run {
        command: "cline",
        pointed: "a copy of its provider settings (`CLINE_PROVIDER_SETTINGS_PATH`) with the base URL set by `cline auth --baseurl` pointed at the gateway; no hook for one run (`--watch` shows the reasons).",
        strips: false,
        confirms: false,
        given,
        wire,
    }),
};

/// Its provider settings: `$CLINE_PROVIDER_SETTINGS_PATH`, else `settings/providers.json` in its
/// data folder.
fn providers_path() -> Option<PathBuf> {
    if let Some(path) = env("CLINE_PROVIDER_SETTINGS_PATH") {
        return Some(PathBuf::from(path));
    }
    Some(AGENT.home.folder()?.join("settings/providers.json"))
}

/// The API a provider speaks, by its name.
fn provider_api(name: &str) -> &'static str {
    if name.contains("anthropic") {
        "anthropic"
    } else if name.contains("gemini") {
        "gemini"
    } else {
        "openai"
    }
}

/// The provider settings, when there are some.
fn provider_settings() -> Option<(PathBuf, Value)> {
    let path = providers_path()?;
    let settings = read_json(&path).ok().flatten()?;
    Some((path, settings))
}

/// Every provider whose settings name a base URL (`cline auth --baseurl`).
fn given(_args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    let Some((path, settings)) = provider_settings() else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for (name, provider) in settings["providers"].as_object().into_iter().flatten() {
        if let Some(url) = provider["settings"]["baseUrl"].as_str() {
            let from = format!("{} providers.{name}.settings.baseUrl", path.display());
            found.push(GivenBaseUrl::new(provider_api(name), url, from));
        }
    }
    Ok(found)
}

/// Cline reads its providers from the file `CLINE_PROVIDER_SETTINGS_PATH` names: the run's is a
/// copy of the person's, each base URL that goes upstream pointed at the gateway instead.
fn wire(wiring: &mut Wiring, to: &Pointing, _args: &mut [String]) -> anyhow::Result<()> {
    let Some(path) = providers_path() else {
        return Ok(());
    };
    let Some((_, mut settings)) = provider_settings() else {
        message!(
            "{} holds no provider settings of Cline's: it starts without the gateway (set one up with `cline auth --baseurl URL`)",
            path.display()
        );
        return Ok(());
    };
    let mut pointed = false;
    for (name, provider) in settings["providers"].as_object_mut().into_iter().flatten() {
        let url = provider["settings"]["baseUrl"].as_str().unwrap_or_default();
        if let Some(url) = to.instead_of(provider_api(name), url) {
            provider["settings"]["baseUrl"] = json!(url);
            pointed = true;
        }
    }
    if !pointed {
        message!(
            "Cline's providers ({}) name no base URL: it starts without the gateway (set one with `cline auth --baseurl URL`)",
            path.display()
        );
        return Ok(());
    }
    let copy = wiring
        .private_file("cline-providers.json", settings.to_string().as_bytes())
        .context("cannot write the run's copy of Cline's provider settings")?;
    wiring.env.push((
        "CLINE_PROVIDER_SETTINGS_PATH".into(),
        copy.to_string_lossy().into_owned(),
    ));
    Ok(())
}
