//! A temporary `HOME` for one agent run, with every `XDG_*` folder and the working folder
//! beside it: what a real agent reads and writes stays in the test's own directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{environment, quoted};

/// `HOME`, every `XDG_*` folder and the working folder of one run, all in one temporary
/// directory: nothing of this machine's own setup reaches the agent, and its logs are found
/// where it wrote them.
pub struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for folder in [
            "home", "work", "data", "config", "state", "cache", "runtime",
        ] {
            std::fs::create_dir(dir.path().join(folder)).unwrap();
        }
        // XDG_RUNTIME_DIR must be private to its user.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.path().join("runtime"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        Sandbox { dir }
    }

    /// One of its folders: `home`, `work`, `data`, `config`, `state`, `cache` or `runtime`.
    pub fn path(&self, folder: &str) -> PathBuf {
        self.dir.path().join(folder)
    }

    /// The environment of a run: the cleared [`environment`] every program a test starts has,
    /// with the sandbox's HOME, its `XDG_*` folders and a shell.
    pub fn apply(&self, command: &mut Command) {
        command.env_clear().envs(self.env());
    }

    /// That environment, as names and values (for a run started by a shell, as in tmux).
    pub fn env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let mut env = environment::base(&self.path("home"));
        env.extend([
            ("XDG_DATA_HOME", self.path("data").into()),
            ("XDG_CONFIG_HOME", self.path("config").into()),
            ("XDG_STATE_HOME", self.path("state").into()),
            ("XDG_CACHE_HOME", self.path("cache").into()),
            ("XDG_RUNTIME_DIR", self.path("runtime").into()),
            ("SHELL", "/bin/bash".into()),
        ]);
        env
    }

    /// A shell script that runs `program` with `args` in the working folder with this sandbox's
    /// environment, `env` and a terminal's `TERM` only, then says its exit status (`exit status
    /// N`): what tmux runs, whose own environment is not the agent's.
    pub fn script(&self, env: &[(&str, String)], program: &Path, args: &[&str]) -> PathBuf {
        let mut line = format!("cd {} && env -i", quoted(self.path("work")));
        let env = self
            .env()
            .into_iter()
            .map(|(name, value)| (name, value.to_string_lossy().into_owned()))
            .chain(env.iter().map(|(name, value)| (*name, value.clone())))
            .chain([("TERM", "xterm-256color".to_owned())]);
        for (name, value) in env {
            line.push_str(&format!(" {name}={}", quoted(value)));
        }
        line.push(' ');
        line.push_str(&quoted(program));
        for arg in args {
            line.push(' ');
            line.push_str(&quoted(arg));
        }
        let path = self.path("run.sh");
        std::fs::write(&path, format!("{line}\necho \"exit status $?\"\n")).unwrap();
        path
    }

    /// The reasons log the gateway and the discovery use here by default.
    pub fn default_reasons_log(&self) -> PathBuf {
        self.path("state").join("reasons/reasons.jsonl")
    }

    /// The processes still running with this sandbox's HOME: what an agent left behind (Cline's hub
    /// daemon, which detaches into a session of its own, without `CLINE_SESSION_BACKEND_MODE=local`).
    pub fn processes(&self) -> Vec<(u32, String)> {
        let home = format!("HOME={}", self.path("home").display());
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            if environ
                .split(|byte| *byte == 0)
                .any(|var| var == home.as_bytes())
            {
                let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                found.push((pid, cmdline));
            }
        }
        found
    }
}
