//! OpenCode: its store `opencode.db` (and the older `storage/` tree) in
//! `$XDG_DATA_HOME/opencode` on every system, pointed at the gateway by its providers'
//! `baseURL` in `OPENCODE_CONFIG_CONTENT`; no hook for one run. Kilo is OpenCode's fork and
//! reads its configuration the same way, under its own names ([`Config`]).

use std::path::PathBuf;

use reasons::record::Format;
use serde_json::{json, Value};

use super::{Agent, Base, Home, Run};
use crate::program::json_settings::read_json;
use crate::program::wiring::{env, home, merge, GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "OpenCode",
    format: Format::Opencode,
    home: Home {
        variables: &[],
        inside_variable: "",
        base: Base::Data,
        in_base: "opencode",
    },
    logs: &["opencode.db", "storage"],
    hook: None,
    run: Some(Run {
        command: "opencode",
        pointed: "its providers' `baseURL` in `OPENCODE_CONFIG_CONTENT`; no hook for one run (`--watch` shows the reasons).",
        strips: false,
        confirms: false,
        given: |_| Ok(base_urls(&CONFIG)),
        wire: |wiring, to, _| wire(&CONFIG, wiring, to),
    }),
};

/// Where an agent of OpenCode's kind reads its configuration.
pub struct Config {
    /// Its configuration's name: `opencode.json` in its config folder and the project.
    pub name: &'static str,
    /// The variable that names one more configuration file.
    pub file_variable: &'static str,
    /// The variable that holds inline configuration, applied over the files.
    pub content_variable: &'static str,
}

const CONFIG: Config = Config {
    name: "opencode",
    file_variable: "OPENCODE_CONFIG",
    content_variable: "OPENCODE_CONFIG_CONTENT",
};

/// Its configuration files, in the order they apply (global, then the project's): where a
/// provider's `baseURL` may be set.
fn config_files(config: &Config) -> Vec<PathBuf> {
    let name = config.name;
    let mut files = Vec::new();
    let folder = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| home().map(|home| home.join(".config")));
    for file in [format!("{name}.json"), "config.json".to_owned()] {
        if let Some(folder) = &folder {
            files.push(folder.join(name).join(&file));
        }
    }
    if let Some(named) = std::env::var_os(config.file_variable) {
        files.push(PathBuf::from(named));
    }
    files.push(PathBuf::from(format!("{name}.json")));
    files
}

/// The API each AI SDK provider package speaks.
fn package_provider(package: &str) -> Option<&'static str> {
    match package {
        "@ai-sdk/anthropic" => Some("anthropic"),
        "@ai-sdk/google" => Some("gemini"),
        "@ai-sdk/openai" | "@ai-sdk/openai-compatible" => Some("openai"),
        _ => None,
    }
}

/// The built-in providers it takes a `baseURL` for, with their API's default path.
const BUILT_IN: [(&str, &str, &str); 3] = [
    ("anthropic", "anthropic", "/v1"),
    ("openai", "openai", "/v1"),
    ("google", "gemini", "/v1beta"),
];

/// Every provider of its configuration files that sets a `baseURL`: its id, its API (by its
/// package, else a built-in's id; `None` when neither tells), the URL, and the file.
fn providers_with_base_urls(
    config: &Config,
) -> Vec<(String, Option<&'static str>, String, PathBuf)> {
    let mut found = Vec::new();
    for file in config_files(config) {
        let Some(settings) = read_json(&file).ok().flatten() else {
            continue;
        };
        for (id, provider) in settings["provider"].as_object().into_iter().flatten() {
            let Some(url) = provider["options"]["baseURL"].as_str() else {
                continue;
            };
            let built_in = || {
                BUILT_IN
                    .iter()
                    .find(|(name, _, _)| name == id)
                    .map(|(_, api, _)| *api)
            };
            let api = provider["npm"]
                .as_str()
                .and_then(package_provider)
                .or_else(built_in);
            found.push((id.clone(), api, url.to_owned(), file.clone()));
        }
    }
    found
}

/// The base URLs its providers are given, each for its API.
pub fn base_urls(config: &Config) -> Vec<GivenBaseUrl> {
    providers_with_base_urls(config)
        .into_iter()
        .filter_map(|(id, api, url, file)| {
            let from = format!("{} provider.{id}.options.baseURL", file.display());
            Some(GivenBaseUrl::new(api?, url, from))
        })
        .collect()
}

/// Every built-in provider, and every provider of the person's whose base URL goes upstream,
/// pointed at the gateway, in the inline configuration (kept with everything else the person
/// gives there).
pub fn wire(config: &Config, wiring: &mut Wiring, to: &Pointing) -> anyhow::Result<()> {
    let mut providers = serde_json::Map::new();
    for (name, api, usual) in BUILT_IN {
        providers.insert(
            name.to_owned(),
            json!({"options": {"baseURL": to.through(api, usual)}}),
        );
    }
    for (id, api, url, _) in providers_with_base_urls(config) {
        // A provider of an API no package or built-in names speaks OpenAI's.
        if let Some(url) = to.instead_of(api.unwrap_or("openai"), &url) {
            providers.insert(id, json!({"options": {"baseURL": url}}));
        }
    }
    let mut content = json!({"provider": providers});
    // Inline configuration the person already gives keeps everything but the URLs.
    if let Some(Value::Object(mut theirs)) = env(config.content_variable)
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
    {
        let mut merged = theirs.remove("provider").unwrap_or(json!({}));
        merge(&mut merged, content["provider"].take());
        theirs.insert("provider".into(), merged);
        content = Value::Object(theirs);
    }
    wiring
        .env
        .push((config.content_variable.into(), content.to_string()));
    Ok(())
}
