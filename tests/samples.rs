//! Every sample yields exactly the records in `tests/golden/<sample>.jsonl`, and the samples
//! cover every format. `REASONS_BLESS=1 cargo test --test samples` rewrites the golden files,
//! so a change of records shows in review.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufReader, Write};
use std::path::Path;

use reasons::formats::{read_log, Event, Format, ReadOptions};

fn records_of(sample: &str) -> (String, BTreeSet<Format>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let input = BufReader::new(File::open(root.join(sample)).expect(sample));
    let mut out = Vec::new();
    let mut formats = BTreeSet::new();
    read_log(sample, input, &ReadOptions::default(), &mut |event| {
        match event {
            Event::Call(record) => {
                formats.insert(record.format);
                serde_json::to_writer(&mut out, &record)?;
            }
            Event::Malformed { line, message } => write!(out, "malformed {line}: {message}")?,
        }
        writeln!(out)
    })
    .expect(sample);
    (String::from_utf8(out).expect("UTF-8 records"), formats)
}

#[test]
fn every_sample_yields_its_golden_records_and_every_format_has_a_sample() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("REASONS_BLESS").is_some();
    let mut samples: Vec<_> = std::fs::read_dir(root.join("samples"))
        .expect("samples/")
        .map(|entry| {
            entry
                .expect("a sample")
                .file_name()
                .into_string()
                .expect("a name")
        })
        .collect();
    samples.sort();
    let mut covered = BTreeSet::new();
    let mut differ = Vec::new();
    for name in &samples {
        let (records, formats) = records_of(&format!("samples/{name}"));
        covered.extend(formats);
        let golden = root
            .join("tests/golden")
            .join(format!("{name}.records.jsonl"));
        if bless {
            std::fs::write(&golden, &records).expect("golden file written");
        } else if std::fs::read_to_string(&golden).ok().as_deref() != Some(records.as_str()) {
            differ.push(format!(
                "{name}: records differ from {}:\n{records}",
                golden.display()
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    let missing: Vec<_> = Format::ALL
        .iter()
        .filter(|format| !covered.contains(format))
        .collect();
    assert!(missing.is_empty(), "no sample of {missing:?}");
}
