//! A temporary `HOME` for one agent run, with every `XDG_*` folder and the working folder
//! beside it: what a real agent reads and writes stays in the test's own directory.

use std::path::PathBuf;
use std::process::Command;

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

    /// The environment of a run: only `PATH` (for node, bash and the agent's own helpers) of
    /// this machine's, the rest in the sandbox.
    pub fn apply(&self, command: &mut Command) {
        command.env_clear().envs(self.env());
    }

    /// That environment, as names and values (for a run started by a shell, as in tmux).
    pub fn env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        vec![
            ("PATH", std::env::var_os("PATH").unwrap_or_default()),
            ("HOME", self.path("home").into()),
            ("XDG_DATA_HOME", self.path("data").into()),
            ("XDG_CONFIG_HOME", self.path("config").into()),
            ("XDG_STATE_HOME", self.path("state").into()),
            ("XDG_CACHE_HOME", self.path("cache").into()),
            ("XDG_RUNTIME_DIR", self.path("runtime").into()),
            ("SHELL", "/bin/bash".into()),
            ("LANG", "C.UTF-8".into()),
        ]
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
