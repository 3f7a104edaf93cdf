//! A program in a detached tmux session of its own (its own server socket), read back with
//! `capture-pane`: what a person at a terminal sees, for `reasons watch` and for the agents'
//! approval dialogs.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::util::environment;

/// A tmux server with one session running a command; killed when dropped.
pub struct Tmux {
    socket: PathBuf,
    /// The HOME of the server and of what runs in its window.
    home: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmux {
    /// `command` (a shell command line) in a `width`×`height` window. The server, and so every
    /// program in its window, starts in the cleared [`environment`] of every test's program:
    /// what `command` needs beyond it, it sets itself.
    pub fn start(command: &str, width: u16, height: u16) -> Tmux {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("tmux.sock");
        let tmux = Tmux {
            socket,
            home: environment::fresh_home(),
            _dir: dir,
        };
        let (width, height) = (width.to_string(), height.to_string());
        tmux.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            &width,
            "-y",
            &height,
            command,
        ]);
        tmux.run(&["set-option", "-g", "remain-on-exit", "on"]);
        tmux
    }

    #[track_caller]
    pub fn run(&self, args: &[&str]) -> String {
        let output = self
            .tmux()
            .args(args)
            .output()
            .expect("tmux runs (Debian's tmux, installed by .ci/real-parts)");
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// A tmux client of this server, in the cleared [`environment`] with the server's HOME.
    fn tmux(&self) -> std::process::Command {
        let mut tmux = std::process::Command::new("tmux");
        environment::clear_in(&mut tmux, &self.home)
            .arg("-S")
            .arg(&self.socket);
        tmux
    }

    /// The screen's text.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p"])
    }

    /// The screen with its colours and attributes, as escape sequences.
    pub fn screen_with_escapes(&self) -> String {
        self.run(&["capture-pane", "-e", "-p"])
    }

    /// The screen once `done` holds for it, or a failure showing it after 10 seconds.
    #[track_caller]
    pub fn screen_when(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        self.screen_within(what, Duration::from_secs(10), done)
    }

    /// The screen once `done` holds for it, or a failure showing it after `limit`.
    #[track_caller]
    pub fn screen_within(
        &self,
        what: &str,
        limit: Duration,
        done: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {what}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        self.run(&args);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").output();
    }
}

/// Where the screens a person would see are kept: `target/screens`, made when missing.
pub fn screens() -> PathBuf {
    let dir = crate::util::root().join("target/screens");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Keeps a captured screen under `target/screens/NAME.txt`, for a person to read after the run.
pub fn keep_screen(name: &str, screen: &str) -> PathBuf {
    let path = screens().join(format!("{name}.txt"));
    std::fs::write(&path, screen).unwrap();
    path
}
