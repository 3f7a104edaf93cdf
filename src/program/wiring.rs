//! What `reasons run` changes for an agent, and what each agent's file needs to say how: the base
//! URLs the agent was already given, the gateway it is pointed at instead, and the arguments,
//! environment and files of this run only.
//!
//! Nothing here writes a settings file of the person's: each agent is pointed at the gateway by
//! an environment variable or a command-line flag of this run only, and reads its settings files
//! only to find a base URL already set (which becomes the gateway's upstream) or a hook already
//! installed (which is then not wired twice).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::Value;

/// What the run changes for the agent: its arguments before the person's, its environment, and
/// the folder of files made for this run only (removed at its end).
pub struct Wiring {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    folder: Option<PathBuf>,
    /// A folder of the run's own that stands in for one of the person's.
    stand_in: Option<StandIn>,
    /// Whether the hook is wired for this run, and why not when it is not.
    pub hook: Result<(), String>,
}

impl Wiring {
    /// Nothing changed yet; `no_hook` says why there is no hook until one is wired.
    pub fn new(no_hook: String) -> Wiring {
        Wiring {
            args: Vec::new(),
            env: Vec::new(),
            folder: None,
            stand_in: None,
            hook: Err(no_hook),
        }
    }

    /// The folder of this run's files, made on first use where only its owner can enter: Gemini
    /// CLI skips a settings file whose folder others may write to, such as `/tmp` itself.
    fn run_folder(&mut self) -> io::Result<PathBuf> {
        if let Some(folder) = &self.folder {
            return Ok(folder.clone());
        }
        // Numbered within the process too: the unit tests wire agents side by side.
        static WIRINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let number = WIRINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let folder =
            std::env::temp_dir().join(format!("reasons-run-{}-{number}", std::process::id()));
        // One left by an earlier process of this pid is no longer anyone's.
        let _ = fs::remove_dir_all(&folder);
        private_dir_builder().create(&folder)?;
        self.folder = Some(folder.clone());
        Ok(folder)
    }

    /// Makes a folder for this run only, `name` in the run's folder.
    pub fn private_folder(&mut self, name: &str) -> io::Result<PathBuf> {
        let path = self.run_folder()?.join(name);
        private_dir_builder().create(&path)?;
        Ok(path)
    }

    /// Makes `name`, a folder for this run only, stand in for the person's folder `theirs`:
    /// `theirs` entries are to be linked into it, and what the agent makes there that is no link
    /// and was not there before the run (a first run's store, its history) is moved to `theirs`
    /// when the run ends, as the agent would have written it there. Call [`Wiring::made`] once
    /// the run's own files are in it.
    pub fn stand_in_folder(&mut self, name: &str, theirs: PathBuf) -> io::Result<PathBuf> {
        let folder = self.private_folder(name)?;
        self.stand_in = Some(StandIn {
            folder: folder.clone(),
            theirs,
            made: Vec::new(),
        });
        Ok(folder)
    }

    /// What the stand-in folder holds now is the run's: not moved to the person's at the end.
    pub fn made(&mut self) -> io::Result<()> {
        if let Some(stand_in) = &mut self.stand_in {
            stand_in.made = fs::read_dir(&stand_in.folder)?
                .map(|entry| entry.map(|entry| entry.file_name()))
                .collect::<io::Result<_>>()?;
        }
        Ok(())
    }

    /// Moves what the agent made in the stand-in folder to the person's: every entry that is no
    /// link and that the run did not make. A file of theirs of the same name (the agent replaced
    /// a linked file whole) is replaced; a folder of theirs is left, and said.
    fn hand_back(&self) {
        let Some(StandIn {
            folder,
            theirs,
            made,
        }) = &self.stand_in
        else {
            return;
        };
        let Ok(entries) = fs::read_dir(folder) else {
            return;
        };
        for entry in entries.flatten() {
            let is_link = entry.file_type().is_ok_and(|kind| kind.is_symlink());
            if is_link || made.contains(&entry.file_name()) {
                continue;
            }
            let to = theirs.join(entry.file_name());
            if to.is_dir() {
                crate::program::messages::message!(
                    "{}: made during the run, and {} is there now: left as it was",
                    entry.path().display(),
                    to.display()
                );
                continue;
            }
            let moved = fs::create_dir_all(theirs).and_then(|()| move_entry(&entry.path(), &to));
            if let Err(error) = moved {
                crate::program::messages::message!(
                    "cannot move {} to {}: {error}",
                    entry.path().display(),
                    to.display()
                );
            }
        }
    }

    /// Writes a file for this run only, `name` in the run's folder.
    pub fn private_file(&mut self, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        use std::io::Write;
        let path = self.run_folder()?.join(name);
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&path)?;
        file.write_all(bytes)?;
        Ok(path)
    }
}

/// Folders only their owner can enter.
fn private_dir_builder() -> fs::DirBuilder {
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// A folder of the run's own standing in for the person's `theirs`; `made` what the run put in it.
struct StandIn {
    folder: PathBuf,
    theirs: PathBuf,
    made: Vec<std::ffi::OsString>,
}

/// Moves `from` to `to`: renamed where both are on one file system, else copied (the run's
/// folder is removed after).
fn move_entry(from: &Path, to: &Path) -> io::Result<()> {
    if fs::rename(from, to).is_ok() {
        return Ok(());
    }
    let kind = fs::symlink_metadata(from)?.file_type();
    if kind.is_dir() {
        fs::create_dir(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            move_entry(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if kind.is_symlink() {
        std::os::unix::fs::symlink(fs::read_link(from)?, to)
    } else {
        fs::copy(from, to).map(|_| ())
    }
}

impl Drop for Wiring {
    fn drop(&mut self) {
        self.hand_back();
        if let Some(folder) = &self.folder {
            let _ = fs::remove_dir_all(folder);
        }
    }
}

/// A base URL split where the gateway takes over: the origin goes upstream, the path stays the
/// agent's (the gateway forwards to the upstream + the request's path).
#[derive(Debug, Clone, PartialEq)]
pub struct BaseUrl {
    pub origin: String,
    pub path: String,
}

impl BaseUrl {
    pub fn parse(url: &str) -> Option<BaseUrl> {
        let url = url.trim();
        let (scheme, rest) = url.split_once("://")?;
        if !matches!(scheme, "http" | "https") {
            return None;
        }
        let (authority, path) = match rest.find('/') {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if authority.is_empty() || path.contains(['?', '#']) {
            return None;
        }
        Some(BaseUrl {
            origin: format!("{scheme}://{authority}"),
            path: path.trim_end_matches('/').to_owned(),
        })
    }
}

/// A base URL found where the agent reads one: its API, the URL as written, and where it was
/// found (for a message).
pub struct GivenBaseUrl {
    pub provider: &'static str,
    pub url: String,
    pub from: String,
}

impl GivenBaseUrl {
    pub fn new(
        provider: &'static str,
        url: impl Into<String>,
        from: impl Into<String>,
    ) -> GivenBaseUrl {
        GivenBaseUrl {
            provider,
            url: url.into(),
            from: from.into(),
        }
    }
}

/// A base URL the agent was already given, for one provider's API.
pub struct Given {
    pub provider: &'static str,
    pub url: BaseUrl,
}

/// The base URLs found, each parsed; the first found for an API is its upstream.
pub fn given(found: Vec<GivenBaseUrl>) -> anyhow::Result<Vec<Given>> {
    let mut given: Vec<Given> = Vec::new();
    for GivenBaseUrl {
        provider,
        url,
        from,
    } in found
    {
        let Some(url) = BaseUrl::parse(&url) else {
            bail!("{from}: {url} is not an http:// or https:// base URL");
        };
        if given.iter().all(|earlier| earlier.provider != provider) {
            given.push(Given { provider, url });
        }
    }
    Ok(given)
}

/// Where the agent is pointed: the run's gateway, the base URLs it had, and the hook's command
/// line for this run.
pub struct Pointing<'a> {
    pub gateway: &'a str,
    pub given: &'a [Given],
    /// The hook as `hook install` writes it, in the prompt where the agent asks (for an agent
    /// that has a hook).
    pub hook_command: Option<String>,
    /// Whether the person asked to approve each call, its reason in the question (`reasons run
    /// --confirm`, for an agent that takes it).
    pub confirm: bool,
}

impl Pointing<'_> {
    /// The gateway's URL with the path of the base URL the agent had for `provider`, else
    /// `usual`, its API's usual one.
    pub fn through(&self, provider: &str, usual: &str) -> String {
        let path = self
            .given
            .iter()
            .find(|given| given.provider == provider)
            .map_or(usual, |given| given.url.path.as_str());
        format!("{}{path}", self.gateway)
    }

    /// The gateway's URL in place of `url`'s origin, when `url` is what goes upstream for
    /// `provider`: two places for one API cannot share a gateway, the later keeps its own.
    pub fn instead_of(&self, provider: &str, url: &str) -> Option<String> {
        let url = BaseUrl::parse(url)?;
        let upstream = self.given.iter().find(|given| given.provider == provider)?;
        (upstream.url.origin == url.origin).then(|| format!("{}{}", self.gateway, url.path))
    }
}

/// The value of an environment variable that is set and not empty.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// The person's home folder.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

/// The value of `--flag VALUE` or `--flag=VALUE` among the agent's arguments.
pub fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let at = args
        .iter()
        .position(|arg| arg == flag || arg.starts_with(&format!("{flag}=")))?;
    match args[at].split_once('=') {
        Some((_, value)) => Some(value.to_owned()),
        None => args.get(at + 1).cloned(),
    }
}

/// Sets the value of `--flag VALUE` or `--flag=VALUE` among the agent's arguments.
pub fn set_flag_value(args: &mut [String], flag: &str, value: &str) -> bool {
    let Some(at) = args
        .iter()
        .position(|arg| arg == flag || arg.starts_with(&format!("{flag}=")))
    else {
        return false;
    };
    if args[at].contains('=') {
        args[at] = format!("{flag}={value}");
        true
    } else if at + 1 < args.len() {
        args[at + 1] = value.to_owned();
        true
    } else {
        false
    }
}

/// Adds `over` into `base`, object by object, `over` winning where both hold a value.
pub fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                merge(base.entry(key).or_insert(Value::Null), value);
            }
        }
        (base, over) => *base = over,
    }
}

/// A TOML basic string.
pub fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// A JSON value as a TOML inline value (tables inline, keys quoted where TOML needs it): how a
/// setting goes into a `-c key=value` flag.
pub fn toml_inline(value: &Value) -> String {
    match value {
        Value::Object(table) => {
            let pairs: Vec<String> = table
                .iter()
                .map(|(key, value)| format!("{} = {}", toml_key(key), toml_inline(value)))
                .collect();
            format!("{{ {} }}", pairs.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(toml_inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::String(text) => toml_string(text),
        Value::Null => "\"\"".to_owned(),
        other => other.to_string(),
    }
}

/// A TOML key: bare when it can be.
pub fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
    if bare {
        key.to_owned()
    } else {
        toml_string(key)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn what_the_agent_makes_in_a_stand_in_folder_is_the_person_s_after_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("home");
        fs::create_dir(&theirs).unwrap();
        fs::write(theirs.join("config.yaml"), "theirs").unwrap();
        fs::write(theirs.join("history"), "old").unwrap();
        let mut wiring = Wiring::new(String::new());
        let folder = wiring.stand_in_folder("home", theirs.clone()).unwrap();
        std::os::unix::fs::symlink(theirs.join("history"), folder.join("history")).unwrap();
        fs::write(folder.join("config.yaml"), "the run's").unwrap();
        wiring.made().unwrap();
        // The agent writes through a link, makes a store and a folder of sessions.
        fs::write(folder.join("history"), "old and new").unwrap();
        fs::write(folder.join("state.db"), "store").unwrap();
        fs::create_dir(folder.join("sessions")).unwrap();
        fs::write(folder.join("sessions/one.json"), "{}").unwrap();
        drop(wiring);
        assert!(!folder.exists());
        let read = |name: &str| fs::read_to_string(theirs.join(name)).unwrap();
        assert_eq!(read("config.yaml"), "theirs");
        assert_eq!(read("history"), "old and new");
        assert_eq!(read("state.db"), "store");
        assert_eq!(read("sessions/one.json"), "{}");
    }

    #[test]
    fn a_base_url_keeps_its_path_for_the_agent_and_its_origin_goes_upstream() {
        let url = BaseUrl::parse("https://proxy.example:8443/anthropic/").unwrap();
        assert_eq!(url.origin, "https://proxy.example:8443");
        assert_eq!(url.path, "/anthropic");
        assert_eq!(BaseUrl::parse("http://127.0.0.1:9/v1").unwrap().path, "/v1");
        assert_eq!(BaseUrl::parse("http://h").unwrap().path, "");
        assert!(BaseUrl::parse("ftp://h/v1").is_none());
        assert!(BaseUrl::parse("http:///v1").is_none());
        assert!(BaseUrl::parse("not a url").is_none());
    }

    #[test]
    fn a_flag_is_found_and_set_in_both_spellings() {
        let mut args: Vec<String> = ["-m", "x", "--openai-base-url", "http://a/v1", "go"]
            .map(String::from)
            .into();
        assert_eq!(
            flag_value(&args, "--openai-base-url").unwrap(),
            "http://a/v1"
        );
        assert!(set_flag_value(
            &mut args,
            "--openai-base-url",
            "http://g/v1"
        ));
        assert_eq!(args[3], "http://g/v1");
        let mut args = vec!["--openai-base-url=http://a".to_owned()];
        assert_eq!(flag_value(&args, "--openai-base-url").unwrap(), "http://a");
        assert!(set_flag_value(&mut args, "--openai-base-url", "http://g"));
        assert_eq!(args[0], "--openai-base-url=http://g");
        assert!(!set_flag_value(
            &mut ["--openai-base-url".to_owned()],
            "--openai-base-url",
            "x"
        ));
    }

    #[test]
    fn json_becomes_inline_toml() {
        let value = json!([{"hooks": [{"type": "command", "command": "/r \"x\" hook codex"}]}]);
        assert_eq!(
            toml_inline(&value),
            r#"[{ hooks = [{ type = "command", command = "/r \"x\" hook codex" }] }]"#
        );
        assert_eq!(
            toml_inline(&json!({"x-a": 1, "a b": true})),
            r#"{ x-a = 1, "a b" = true }"#
        );
    }
}
