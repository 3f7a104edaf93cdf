//! The calls `watch` shows: the reasons log's records and the session logs' calls joined into one
//! entry per call, by call id.
//!
//! The gateway logs a reason before it hands the call on, so a call's log record usually comes
//! first and the agent's own record of it later; either may be the only one (no session log
//! followed; a call the layer never saw). Both become one entry: the first to come makes it, the
//! other fills in what it lacks. Gemini CLI records a call under `<tool>__<id>`, and a Gemini call
//! may have no id at all: then a recent entry of the same tool that touched the same thing is the
//! same call.
//!
//! Memory stays flat however long `watch` runs: only the last [`Calls::capacity`] entries are
//! kept (and the ids that lead to them); counts per session are kept for every session seen.

use std::collections::{HashMap, VecDeque};

use reasons::masking::Masking;
use reasons::reasons_log::{self, Logged};
use reasons::record::{CallRecord, Status};
use reasons::touched;
use reasons::visible::visible;
use serde_json::Value;

/// One call as `watch` shows it. Every text is as the logs hold it; renderings make it
/// [`visible`].
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// When, as the first record of it says (RFC 3339), if it says.
    pub time: Option<String>,
    /// Which agent's log recorded it (`claude-code`, `codex`…), else which part of the layer
    /// (`gateway`, `proxy`, `filter`).
    pub agent: String,
    /// The session, when known.
    pub session: Option<String>,
    pub tool: String,
    pub call_id: Option<String>,
    /// What it touched ([`touched::summary`]).
    pub touched: String,
    /// What its reason is: `present` with its text, or why there is none.
    pub status: Status,
    pub reason: Option<String>,
    /// Its arguments, when a session log recorded them.
    pub arguments: Option<Value>,
    /// Where a session log recorded it (`path:line`).
    pub place: Option<String>,
    /// Whether the reasons log holds it: its reason was taken off by the layer.
    pub logged: bool,
}

impl Call {
    fn from_logged(mut logged: Logged, masking: Masking) -> Call {
        masking.json(&mut logged.reason);
        let (status, reason) = Status::of_reason(&logged.reason);
        Call {
            time: logged.time,
            agent: logged.via.unwrap_or_else(|| "log".to_owned()),
            session: logged.session,
            tool: logged.tool,
            call_id: logged.call_id,
            touched: logged
                .touched
                .map(|touched| masking.text(&touched).into_owned())
                .unwrap_or_default(),
            status,
            reason,
            arguments: None,
            place: None,
            logged: true,
        }
    }

    fn from_record(mut record: CallRecord, masking: Masking) -> Call {
        // What it touched is masked as the reasons log's is (masked after its summary is cut),
        // so that a call without an id still meets its logged reason by what it touched.
        let touched = record
            .arguments
            .as_ref()
            .map(|arguments| masking.text(&touched::summary(arguments)).into_owned())
            .unwrap_or_default();
        masking.call(&mut record);
        Call {
            time: record.timestamp,
            agent: record.format.to_string(),
            session: record.session,
            touched,
            tool: record.tool,
            call_id: record.call_id,
            status: record.status,
            reason: record.reason,
            arguments: record.arguments,
            place: Some(format!("{}:{}", record.source, record.line)),
            logged: false,
        }
    }

    /// Whether the call lacks a reason (missing, blank, not a string).
    pub fn lacks_reason(&self) -> bool {
        self.status.lacks_reason()
    }

    /// The reason as it is shown: the model's claim, or why there is none, in words.
    pub fn reason_text(&self) -> String {
        match (self.status, self.reason.as_deref()) {
            (Status::Present, Some(reason)) => visible(reason.trim()).into_owned(),
            (Status::Blank, _) => "no reason (blank)".to_owned(),
            (Status::Invalid, _) => "no reason (not a string)".to_owned(),
            (Status::Declared, Some(reason)) => {
                format!("(the tool's own argument) {}", visible(reason.trim()))
            }
            (Status::Freeform, _) => "(free text: cannot carry a reason)".to_owned(),
            _ => "no reason".to_owned(),
        }
    }

    /// The time as `HH:MM:SS` ([`reasons::dates::shown`]); text that is no time as written.
    pub fn clock(&self) -> String {
        match self.time.as_deref() {
            Some(time) => match reasons::dates::shown(time) {
                Some(shown) => shown.clock,
                // A log's time is untrusted text like the rest.
                None => visible(time).into_owned(),
            },
            None => "--:--:--".to_owned(),
        }
    }

    /// The agent and the start of the session id.
    pub fn origin(&self) -> String {
        match &self.session {
            Some(session) => {
                let short: String = session.chars().take(8).collect();
                format!("{} {}", visible(&self.agent), visible(&short))
            }
            None => visible(&self.agent).into_owned(),
        }
    }

    /// What the call touched, as it is shown: `-` for nothing.
    pub fn touched_text(&self) -> String {
        if self.touched.is_empty() {
            "-".to_owned()
        } else {
            visible(&self.touched).into_owned()
        }
    }

    /// Takes from `other`, the same call's other record, what this one lacks.
    fn fill_from(&mut self, other: Call) {
        // The reasons log's one policy for an id logged more than once (`note_first`): the first
        // reason stands, a later record of it is a replay.
        let replayed = self.logged && other.logged;
        let other_says_more = !replayed
            && match (self.status, other.status) {
                (Status::Missing, theirs) => theirs != Status::Missing,
                (ours, Status::Present) => ours.lacks_reason(),
                _ => false,
            };
        if other_says_more {
            self.status = other.status;
            self.reason = other.reason;
        }
        self.time = self.time.take().or(other.time);
        self.session = self.session.take().or(other.session);
        self.call_id = self.call_id.take().or(other.call_id);
        if self.touched.is_empty() {
            self.touched = other.touched;
        }
        if other.place.is_some() {
            // The agent's own record names the agent better than the layer's.
            self.agent = other.agent;
            self.place = other.place;
            self.arguments = other.arguments;
        }
        self.logged |= other.logged;
    }
}

/// What a new record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A new call, at this sequence number.
    Added(u64),
    /// The call at this sequence number learnt more.
    Updated(u64),
}

/// Calls and reasons shown per session, for the coverage line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    pub calls: u64,
    /// Calls whose reason counts for or against coverage.
    pub audited: u64,
    pub present: u64,
}

impl Coverage {
    fn count(&mut self, status: Status, by: i64) {
        let add = |count: &mut u64| *count = count.saturating_add_signed(by);
        add(&mut self.calls);
        if status.is_audited() {
            add(&mut self.audited);
        }
        if status == Status::Present {
            add(&mut self.present);
        }
    }
}

/// How far back a call without an id is looked for by what it touched.
const RECENT_WITHOUT_ID: usize = 64;

/// The calls shown, newest last.
#[derive(Debug)]
pub struct Calls {
    calls: VecDeque<Call>,
    /// The sequence number of `calls[0]`.
    first: u64,
    capacity: usize,
    by_id: HashMap<String, u64>,
    coverage: HashMap<String, Coverage>,
    /// The session of the latest call, for the coverage line.
    latest_session: Option<String>,
    /// Whether reasons, what calls touched and their arguments are shown masked (`--mask`).
    masking: Masking,
}

impl Calls {
    /// Keeps at most `capacity` calls.
    pub fn new(capacity: usize) -> Calls {
        Calls {
            calls: VecDeque::with_capacity(capacity.min(4096)),
            first: 0,
            capacity: capacity.max(1),
            by_id: HashMap::new(),
            coverage: HashMap::new(),
            latest_session: None,
            masking: Masking::AsWritten,
        }
    }

    /// The same, its calls masked as `masking` says as they arrive.
    pub fn masked(self, masking: Masking) -> Calls {
        Calls { masking, ..self }
    }

    /// A record of the reasons log.
    pub fn add_logged(&mut self, logged: Logged) -> Change {
        self.add(Call::from_logged(logged, self.masking))
    }

    /// A call of a session log.
    pub fn add_record(&mut self, record: CallRecord) -> Change {
        self.add(Call::from_record(record, self.masking))
    }

    fn add(&mut self, call: Call) -> Change {
        match self.same_call(&call) {
            Some(seq) => {
                let index = (seq - self.first) as usize;
                let before = self.calls[index].clone();
                self.calls[index].fill_from(call);
                let after = self.calls[index].clone();
                self.recount(&before, &after);
                if let Some(id) = &after.call_id {
                    self.by_id.insert(id.clone(), seq);
                }
                Change::Updated(seq)
            }
            None => {
                let seq = self.first + self.calls.len() as u64;
                if let Some(id) = &call.call_id {
                    self.by_id.insert(id.clone(), seq);
                }
                self.coverage
                    .entry(session_key(&call))
                    .or_default()
                    .count(call.status, 1);
                self.latest_session = Some(session_key(&call));
                self.calls.push_back(call);
                if self.calls.len() > self.capacity {
                    let gone = self.calls.pop_front().expect("more than one call");
                    if let Some(id) = gone.call_id {
                        if self.by_id.get(&id) == Some(&self.first) {
                            self.by_id.remove(&id);
                        }
                    }
                    self.first += 1;
                }
                Change::Added(seq)
            }
        }
    }

    /// The entry already made for this call, if any: by id (Gemini CLI's `<tool>__<id>` and Pi's
    /// runtime's `<call id>|<item id>` too), else for a call without an id, a recent one of the
    /// same tool that touched the same thing, made by the other kind of record.
    fn same_call(&self, call: &Call) -> Option<u64> {
        if let Some(id) = &call.call_id {
            let api_id = reasons_log::gemini_api_id(&call.tool, id);
            let found = [
                Some(id.as_str()),
                api_id,
                reasons_log::responses_call_id(id),
            ]
            .into_iter()
            .flatten()
            .find_map(|id| self.by_id.get(id).copied())
            .filter(|&seq| seq >= self.first);
            if found.is_some() {
                return found;
            }
        }
        let from_log = call.logged;
        self.calls
            .iter()
            .enumerate()
            .rev()
            .take(RECENT_WITHOUT_ID)
            .find(|(_, shown)| {
                let other_kind = if from_log {
                    shown.place.is_some() && !shown.logged
                } else {
                    shown.logged && shown.place.is_none()
                };
                let either_without_id = call.call_id.is_none() || shown.call_id.is_none();
                other_kind
                    && either_without_id
                    && reasons_log::same_tool_same_touched(
                        &call.tool,
                        &call.touched,
                        &shown.tool,
                        &shown.touched,
                    )
            })
            .map(|(index, _)| self.first + index as u64)
    }

    fn recount(&mut self, before: &Call, after: &Call) {
        let key_before = session_key(before);
        self.coverage
            .entry(key_before.clone())
            .or_default()
            .count(before.status, -1);
        self.coverage
            .entry(session_key(after))
            .or_default()
            .count(after.status, 1);
        // A call the agent's log now names moves to the agent's session.
        if self.latest_session.as_deref() == Some(key_before.as_str()) {
            self.latest_session = Some(session_key(after));
        }
    }

    /// The call with this sequence number, while it is kept.
    pub fn get(&self, seq: u64) -> Option<&Call> {
        let index = seq.checked_sub(self.first)?;
        self.calls.get(usize::try_from(index).ok()?)
    }

    /// The calls kept, oldest first, with their sequence numbers.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, &Call)> + ExactSizeIterator {
        let first = self.first;
        self.calls
            .iter()
            .enumerate()
            .map(move |(index, call)| (first + index as u64, call))
    }

    /// How many calls are kept.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// The session of the latest call and its counts.
    pub fn latest_coverage(&self) -> Option<(&str, Coverage)> {
        let key = self.latest_session.as_deref()?;
        Some((key, self.coverage.get(key).copied().unwrap_or_default()))
    }
}

/// The key a call's coverage is counted under: its session (whichever log named it), else the
/// agent or part of the layer that recorded it.
fn session_key(call: &Call) -> String {
    match &call.session {
        Some(session) => {
            let short: String = session.chars().take(8).collect();
            format!("session {}", visible(&short))
        }
        None => visible(&call.agent).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use reasons::record::Format;
    use reasons::record::ReasonFrom;
    use serde_json::json;

    use super::*;

    fn logged(id: Option<&str>, tool: &str, touched: &str, reason: &str) -> Logged {
        Logged {
            time: Some("2026-12-01T10:11:12.000Z".into()),
            via: Some("gateway".into()),
            tool: tool.into(),
            call_id: id.map(Into::into),
            reason: json!(reason),
            touched: Some(touched.into()),
            session: None,
        }
    }

    fn record(id: Option<&str>, tool: &str, arguments: Value) -> CallRecord {
        let (status, reason) = Status::of_arguments(&arguments);
        CallRecord {
            source: "s.jsonl".into(),
            line: 3,
            format: Format::ClaudeCode,
            session: Some("sess-1234567890".into()),
            timestamp: Some("2026-12-01T10:11:13.000Z".into()),
            call_id: id.map(Into::into),
            tool: tool.into(),
            reason,
            status,
            reason_from: ReasonFrom::Call,
            arguments: Some(arguments),
        }
    }

    #[test]
    fn a_logged_reason_and_the_agents_record_of_the_call_are_one_call() {
        let mut calls = Calls::new(10);
        assert_eq!(
            calls.add_logged(logged(Some("t1"), "Bash", "ls", "Look")),
            Change::Added(0)
        );
        assert_eq!(
            calls.add_record(record(Some("t1"), "Bash", json!({"command": "ls"}))),
            Change::Updated(0)
        );
        assert_eq!(calls.len(), 1);
        let call = calls.get(0).unwrap();
        assert_eq!(call.reason.as_deref(), Some("Look"));
        assert_eq!(call.status, Status::Present);
        assert_eq!(call.agent, "claude-code");
        assert_eq!(call.place.as_deref(), Some("s.jsonl:3"));
        assert_eq!(
            calls.latest_coverage().unwrap().1,
            Coverage {
                calls: 1,
                audited: 1,
                present: 1
            }
        );
    }

    #[test]
    fn the_agents_record_first_takes_the_reason_logged_after_it() {
        let mut calls = Calls::new(10);
        calls.add_record(record(Some("t1"), "Bash", json!({"command": "ls"})));
        assert!(calls.get(0).unwrap().lacks_reason());
        assert_eq!(
            calls.add_logged(logged(Some("t1"), "Bash", "ls", "Look")),
            Change::Updated(0)
        );
        assert_eq!(calls.get(0).unwrap().reason.as_deref(), Some("Look"));
        let (_, coverage) = calls.latest_coverage().unwrap();
        assert_eq!(
            coverage,
            Coverage {
                calls: 1,
                audited: 1,
                present: 1
            }
        );
    }

    #[test]
    fn an_id_logged_twice_keeps_its_first_reason() {
        let mut calls = Calls::new(10);
        calls.add_logged(logged(Some("t1"), "Bash", "ls", "   "));
        calls.add_logged(logged(Some("t1"), "Bash", "ls", "Replayed"));
        calls.add_record(record(Some("t1"), "Bash", json!({"command": "ls"})));
        assert_eq!(calls.len(), 1);
        let call = calls.get(0).unwrap();
        assert_eq!(call.status, Status::Blank);
        assert_eq!(call.place.as_deref(), Some("s.jsonl:3"));
    }

    #[test]
    fn gemini_calls_join_by_their_prefixed_id_or_by_what_they_touched() {
        let mut calls = Calls::new(10);
        calls.add_logged(logged(Some("gc_1"), "run_shell_command", "ls", "Look"));
        let mut prefixed = record(
            Some("run_shell_command__gc_1"),
            "run_shell_command",
            json!({"command": "ls"}),
        );
        prefixed.format = Format::GeminiCli;
        assert_eq!(calls.add_record(prefixed), Change::Updated(0));
        calls.add_logged(logged(None, "run_shell_command", "pwd", "Where"));
        let mut invented = record(
            Some("run_shell_command_17_0"),
            "run_shell_command",
            json!({"command": "pwd", "reason": "Where"}),
        );
        invented.format = Format::GeminiCli;
        assert_eq!(calls.add_record(invented), Change::Updated(1));
        assert_eq!(calls.len(), 2);
    }

    #[test]
    fn different_calls_stay_apart_and_old_ones_are_let_go() {
        let mut calls = Calls::new(3);
        for n in 0..5 {
            let id = format!("t{n}");
            calls.add_logged(logged(Some(&id), "Bash", "ls", "Look"));
        }
        assert_eq!(calls.len(), 3);
        assert_eq!(calls.iter().next().unwrap().0, 2);
        assert!(calls.get(1).is_none());
        // A record for a call let go is a new entry, not a hole.
        assert_eq!(
            calls.add_record(record(Some("t0"), "Bash", json!({"command": "ls"}))),
            Change::Added(5)
        );
        assert!(calls.by_id.len() <= 3);
        // Two calls of the same tool and command, each with its id, are two calls.
        let mut calls = Calls::new(10);
        calls.add_logged(logged(Some("a"), "Bash", "ls", "One"));
        assert_eq!(
            calls.add_record(record(Some("b"), "Bash", json!({"command": "ls"}))),
            Change::Added(1)
        );
    }

    #[test]
    fn a_call_without_a_reason_says_so_in_words() {
        let mut calls = Calls::new(10);
        calls.add_record(record(Some("t1"), "Bash", json!({"command": "ls"})));
        calls.add_record(record(
            Some("t2"),
            "Bash",
            json!({"command": "ls", "reason": " "}),
        ));
        assert_eq!(calls.get(0).unwrap().reason_text(), "no reason");
        assert_eq!(calls.get(1).unwrap().reason_text(), "no reason (blank)");
        let hostile = logged(Some("t3"), "Bash", "ls", "ok\u{1b}[2J\u{202e}");
        calls.add_logged(hostile);
        assert_eq!(calls.get(2).unwrap().reason_text(), "ok␛[2J<U+202E>");
    }
}
