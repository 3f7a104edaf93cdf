//! `watch`'s full-screen view, drawn with ratatui on crossterm: the calls, newest at the bottom,
//! each with what it touched first and the model's reason beside it.
//!
//! Keys: ↑/↓ (k/j), PgUp/PgDn and Home/End scroll (End follows the newest call again); Enter
//! shows the selected call's arguments; `m` shows only calls without a reason; `/` filters by
//! tool or text (Enter keeps the filter, Esc clears it); `q` (or Ctrl-C) quits. The terminal is
//! given back as it was on quitting and on a panic (ratatui's `init` installs the hook).

use std::path::Path;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph, Wrap};
use ratatui::{DefaultTerminal, Frame};
use reasons::stats;
use reasons::visible::visible;

use super::{Arrival, Call, Calls};
use crate::program::exit_codes::ExitCode;

/// How long the view waits for a key before it looks for new calls again.
const TICK: Duration = Duration::from_millis(10);

/// What the person has asked the view to show.
#[derive(Debug, Default)]
struct View {
    /// The selected call; `None` follows the newest.
    selected: Option<u64>,
    /// Whether the selected call's arguments are shown.
    expanded: bool,
    /// Only calls without a reason.
    only_missing: bool,
    /// Only calls whose tool or text holds this (case-insensitive).
    filter: String,
    /// Whether keys are typed into the filter.
    typing: bool,
    /// The last thing a follower said.
    note: Option<String>,
}

impl View {
    fn shows(&self, call: &Call) -> bool {
        if self.only_missing && !call.lacks_reason() {
            return false;
        }
        if self.filter.is_empty() {
            return true;
        }
        let needle = self.filter.to_lowercase();
        [
            call.tool.as_str(),
            call.touched.as_str(),
            call.reason.as_deref().unwrap_or(""),
            call.agent.as_str(),
            call.session.as_deref().unwrap_or(""),
        ]
        .iter()
        .any(|text| text.to_lowercase().contains(&needle))
    }
}

pub fn run(
    arrivals: Receiver<Arrival>,
    calls: Calls,
    reasons_log: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    // `init` enters raw mode and the alternate screen, and installs a panic hook that leaves
    // them; the cursor the view hides is shown again by ours, before theirs.
    let mut terminal = ratatui::init();
    let restore_terminal = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        show_cursor();
        restore_terminal(info);
    }));
    let result = event_loop(&mut terminal, arrivals, calls, reasons_log);
    ratatui::restore();
    show_cursor();
    result
}

fn show_cursor() {
    use std::io::Write;
    let mut stdout = std::io::stdout();
    let _ = ratatui::crossterm::execute!(stdout, ratatui::crossterm::cursor::Show);
    let _ = stdout.flush();
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    arrivals: Receiver<Arrival>,
    mut calls: Calls,
    reasons_log: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let colour = std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let title = match reasons_log {
        Some(log) => format!("reasons watch · {}", visible(&log.display().to_string())),
        None => "reasons watch".to_owned(),
    };
    let mut view = View::default();
    let mut dirty = true;
    loop {
        // Everything that has arrived, then one frame.
        loop {
            match arrivals.try_recv() {
                Ok(Arrival::Logged(logged)) => {
                    calls.add_logged(logged);
                }
                Ok(Arrival::Call(record)) => {
                    calls.add_record(record);
                }
                Ok(Arrival::Note(note)) => view.note = Some(visible(&note).into_owned()),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
            dirty = true;
        }
        if dirty {
            terminal.draw(|frame| draw(frame, &calls, &view, &title, colour))?;
            dirty = false;
        }
        if event::poll(TICK)? {
            if let Event::Key(key) = event::read()? {
                if key.kind != KeyEventKind::Release
                    && !handle_key(key, &calls, &mut view, page(terminal))
                {
                    return Ok(ExitCode::Success);
                }
            }
            dirty = true;
        }
    }
}

/// The number of calls a page scrolls by.
fn page(terminal: &DefaultTerminal) -> usize {
    terminal
        .size()
        .map_or(10, |size| usize::from(size.height.saturating_sub(4)).max(1))
}

/// Acts on a key; `false` when it quits.
fn handle_key(key: KeyEvent, calls: &Calls, view: &mut View, page: usize) -> bool {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return false;
    }
    if view.typing {
        match key.code {
            KeyCode::Enter => view.typing = false,
            KeyCode::Esc => {
                view.typing = false;
                view.filter.clear();
            }
            KeyCode::Backspace => {
                view.filter.pop();
            }
            KeyCode::Char(c) => view.filter.push(c),
            _ => {}
        }
        return true;
    }
    let shown: Vec<u64> = calls
        .iter()
        .filter(|(_, call)| view.shows(call))
        .map(|(seq, _)| seq)
        .collect();
    let at = view
        .selected
        .and_then(|seq| shown.iter().position(|&shown| shown == seq));
    let last = shown.len().saturating_sub(1);
    let select = |view: &mut View, index: Option<usize>| {
        view.selected = index.and_then(|index| shown.get(index).copied());
    };
    match key.code {
        KeyCode::Char('q') | KeyCode::Esc => return false,
        KeyCode::Up | KeyCode::Char('k') => {
            select(view, Some(at.unwrap_or(last + 1).saturating_sub(1)))
        }
        KeyCode::Down | KeyCode::Char('j') => match at {
            Some(at) if at < last => select(view, Some(at + 1)),
            _ => view.selected = None,
        },
        KeyCode::PageUp => select(view, Some(at.unwrap_or(last).saturating_sub(page))),
        KeyCode::PageDown => match at {
            Some(at) if at + page < last => select(view, Some(at + page)),
            _ => view.selected = None,
        },
        KeyCode::Home | KeyCode::Char('g') => select(view, Some(0)),
        KeyCode::End | KeyCode::Char('G') => view.selected = None,
        KeyCode::Enter | KeyCode::Char(' ') => view.expanded = !view.expanded,
        KeyCode::Char('m') => view.only_missing = !view.only_missing,
        KeyCode::Char('/') => {
            view.typing = true;
            view.filter.clear();
        }
        _ => {}
    }
    true
}

fn draw(frame: &mut Frame, calls: &Calls, view: &View, title: &str, colour: bool) {
    let area = frame.area();
    let expanded_height = if view.expanded {
        (area.height / 2).max(3)
    } else {
        0
    };
    let [top, list_area, details_area, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(expanded_height),
        Constraint::Length(1),
    ])
    .areas(area);

    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(title.to_owned(), Style::new().add_modifier(Modifier::BOLD)),
            Span::raw("  "),
            Span::raw(coverage_line(calls)),
        ])),
        top,
    );

    let shown: Vec<(u64, &Call)> = calls.iter().filter(|(_, call)| view.shows(call)).collect();
    let selected_index = match view.selected {
        Some(seq) => shown.iter().position(|(shown, _)| *shown == seq),
        None => shown.len().checked_sub(1),
    };
    // Only the calls that fit are drawn: a frame costs the same with ten calls kept or ten
    // thousand. The selected call stays in the middle; with none, the newest is at the bottom.
    let height = usize::from(list_area.height).max(1);
    let end = match selected_index {
        Some(index) => (index + height / 2 + 1).clamp(height.min(shown.len()), shown.len()),
        None => shown.len(),
    };
    let start = end.saturating_sub(height);
    let items: Vec<ListItem> = shown[start..end]
        .iter()
        .map(|(_, call)| ListItem::new(call_line(call, colour)))
        .collect();
    let empty = items.is_empty();
    let highlight = if view.selected.is_some() {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new()
    };
    let list = List::new(items).highlight_style(highlight);
    let mut state = ListState::default().with_selected(selected_index.map(|index| index - start));
    frame.render_stateful_widget(list, list_area, &mut state);
    if empty {
        let waiting = if calls.len() == 0 {
            "waiting for calls…"
        } else {
            "no call matches (m: all calls, /: another filter)"
        };
        frame.render_widget(Paragraph::new(waiting), list_area);
    }

    if view.expanded {
        let selected = selected_index
            .and_then(|index| shown.get(index))
            .map(|(_, call)| *call);
        frame.render_widget(details(selected), details_area);
    }

    frame.render_widget(Paragraph::new(help_line(view)), bottom);
}

/// The latest session's calls and how many carried a reason.
fn coverage_line(calls: &Calls) -> String {
    match calls.latest_coverage() {
        Some((session, coverage)) => {
            let percent = stats::coverage(coverage.present, coverage.audited)
                .map_or_else(|| "-".to_owned(), stats::percent);
            format!(
                "{session}: {} calls, {} of {} with a reason ({percent})",
                coverage.calls, coverage.present, coverage.audited
            )
        }
        None => String::new(),
    }
}

/// One call: when, whose, the tool, what it touched (first, bold), then the reason as the
/// model's claim, or `NO REASON` in words.
fn call_line(call: &Call, colour: bool) -> Line<'static> {
    let dim = Style::new().add_modifier(Modifier::DIM);
    let touched = call.touched_text();
    let mut spans = vec![
        Span::styled(format!("{} ", call.clock()), dim),
        Span::styled(format!("{:<20} ", call.origin()), dim),
        Span::styled(
            format!("{} ", visible(&call.tool)),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::styled(touched, Style::new().add_modifier(Modifier::BOLD)),
        Span::raw("  "),
    ];
    if call.lacks_reason() {
        let style = if colour {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        };
        spans.push(Span::styled(
            format!("[{}]", call.reason_text().to_uppercase()),
            style,
        ));
    } else {
        spans.push(Span::styled("model's reason: ", dim));
        let style = if colour {
            Style::new().fg(Color::Cyan).add_modifier(Modifier::ITALIC)
        } else {
            Style::new().add_modifier(Modifier::ITALIC)
        };
        spans.push(Span::styled(call.reason_text(), style));
    }
    Line::from(spans)
}

/// The selected call in full: where it was recorded, its id, its reason and its arguments.
fn details(call: Option<&Call>) -> Paragraph<'static> {
    let Some(call) = call else {
        return Paragraph::new("no call selected");
    };
    let mut lines = vec![
        Line::from(format!(
            "{} · {} · id {}",
            visible(&call.tool),
            call.place.as_deref().map_or("reasons log".into(), visible),
            call.call_id.as_deref().map_or("none".into(), visible)
        )),
        Line::from(format!("model's reason: {}", call.reason_text())),
    ];
    match &call.arguments {
        Some(arguments) => {
            let pretty = serde_json::to_string_pretty(arguments).unwrap_or_default();
            lines.extend(
                pretty
                    .lines()
                    .map(|line| Line::from(visible(line).into_owned())),
            );
        }
        None => lines.push(Line::from(format!(
            "touched: {} (the reasons log holds no arguments; name the session log to see them)",
            call.touched_text()
        ))),
    }
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(ratatui::widgets::Block::bordered().title(" arguments "))
}

fn help_line(view: &View) -> Line<'static> {
    if view.typing {
        return Line::from(format!("/{}▏  (Enter keeps, Esc clears)", view.filter));
    }
    let mut help = String::from("↑↓ scroll  Enter arguments  m ");
    help.push_str(if view.only_missing {
        "all calls"
    } else {
        "only without a reason"
    });
    help.push_str("  / filter  q quit");
    if !view.filter.is_empty() {
        help.push_str(&format!("  [filter: {}]", view.filter));
    }
    if let Some(note) = &view.note {
        help.push_str("  · ");
        help.push_str(note);
    }
    Line::from(help)
}
