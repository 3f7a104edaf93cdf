//! Coverage counts: per group, in total, and added up across runs.
//!
//! A [`Report`] is what `reasons stats` prints as JSON, and what `--merge` reads back: it carries
//! every count it needs to be added to another exactly, the distribution of reason lengths
//! included (a median cannot be merged; the lengths it is taken from can).

use std::collections::BTreeMap;

/// Groups are looked up once per call: foldhash, seeded per run, hashes a tool name several
/// times faster than SipHash.
type HashMap<K, V> = foldhash::HashMap<K, V>;

use serde::{Deserialize, Serialize};

use crate::record::{CallRecord, Status};

/// What one row of a report counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// The tool's name.
    Tool,
    /// The log file.
    File,
    /// The session id.
    Session,
    /// The log format.
    Format,
    /// The day of the call's timestamp (UTC, as written).
    Day,
}

impl GroupBy {
    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::Tool => "tool",
            GroupBy::File => "file",
            GroupBy::Session => "session",
            GroupBy::Format => "format",
            GroupBy::Day => "day",
        }
    }

    /// The group a record falls in.
    pub fn key(self, record: &CallRecord) -> String {
        self.key_of(record).into_owned()
    }

    /// The group a record falls in, borrowed from the record where it can be.
    fn key_of(self, record: &CallRecord) -> std::borrow::Cow<'_, str> {
        use std::borrow::Cow;
        match self {
            GroupBy::Tool => Cow::Borrowed(&record.tool),
            GroupBy::File => Cow::Borrowed(&record.source),
            GroupBy::Session => Cow::Borrowed(record.session.as_deref().unwrap_or(NONE)),
            GroupBy::Format => Cow::Borrowed(record.format.as_str()),
            GroupBy::Day => Cow::Owned(
                record
                    .timestamp
                    .as_deref()
                    .and_then(day_of)
                    .unwrap_or_else(|| NONE.to_owned()),
            ),
        }
    }
}

/// The key of calls that have no session, or no timestamp.
pub const NONE: &str = "(none)";

/// The calendar day (`YYYY-MM-DD`, UTC) of a timestamp written as RFC 3339 or as seconds or
/// milliseconds since the Unix epoch ([`crate::dates::utc_day`]).
pub fn day_of(timestamp: &str) -> Option<String> {
    crate::dates::utc_day(timestamp)
}

/// The counts of one group, or of everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Every call.
    pub calls: u64,
    /// Calls with a reason.
    pub present: u64,
    /// Calls whose reason is empty or whitespace.
    pub blank: u64,
    /// Calls whose reason is not a string.
    pub invalid: u64,
    /// Calls without a reason.
    pub missing: u64,
    /// Calls to tools that declare a `reason` of their own (not audited).
    pub declared: u64,
    /// Calls whose arguments cannot carry a reason (not audited).
    pub freeform: u64,
    /// Present reasons that `--lint` flags (`reasons::lint`); `None` when it was not asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lint_flagged: Option<u64>,
    /// Present reasons as a percentage of audited calls; `None` when no call is audited.
    pub coverage: Option<f64>,
    /// The median length of present reasons, in characters.
    pub median_reason_length: Option<f64>,
    /// How many present reasons have each length, in characters: what makes medians mergeable.
    /// Written as `[[length, count], …]` pairs.
    #[serde(with = "length_pairs")]
    pub reason_lengths: BTreeMap<usize, u64>,
}

impl Counts {
    /// Counts one call.
    pub fn add(&mut self, record: &CallRecord) {
        self.count_call(record.status, reason_length(record));
        self.refresh();
    }

    /// Counts one call, leaving coverage and median to [`Counts::refresh`]: a median taken
    /// after every call would cost more than reading the call.
    fn count_call(&mut self, status: Status, reason_length: Option<usize>) {
        self.calls += 1;
        *self.count_mut(status) += 1;
        if let Some(length) = reason_length {
            *self.reason_lengths.entry(length).or_default() += 1;
        }
    }

    /// Adds another group's counts to these.
    pub fn merge(&mut self, other: &Counts) {
        self.add_counts(other);
        self.refresh();
    }

    /// Adds another group's counts, leaving coverage and median to [`Counts::refresh`].
    fn add_counts(&mut self, other: &Counts) {
        self.calls += other.calls;
        for status in Status::ALL {
            *self.count_mut(status) += other.count(status);
        }
        for (length, count) in &other.reason_lengths {
            *self.reason_lengths.entry(*length).or_default() += count;
        }
        if let Some(flagged) = other.lint_flagged {
            *self.lint_flagged.get_or_insert(0) += flagged;
        }
    }

    /// The number of calls with this status.
    pub fn count(&self, status: Status) -> u64 {
        match status {
            Status::Present => self.present,
            Status::Blank => self.blank,
            Status::Invalid => self.invalid,
            Status::Missing => self.missing,
            Status::Declared => self.declared,
            Status::Freeform => self.freeform,
        }
    }

    fn count_mut(&mut self, status: Status) -> &mut u64 {
        match status {
            Status::Present => &mut self.present,
            Status::Blank => &mut self.blank,
            Status::Invalid => &mut self.invalid,
            Status::Missing => &mut self.missing,
            Status::Declared => &mut self.declared,
            Status::Freeform => &mut self.freeform,
        }
    }

    /// The calls in the coverage denominator.
    pub fn audited(&self) -> u64 {
        self.present + self.blank + self.invalid + self.missing
    }

    /// Recomputes what is derived from the counts, so a report read back is never trusted for it.
    fn refresh(&mut self) {
        let audited = self.audited();
        self.coverage = coverage(self.present, audited);
        self.median_reason_length = median(&self.reason_lengths);
    }
}

/// The length of a present reason, in characters, as the median counts it.
fn reason_length(record: &CallRecord) -> Option<usize> {
    let reason = record.reason.as_deref()?;
    (record.status == Status::Present).then(|| reason.trim().chars().count())
}

/// The median of a distribution given as value → how many times it occurs.
fn median(distribution: &BTreeMap<usize, u64>) -> Option<f64> {
    let total: u64 = distribution.values().sum();
    if total == 0 {
        return None;
    }
    // The values at 0-based ranks (total-1)/2 and total/2: the same one when total is odd.
    let nth = |rank: u64| {
        let mut seen = 0;
        for (value, count) in distribution {
            seen += count;
            if seen > rank {
                return *value as f64;
            }
        }
        // Not input-derived: `rank` < `total`, the sum of these very counts, so the loop
        // always returns.
        unreachable!("rank {rank} is below the total {total}")
    };
    Some((nth((total - 1) / 2) + nth(total / 2)) / 2.0)
}

/// A distribution as `[[value, count], …]`: JSON object keys would have to be strings.
mod length_pairs {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        distribution: &BTreeMap<usize, u64>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(distribution.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<BTreeMap<usize, u64>, D::Error> {
        let pairs = Vec::<(usize, u64)>::deserialize(deserializer)?;
        let mut distribution = BTreeMap::new();
        for (value, count) in pairs {
            *distribution.entry(value).or_default() += count;
        }
        Ok(distribution)
    }
}

/// One group's counts, with its key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The tool, file, session, format or day.
    pub key: String,
    /// Its counts.
    #[serde(flatten)]
    pub counts: Counts,
}

/// What `reasons stats` reports: the shape of its JSON output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Every call read.
    pub totals: Counts,
    /// One row per group, in report order.
    pub groups: Vec<Group>,
    /// What the groups are.
    pub by: GroupBy,
    /// How many files were read.
    pub files: u64,
    /// How many malformed lines were skipped.
    pub malformed_lines: u64,
}

/// Adds up calls into a [`Report`].
#[derive(Debug, Clone)]
pub struct Tally {
    by: GroupBy,
    totals: Counts,
    /// Groups in the order they were first seen, which is input order for files.
    groups: Vec<Group>,
    /// Where each key's group is in `groups`.
    index: HashMap<String, usize>,
    files: u64,
    malformed_lines: u64,
    /// Whether reasons flagged by the lint are counted.
    linted: bool,
}

impl Tally {
    /// An empty tally grouping by `by`.
    pub fn new(by: GroupBy) -> Tally {
        Tally {
            by,
            totals: Counts::default(),
            groups: Vec::new(),
            index: HashMap::default(),
            files: 0,
            malformed_lines: 0,
            linted: false,
        }
    }

    /// The same tally, counting the reasons the lint flags ([`Tally::add_lint_flagged`]).
    pub fn linted(mut self) -> Tally {
        self.linted = true;
        self
    }

    /// Counts one call already added whose reason the lint flags.
    pub fn add_lint_flagged(&mut self, record: &CallRecord) {
        *self.totals.lint_flagged.get_or_insert(0) += 1;
        let at = self.group_at(self.by.key(record));
        *self.groups[at].counts.lint_flagged.get_or_insert(0) += 1;
    }

    /// Counts one call.
    pub fn add(&mut self, record: &CallRecord) {
        let reason_length = reason_length(record);
        self.totals.count_call(record.status, reason_length);
        let key = self.by.key_of(record);
        let at = match self.index.get(key.as_ref()) {
            Some(&at) => at,
            None => {
                let key = key.into_owned();
                self.group_at(key)
            }
        };
        self.groups[at]
            .counts
            .count_call(record.status, reason_length);
    }

    fn group_mut(&mut self, key: String) -> &mut Counts {
        let at = self.group_at(key);
        &mut self.groups[at].counts
    }

    /// Where the group of `key` is, made when it is new.
    fn group_at(&mut self, key: String) -> usize {
        // Merging a file's tally meets mostly known keys: look before copying the key.
        if let Some(&at) = self.index.get(&key) {
            return at;
        }
        let at = self.groups.len();
        self.index.insert(key.clone(), at);
        self.groups.push(Group {
            key,
            counts: Counts::default(),
        });
        at
    }

    /// Notes one file read, and the malformed lines skipped in it.
    pub fn add_file(&mut self, malformed_lines: u64) {
        self.files += 1;
        self.malformed_lines += malformed_lines;
    }

    /// Adds another tally (of other files) to this one.
    pub fn merge(&mut self, other: Tally) {
        self.linted |= other.linted;
        self.absorb(
            other.totals,
            other.groups,
            other.files,
            other.malformed_lines,
        );
    }

    /// Adds an earlier report to this tally, as if its inputs had been read here.
    pub fn merge_report(&mut self, report: Report) -> Result<(), String> {
        if report.by != self.by {
            return Err(format!(
                "it groups by {}, and the others by {}",
                report.by.as_str(),
                self.by.as_str()
            ));
        }
        self.linted |= report.totals.lint_flagged.is_some();
        self.absorb(
            report.totals,
            report.groups,
            report.files,
            report.malformed_lines,
        );
        Ok(())
    }

    fn absorb(&mut self, totals: Counts, groups: Vec<Group>, files: u64, malformed_lines: u64) {
        // Coverage and medians are taken once, by `report`.
        self.totals.add_counts(&totals);
        for group in groups {
            self.group_mut(group.key).add_counts(&group.counts);
        }
        self.files += files;
        self.malformed_lines += malformed_lines;
    }

    /// The finished report. Tools, sessions and formats come busiest first, days in date order,
    /// files in the order they were given.
    pub fn report(self) -> Report {
        let mut totals = self.totals;
        totals.refresh();
        let mut groups = self.groups;
        groups.iter_mut().for_each(|group| group.counts.refresh());
        if self.linted {
            // Counted where nothing was flagged too: 0, not absent.
            totals.lint_flagged.get_or_insert(0);
            for group in &mut groups {
                group.counts.lint_flagged.get_or_insert(0);
            }
        }
        match self.by {
            GroupBy::Tool | GroupBy::Session | GroupBy::Format => {
                groups.sort_by(|a, b| b.counts.calls.cmp(&a.counts.calls).then(a.key.cmp(&b.key)))
            }
            GroupBy::Day => groups.sort_by(|a, b| a.key.cmp(&b.key)),
            GroupBy::File => {}
        }
        Report {
            totals,
            groups,
            by: self.by,
            files: self.files,
            malformed_lines: self.malformed_lines,
        }
    }
}

/// The share of the audited calls that carry a reason, in per cent; `None` when no call is
/// audited. The one computation behind `stats`, the page and `watch`.
pub fn coverage(present: u64, audited: u64) -> Option<f64> {
    (audited > 0).then(|| 100.0 * present as f64 / audited as f64)
}

/// A coverage as every view shows it: one decimal and a per-cent sign.
pub fn percent(coverage: f64) -> String {
    format!("{coverage:.1}%")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Format;

    fn call(tool: &str, status: Status, reason: Option<&str>) -> CallRecord {
        CallRecord {
            source: "s.jsonl".into(),
            line: 1,
            format: Format::ClaudeCode,
            session: None,
            timestamp: Some("2026-11-30T09:00:00Z".into()),
            call_id: None,
            tool: tool.into(),
            reason: reason.map(str::to_owned),
            status,
            reason_from: Default::default(),
            arguments: None,
        }
    }

    #[test]
    fn coverage_leaves_declared_and_freeform_out_of_the_denominator() {
        let mut counts = Counts::default();
        counts.add(&call("a", Status::Present, Some("why")));
        counts.add(&call("a", Status::Missing, None));
        counts.add(&call("a", Status::Declared, None));
        counts.add(&call("a", Status::Freeform, None));
        assert_eq!(counts.calls, 4);
        assert_eq!(counts.coverage, Some(50.0));
    }

    #[test]
    fn coverage_is_none_when_nothing_is_audited() {
        let mut counts = Counts::default();
        counts.add(&call("a", Status::Freeform, None));
        assert_eq!(counts.coverage, None);
    }

    #[test]
    fn median_reason_length_of_odd_and_even_counts() {
        let mut counts = Counts::default();
        for reason in ["ab", "abcd", "abcdef"] {
            counts.add(&call("a", Status::Present, Some(reason)));
        }
        assert_eq!(counts.median_reason_length, Some(4.0));
        counts.add(&call("a", Status::Present, Some("abcdefgh")));
        assert_eq!(counts.median_reason_length, Some(5.0));
    }

    #[test]
    fn merged_tallies_equal_one_tally_of_everything() {
        let calls = [
            call("a", Status::Present, Some("one")),
            call("b", Status::Blank, Some(" ")),
            call("a", Status::Present, Some("three words here")),
            call("c", Status::Invalid, None),
            call("a", Status::Missing, None),
        ];
        let mut whole = Tally::new(GroupBy::Tool);
        calls.iter().for_each(|c| whole.add(c));
        let mut left = Tally::new(GroupBy::Tool);
        let mut right = Tally::new(GroupBy::Tool);
        calls[..2].iter().for_each(|c| left.add(c));
        calls[2..].iter().for_each(|c| right.add(c));
        let json = serde_json::to_string(&right.report()).unwrap();
        left.merge_report(serde_json::from_str(&json).unwrap())
            .unwrap();
        assert_eq!(left.report(), whole.report());
    }

    #[test]
    fn reports_grouped_differently_do_not_merge() {
        let mut tally = Tally::new(GroupBy::Tool);
        let other = Tally::new(GroupBy::Day).report();
        assert!(tally.merge_report(other).is_err());
    }

    #[test]
    fn days_from_iso_and_epoch_timestamps() {
        assert_eq!(
            day_of("2026-11-30T09:00:00Z").as_deref(),
            Some("2026-11-30")
        );
        assert_eq!(day_of("1764493200").as_deref(), Some("2025-11-30"));
        assert_eq!(day_of("1764493200000").as_deref(), Some("2025-11-30"));
        assert_eq!(day_of("yesterday"), None);
    }

    /// Found reviewing `day_of` for input-derived panics: `1e300` seconds made `civil_from_days`
    /// overflow (a panic in a debug build, a wrong day in a release one), and `NaN` was
    /// 1970-01-01.
    #[test]
    fn a_timestamp_past_any_calendar_or_not_a_number_has_no_day() {
        for timestamp in [
            "1e300",
            "-1e300",
            "9223372036854775807000",
            "NaN",
            "inf",
            "-Infinity",
        ] {
            assert_eq!(day_of(timestamp), None, "{timestamp}");
        }
        assert_eq!(day_of("0").as_deref(), Some("1970-01-01"));
    }
}
