//! Progress on stderr for long runs over many files: shown only on a terminal, and only once a
//! run has gone on long enough for a person to wonder.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes quietly before it shows progress.
const QUIET_FOR: Duration = Duration::from_millis(800);

/// Files read so far, out of how many.
pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    shown: bool,
}

impl Progress {
    /// Progress over `files` files; nothing at all when stderr is not a terminal.
    pub fn new(files: usize) -> Progress {
        let bar = (files > 1 && std::io::stderr().is_terminal()).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(files as u64), ProgressDrawTarget::hidden());
            if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} files {elapsed}")
            {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            started: Instant::now(),
            shown: false,
        }
    }

    /// Notes one more file read.
    pub fn file_done(&mut self) {
        let Some(bar) = &self.bar else {
            return;
        };
        bar.inc(1);
        if !self.shown && self.started.elapsed() >= QUIET_FOR {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }

    /// Writes a message on stderr without tearing the progress line.
    pub fn message(&self, message: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| crate::program::messages::line(message)),
            None => crate::program::messages::line(message),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
