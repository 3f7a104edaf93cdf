//! Calendar dates without a date library: the reasons log stamps its records from the system
//! clock, and the one reader of the timestamps logs write (RFC 3339 with `Z` or an offset, or a
//! number of seconds or milliseconds since the epoch) tells their instant (`run`'s calls of the
//! run, the spans `export` sends) and their day (`stats --by day`).

use std::time::{SystemTime, UNIX_EPOCH};

/// `2026-12-01T07:29:49.123Z`.
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (days, of_day) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        since.subsec_millis()
    )
}

/// A number of seconds since the epoch at least this large is milliseconds: 11 digits are
/// seconds past the year 2286 or milliseconds before 1973, and no log of an agent's means either;
/// milliseconds since 1973 have 12 digits or more, seconds have 10 until 2286.
const MILLISECONDS_FROM: f64 = 1e11;

/// Days further from 1970 than this are no day a log could mean (and would overflow the
/// arithmetic).
const MAX_DAYS: f64 = 1e9;

/// The instant a log's timestamp names, in nanoseconds since the epoch: RFC 3339 with `Z` or an
/// offset (`2026-11-30T09:00:00.5+01:00`), or seconds or milliseconds since the epoch. `None`
/// for a local time without its offset, or text that is no time.
pub fn epoch_nanos(timestamp: &str) -> Option<i128> {
    let timestamp = timestamp.trim();
    if let Some(nanos) = epoch_number(timestamp) {
        return Some(nanos);
    }
    let (days, of_day, fraction, zone) = date_time(timestamp)?;
    let offset = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = match zone.get(..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            if zone.len() != 6 || zone.as_bytes()[3] != b':' {
                return None;
            }
            let hours: i64 = zone.get(1..3)?.parse().ok()?;
            let minutes: i64 = zone.get(4..6)?.parse().ok()?;
            sign * (hours * 3600 + minutes * 60)
        }
    };
    let seconds = days * 86_400 + of_day - offset;
    Some(i128::from(seconds) * 1_000_000_000 + i128::from(fraction))
}

/// The calendar day (`YYYY-MM-DD`, in UTC) of a log's timestamp; a local time without its offset
/// keeps the date it was written with.
pub fn utc_day(timestamp: &str) -> Option<String> {
    let timestamp = timestamp.trim();
    let days = match epoch_nanos(timestamp) {
        Some(nanos) => nanos.div_euclid(86_400 * 1_000_000_000) as i64,
        None => {
            let date = timestamp.get(..10)?;
            return is_date(date).then(|| date.to_owned());
        }
    };
    let (year, month, day) = civil_from_days(days);
    Some(format!("{year:04}-{month:02}-{day:02}"))
}

/// A log's timestamp as a person reads it, to the second: the one form every view shows a time
/// in (the report's page, `watch`), so that no epoch number reaches a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// `HH:MM:SS`.
    pub clock: String,
    /// Whether the date and clock are UTC's, worked out from a number since the epoch (and not
    /// the writer's own, as written).
    pub utc: bool,
}

impl std::fmt::Display for Shown {
    /// `YYYY-MM-DD HH:MM:SS`, with ` UTC` after a time worked out in UTC.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.date, self.clock)?;
        if self.utc {
            f.write_str(" UTC")?;
        }
        Ok(())
    }
}

/// `timestamp` as [`Shown`]: an RFC 3339 one (a space for its `T` too) with the date and clock
/// it was written with, as its writer read them; a number of seconds or milliseconds since the
/// epoch (Cline's, Gemini CLI's) in UTC. `None` for text that is no time, which a view shows as
/// written.
pub fn shown(timestamp: &str) -> Option<Shown> {
    let timestamp = timestamp.trim();
    let shape = b"0000-00-00T00:00:00";
    let written = timestamp.len() >= shape.len()
        && timestamp.bytes().zip(shape).all(|(byte, want)| match want {
            b'0' => byte.is_ascii_digit(),
            b'T' => matches!(byte, b'T' | b't' | b' '),
            want => byte == *want,
        });
    if written {
        return Some(Shown {
            date: timestamp[..10].to_owned(),
            clock: timestamp[11..19].to_owned(),
            utc: false,
        });
    }
    let seconds = epoch_number(timestamp)?.div_euclid(1_000_000_000);
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days as i64);
    Some(Shown {
        date: format!("{year:04}-{month:02}-{day:02}"),
        clock: format!(
            "{:02}:{:02}:{:02}",
            of_day / 3600,
            of_day / 60 % 60,
            of_day % 60
        ),
        utc: true,
    })
}

/// Nanoseconds since the epoch, when the timestamp is a number (of seconds or milliseconds)
/// that names a day: a whole number exactly, a fraction as near as a float has it.
fn epoch_number(timestamp: &str) -> Option<i128> {
    let nanos = match timestamp.parse::<i64>() {
        Ok(whole) if whole.unsigned_abs() >= MILLISECONDS_FROM as u64 => {
            i128::from(whole) * 1_000_000
        }
        Ok(whole) => i128::from(whole) * 1_000_000_000,
        Err(_) => {
            let number: f64 = timestamp.parse().ok()?;
            let seconds = if number.abs() >= MILLISECONDS_FROM {
                number / 1000.0
            } else {
                number
            };
            if !(seconds / 86_400.0).is_finite() {
                return None;
            }
            (seconds * 1e9).round() as i128
        }
    };
    let days = nanos.div_euclid(86_400 * 1_000_000_000);
    (days.unsigned_abs() as f64 <= MAX_DAYS).then_some(nanos)
}

/// `YYYY-MM-DD`.
fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    bytes.len() == 10
        && digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10)
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]ZONE`: the days since the epoch, the seconds of the day, the
/// fraction in nanoseconds, and the zone as written (empty when none is).
fn date_time(text: &str) -> Option<(i64, i64, i64, &str)> {
    let bytes = text.as_bytes();
    if bytes.len() < 19
        || !is_date(text.get(..10)?)
        || !matches!(bytes[10], b'T' | b't' | b' ')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let rest = &text[19..];
    let (fraction, zone) = match rest.strip_prefix('.') {
        Some(after) => {
            let digits = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            (&after[..digits], &after[digits..])
        }
        None => ("", rest),
    };
    let mut nanos: String = fraction.chars().take(9).collect();
    while nanos.len() < 9 {
        nanos.push('0');
    }
    let days = days_from_civil(year, month, day);
    Some((
        days,
        hour * 3600 + minute * 60 + second,
        nanos.parse().ok()?,
        zone,
    ))
}

/// The days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn rfc3339_matches_known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap_day = UNIX_EPOCH + Duration::from_millis(951_782_400_250);
        assert_eq!(rfc3339(leap_day), "2000-02-29T00:00:00.250Z");
        let session = UNIX_EPOCH + Duration::from_secs(1_796_110_189);
        assert_eq!(rfc3339(session), "2026-12-01T07:29:49.000Z");
    }

    const SECOND: i128 = 1_000_000_000;

    #[test]
    fn an_instant_is_read_with_its_offset() {
        // 2027-01-15T08:00:00Z
        let start = 1_800_000_000 * SECOND;
        assert_eq!(epoch_nanos("2027-01-15T08:00:00Z"), Some(start));
        assert_eq!(epoch_nanos("2027-01-15T08:00:00.000+00:00"), Some(start));
        assert_eq!(epoch_nanos("2027-01-15T09:30:00+01:30"), Some(start));
        assert_eq!(epoch_nanos("2027-01-15T03:00:00-05:00"), Some(start));
        assert_eq!(
            epoch_nanos("2027-01-15T08:00:00.25Z"),
            Some(start + SECOND / 4)
        );
        assert_eq!(epoch_nanos("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            epoch_nanos("2024-02-29T00:00:00Z"),
            Some(1_709_164_800 * SECOND)
        );
        // A local time without its offset, or text that is no time, names no instant.
        assert_eq!(epoch_nanos("2027-01-15T08:00:00"), None);
        assert_eq!(epoch_nanos("2027-01-15T08:00:00+0100"), None);
        assert_eq!(epoch_nanos("t1"), None);
        assert_eq!(epoch_nanos("2027-13-15T08:00:00Z"), None);
    }

    #[test]
    fn a_time_is_shown_as_written_or_in_utc_for_an_epoch_number_and_other_text_is_none() {
        let shown_as = |timestamp| shown(timestamp).map(|at| at.to_string());
        assert_eq!(
            shown_as("2026-11-30T09:00:12.345Z").as_deref(),
            Some("2026-11-30 09:00:12")
        );
        // The writer's own clock: its offset is not applied.
        assert_eq!(
            shown_as("2026-11-30T09:00:12+02:00").as_deref(),
            Some("2026-11-30 09:00:12")
        );
        assert_eq!(
            shown_as("2026-11-30 09:00:12").as_deref(),
            Some("2026-11-30 09:00:12")
        );
        assert_eq!(
            shown_as("1796126403000").as_deref(),
            Some("2026-12-01 12:00:03 UTC")
        );
        assert_eq!(
            shown_as("1796126403").as_deref(),
            Some("2026-12-01 12:00:03 UTC")
        );
        assert_eq!(shown_as("-1").as_deref(), Some("1969-12-31 23:59:59 UTC"));
        assert_eq!(shown_as("2026-11-30Té0:00:00"), None);
        assert_eq!(shown_as("t1"), None);
    }

    #[test]
    fn a_number_is_seconds_below_1e11_and_milliseconds_from_there() {
        assert_eq!(epoch_nanos("1800000000"), Some(1_800_000_000 * SECOND));
        assert_eq!(
            epoch_nanos("1800000000500"),
            Some(1_800_000_000 * SECOND + SECOND / 2)
        );
        assert_eq!(epoch_nanos("99999999999"), Some(99_999_999_999 * SECOND));
        assert_eq!(epoch_nanos("100000000000"), Some(100_000_000 * SECOND));
        assert_eq!(epoch_nanos("1e300"), None);
        assert_eq!(epoch_nanos("NaN"), None);
    }

    #[test]
    fn a_day_is_the_utc_day_and_a_local_time_keeps_its_date() {
        assert_eq!(
            utc_day("2026-11-30T09:00:00Z").as_deref(),
            Some("2026-11-30")
        );
        assert_eq!(
            utc_day("2026-11-30T23:30:00-02:00").as_deref(),
            Some("2026-12-01")
        );
        assert_eq!(
            utc_day("2026-12-01T00:30:00+01:00").as_deref(),
            Some("2026-11-30")
        );
        assert_eq!(
            utc_day("2026-11-30T23:30:00").as_deref(),
            Some("2026-11-30")
        );
        assert_eq!(utc_day("2026-11-30").as_deref(), Some("2026-11-30"));
        assert_eq!(utc_day("1764493200").as_deref(), Some("2025-11-30"));
        assert_eq!(utc_day("1764493200000").as_deref(), Some("2025-11-30"));
        assert_eq!(utc_day("-1").as_deref(), Some("1969-12-31"));
        assert_eq!(utc_day("yesterday"), None);
    }
}
