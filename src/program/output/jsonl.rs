//! One JSON record per line: what scripts and `jq` read.

use std::io::{self, Write};

use reasons::record::CallRecord;

use super::writer::Writer;

pub struct JsonlWriter {
    pub arguments: bool,
}

impl Writer<CallRecord> for JsonlWriter {
    fn write(&mut self, out: &mut dyn Write, record: &CallRecord) -> io::Result<()> {
        let line = if self.arguments || record.arguments.is_none() {
            serde_json::to_string(record)
        } else {
            let without = CallRecord {
                arguments: None,
                ..record.clone()
            };
            serde_json::to_string(&without)
        };
        out.write_all(line.map_err(io::Error::other)?.as_bytes())?;
        out.write_all(b"\n")
    }
}
