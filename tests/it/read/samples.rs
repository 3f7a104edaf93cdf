//! Every sample, through the real binary, yields exactly the records in
//! `tests/golden/<sample>.records.jsonl`; together the samples cover every format and every
//! status. `REASONS_BLESS=1 cargo test --test it samples` rewrites the golden files, so a change
//! of records shows in review.

use std::collections::BTreeSet;

use crate::util::{records, root, run};

#[test]
fn every_sample_yields_its_golden_records_and_covers_every_format_and_status() {
    let bless = std::env::var_os("REASONS_BLESS").is_some();
    let mut samples: Vec<String> = std::fs::read_dir(root().join("samples"))
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
    let (mut formats, mut statuses) = (BTreeSet::new(), BTreeSet::new());
    let mut differ = Vec::new();
    for name in &samples {
        let path = format!("samples/{name}");
        let run = run(&["extract", "--format", "jsonl", &path]);
        assert_eq!(run.code, 0, "{path}: {}", run.stderr);
        for record in records(&run.stdout) {
            formats.insert(record["format"].as_str().unwrap().to_owned());
            statuses.insert(record["status"].as_str().unwrap().to_owned());
        }
        let got = format!("{}{}", run.stdout, run.stderr);
        let golden = root()
            .join("tests/golden")
            .join(format!("{name}.records.jsonl"));
        if bless {
            std::fs::write(&golden, &got).expect("golden file written");
        } else if std::fs::read_to_string(&golden).ok().as_deref() != Some(got.as_str()) {
            differ.push(format!(
                "{name}: records differ from {}:\n{got}",
                golden.display()
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    for format in reasons::record::Format::ALL {
        assert!(formats.contains(format.as_str()), "no sample of {format}");
    }
    for status in reasons::record::Status::ALL {
        assert!(
            statuses.contains(status.as_str()),
            "no sample call is {status}"
        );
    }
}
