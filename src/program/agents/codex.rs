//! Codex: `~/.codex` (`$CODEX_HOME`), its rollouts in `sessions/`, its `PreToolUse` hook in
//! `hooks.json` (or, for one run, a `-c hooks.PreToolUse=…` flag), pointed at the gateway by a
//! model provider of the run's own given with `-c` flags: a copy of the one the person chose.
//!
//! Which provider that is, as Codex decides it: `model_provider` of the profile in use
//! (`--profile`/`-p`, else `profile` in the configuration), else `model_provider`, else its
//! built-in `openai`, in `$CODEX_HOME/config.toml` with the person's own `-c key=value` flags
//! applied over it (their values are TOML, else a string). A provider of the person's
//! (`[model_providers.ID]`) is copied whole (its `env_key`, `query_params`, `http_headers`,
//! `env_http_headers`, retries…) with its `base_url` the gateway's and its `base_url` the
//! gateway's upstream; Codex 0.171 speaks the Responses API only (`wire_api = "responses"`).
//! The built-in `openai` (which a `[model_providers.openai]` of the person's does not replace)
//! takes its base URL from `openai_base_url`, else `OPENAI_BASE_URL`, and its key from
//! `OPENAI_API_KEY` or else the login Codex keeps.

use anyhow::bail;
use reasons::record::Format;
use serde_json::{json, Map, Value};

use super::{
    hook_installed, pre_tool_use_call, Agent, Base, FindBy, Home, Hook, Installs, Placement, Run,
};
use crate::program::wiring::{env, toml_inline, GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "Codex",
    format: Format::Codex,
    home: Home {
        variables: &["CODEX_HOME"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".codex",
    },
    logs: &["sessions"],
    hook: Some(Hook {
        event: "PreToolUse",
        user_settings: "hooks.json",
        one_file_of_a_folder: false,
        file_version: None,
        entry,
        what_is_shown,
        after_install: Some(
            "Codex runs a new hook only once you trust it: start `codex` and review it when \
             asked (or under /hooks). A headless `codex exec` runs untrusted hooks only with \
             --dangerously-bypass-hook-trust.",
        ),
        call: pre_tool_use_call,
        lookup: FindBy::CallId,
        message_beside: true,
        installs: Installs::Settings,
        ask: None,
    }),
    run: Some(Run {
        command: "codex",
        pointed: "a copy of the model provider you chose, its base URL the gateway's (`-c model_providers…`); its hook in `-c hooks.PreToolUse=…`, which Codex asks you to review and trust before it first runs.",
        strips: false,
        confirms: false,
        given,
        wire,
    }),
};

/// The group that holds the hook: Codex reads the matcher as a regular expression, where no
/// matcher matches every tool.
fn entry(command: &str) -> Value {
    json!({"hooks": [{"type": "command", "command": command}]})
}

fn what_is_shown(_: Placement) -> &'static str {
    "Codex shows the model's reason beside the call (its approval overlay has no place for a \
     hook's text)."
}

/// The id of the provider the run writes.
const RUN_PROVIDER: &str = "reasons-run";

/// The provider the person chose.
enum Chosen {
    /// Codex's built-in OpenAI provider.
    OpenAi,
    /// One of theirs: its id and its table.
    Theirs {
        id: String,
        table: Map<String, Value>,
    },
}

/// The person's configuration, as Codex reads it for this run.
struct Configuration {
    settings: Value,
    profile: Option<String>,
}

impl Configuration {
    /// `$CODEX_HOME/config.toml` (nothing when it is missing or not TOML: Codex says so itself)
    /// with the `-c` flags among `args` applied over it.
    fn read(args: &[String]) -> Configuration {
        let file = AGENT.home.folder().map(|home| home.join("config.toml"));
        let text = file.and_then(|file| std::fs::read_to_string(file).ok());
        let mut settings = text
            .and_then(|text| text.parse::<toml_edit::DocumentMut>().ok())
            .map_or_else(|| json!({}), |document| table_json(document.as_table()));
        for (_, key, value) in config_flags(args) {
            set_dotted(&mut settings, &key, value);
        }
        let profile = option_value(args, &["--profile", "-p"])
            .or_else(|| settings["profile"].as_str().map(str::to_owned));
        Configuration { settings, profile }
    }

    /// The provider in use: the profile's, else the configuration's, else `openai`.
    fn chosen(&self) -> anyhow::Result<Chosen> {
        let in_profile = self
            .profile
            .as_ref()
            .and_then(|profile| self.settings["profiles"][profile]["model_provider"].as_str());
        let id = in_profile
            .or_else(|| self.settings["model_provider"].as_str())
            .unwrap_or("openai");
        // Codex's built-ins are not replaced by a table of the same id.
        if id == "openai" {
            return Ok(Chosen::OpenAi);
        }
        let Some(table) = self.settings["model_providers"][id].as_object() else {
            bail!(
                "Codex's model_provider is `{id}`, and no [model_providers.{id}] defines it \
                 (in {}/config.toml or a -c flag)",
                AGENT.home.shown()
            );
        };
        Ok(Chosen::Theirs {
            id: id.to_owned(),
            table: table.clone(),
        })
    }
}

fn given(args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    let configuration = Configuration::read(args);
    let found = match configuration.chosen()? {
        // Its `openai_base_url` comes before the variable (Codex 0.171, measured).
        Chosen::OpenAi => match configuration.settings["openai_base_url"].as_str() {
            Some(url) => Some(GivenBaseUrl::new("openai", url, "Codex's openai_base_url")),
            None => env("OPENAI_BASE_URL")
                .map(|url| GivenBaseUrl::new("openai", url, "OPENAI_BASE_URL")),
        },
        Chosen::Theirs { id, table } => {
            let Some(url) = table.get("base_url").and_then(Value::as_str) else {
                bail!("Codex's model provider `{id}` names no base_url");
            };
            let from = format!("Codex's model_providers.{id}.base_url");
            Some(GivenBaseUrl::new("openai", url, from))
        }
    };
    Ok(found.into_iter().collect())
}

fn wire(wiring: &mut Wiring, to: &Pointing, args: &mut [String]) -> anyhow::Result<()> {
    let configuration = Configuration::read(args);
    let url = to.through("openai", "/v1");
    let provider = match configuration.chosen()? {
        Chosen::OpenAi => {
            let mut provider = json!({"name": "OpenAI through reasons", "base_url": url,
                "wire_api": "responses"});
            // The person's key, as Codex's own OpenAI provider takes it; without one, the
            // login Codex keeps.
            if env("OPENAI_API_KEY").is_some() {
                provider["env_key"] = json!("OPENAI_API_KEY");
            } else {
                provider["requires_openai_auth"] = json!(true);
            }
            provider
        }
        Chosen::Theirs { mut table, .. } => {
            table.insert("base_url".into(), json!(url));
            table.insert("wire_api".into(), json!("responses"));
            Value::Object(table)
        }
    };
    let chooses = format!("model_provider={}", toml_inline(&json!(RUN_PROVIDER)));
    wiring.args = vec![
        "-c".into(),
        chooses,
        "-c".into(),
        format!("model_providers.{RUN_PROVIDER}={}", toml_inline(&provider)),
    ];
    // A profile's provider comes before the configuration's: the profile in use chooses the
    // run's too.
    let mut choosing = vec!["model_provider".to_owned()];
    if let Some(profile) = &configuration.profile {
        // Codex splits a flag's key at its dots, unquoted.
        let key = format!("profiles.{profile}.model_provider");
        wiring.args.push("-c".into());
        wiring
            .args
            .push(format!("{key}={}", toml_inline(&json!(RUN_PROVIDER))));
        choosing.push(key);
    }
    // The person's own flags come after the run's, and a later flag wins: one that chooses a
    // provider chooses the run's instead.
    for (at, key, _) in config_flags(args) {
        if choosing.contains(&key) {
            let flag = if args[at].starts_with("--config=") {
                "--config="
            } else {
                ""
            };
            args[at] = format!("{flag}{key}={}", toml_inline(&json!(RUN_PROVIDER)));
        }
    }
    // A hook given as a flag is one of the run's settings (Codex's "session flags"), under
    // Codex's hook trust: it asks the person to review it before it first runs.
    if hook_installed(&AGENT) {
        wiring.hook = Err("Codex's hooks.json already runs the hook".into());
    } else if let Some(command) = &to.hook_command {
        wiring.args.push("-c".into());
        wiring.args.push(format!(
            "hooks.PreToolUse={}",
            toml_inline(&json!([entry(command)]))
        ));
        wiring.hook = Ok(());
    }
    Ok(())
}

/// The `-c key=value` (`--config`) flags among Codex's arguments: where each value is, its key
/// (dots joining its parts, as Codex splits it) and its value (TOML, else the text as a string).
fn config_flags(args: &[String]) -> Vec<(usize, String, Value)> {
    let mut flags = Vec::new();
    let mut at = 0;
    while at < args.len() {
        let arg = args[at].as_str();
        if arg == "--" {
            break;
        }
        let (value_at, text) = match arg {
            "-c" | "--config" => (at + 1, args.get(at + 1).map(String::as_str)),
            _ => match arg.strip_prefix("--config=") {
                Some(text) => (at, Some(text)),
                None => (at, None),
            },
        };
        if let Some((key, value)) = text.and_then(|text| text.split_once('=')) {
            flags.push((value_at, key.trim().to_owned(), toml_value(value.trim())));
        }
        at = value_at + 1;
    }
    flags
}

/// A value as Codex reads one in a `-c` flag: TOML, else the text itself.
fn toml_value(text: &str) -> Value {
    match format!("value = {text}").parse::<toml_edit::DocumentMut>() {
        Ok(document) => document.get("value").map_or_else(|| json!(text), item_json),
        Err(_) => json!(text),
    }
}

/// Sets `value` at a dotted key, making the tables on the way.
fn set_dotted(settings: &mut Value, key: &str, value: Value) {
    let mut place = settings;
    for part in key.split('.') {
        if !place.is_object() {
            *place = json!({});
        }
        place = place
            .as_object_mut()
            .expect("made an object")
            .entry(part)
            .or_insert(Value::Null);
    }
    *place = value;
}

/// The value of an option among the arguments (`--name VALUE`, `--name=VALUE`), before `--`.
fn option_value(args: &[String], names: &[&str]) -> Option<String> {
    let mut words = args.iter().take_while(|arg| *arg != "--");
    while let Some(word) = words.next() {
        if names.contains(&word.as_str()) {
            return words.next().cloned();
        }
        if let Some((name, value)) = word.split_once('=') {
            if names.contains(&name) {
                return Some(value.to_owned());
            }
        }
    }
    None
}

fn table_json<'a>(entries: impl IntoIterator<Item = (&'a str, &'a toml_edit::Item)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(key, item)| (key.to_owned(), item_json(item)))
            .collect(),
    )
}

/// A TOML item as JSON (a date as its text).
fn item_json(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::None => Value::Null,
        toml_edit::Item::Value(value) => value_json(value),
        toml_edit::Item::Table(table) => table_json(table.iter()),
        toml_edit::Item::ArrayOfTables(tables) => tables
            .iter()
            .map(|table| table_json(table.iter()))
            .collect(),
    }
}

fn value_json(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as Toml;
    match value {
        Toml::String(text) => json!(text.value()),
        Toml::Integer(number) => json!(number.value()),
        Toml::Float(number) => json!(number.value()),
        Toml::Boolean(truth) => json!(truth.value()),
        Toml::Datetime(date) => json!(date.value().to_string()),
        Toml::Array(items) => items.iter().map(value_json).collect(),
        Toml::InlineTable(table) => Value::Object(
            table
                .iter()
                .map(|(key, value)| (key.to_owned(), value_json(value)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|word| word.to_string()).collect()
    }

    #[test]
    fn config_flags_are_read_as_codex_reads_them() {
        let args = words(&[
            "-c",
            "model_provider=mine",
            "--config=model_providers.mine.query_params={ api-version = \"1\" }",
            "exec",
            "--config",
            "x.y=\"q\"",
            "--",
            "-c",
            "not=this",
        ]);
        let flags = config_flags(&args);
        let read: Vec<_> = flags
            .iter()
            .map(|(at, key, value)| (*at, key.as_str(), value.clone()))
            .collect();
        assert_eq!(
            read,
            [
                (1, "model_provider", json!("mine")),
                (
                    2,
                    "model_providers.mine.query_params",
                    json!({"api-version": "1"})
                ),
                (5, "x.y", json!("q")),
            ]
        );
        let mut settings = json!({"model_providers": {"mine": {"base_url": "http://a/v1"}}});
        for (_, key, value) in flags {
            set_dotted(&mut settings, &key, value);
        }
        assert_eq!(
            settings["model_providers"]["mine"],
            json!({"base_url": "http://a/v1", "query_params": {"api-version": "1"}})
        );
        assert_eq!(
            option_value(&words(&["exec", "-p", "work"]), &["--profile", "-p"]).as_deref(),
            Some("work")
        );
        assert_eq!(
            option_value(&words(&["--profile=work"]), &["--profile", "-p"]).as_deref(),
            Some("work")
        );
    }

    #[test]
    fn a_profile_s_provider_comes_before_the_configuration_s() {
        let configuration = Configuration {
            settings: json!({"model_provider": "a", "profiles": {"p": {"model_provider": "b"}},
                "model_providers": {"a": {"base_url": "http://a"}, "b": {"base_url": "http://b"}}}),
            profile: Some("p".into()),
        };
        assert!(matches!(configuration.chosen().unwrap(), Chosen::Theirs { id, .. } if id == "b"));
        let openai = Configuration {
            settings: json!({"model_providers": {"openai": {"base_url": "http://x"}}}),
            profile: None,
        };
        assert!(matches!(openai.chosen().unwrap(), Chosen::OpenAi));
        let undefined = Configuration {
            settings: json!({"model_provider": "gone"}),
            profile: None,
        };
        assert!(undefined.chosen().is_err());
    }

    #[test]
    fn a_toml_document_reads_as_json() {
        let document: toml_edit::DocumentMut = "model_provider = \"mine\"\n[model_providers.mine]\nbase_url = \"http://h/v1\"\nhttp_headers = { \"X-A\" = \"b\" }\nrequest_max_retries = 2\n"
            .parse()
            .unwrap();
        assert_eq!(
            table_json(document.as_table()),
            json!({"model_provider": "mine", "model_providers": {"mine": {"base_url": "http://h/v1",
                "http_headers": {"X-A": "b"}, "request_max_retries": 2}}})
        );
    }
}
