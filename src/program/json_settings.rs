//! The agents' JSON settings files, read the one way every part of the program reads them: a
//! file that is not there is no settings, one that is not a JSON object cannot be relied on, and
//! a folder of them (Claude Code's managed drop-ins, Copilot CLI's hooks) is its `*.json` files in
//! name order. A settings file the program changes is replaced whole ([`replace_file`]).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value;

/// Replaces the file at `path` with `text` in one rename, so that an agent starting meanwhile
/// reads either the old file or the new one; its folder is created when missing, its mode kept,
/// and a link (into a dotfiles repository, say) stays one: the file it points to is replaced.
pub fn replace_file(path: &Path, text: &str) -> anyhow::Result<()> {
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let folder = match target
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        Some(folder) => folder.to_owned(),
        None => PathBuf::from("."),
    };
    fs::create_dir_all(&folder)
        .with_context(|| format!("{}: cannot create its folder", path.display()))?;
    let existing = fs::metadata(&target).ok();
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let temporary = folder.join(format!(".{name}.reasons-{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(text.as_bytes())?;
        if let Some(meta) = &existing {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        fs::rename(&temporary, &target)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written.with_context(|| {
        format!(
            "{}: cannot write; the file is left as it was",
            path.display()
        )
    })
}

/// Reads a JSON settings file: `Ok(None)` when it does not exist, an error when it exists but
/// cannot be read as a JSON object (then the hook cannot tell what the agent decides).
pub fn read_json(path: &Path) -> Result<Option<Value>, ()> {
    match std::fs::read(path) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(None),
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) if value.is_object() => Ok(Some(value)),
            _ => Err(()),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) => Err(()),
    }
}

/// Reads a JSON settings file that may hold `//` and `/* */` comments (Copilot CLI writes its
/// `config.json` with a comment on top), as [`read_json`] does.
pub fn read_json_with_comments(path: &Path) -> Result<Option<Value>, ()> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(None),
        Ok(text) => match serde_json::from_str::<Value>(&without_comments(&text)) {
            Ok(value) if value.is_object() => Ok(Some(value)),
            _ => Err(()),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) => Err(()),
    }
}

/// The `*.json` files of a folder, in name order.
pub fn json_files(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

/// JSON text with its comments blanked out, strings left as they are.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_left_out_of_json_but_not_out_of_its_strings() {
        let text =
            "// managed automatically\n{\"a\": \"x // y /* z */\", /* b */ \"c\": [1, 2] // end\n}";
        let value: Value = serde_json::from_str(&without_comments(text)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": "x // y /* z */", "c": [1, 2]})
        );
        let escaped = r#"{"a": "q\"//"}"#;
        assert_eq!(without_comments(escaped), escaped);
    }
}
