//! Coverage as inline SVG: one stacked bar per tool, one bar per day. The counts are those of a
//! `stats` report, and each bar carries them as data attributes, so a test (or a script) reads
//! the very numbers the chart is drawn from.

use maud::{html, Markup};
use reasons::record::Status;
use reasons::stats::{self, Counts, Group, Report, NONE};
use reasons::visible::cut_to;

use super::Text;

/// Tools drawn before the chart says "and N more"; the table under it has them all.
const MAX_TOOLS: usize = 20;

const WIDTH: f64 = 760.0;
const LABEL: f64 = 190.0;
const BARS: f64 = 430.0;
const ROW: f64 = 22.0;

/// Statuses in the order their segments are stacked.
const STACKED: [Status; 6] = Status::ALL;

/// The percentage a coverage is shown as, or a dash when no call is audited.
pub fn percent(counts: &Counts) -> String {
    counts
        .coverage
        .map_or_else(|| "–".to_owned(), stats::percent)
}

/// One sentence saying what a group's counts are, for a tooltip.
fn tooltip(key: &str, counts: &Counts) -> String {
    let parts: Vec<String> = STACKED
        .iter()
        .filter(|status| counts.count(**status) > 0)
        .map(|status| format!("{} {status}", counts.count(*status)))
        .collect();
    format!(
        "{key}: {} calls ({}); coverage {}",
        counts.calls,
        parts.join(", "),
        percent(counts)
    )
}

/// A name cut to fit the label column.
fn label(key: &str) -> String {
    cut_to(key, 26)
}

/// The data attributes every bar carries: its counts, as `stats` reports them.
macro_rules! counted {
    ($class:literal, $group:expr, $body:expr) => {
        html! {
            g class=($class) data-key=(Text(&$group.key))
                data-calls=($group.counts.calls)
                data-present=($group.counts.present) data-blank=($group.counts.blank)
                data-invalid=($group.counts.invalid) data-missing=($group.counts.missing)
                data-declared=($group.counts.declared) data-freeform=($group.counts.freeform)
            { title { (Text(&tooltip(&$group.key, &$group.counts))) } ($body) }
        }
    };
}

/// Calls per tool, each bar split by status, with its coverage beside it.
pub fn tools(report: &Report) -> Markup {
    let shown = &report.groups[..report.groups.len().min(MAX_TOOLS)];
    let most = shown
        .iter()
        .map(|group| group.counts.calls)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let height = ROW * shown.len() as f64 + 8.0;
    html! {
        svg.chart.tools viewBox={"0 0 " (WIDTH) " " (height)} role="img"
            aria-label="Calls per tool, split by the status of their reason" {
            @for (row, group) in shown.iter().enumerate() {
                @let y = ROW * row as f64 + 4.0;
                (counted!("bar", group, html! {
                    text.label x=(LABEL - 8.0) y=(y + 14.0) text-anchor="end" { (Text(&label(&group.key))) }
                    (segments(&group.counts, y, most))
                    text.value x=(LABEL + BARS + 10.0) y=(y + 14.0) {
                        tspan.coverage { (percent(&group.counts)) }
                        " of " (group.counts.calls)
                    }
                }))
            }
        }
        @if report.groups.len() > shown.len() {
            p.more { "and " (report.groups.len() - shown.len()) " more tools, in the table below" }
        }
    }
}

fn segments(counts: &Counts, y: f64, most: f64) -> Markup {
    let mut x = LABEL;
    let mut drawn = Vec::new();
    for status in STACKED {
        let count = counts.count(status);
        if count > 0 {
            let width = BARS * count as f64 / most;
            drawn.push((status, x, width));
            x += width;
        }
    }
    html! {
        @for (status, x, width) in drawn {
            rect class={"st-" (status)} x=(round(x)) y=(y + 2.0) width=(round(width.max(1.0))) height=(ROW - 6.0) {}
        }
    }
}

fn round(number: f64) -> f64 {
    (number * 10.0).round() / 10.0
}

/// The days with a date, in date order; calls without a timestamp are left to the table.
pub fn dated(report: &Report) -> Vec<&Group> {
    report
        .groups
        .iter()
        .filter(|group| group.key != NONE)
        .collect()
}

/// Coverage per day, one bar each, over an axis from 0 to 100%.
pub fn days(days: &[&Group]) -> Markup {
    const TOP: f64 = 18.0;
    const PLOT: f64 = 140.0;
    const LEFT: f64 = 44.0;
    let step = ((WIDTH - LEFT - 10.0) / days.len().max(1) as f64).min(72.0);
    // Days of one year are labelled by month and day; across years, by the whole date, which
    // needs more room. Every day is labelled when there is room; otherwise every n-th.
    let year = |group: &&Group| group.key.get(..4).map(str::to_owned);
    let one_year = days.first().map(year) == days.last().map(year);
    let room = if one_year { 40.0 } else { 66.0 };
    let label_every = ((room / step).ceil() as usize).max(1);
    let label = |key: &str| -> String {
        match key.get(5..) {
            Some(month_day) if one_year => month_day.to_owned(),
            _ => key.to_owned(),
        }
    };
    let height = TOP + PLOT + 40.0;
    html! {
        svg.chart.days viewBox={"0 0 " (WIDTH) " " (height)} role="img"
            aria-label="Coverage per day" {
            @for tick in [0.0, 50.0, 100.0] {
                @let y = TOP + PLOT - PLOT * tick / 100.0;
                line.grid x1=(LEFT) x2=(WIDTH - 6.0) y1=(y) y2=(y) {}
                text.axis x=(LEFT - 6.0) y=(y + 4.0) text-anchor="end" { (tick) "%" }
            }
            @for (at, day) in days.iter().enumerate() {
                @let x = LEFT + step * at as f64 + step * 0.15;
                @let width = round(step * 0.7);
                (counted!("day", day, html! {
                    @if let Some(coverage) = day.counts.coverage {
                        @let bar = PLOT * coverage / 100.0;
                        rect.st-present x=(round(x)) y=(round(TOP + PLOT - bar)) width=(width) height=(round(bar.max(1.0))) {}
                        rect.st-missing x=(round(x)) y=(TOP) width=(width) height=(round(PLOT - bar)) {}
                    } @else {
                        rect.st-freeform x=(round(x)) y=(TOP + PLOT - 2.0) width=(width) height="2" {}
                    }
                    text.count x=(round(x + width / 2.0)) y=(TOP - 5.0) text-anchor="middle" { (day.counts.calls) }
                    @if at % label_every == 0 {
                        text.axis x=(round(x + width / 2.0)) y=(TOP + PLOT + 16.0) text-anchor="middle" {
                            (Text(&label(&day.key)))
                        }
                    }
                }))
            }
            text.axis x=(LEFT) y=(height - 4.0) { "calls above each bar; coverage is its green part" }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(key: &str) -> Group {
        Group {
            key: key.to_owned(),
            counts: Counts {
                calls: 1,
                present: 1,
                coverage: Some(100.0),
                ..Counts::default()
            },
        }
    }

    fn labels(keys: &[&str]) -> Vec<String> {
        let groups: Vec<Group> = keys.iter().map(|key| day(key)).collect();
        let svg = days(&groups.iter().collect::<Vec<_>>()).into_string();
        svg.split("text-anchor=\"middle\">")
            .skip(1)
            .filter_map(|text| text.split('<').next())
            .filter(|text| text.contains('-'))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn days_of_one_year_are_labelled_by_month_and_day_and_across_years_by_date() {
        assert_eq!(labels(&["2026-01-02", "2026-03-04"]), ["01-02", "03-04"]);
        assert_eq!(
            labels(&["2025-12-31", "2026-01-01"]),
            ["2025-12-31", "2026-01-01"]
        );
    }
}
