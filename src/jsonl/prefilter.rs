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
//! log of any format, three passes find every token (`"tool`, `all"`, `"session`). Lines
//! that start a known way can need fewer tokens (the lines of Claude Code transcript events hold
//! calls only as `tool_use` blocks): a block of lines is cut into runs of those lines and of the
//! others, each searched by its own prefilter.
//!
//! Which tokens a format needs is the format's to say (`formats::shapes`); this module only
//! searches for them.

use memchr::memmem::Finder;

/// Pieces several tokens share: one search finds them all, then the token is checked. In the
/// order they are searched: the first group searched is the one search not limited by another
/// group's hit, so it is the one that most lines holding a call hold (`"tool`).
const SHARED_ANCHORS: [&str; 4] = ["\"tool", "all\"", "\"content_block_", "\"session"];

/// Finds where lines that may hold a call are, by a search for its format's tokens.
pub(crate) struct Prefilter {
    /// Searched in every line.
    always: Vec<Group>,
    /// Searched only while a streamed call is open.
    streams: Vec<Group>,
    /// The length of the longest token.
    longest: usize,
    /// How lines start that a narrower prefilter searches instead, and that prefilter.
    narrower: Option<(&'static [u8], &'static Prefilter)>,
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
    // The first group is searched until its first hit, and the others only up to there (see
    // `Hits::next`). Ordered by the tokens' order, a rare anchor came first whenever the first
    // shape's tokens held it: reading a Chat log, `all"` (Qwen Code's `"functionCall"`) was
    // searched over every byte of every line to find nothing, 12% of the time `stats` took.
    groups.sort_by_key(|group| {
        SHARED_ANCHORS
            .iter()
            .position(|anchor| anchor.as_bytes() == group.finder.needle())
            .unwrap_or(SHARED_ANCHORS.len())
    });
    groups
}

impl Prefilter {
    /// Searches every line for `tokens`, and for `stream_tokens` too while a streamed call is
    /// open.
    pub(crate) fn new(tokens: &[&'static str], stream_tokens: &[&'static str]) -> Prefilter {
        let longest = tokens
            .iter()
            .chain(stream_tokens)
            .map(|token| token.len())
            .max();
        Prefilter {
            always: groups(tokens),
            streams: groups(stream_tokens),
            longest: longest.unwrap_or_default(),
            narrower: None,
        }
    }

    /// Lets `narrower` search the lines that start with `start` instead.
    pub(crate) fn narrowed(self, start: &'static [u8], narrower: &'static Prefilter) -> Prefilter {
        Prefilter {
            narrower: Some((start, narrower)),
            ..self
        }
    }

    /// How many searches go over every line.
    #[cfg(test)]
    pub(crate) fn searches(&self) -> usize {
        self.always.len()
    }

    /// What the first search looks for: the one that no other search's hit limits.
    #[cfg(test)]
    pub(crate) fn first_search(&self) -> &[u8] {
        self.always[0].finder.needle()
    }

    /// The prefilter for the line that starts `line`.
    pub(crate) fn for_line(&self, line: &[u8]) -> &Prefilter {
        match self.narrower {
            Some((start, narrower)) if line.starts_with(start) => narrower,
            _ => self,
        }
    }

    /// Cuts a block of whole lines, which end at `ends`, into runs of lines that one
    /// prefilter searches, in order: the lines the narrower one searches apart from the others.
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
        self.next = match self.prefilter.narrower {
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

    const TOKENS: &[&str] = &[
        "\"tool_use\"",
        "\"tool_calls\"",
        "\"function_call\"",
        "\"x\"",
    ];

    #[test]
    fn tokens_that_share_a_piece_share_a_search() {
        let prefilter = Prefilter::new(TOKENS, &[]);
        assert_eq!(prefilter.searches(), 3);
        assert!(prefilter.may_hold_call(br#"{"tool_calls":[]}"#, false));
        assert!(!prefilter.may_hold_call(br#"{"tool":[]}"#, false));
    }

    #[test]
    fn a_narrower_prefilter_searches_the_lines_that_start_its_way() {
        static NARROWER: std::sync::OnceLock<Prefilter> = std::sync::OnceLock::new();
        let narrower = NARROWER.get_or_init(|| Prefilter::new(&TOKENS[..1], &[]));
        let prefilter = Prefilter::new(TOKENS, &[]).narrowed(b"{\"n\":", narrower);
        let narrowed = br#"{"n":1,"tool_calls":[]}"#;
        assert!(!prefilter.for_line(narrowed).may_hold_call(narrowed, false));
        let other = br#"{"m":1,"tool_calls":[]}"#;
        assert!(prefilter.for_line(other).may_hold_call(other, false));
    }
}
