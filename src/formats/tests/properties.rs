//! Property tests of the readers against hostile input: however a log is cut into reads, and
//! whatever it holds, the same records and warnings come out, and a read that fails midway has
//! handed over only what a whole read would have handed over first.

use std::io::{self, BufReader, Read};

use proptest::collection::vec as vec_of;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{select, Index};

use crate::formats::events::Event;
use crate::formats::options::ReadOptions;
use crate::formats::reading::read_whole as read_log;
use crate::record::Format;

/// Every line of the JSONL samples, and the single-document ones whole.
fn sample_lines() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut lines = Vec::new();
    let mut documents = Vec::new();
    for entry in std::fs::read_dir(root).expect("samples/") {
        let path = entry.expect("a sample").path();
        let bytes = std::fs::read(&path).expect("a readable sample");
        if path
            .extension()
            .is_some_and(|extension| extension == "jsonl")
        {
            lines.extend(bytes.split(|&byte| byte == b'\n').map(<[u8]>::to_vec));
        } else {
            documents.push(bytes);
        }
    }
    lines.retain(|line| !line.is_empty());
    lines.sort();
    documents.sort();
    (lines, documents)
}

/// One line of a hostile log: a real one, cut short, with a byte broken, or noise.
fn line(samples: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let whole = select(samples.clone());
    let cut = (select(samples.clone()), any::<Index>())
        .prop_map(|(line, at)| line[..at.index(line.len())].to_vec());
    let broken = (select(samples), any::<Index>(), any::<u8>()).prop_map(|(mut line, at, byte)| {
        let at = at.index(line.len());
        line[at] = if byte == b'\n' { 0xFF } else { byte };
        line
    });
    let noise = select(vec![
        &b""[..],
        b"   ",
        b"\0",
        b"\xEF\xBB\xBF{}",
        b"not json",
        b"{\"type\":\"tool_use\",\"name\":\"\xC3\"}",
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
        b"{\"tools\":[{\"name\":\"Bash\",\"input_schema\":{\"properties\":{\"reason\":{}}}}]}",
    ])
    .prop_map(<[u8]>::to_vec);
    prop_oneof![4 => whole, 1 => cut, 1 => broken, 1 => noise]
}

/// A log: JSONL lines with any endings, maybe cut anywhere, or a whole document.
fn log() -> impl Strategy<Value = Vec<u8>> {
    let (lines, documents) = sample_lines();
    let jsonl = (
        vec_of((line(lines), select(vec!["\n", "\r\n", "\n\n"])), 0..24),
        option::of(any::<Index>()),
    )
        .prop_map(|(lines, cut)| {
            let mut log: Vec<u8> = lines
                .into_iter()
                .flat_map(|(line, ending)| [line, ending.as_bytes().to_vec()])
                .flatten()
                .collect();
            if let Some(cut) = cut {
                log.truncate(cut.index(log.len() + 1));
            }
            log
        });
    let document = (select(documents), option::of(any::<Index>())).prop_map(|(mut log, cut)| {
        if let Some(cut) = cut {
            log.truncate(cut.index(log.len() + 1));
        }
        log
    });
    prop_oneof![4 => jsonl, 1 => document]
}

fn options() -> impl Strategy<Value = ReadOptions> {
    (
        option::weighted(0.2, select(Format::ALL.to_vec())),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(format, keep_arguments, audit_declared, check_every_line)| ReadOptions {
                format,
                keep_arguments,
                audit_declared,
                check_every_line,
            },
        )
}

/// Hands out the input in the chunk sizes it is given, like a pipe, and fails at `fail_at`
/// bytes if asked to: a disk that goes away mid-file.
struct ShortReads<'a> {
    input: &'a [u8],
    sizes: Vec<usize>,
    next: usize,
    fail_at: Option<usize>,
    given: usize,
}

impl Read for ShortReads<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let mut size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        if let Some(fail_at) = self.fail_at {
            if self.given >= fail_at {
                return Err(io::Error::other("the disk went away"));
            }
            size = size.min(fail_at - self.given);
        }
        let size = size.min(buffer.len()).min(self.input.len());
        buffer[..size].copy_from_slice(&self.input[..size]);
        self.input = &self.input[size..];
        self.given += size;
        Ok(size)
    }
}

fn events(
    input: impl Read,
    capacity: usize,
    options: &ReadOptions,
) -> (Vec<Event>, io::Result<()>) {
    let mut events = Vec::new();
    let result = read_log(
        "t",
        BufReader::with_capacity(capacity, input),
        options,
        &mut |event| {
            events.push(event);
            Ok(())
        },
    );
    (events, result.map(drop))
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn prop_readers_yield_the_same_events_however_the_input_is_split_into_reads(
        log in log(),
        options in options(),
        sizes in vec_of(1usize..512, 1..8),
        capacity in 1usize..4096,
    ) {
        let (whole, result) = events(&log[..], 1 << 20, &options);
        prop_assert!(result.is_ok());
        let reads = ShortReads { input: &log, sizes, next: 0, fail_at: None, given: 0 };
        let (split, result) = events(reads, capacity, &options);
        prop_assert!(result.is_ok());
        prop_assert_eq!(split, whole);
    }

    #[test]
    fn prop_a_read_that_fails_midway_has_handed_over_a_prefix_of_the_whole_read(
        log in log(),
        sizes in vec_of(1usize..512, 1..8),
        fail_at in any::<Index>(),
    ) {
        let options = ReadOptions::default();
        let (whole, _) = events(&log[..], 1 << 20, &options);
        let fail_at = fail_at.index(log.len() + 1);
        let reads = ShortReads { input: &log, sizes, next: 0, fail_at: Some(fail_at), given: 0 };
        let (before, result) = events(reads, 4096, &options);
        prop_assert_eq!(
            result.map_err(|error| error.to_string()),
            Err("the disk went away".to_owned())
        );
        prop_assert!(whole.starts_with(&before), "{:?} is not a prefix of {:?}", before, whole);
    }
}
