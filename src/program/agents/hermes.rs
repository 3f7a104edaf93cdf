//! Hermes Agent: its store `~/.hermes/state.db` (SQLite, table `messages`), where it keeps
//! every session, and its session files, `~/.hermes/sessions/session_<id>.json`, written only
//! with `sessions.write_json_snapshots` on; `$HERMES_HOME` is its home itself. With snapshots
//! on, a session is in both, and its calls are counted in each.
//!
//! Its hook is a Python plugin of ours (`plugins/reasons/` in its home, loaded only when
//! `config.yaml` names it in `plugins.enabled`). Hermes asks the person only before the commands
//! it finds dangerous, in its own prompt; a plugin's `approve` would open a second prompt of its
//! own, which the person must never get. So the plugin's `pre_tool_call` asks `reasons hook
//! hermes` for each call's reason (in its arguments, else in the reasons log by the call's id)
//! and keeps it by the call's id, returning nothing; and it wraps Hermes's
//! `tools.approval.prompt_dangerous_approval` to add the reason to the description that prompt
//! shows, on one line (a newline breaks Hermes's box), finding the asking call's id in Hermes's
//! private `tools.approval._approval_tool_call_id`. Where that name is gone, the plugin shows
//! nothing rather than ask anything.
//!
//! `reasons run hermes` gives Hermes a home of the run's own (`$HERMES_HOME`): every entry of
//! the person's home linked into it (its sessions, `state.db`, `.env` and the rest are theirs
//! and written there), but for `config.yaml`, a copy of theirs with `model.base_url` pointed at
//! the gateway (theirs becoming its upstream, their key kept) and the plugin enabled, and
//! `plugins/`, theirs linked with ours beside them. Nothing of theirs is written by the run;
//! what Hermes itself makes at the top of its home during the run (a first run's `state.db` and
//! `sessions/`, its prompt history) is moved to the person's home when it ends, where Hermes
//! would have made it.
//!
//! `config.yaml` is read and changed by line, for the shapes Hermes itself writes (block
//! mappings, lists in block or flow style): anything else in the keys read or changed here is
//! an error naming the file, and the file is left as it was.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use reasons::record::Format;
use serde_json::{json, Value};

use super::{Agent, Ask, Base, FindBy, Home, Hook, HookCall, Installs, Placement, Run};
use crate::program::json_settings::replace_file;
use crate::program::wiring::{GivenBaseUrl, Pointing, Wiring};

pub const AGENT: Agent = Agent {
    title: "Hermes Agent",
    format: Format::Hermes,
    home: Home {
        variables: &["HERMES_HOME"],
        inside_variable: "",
        base: Base::Home,
        in_base: ".hermes",
    },
    logs: &["state.db", "sessions"],
    hook: Some(Hook {
        event: "pre_tool_call",
        user_settings: "config.yaml",
        one_file_of_a_folder: false,
        file_version: None,
        entry: |_| Value::Null,
        what_is_shown,
        after_install: Some("Hermes loads its plugins when it starts: restart it."),
        call,
        lookup: FindBy::CallId,
        message_beside: false,
        ask: Some(Ask {
            is_agent: |_| false,
            // The text goes only into the prompt Hermes itself decides to show (the plugin's
            // wrap of it): the hook never asks, it gives the text to show when Hermes does.
            would_ask: |_, _| true,
            dialog_lists_arguments: false,
            answer: |text| json!({ "why": text }),
        }),
        installs: Installs::Files {
            described: "~/.hermes/plugins/reasons/ ($HERMES_HOME/plugins/reasons/ when set), \
                        enabled in config.yaml's plugins.enabled",
            install,
            uninstall,
        },
    }),
    run: Some(Run {
        command: "hermes",
        pointed: "a home of the run's own (`HERMES_HOME`) linking yours, with a copy of your `config.yaml` whose `model.base_url` is the gateway's and which enables the plugin that puts each call's reason in Hermes's own dangerous-command prompt.",
        strips: false,
        confirms: false,
        given,
        wire,
    }),
};

/// The plugin's name, its folder in `plugins/` and its entry in `plugins.enabled`.
const PLUGIN: &str = "reasons";

fn what_is_shown(placement: Placement) -> &'static str {
    match placement {
        Placement::InPrompt => {
            "Hermes shows the model's reason inside its own dangerous-command prompt (\"· Why \
             (the model's claim): ...\"), where it asks you anyway; it asks nothing more."
        }
        Placement::After => {
            "Hermes shows no hook's text beside a call: with --after the plugin shows nothing \
             (`reasons watch` shows the reasons)."
        }
    }
}

/// The call of the event the plugin sends: `pre_tool_call`'s `tool_name`, `args` and
/// `tool_call_id`.
fn call(event: &Value) -> Option<HookCall<'_>> {
    Some(HookCall {
        tool: event.get("tool_name")?.as_str()?,
        arguments: event.get("args").cloned().unwrap_or(Value::Null),
        call_id: event
            .get("tool_call_id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty()),
    })
}

/// Its `config.yaml`, in its home.
fn config_file() -> Option<PathBuf> {
    Some(AGENT.home.folder()?.join("config.yaml"))
}

/// The API of Hermes's `model.api_mode` (a custom endpoint speaks Chat Completions unless it
/// says otherwise); `None` for one the gateway does not speak.
fn api_of(api_mode: Option<&str>) -> Option<&'static str> {
    match api_mode {
        None | Some("chat_completions" | "codex_responses") => Some("openai"),
        Some("anthropic_messages") => Some("anthropic"),
        Some(_) => None,
    }
}

fn given(_args: &[String]) -> anyhow::Result<Vec<GivenBaseUrl>> {
    let Some(file) = config_file() else {
        return Ok(Vec::new());
    };
    let Ok(text) = fs::read_to_string(&file) else {
        return Ok(Vec::new());
    };
    let Some(url) = child_scalar(&text, "model", "base_url")
        .with_context(|| format!("{}", file.display()))?
        .filter(|url| !url.is_empty())
    else {
        return Ok(Vec::new());
    };
    let api_mode = child_scalar(&text, "model", "api_mode")?;
    let Some(api) = api_of(api_mode.as_deref()) else {
        return Ok(Vec::new());
    };
    let from = format!("{} model.base_url", file.display());
    Ok(vec![GivenBaseUrl::new(api, url, from)])
}

fn wire(wiring: &mut Wiring, to: &Pointing, _args: &mut [String]) -> anyhow::Result<()> {
    let theirs = AGENT.home.folder();
    let home = match &theirs {
        Some(theirs) => wiring.stand_in_folder("hermes-home", theirs.clone()),
        None => wiring.private_folder("hermes-home"),
    }
    .context("cannot make the run's home for Hermes")?;
    // Everything of theirs is theirs during the run too: their sessions, `state.db`, keys.
    let entries = theirs
        .as_deref()
        .and_then(|theirs| fs::read_dir(theirs).ok())
        .into_iter()
        .flatten()
        .flatten();
    for entry in entries {
        let name = entry.file_name();
        if name != "config.yaml" && name != "plugins" {
            std::os::unix::fs::symlink(entry.path(), home.join(&name))
                .with_context(|| format!("cannot link {} for the run", entry.path().display()))?;
        }
    }
    let plugins = home.join("plugins");
    fs::create_dir(&plugins)?;
    if let Some(theirs) = theirs
        .as_deref()
        .and_then(|theirs| fs::read_dir(theirs.join("plugins")).ok())
    {
        for entry in theirs.flatten() {
            if entry.file_name() != PLUGIN {
                std::os::unix::fs::symlink(entry.path(), plugins.join(entry.file_name()))?;
            }
        }
    }
    if let Some(command) = &to.hook_command {
        write_plugin(&plugins.join(PLUGIN), command)?;
        wiring.hook = Ok(());
    }
    let file = theirs.map(|theirs| theirs.join("config.yaml"));
    let text = file
        .as_deref()
        .and_then(|file| fs::read_to_string(file).ok())
        .unwrap_or_default();
    let shown = file.as_deref().map_or_else(
        || "config.yaml".to_owned(),
        |file| file.display().to_string(),
    );
    let mut config = text.clone();
    if let Some(url) = child_scalar(&text, "model", "base_url")
        .with_context(|| shown.clone())?
        .filter(|url| !url.is_empty())
    {
        let api = api_of(child_scalar(&text, "model", "api_mode")?.as_deref());
        match api.and_then(|api| to.instead_of(api, &url)) {
            Some(through) => {
                config = set_child_scalar(&config, "model", "base_url", &through)
                    .with_context(|| shown.clone())?;
            }
            None => crate::program::messages::message!(
                "{shown}: Hermes's model.base_url does not go through the gateway (its API or upstream is another's)"
            ),
        }
    } else {
        crate::program::messages::message!(
            "{shown} names no model.base_url: Hermes starts without the gateway (point it at your endpoint with `hermes model`)"
        );
    }
    if to.hook_command.is_some() {
        config = with_enabled(&config, PLUGIN).with_context(|| shown.clone())?;
    }
    fs::write(home.join("config.yaml"), config)
        .context("cannot write the run's config.yaml for Hermes")?;
    wiring.made()?;
    wiring
        .env
        .push(("HERMES_HOME".into(), home.to_string_lossy().into_owned()));
    Ok(())
}

/// Writes the plugin into `folder`, the hook's command line in it.
fn write_plugin(folder: &Path, command: &str) -> anyhow::Result<()> {
    fs::create_dir_all(folder)
        .with_context(|| format!("{}: cannot create the plugin's folder", folder.display()))?;
    let code = PLUGIN_CODE.replace("HOOK_COMMAND", &json!(command).to_string());
    for (name, text) in [
        ("plugin.yaml", PLUGIN_MANIFEST),
        ("__init__.py", code.as_str()),
    ] {
        let path = folder.join(name);
        fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(())
}

/// `reasons hook install hermes`: the plugin in `plugins/reasons/` of its home, and its name in
/// `config.yaml`'s `plugins.enabled` (everything else there kept).
fn install(command: &str, out: &mut dyn Write) -> anyhow::Result<()> {
    let home = AGENT
        .home
        .folder()
        .context("HOME is not set: cannot tell where Hermes's home is")?;
    let folder = home.join("plugins").join(PLUGIN);
    let config = home.join("config.yaml");
    let text = read_config(&config)?;
    let enabled = with_enabled(&text, PLUGIN).with_context(|| config.display().to_string())?;
    let before = fs::read_to_string(folder.join("__init__.py")).ok();
    write_plugin(&folder, command)?;
    let after = fs::read_to_string(folder.join("__init__.py")).ok();
    if enabled != text {
        replace_file(&config, &enabled)?;
    }
    let verb = match before {
        None => "Added",
        Some(_) if before == after && enabled == text => {
            writeln!(
                out,
                "The Hermes Agent plugin is already in {}, enabled in {}: it runs {command}",
                folder.display(),
                config.display()
            )?;
            return Ok(());
        }
        Some(_) => "Replaced",
    };
    writeln!(
        out,
        "{verb} the Hermes Agent plugin in {}, enabled in {}: it runs {command}",
        folder.display(),
        config.display()
    )?;
    writeln!(out, "{}", what_is_shown(placement_of(command)))?;
    writeln!(out, "Undo with: reasons hook uninstall hermes")?;
    writeln!(out, "Hermes loads its plugins when it starts: restart it.")?;
    Ok(())
}

/// Where the installed hook shows the reason, as its command line says.
fn placement_of(command: &str) -> Placement {
    if command.split(' ').any(|word| word == "--after") {
        Placement::After
    } else {
        Placement::InPrompt
    }
}

/// `reasons hook uninstall hermes`: the plugin's folder removed and its name taken out of
/// `plugins.enabled`.
fn uninstall(out: &mut dyn Write) -> anyhow::Result<()> {
    let home = AGENT
        .home
        .folder()
        .context("HOME is not set: cannot tell where Hermes's home is")?;
    let folder = home.join("plugins").join(PLUGIN);
    let config = home.join("config.yaml");
    let text = read_config(&config)?;
    let without = without_enabled(&text, PLUGIN).with_context(|| config.display().to_string())?;
    let had_folder = folder.join("__init__.py").exists();
    if !had_folder && without == text {
        writeln!(
            out,
            "No Hermes Agent plugin to remove in {}",
            home.display()
        )?;
        return Ok(());
    }
    if without != text {
        replace_file(&config, &without)?;
    }
    if had_folder {
        for name in ["plugin.yaml", "__init__.py"] {
            let _ = fs::remove_file(folder.join(name));
        }
        let _ = fs::remove_dir_all(folder.join("__pycache__"));
        // A folder the person put more in stays, with what they put there.
        let _ = fs::remove_dir(&folder);
    }
    writeln!(
        out,
        "Removed the Hermes Agent plugin from {}, and its name from {}",
        folder.display(),
        config.display()
    )?;
    Ok(())
}

/// `config.yaml`'s text; empty when it does not exist.
fn read_config(path: &Path) -> anyhow::Result<String> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(error) => Err(error).with_context(|| format!("{}: cannot read", path.display())),
    }
}

// ---- config.yaml, by line -----------------------------------------------------------------------

/// The lines of a top-level key's block: the key's own line and the lines after it that are
/// indented, blank, comments, or items of a list written without indent.
fn block(lines: &[&str], key: &str) -> Option<(usize, usize)> {
    let start = lines
        .iter()
        .position(|line| top_level_key(line) == Some(key))?;
    let mut end = start + 1;
    while end < lines.len() {
        let line = lines[end];
        let inside = line.trim().is_empty()
            || line.starts_with([' ', '\t', '#'])
            || line.starts_with("- ")
            || line == "-";
        if !inside {
            break;
        }
        end += 1;
    }
    // Blank lines and comments at its end belong to what follows.
    while end > start + 1 && (lines[end - 1].trim().is_empty() || lines[end - 1].starts_with('#')) {
        end -= 1;
    }
    Some((start, end))
}

/// The key of a top-level `key:` line.
fn top_level_key(line: &str) -> Option<&str> {
    if line.starts_with([' ', '\t', '#', '-']) {
        return None;
    }
    let (key, _) = line.split_once(':')?;
    Some(unquoted(key.trim()))
}

/// The value after a `key:` on a line, without a trailing comment.
fn value_of(line: &str) -> &str {
    let value = line.split_once(':').map_or("", |(_, value)| value);
    let value = match value.find(" #") {
        Some(at) if !value.trim_start().starts_with(['"', '\'']) => &value[..at],
        _ => value,
    };
    value.trim()
}

fn unquoted(text: &str) -> &str {
    let text = text.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = text
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner;
        }
    }
    text
}

/// The indent of a line, in bytes.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// The line of a direct child `child:` of a top-level block, and the block's children's indent.
fn child_line(lines: &[&str], (start, end): (usize, usize), child: &str) -> Option<usize> {
    let children = lines[start + 1..end]
        .iter()
        .find(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .map(|line| indent(line))?;
    (start + 1..end).find(|&at| {
        let line = lines[at];
        indent(line) == children
            && line
                .trim_start()
                .split_once(':')
                .is_some_and(|(key, _)| unquoted(key) == child)
    })
}

/// `top.child` as a plain scalar: `None` when either is missing; an error when `top` is written
/// inline (`model: {…}`), which is read here by line.
fn child_scalar(text: &str, top: &str, child: &str) -> anyhow::Result<Option<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(found) = block(&lines, top) else {
        return Ok(None);
    };
    let inline = value_of(lines[found.0]);
    if !inline.is_empty() {
        // A bare `model: NAME` is Hermes's shorthand for the model alone.
        if inline.starts_with(['{', '[']) {
            bail!("`{top}` is written inline; write it as a block to use it with reasons");
        }
        return Ok(None);
    }
    Ok(child_line(&lines, found, child).map(|at| unquoted(value_of(lines[at])).to_owned()))
}

/// The text with `top.child` set to `value` (a string), on the line that held it.
fn set_child_scalar(text: &str, top: &str, child: &str, value: &str) -> anyhow::Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = block(&lines, top)
        .and_then(|found| child_line(&lines, found, child))
        .with_context(|| format!("no {top}.{child} to set"))?;
    let line = lines[at];
    let replaced = format!("{}{child}: {}", &line[..indent(line)], json!(value));
    Ok(with_line(text, &lines, at, Some(replaced), None))
}

/// The text with line `at` replaced by `replaced` (or kept, when `None`) and `inserted` lines
/// after it, the rest as it was (its line endings, its last newline).
fn with_line(
    text: &str,
    lines: &[&str],
    at: usize,
    replaced: Option<String>,
    inserted: Option<Vec<String>>,
) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for (number, line) in lines.iter().enumerate() {
        if number == at {
            out.push_str(replaced.as_deref().unwrap_or(line));
            out.push('\n');
            for extra in inserted.iter().flatten() {
                out.push_str(extra);
                out.push('\n');
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !text.ends_with('\n') && !out.is_empty() && inserted.is_none() {
        out.pop();
    }
    out
}

/// The items of a flow list `[a, b]`.
fn flow_items(value: &str) -> Option<Vec<String>> {
    let inner = value.strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    Some(
        inner
            .split(',')
            .map(|item| unquoted(item).to_owned())
            .collect(),
    )
}

/// The text with `name` among `plugins.enabled`, everything else kept.
fn with_enabled(text: &str, name: &str) -> anyhow::Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(found) = block(&lines, "plugins") else {
        let mut out = text.to_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("plugins:\n  enabled:\n  - {name}\n"));
        return Ok(out);
    };
    let inline = value_of(lines[found.0]);
    if !inline.is_empty() {
        if inline == "{}" {
            let replaced = format!("plugins:\n  enabled:\n  - {name}");
            return Ok(with_line(text, &lines, found.0, Some(replaced), None));
        }
        bail!("`plugins` is written inline; write it as a block to enable the plugin");
    }
    let Some(at) = child_line(&lines, found, "enabled") else {
        let children = lines[found.0 + 1..found.1]
            .iter()
            .find(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
            .map_or(2, |line| indent(line));
        let pad = " ".repeat(children);
        let added = vec![format!("{pad}enabled:"), format!("{pad}- {name}")];
        return Ok(with_line(text, &lines, found.0, None, Some(added)));
    };
    let value = value_of(lines[at]);
    let pad = &lines[at][..indent(lines[at])];
    if !value.is_empty() {
        let Some(mut items) = flow_items(value) else {
            bail!("`plugins.enabled` is neither a list nor empty");
        };
        if items.iter().any(|item| item == name) {
            return Ok(text.to_owned());
        }
        items.push(name.to_owned());
        let replaced = format!("{pad}enabled: [{}]", items.join(", "));
        return Ok(with_line(text, &lines, at, Some(replaced), None));
    }
    let items = list_items(&lines, at, found.1);
    if items
        .iter()
        .any(|&item| unquoted(lines[item].trim_start()[1..].trim()) == name)
    {
        return Ok(text.to_owned());
    }
    let (after, item_pad) = match items.last() {
        Some(&last) => (last, lines[last][..indent(lines[last])].to_owned()),
        None => (at, pad.to_owned()),
    };
    let added = vec![format!("{item_pad}- {name}")];
    Ok(with_line(text, &lines, after, None, Some(added)))
}

/// The lines of the block list under the `key:` line `at`: `- item` lines indented at least as
/// far as the key (a list under a key may be written without indent).
fn list_items(lines: &[&str], at: usize, end: usize) -> Vec<usize> {
    let key_indent = indent(lines[at]);
    let mut items = Vec::new();
    for (number, line) in lines.iter().enumerate().take(end).skip(at + 1) {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if indent(line) >= key_indent && line.trim_start().starts_with('-') {
            items.push(number);
        } else {
            break;
        }
    }
    items
}

/// The text without `name` among `plugins.enabled`.
fn without_enabled(text: &str, name: &str) -> anyhow::Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(found) = block(&lines, "plugins") else {
        return Ok(text.to_owned());
    };
    let Some(at) = child_line(&lines, found, "enabled") else {
        return Ok(text.to_owned());
    };
    let value = value_of(lines[at]);
    if !value.is_empty() {
        let Some(items) = flow_items(value) else {
            return Ok(text.to_owned());
        };
        if !items.iter().any(|item| item == name) {
            return Ok(text.to_owned());
        }
        let kept: Vec<String> = items.into_iter().filter(|item| item != name).collect();
        let pad = &lines[at][..indent(lines[at])];
        let replaced = format!("{pad}enabled: [{}]", kept.join(", "));
        return Ok(with_line(text, &lines, at, Some(replaced), None));
    }
    let items = list_items(&lines, at, found.1);
    let ours: Vec<usize> = items
        .iter()
        .copied()
        .filter(|&item| unquoted(lines[item].trim_start()[1..].trim()) == name)
        .collect();
    if ours.is_empty() {
        return Ok(text.to_owned());
    }
    // The last item gone, the list is an empty one: Hermes then loads no plugin, as before.
    let emptied = items.len() == ours.len();
    let mut out = String::with_capacity(text.len());
    for (number, line) in lines.iter().enumerate() {
        if ours.contains(&number) {
            continue;
        }
        if number == at && emptied {
            out.push_str(&format!("{}enabled: []", &line[..indent(line)]));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if !text.ends_with('\n') {
        out.pop();
    }
    Ok(out)
}

// ---- the plugin ---------------------------------------------------------------------------------

const PLUGIN_MANIFEST: &str = "name: reasons
version: \"1\"
description: \"The model's reason for a call, inside Hermes's own dangerous-command prompt (reasons hook hermes).\"
hooks:
  - pre_tool_call
";

/// The plugin; `HOOK_COMMAND` becomes the hook's command line, a Python string.
const PLUGIN_CODE: &str = r#""""The model's reason for a call inside Hermes's own dangerous-command prompt.

Written by `reasons` (`reasons run hermes`, `reasons hook install hermes`). It never asks and
never blocks: `pre_tool_call` keeps each call's reason, which `reasons hook hermes` finds, by the
call's id and returns nothing; the prompt Hermes asks anyway shows it in its description, on one
line. Where Hermes's private names it relies on are gone, it shows nothing.
"""

import json
import subprocess

HOOK = HOOK_COMMAND

# Each call's reason, by its id, until Hermes asks about the call.
_why = {}


def _pre_tool_call(tool_name=None, args=None, tool_call_id="", **_):
    if not tool_call_id or not isinstance(tool_name, str):
        return None
    event = {"tool_name": tool_name, "args": args if isinstance(args, dict) else {},
             "tool_call_id": tool_call_id}
    try:
        done = subprocess.run(["/bin/sh", "-c", HOOK], input=json.dumps(event),
                              capture_output=True, text=True, timeout=5)
        why = json.loads(done.stdout or "{}").get("why")
    except Exception:
        return None
    if isinstance(why, str) and why.strip():
        # One line: a newline breaks Hermes's box.
        _why[tool_call_id] = " ".join(why.split())
    return None


def _show_in_prompt():
    try:
        import tools.approval as approval
        asking = approval._approval_tool_call_id
        asked = approval.prompt_dangerous_approval
        asking.get
    except Exception:
        return
    if getattr(asked, "_reasons", False):
        return

    def prompt_dangerous_approval(command, description, *args, **kwargs):
        try:
            why = _why.pop(asking.get(), None)
            if why:
                description = f"{description} · {why}"
        except Exception:
            pass
        return asked(command, description, *args, **kwargs)

    prompt_dangerous_approval._reasons = True
    approval.prompt_dangerous_approval = prompt_dangerous_approval


def register(ctx):
    ctx.register_hook("pre_tool_call", _pre_tool_call)
    _show_in_prompt()
"#;

#[cfg(test)]
mod tests {
    use super::*;

    const HERMES_WRITES: &str = "model:
  default: gpt-4.1
  provider: custom
  base_url: http://127.0.0.1:8080/v1  # the lab's server
  api_key: sk-x
  api_mode: chat_completions
agent:
  max_turns: 90
plugins:
  disabled: []
  enabled:
  - observability/langfuse
display:
  skin: default
";

    #[test]
    fn the_model_s_endpoint_is_read_as_hermes_writes_it() {
        assert_eq!(
            child_scalar(HERMES_WRITES, "model", "base_url")
                .unwrap()
                .as_deref(),
            Some("http://127.0.0.1:8080/v1")
        );
        assert_eq!(
            child_scalar(HERMES_WRITES, "model", "api_mode")
                .unwrap()
                .as_deref(),
            Some("chat_completions")
        );
        assert_eq!(
            child_scalar(HERMES_WRITES, "agent", "base_url").unwrap(),
            None
        );
        assert_eq!(
            child_scalar("model: gpt-4.1\n", "model", "base_url").unwrap(),
            None
        );
        assert!(child_scalar("model: {base_url: x}\n", "model", "base_url").is_err());
        let quoted = "model:\n    base_url: 'http://h/v1'\n    default: m\n";
        assert_eq!(
            child_scalar(quoted, "model", "base_url")
                .unwrap()
                .as_deref(),
            Some("http://h/v1")
        );
    }

    #[test]
    fn the_run_s_copy_changes_the_base_url_and_enables_the_plugin_only() {
        let pointed =
            set_child_scalar(HERMES_WRITES, "model", "base_url", "http://127.0.0.1:9/v1").unwrap();
        let enabled = with_enabled(&pointed, PLUGIN).unwrap();
        assert_eq!(
            enabled,
            HERMES_WRITES
                .replace(
                    "base_url: http://127.0.0.1:8080/v1  # the lab's server",
                    "base_url: \"http://127.0.0.1:9/v1\""
                )
                .replace(
                    "  - observability/langfuse\n",
                    "  - observability/langfuse\n  - reasons\n"
                )
        );
        // Once enabled, enabling again changes nothing; taking it out gives the text back.
        assert_eq!(with_enabled(&enabled, PLUGIN).unwrap(), enabled);
        assert_eq!(without_enabled(&enabled, PLUGIN).unwrap(), pointed);
    }

    #[test]
    fn plugins_enabled_is_merged_in_every_shape_hermes_writes() {
        assert_eq!(
            with_enabled("", PLUGIN).unwrap(),
            "plugins:\n  enabled:\n  - reasons\n"
        );
        assert_eq!(
            with_enabled("model:\n  default: m", PLUGIN).unwrap(),
            "model:\n  default: m\nplugins:\n  enabled:\n  - reasons\n"
        );
        assert_eq!(
            with_enabled("plugins:\n  enabled: [a, 'b']\nx: 1\n", PLUGIN).unwrap(),
            "plugins:\n  enabled: [a, b, reasons]\nx: 1\n"
        );
        assert_eq!(
            with_enabled("plugins:\n  enabled: []\n", PLUGIN).unwrap(),
            "plugins:\n  enabled: [reasons]\n"
        );
        assert_eq!(
            with_enabled("plugins:\n    disabled: []\nx: 1\n", PLUGIN).unwrap(),
            "plugins:\n    enabled:\n    - reasons\n    disabled: []\nx: 1\n"
        );
        assert_eq!(
            with_enabled("plugins:\n  enabled:\n    - a\n\nx: 1\n", PLUGIN).unwrap(),
            "plugins:\n  enabled:\n    - a\n    - reasons\n\nx: 1\n"
        );
        assert_eq!(
            with_enabled("plugins: {}\n", PLUGIN).unwrap(),
            "plugins:\n  enabled:\n  - reasons\n"
        );
        assert!(with_enabled("plugins: {enabled: [a]}\n", PLUGIN).is_err());
        assert_eq!(
            without_enabled("plugins:\n  enabled:\n  - reasons\nx: 1\n", PLUGIN).unwrap(),
            "plugins:\n  enabled: []\nx: 1\n"
        );
    }

    #[test]
    fn the_hook_reads_the_plugin_s_event() {
        let event = json!({"tool_name": "terminal", "tool_call_id": "call_1",
            "args": {"command": "rm -rf x"}});
        let call = call(&event).unwrap();
        assert_eq!(
            (call.tool, call.call_id, call.arguments["command"].as_str()),
            ("terminal", Some("call_1"), Some("rm -rf x"))
        );
        assert_eq!(
            super::call(&json!({"tool_name": "terminal", "tool_call_id": ""}))
                .unwrap()
                .call_id,
            None
        );
    }
}
