//! Reads logs through `reasons::formats::read_log` and reports calls and throughput; with
//! `--records`, prints each event as it comes. Measures the readers without the command line:
//!
//! `cargo run --release --example read_log -- [--records] [--format NAME] FILE…`

use std::fs::File;
use std::io::{BufReader, Write};
use std::time::Instant;

use reasons::formats::{read_log, Event, ReadOptions};

fn main() -> std::io::Result<()> {
    let mut options = ReadOptions::default();
    let mut records = false;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--records" => records = true,
            "--arguments" => options.keep_arguments = true,
            "--format" => {
                let name = args.next().unwrap_or_default();
                options.format = Some(name.parse().map_err(std::io::Error::other)?);
            }
            _ => paths.push(arg),
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for path in paths {
        let bytes = std::fs::metadata(&path)?.len();
        let input = BufReader::with_capacity(1 << 20, File::open(&path)?);
        let start = Instant::now();
        let summary = read_log(&path, input, &options, &mut |event| {
            if !records {
                return Ok(());
            }
            match event {
                Event::Call(record) => {
                    serde_json::to_writer(&mut out, &record)?;
                    writeln!(out)
                }
                Event::Malformed { line, message } => writeln!(out, "{path}:{line}: {message}"),
            }
        })?;
        let seconds = start.elapsed().as_secs_f64();
        eprintln!(
            "{path}: {} calls, {} repeats, {} malformed, {} events, {:.1} MB in {:.3} s = {:.2} GB/s",
            summary.calls,
            summary.repeats,
            summary.malformed_lines,
            summary.events,
            bytes as f64 / 1e6,
            seconds,
            bytes as f64 / seconds / 1e9
        );
    }
    Ok(())
}
