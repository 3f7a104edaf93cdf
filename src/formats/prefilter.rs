//! Skips JSONL lines that cannot hold a call without parsing them.
//!
//! Most bytes of an agent log are tool results; the lines that can hold a call (or the state a
//! call needs: a catalogue, a stream fragment, a session id) all contain one of a few JSON tokens,
//! quotes included. A token inside a JSON string has its quotes escaped (`\"tool_use\"`), so it
//! never matches, and whitespace around colons does not touch the token itself. The one way a
//! writer could spell a token differently is an escape inside it: `\/` is (PHP writes it), so
//! `tools\/call` is a token too; no writer escapes letters or `_`.
//!
//! Lines that only continue or end a streamed call (Anthropic `content_block_delta` and
//! `content_block_stop`, a new `message_start`, an OpenAI chunk's `finish_reason`) change
//! nothing while no streamed call is open, so their tokens are searched for only while one is.
//!
//! Each search is a pass over every byte, so tokens that share a piece share one search: in a
//! log of any format, three passes find every token (`"tool`, `all"`, `"session_meta"`). The
//! lines of Claude Code transcript events, which hold calls only as `tool_use` blocks, need
//! one: a block of lines is cut into runs of those lines and of the others.

use std::sync::OnceLock;

use memchr::memmem::Finder;

use crate::formats::Format;

const ANTHROPIC: &[&str] = &["\"tool_use\""];
const CHAT: &[&str] = &["\"tool_calls\""];
const RESPONSES: &[&str] = &[
    "\"function_call\"",
    "\"custom_tool_call\"",
    "\"local_shell_call\"",
    "\"web_search_call\"",
];
const CATALOGUE: &[&str] = &["\"tools\""];
const CODEX_SESSION: &[&str] = &["\"session_meta\""];
const GEMINI: &[&str] = &["\"functionCall\""];
const GEMINI_CLI: &[&str] = &["\"toolCalls\""];
// PHP and some others escape `/` in strings: the method may be written `tools\/call`.
const MCP: &[&str] = &["\"tools/call\"", "\"tools\\/call\""];
const OPENHANDS: &[&str] = &["\"tool_call_metadata\""];
const KIMI: &[&str] = &["\"tool.call\""];
/// What continues or ends a streamed call, whatever the format: fragments only ever join a call
/// a parsed line opened.
const STREAMS: &[&str] = &[
    "\"content_block_delta\"",
    "\"content_block_stop\"",
    "\"message_start\"",
    "\"finish_reason\"",
];

/// The tokens one format's lines need; `None` (format not forced) needs all of them, because a
/// stream that mixes shapes must still yield every call.
fn tokens(format: Option<Format>) -> Vec<&'static str> {
    let groups: &[&[&str]] = match format {
        Some(Format::ClaudeCode) => &[ANTHROPIC],
        Some(Format::Anthropic) => &[ANTHROPIC, CATALOGUE],
        Some(Format::Codex) => &[RESPONSES, CODEX_SESSION],
        Some(Format::OpenaiResponses) => &[RESPONSES, CATALOGUE],
        Some(Format::OpenaiChat | Format::SweAgent) => &[CHAT, CATALOGUE],
        Some(Format::Gemini) => &[GEMINI, CATALOGUE],
        Some(Format::GeminiCli) => &[GEMINI_CLI],
        Some(Format::Mcp) => &[MCP, CATALOGUE],
        Some(Format::Openhands) => &[OPENHANDS],
        Some(Format::Kimi) => &[KIMI],
        None => &[
            ANTHROPIC,
            CHAT,
            RESPONSES,
            CATALOGUE,
            CODEX_SESSION,
            GEMINI,
            GEMINI_CLI,
            MCP,
            OPENHANDS,
            KIMI,
        ],
    };
    groups
        .iter()
        .flat_map(|group| group.iter().copied())
        .collect()
}

/// How the line of a Claude Code transcript event starts: the transcript writes `parentUuid`
/// first, and an event whose first key it is holds calls only as `tool_use` blocks (the walk
/// looks for nothing else there). So wherever any format may come, such a line is searched for
/// Claude Code's one token, not for every format's.
const TRANSCRIPT_EVENT_START: &[u8] = b"{\"parentUuid\":";

/// Pieces several tokens share: one search finds them all, then the token is checked.
const SHARED_ANCHORS: [&str; 3] = ["\"tool", "all\"", "\"content_block_"];

/// Finds where lines that may hold a call are, by a search for its format's tokens.
pub(crate) struct Prefilter {
    /// Searched in every line.
    always: Vec<Group>,
    /// Searched only while a streamed call is open.
    streams: Vec<Group>,
    /// The length of the longest token.
    longest: usize,
    /// The narrower prefilter for transcript event lines, when this one reads any format.
    transcript_lines: Option<&'static Prefilter>,
}

/// One search for an anchor, and the tokens it stands for.
struct Group {
    finder: Finder<'static>,
    /// Each token, and where the anchor sits in it.
    tokens: Vec<(&'static [u8], usize)>,
}

/// One search per anchor: a token searches for the first shared anchor it contains that
/// another of `tokens` contains too, else for itself.
fn groups(tokens: &[&'static str]) -> Vec<Group> {
    let anchor_of = |token: &'static str| {
        let shared = SHARED_ANCHORS.iter().find(|anchor| {
            token.contains(**anchor)
                && tokens
                    .iter()
                    .filter(|other| other.contains(**anchor))
                    .count()
                    > 1
        });
        shared.copied().unwrap_or(token)
    };
    let mut groups: Vec<Group> = Vec::new();
    for &token in tokens {
        let anchor = anchor_of(token);
        let offset = token.find(anchor).unwrap_or_default();
        let entry = (token.as_bytes(), offset);
        match groups
            .iter_mut()
            .find(|group| group.finder.needle() == anchor.as_bytes())
        {
            Some(group) => group.tokens.push(entry),
            None => groups.push(Group {
                finder: Finder::new(anchor).into_owned(),
                tokens: vec![entry],
            }),
        }
    }
    groups
}

impl Prefilter {
    pub(crate) fn new(format: Option<Format>) -> Prefilter {
        let always = tokens(format);
        let longest = always.iter().chain(STREAMS).map(|token| token.len()).max();
        Prefilter {
            always: groups(&always),
            streams: groups(STREAMS),
            longest: longest.unwrap_or_default(),
            transcript_lines: format
                .is_none()
                .then(|| Prefilter::of(Some(Format::ClaudeCode))),
        }
    }

    /// The prefilter for `format`, made once: readers of many small files each need one.
    pub(crate) fn of(format: Option<Format>) -> &'static Prefilter {
        static MADE: [OnceLock<Prefilter>; Format::ALL.len() + 1] =
            [const { OnceLock::new() }; Format::ALL.len() + 1];
        let index = format
            .and_then(|format| Format::ALL.iter().position(|each| *each == format))
            .unwrap_or(Format::ALL.len());
        MADE[index].get_or_init(|| Prefilter::new(format))
    }

    /// The prefilter for the line that starts `line`.
    pub(crate) fn for_line(&self, line: &[u8]) -> &Prefilter {
        match self.transcript_lines {
            Some(narrower) if line.starts_with(TRANSCRIPT_EVENT_START) => narrower,
            _ => self,
        }
    }

    /// Cuts a block of whole lines, which end at `ends`, into runs of lines that one
    /// prefilter searches, in order: transcript event lines apart from the others.
    pub(crate) fn runs<'p, 'b>(&'p self, block: &'b [u8], ends: &'b [usize]) -> Runs<'p, 'b> {
        Runs {
            prefilter: self,
            block,
            ends,
            next: 0,
        }
    }

    /// Whether a line may hold a call; `streams_open` when a streamed call waits for more.
    pub(crate) fn may_hold_call(&self, line: &[u8], streams_open: bool) -> bool {
        Hits::new(self, line).next(0, streams_open).is_some()
    }

    fn group(&self, index: usize) -> &Group {
        match index.checked_sub(self.always.len()) {
            None => &self.always[index],
            Some(stream) => &self.streams[stream],
        }
    }
}

/// Lines of a block that one prefilter searches.
pub(crate) struct Run<'p> {
    /// Their indices in the block's line ends.
    pub(crate) lines: std::ops::Range<usize>,
    /// Where the first of them starts in the block.
    pub(crate) start: usize,
    pub(crate) prefilter: &'p Prefilter,
}

/// Runs of whole lines, each with the prefilter for all its lines.
pub(crate) struct Runs<'p, 'b> {
    prefilter: &'p Prefilter,
    block: &'b [u8],
    ends: &'b [usize],
    /// The first line not yet in a run.
    next: usize,
}

impl<'p> Iterator for Runs<'p, '_> {
    type Item = Run<'p>;

    fn next(&mut self) -> Option<Self::Item> {
        let first = self.next;
        if first >= self.ends.len() {
            return None;
        }
        let start_of = |line: usize| {
            line.checked_sub(1)
                .map_or(0, |before| self.ends[before] + 1)
        };
        let prefilter = self.prefilter.for_line(&self.block[start_of(first)..]);
        self.next = match self.prefilter.transcript_lines {
            None => self.ends.len(),
            Some(_) => (first + 1..self.ends.len())
                .find(|&line| {
                    let other = self.prefilter.for_line(&self.block[start_of(line)..]);
                    !std::ptr::eq(other, prefilter)
                })
                .unwrap_or(self.ends.len()),
        };
        Some(Run {
            lines: first..self.next,
            start: start_of(first),
            prefilter,
        })
    }
}

/// The places, in one block of lines, where a token starts.
pub(crate) struct Hits<'p, 'b> {
    prefilter: &'p Prefilter,
    block: &'b [u8],
    /// Per group (the prefilter's `always`, then its `streams`): a token start found and not
    /// yet passed, and how far the group is searched (no other token of it starts between the
    /// place asked about and there). Kept so that a group never searches the same bytes twice.
    found: Vec<Option<usize>>,
    searched_to: Vec<usize>,
}

impl<'p, 'b> Hits<'p, 'b> {
    pub(crate) fn new(prefilter: &'p Prefilter, block: &'b [u8]) -> Hits<'p, 'b> {
        let groups = prefilter.always.len() + prefilter.streams.len();
        Hits {
            prefilter,
            block,
            found: vec![None; groups],
            searched_to: vec![0; groups],
        }
    }

    /// The first place at or after `from` where a token starts; stream tokens count only when
    /// `streams_open`. A group is searched no further than the nearest token another group
    /// found: past it, the line is parsed anyway and the next question starts after it. So on
    /// logs where every line holds a token, most bytes are searched by no group at all.
    pub(crate) fn next(&mut self, from: usize, streams_open: bool) -> Option<usize> {
        let block = self.block;
        let groups = if streams_open {
            self.found.len()
        } else {
            self.prefilter.always.len()
        };
        let mut nearest: Option<usize> = None;
        for group in 0..groups {
            if let Some(hit) = self.found[group] {
                if hit >= from {
                    nearest = Some(nearest.map_or(hit, |nearest| nearest.min(hit)));
                    continue;
                }
                self.found[group] = None;
            }
            let start = from.max(self.searched_to[group]);
            let limit = nearest.unwrap_or(block.len()).min(block.len());
            if start >= limit {
                continue;
            }
            // A token that starts before `limit` may end after it.
            let window = &block[start..(limit + self.prefilter.longest).min(block.len())];
            let Group { finder, tokens } = self.prefilter.group(group);
            let hit = finder
                .find_iter(window)
                .map(|at| start + at)
                .find_map(|at| {
                    tokens.iter().find_map(|&(token, offset)| {
                        let token_start = at.checked_sub(offset)?;
                        (token_start >= start && block[token_start..].starts_with(token))
                            .then_some(token_start)
                    })
                });
            match hit {
                Some(hit) => {
                    self.found[group] = Some(hit);
                    self.searched_to[group] = hit;
                    nearest = Some(nearest.map_or(hit, |nearest| nearest.min(hit)));
                }
                None => self.searched_to[group] = limit,
            }
        }
        nearest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilter_passes_a_token_with_whitespace_after_the_colon() {
        let filter = Prefilter::new(Some(Format::ClaudeCode));
        assert!(filter.may_hold_call(
            br#"{"content": [{"type":   "tool_use", "id": "t"}]}"#,
            false
        ));
    }

    #[test]
    fn prefilter_skips_a_token_inside_a_string() {
        let filter = Prefilter::new(None);
        let line = br#"{"type":"user","content":"the log said {\"type\":\"tool_use\"}"}"#;
        assert!(!filter.may_hold_call(line, false));
    }

    #[test]
    fn prefilter_skips_a_result_line_that_only_names_a_tool_use_id() {
        let filter = Prefilter::new(None);
        let line = br#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x"}]},"toolUseResult":"ok"}"#;
        assert!(!filter.may_hold_call(line, false));
    }

    #[test]
    fn hits_are_found_in_order_across_groups_of_a_block() {
        let filter = Prefilter::new(None);
        let block =
            b"{\"type\":\"function_call\"}\n{\"a\":\"tool_use_id\"}\n{\"type\":\"tool_use\"}\n";
        let mut hits = Hits::new(&filter, block);
        let first = hits.next(0, false).expect("function_call");
        assert_eq!(&block[first..first + 15], b"\"function_call\"");
        let second = hits.next(first + 1, false).expect("tool_use");
        assert_eq!(&block[second..second + 10], b"\"tool_use\"");
        assert_eq!(hits.next(second + 1, false), None);
    }

    #[test]
    fn prefilter_for_any_format_passes_every_shape() {
        let filter = Prefilter::new(None);
        for line in [
            &br#"{"type":"tool_use"}"#[..],
            br#"{"tool_calls":[]}"#,
            br#"{"type":"function_call"}"#,
            br#"{"type":"custom_tool_call"}"#,
            br#"{"type":"local_shell_call"}"#,
            br#"{"type":"web_search_call"}"#,
            br#"{"functionCall":{}}"#,
            br#"{"toolCalls":[]}"#,
            br#"{"method":"tools/call"}"#,
            br#"{"method":"tools\/call"}"#,
            br#"{"type":"tool.call"}"#,
            br#"{"tools":[]}"#,
            br#"{"type":"session_meta"}"#,
            br#"{"tool_call_metadata":{}}"#,
        ] {
            assert!(
                filter.may_hold_call(line, false),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn any_format_needs_three_searches_and_one_format_fewer() {
        assert_eq!(Prefilter::new(None).always.len(), 3);
        assert_eq!(Prefilter::new(Some(Format::ClaudeCode)).always.len(), 1);
        assert_eq!(
            Prefilter::new(Some(Format::OpenaiResponses)).always.len(),
            2
        );
    }

    #[test]
    fn a_transcript_event_line_is_searched_for_tool_use_only() {
        let filter = Prefilter::new(None);
        let transcript = br#"{"parentUuid":"p","toolUseResult":{"type":"function_call"}}"#;
        assert!(!filter.for_line(transcript).may_hold_call(transcript, false));
        let with_call = br#"{"parentUuid":"p","message":{"content":[{"type":"tool_use"}]}}"#;
        assert!(filter.for_line(with_call).may_hold_call(with_call, false));
        let other = br#"{"payload":{"type":"function_call"}}"#;
        assert!(filter.for_line(other).may_hold_call(other, false));
        // A format given on the command line narrows every line already.
        let forced = Prefilter::new(Some(Format::Codex));
        assert!(forced.for_line(transcript).may_hold_call(transcript, false));
    }

    #[test]
    fn runs_part_transcript_event_lines_from_the_others_in_order() {
        let filter = Prefilter::new(None);
        let transcript = "{\"parentUuid\":1}\n";
        let other = "{\"type\":\"function_call\"}\n";
        let each = [
            transcript, transcript, other, transcript, other, other, transcript,
        ];
        let block = each.concat();
        let ends: Vec<usize> = memchr::memchr_iter(b'\n', block.as_bytes()).collect();
        let runs: Vec<(String, bool)> = filter
            .runs(block.as_bytes(), &ends)
            .map(|run| {
                let narrowed = !std::ptr::eq(run.prefilter, &filter);
                let text = run.lines.map(|line| each[line]).collect::<String>();
                assert!(block[run.start..].starts_with(&text));
                (text, narrowed)
            })
            .collect();
        let expected = [
            (transcript.repeat(2), true),
            (other.to_owned(), false),
            (transcript.to_owned(), true),
            (other.repeat(2), false),
            (transcript.to_owned(), true),
        ];
        assert_eq!(runs, expected);
        let forced = Prefilter::new(Some(Format::ClaudeCode));
        assert_eq!(forced.runs(block.as_bytes(), &ends).count(), 1);
    }

    #[test]
    fn lines_that_continue_a_stream_pass_only_while_one_is_open() {
        for format in [None, Some(Format::Anthropic), Some(Format::OpenaiChat)] {
            let filter = Prefilter::new(format);
            for line in [
                &br#"{"type":"content_block_delta","index":0,"delta":{}}"#[..],
                br#"{"type":"content_block_stop","index":0}"#,
                br#"{"type":"message_start","message":{}}"#,
                br#"{"id":"c","choices":[{"delta":{},"finish_reason":"stop"}]}"#,
            ] {
                assert!(!filter.may_hold_call(line, false));
                assert!(filter.may_hold_call(line, true));
            }
        }
    }

    /// Hits against the plain answer: the first start of any token at or after each place.
    #[test]
    fn hits_are_the_first_token_start_at_or_after_each_place() {
        let prefilter = Prefilter::new(None);
        let pieces = [
            &b"\"tool_use\""[..],
            b"\"tool_use_id\"",
            b"\"function_call\"",
            b"\"functionCall\"",
            b"\"session_meta\"",
            b"\"tools\"",
            b"\"toolCalls\"",
            b"\"web_search_call\"",
            b"\"call\"",
            b"\"tool",
            b"all\"",
            b"xx",
            b"\n",
            b"{",
        ];
        let tokens = tokens(None);
        let mut seed = 7u64;
        for _ in 0..300 {
            let mut block = Vec::new();
            for _ in 0..40 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                block.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            let plain = |from: usize| {
                (from..block.len()).find(|&at| {
                    tokens
                        .iter()
                        .any(|token| block[at..].starts_with(token.as_bytes()))
                })
            };
            let mut hits = Hits::new(&prefilter, &block);
            let mut from = 0;
            while from <= block.len() {
                let expected = plain(from);
                assert_eq!(hits.next(from, false), expected, "from {from}");
                // Like the reader: jump past a line with a token, else step on.
                from = expected.map_or(from + 7, |hit| hit + 3);
            }
        }
    }

    #[test]
    fn stream_tokens_found_while_open_are_found_again_after_a_pause() {
        let filter = Prefilter::new(None);
        let block = b"{\"finish_reason\":0}\n{\"finish_reason\":1}\n{\"finish_reason\":2}\n";
        let mut hits = Hits::new(&filter, block);
        assert_eq!(hits.next(0, true), Some(1));
        assert_eq!(hits.next(20, false), None);
        assert_eq!(hits.next(40, true), Some(41));
    }
}
