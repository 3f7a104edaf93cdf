//! The registry: every shape, one file each, and what follows from the list of them. A new
//! format is its name in `crate::record::format` and a file here that declares its [`Shape`],
//! listed in [`SHAPES`]; a format left without a shape, or a shape without tokens, does not
//! compile.

use std::sync::OnceLock;

use super::event_walk::{Visit, VisitFn, WalkOptions, Walker};
use crate::json::{Json, Object};
use crate::jsonl::prefilter::Prefilter;
use crate::record::Format;
use descriptor::{Outer, Shape};

mod anthropic;
mod antigravity;
mod claude_code;
mod cline;
mod codex;
mod copilot_cli;
mod crush;
mod cursor;
mod descriptor;
mod factory_droid;
mod gemini;
mod gemini_cli;
mod goose;
mod grok_cli;
mod hermes;
mod kilo;
mod kimi;
mod kiro_cli;
mod mcp;
mod openai_chat;
mod openai_responses;
mod openclaw;
mod opencode;
mod openhands;
mod pi;
mod qwen_code;
mod swe_agent;
mod vscode_copilot_chat;

/// Every shape, in the order they look at an object and test an outer record. Wrappers that hide
/// or mirror calls (Kimi events, OpenHands actions and observations, SWE-agent trajectories) come
/// before the shapes they contain. Qwen Code's records carry Claude Code's `parentUuid`, and a
/// Cline session Gemini CLI's `sessionId` and `messages`: each comes before the one it resembles.
/// VS Code's rounds hold `toolCalls` as Gemini CLI's records do, with `arguments` for `args`.
const SHAPES: [&Shape; 27] = [
    &qwen_code::SHAPE,
    &claude_code::SHAPE,
    &codex::SHAPE,
    &copilot_cli::SHAPE,
    &opencode::SHAPE,
    &kilo::SHAPE,
    &crush::SHAPE,
    &goose::SHAPE,
    &cursor::SHAPE,
    &kimi::SHAPE,
    &openhands::SHAPE,
    &cline::SHAPE,
    &gemini_cli::SHAPE,
    &swe_agent::SHAPE,
    &kiro_cli::SHAPE,
    &grok_cli::SHAPE,
    &antigravity::SHAPE,
    &hermes::SHAPE,
    &vscode_copilot_chat::SHAPE,
    &pi::SHAPE,
    &openclaw::SHAPE,
    &factory_droid::SHAPE,
    &mcp::SHAPE,
    &anthropic::SHAPE,
    &openai_responses::SHAPE,
    &gemini::SHAPE,
    &openai_chat::SHAPE,
];

// Every format has exactly one shape, and every shape names tokens: the prefilter would skip
// every line of a format without them, and its calls would vanish without a word.
const _: () = {
    let mut format = 0;
    while format < Format::ALL.len() {
        let mut shapes = 0;
        let mut shape = 0;
        while shape < SHAPES.len() {
            if SHAPES[shape].format as usize == Format::ALL[format] as usize {
                shapes += 1;
                let groups = SHAPES[shape].tokens;
                assert!(!groups.is_empty(), "a shape without prefilter tokens");
                let mut group = 0;
                while group < groups.len() {
                    assert!(
                        !groups[group].is_empty(),
                        "an empty group of prefilter tokens"
                    );
                    group += 1;
                }
            }
            shape += 1;
        }
        assert!(shapes == 1, "a format without exactly one shape in SHAPES");
        format += 1;
    }
};

/// How many shapes look at objects.
const VISITING: usize = {
    let mut count = 0;
    let mut shape = 0;
    while shape < SHAPES.len() {
        if SHAPES[shape].visit.is_some() {
            count += 1;
        }
        shape += 1;
    }
    count
};

/// The shapes' looks at an object, in the order of [`SHAPES`].
const VISITS: [VisitFn; VISITING] = {
    fn pass<'p>(_: Object<'p>, _: Option<&str>, _: &mut Walker<'_, 'p>) -> Visit {
        Visit::Pass
    }
    let mut visits: [VisitFn; VISITING] = [pass; VISITING];
    let mut count = 0;
    let mut shape = 0;
    while shape < SHAPES.len() {
        if let Some(visit) = SHAPES[shape].visit {
            visits[count] = visit;
            count += 1;
        }
        shape += 1;
    }
    visits
};

/// Any event: every shape, and catalogues.
const EVERY_SHAPE: WalkOptions = WalkOptions {
    shapes: &VISITS,
    catalogues: true,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

fn shape(format: Format) -> &'static Shape {
    SHAPES
        .iter()
        .find(|shape| shape.format == format)
        .expect("every format has a shape (checked when compiling)")
}

/// What the walk looks for in an event whose outer record is `container`'s.
pub(crate) fn looks(container: Option<Format>) -> WalkOptions {
    container
        .and_then(|format| shape(format).holds)
        .unwrap_or(EVERY_SHAPE)
}

/// The format the whole event belongs to, when its outer record says so: the same `tool_use`
/// block is `claude-code` in a transcript line and `anthropic` in an API payload.
pub(crate) fn container_format(event: Json<'_>) -> Option<Format> {
    let outer = Outer::new(event.as_object()?);
    SHAPES
        .iter()
        .find(|shape| {
            shape
                .container
                .is_some_and(|is_container| is_container(&outer))
        })
        .map(|shape| shape.format)
}

/// Hands over every call still being assembled from fragments: the source ended. The shapes go
/// last first, which hands OpenAI chat's calls over before Anthropic's, as it always has.
pub(crate) fn flush(walker: &mut Walker<'_, '_>) {
    for flush in SHAPES.iter().rev().filter_map(|shape| shape.flush) {
        flush(walker);
    }
}

/// The tokens the lines of `format` need; `None` (format not forced) needs every shape's,
/// because a stream that mixes shapes must still yield every call.
fn tokens(format: Option<Format>) -> Vec<&'static str> {
    let shapes: Vec<&Shape> = match format {
        Some(format) => vec![shape(format)],
        None => SHAPES.to_vec(),
    };
    let mut tokens = Vec::new();
    for token in shapes
        .iter()
        .flat_map(|shape| shape.tokens.iter().copied().flatten())
    {
        if !tokens.contains(token) {
            tokens.push(*token);
        }
    }
    tokens
}

/// What continues or ends a streamed call, whatever the format: fragments only ever join a
/// call a parsed line opened.
fn stream_tokens() -> Vec<&'static str> {
    SHAPES
        .iter()
        .flat_map(|shape| shape.stream_tokens.iter().copied())
        .collect()
}

fn make_prefilter(format: Option<Format>) -> Prefilter {
    let prefilter = Prefilter::new(&tokens(format), &stream_tokens());
    if format.is_some() {
        return prefilter;
    }
    // Reading any format, the lines that start the way one format's do are searched for that
    // format's tokens alone.
    let narrowing = SHAPES
        .iter()
        .find_map(|shape| Some((shape.line_start?, shape.format)));
    match narrowing {
        Some((start, format)) => prefilter.narrowed(start, self::prefilter(Some(format))),
        None => prefilter,
    }
}

/// The prefilter for `format`, made once: readers of many small files each need one.
pub(crate) fn prefilter(format: Option<Format>) -> &'static Prefilter {
    static MADE: [OnceLock<Prefilter>; Format::ALL.len() + 1] =
        [const { OnceLock::new() }; Format::ALL.len() + 1];
    let index = format
        .and_then(|format| Format::ALL.iter().position(|each| *each == format))
        .unwrap_or(Format::ALL.len());
    MADE[index].get_or_init(|| make_prefilter(format))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonl::prefilter::Hits;

    #[test]
    fn prefilter_passes_a_token_with_whitespace_after_the_colon() {
        let filter = make_prefilter(Some(Format::ClaudeCode));
        assert!(filter.may_hold_call(
            br#"{"content": [{"type":   "tool_use", "id": "t"}]}"#,
            false
        ));
    }

    #[test]
    fn prefilter_skips_a_token_inside_a_string() {
        let filter = make_prefilter(None);
        let line = br#"{"type":"user","content":"the log said {\"type\":\"tool_use\"}"}"#;
        assert!(!filter.may_hold_call(line, false));
    }

    #[test]
    fn prefilter_skips_a_result_line_that_only_names_a_tool_use_id() {
        let filter = make_prefilter(None);
        let line = br#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x"}]},"toolUseResult":"ok"}"#;
        assert!(!filter.may_hold_call(line, false));
    }

    #[test]
    fn hits_are_found_in_order_across_groups_of_a_block() {
        let filter = make_prefilter(None);
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
        let filter = make_prefilter(None);
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
            br#"{"type":"assistant.message","data":{"toolRequests":[]}}"#,
            br#"{"type":"tool.execution_start","data":{}}"#,
            br#"{"type":"session.start","data":{}}"#,
            br#"{"type":"tool","callID":"c"}"#,
            br#"{"type":"tool_call","data":{}}"#,
            br#"{"type":"toolRequest","id":"t"}"#,
            br#"{"type":"toolCall","id":"t"}"#,
            br#"{"type":"session","version":3,"id":"s"}"#,
            br#"{"type":"session_start","id":"s"}"#,
            br#"{"kind":"toolUse","data":{}}"#,
            br#"{"sessionUpdate":"tool_call"}"#,
            br#"{"toolCallRounds":[]}"#,
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
        assert_eq!(make_prefilter(None).searches(), 3);
        assert_eq!(make_prefilter(Some(Format::ClaudeCode)).searches(), 1);
        assert_eq!(make_prefilter(Some(Format::OpenaiResponses)).searches(), 2);
    }

    /// The first search runs until it finds something, whatever the order of the shapes: it is
    /// the one most lines that hold a call hold, not Qwen Code's `"functionCall"` because Qwen
    /// Code comes first (every byte of a Chat log was searched for `all"` then).
    #[test]
    fn the_search_not_limited_by_another_is_the_common_one() {
        assert_eq!(make_prefilter(None).first_search(), b"\"tool");
    }

    #[test]
    fn a_transcript_event_line_is_searched_for_tool_use_only() {
        let filter = make_prefilter(None);
        let transcript = br#"{"parentUuid":"p","toolUseResult":{"type":"function_call"}}"#;
        assert!(!filter.for_line(transcript).may_hold_call(transcript, false));
        let with_call = br#"{"parentUuid":"p","message":{"content":[{"type":"tool_use"}]}}"#;
        assert!(filter.for_line(with_call).may_hold_call(with_call, false));
        let other = br#"{"payload":{"type":"function_call"}}"#;
        assert!(filter.for_line(other).may_hold_call(other, false));
        // A format given on the command line narrows every line already.
        let forced = make_prefilter(Some(Format::Codex));
        assert!(forced.for_line(transcript).may_hold_call(transcript, false));
    }

    #[test]
    fn runs_part_transcript_event_lines_from_the_others_in_order() {
        let filter = make_prefilter(None);
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
        let forced = make_prefilter(Some(Format::ClaudeCode));
        assert_eq!(forced.runs(block.as_bytes(), &ends).count(), 1);
    }

    #[test]
    fn lines_that_continue_a_stream_pass_only_while_one_is_open() {
        for format in [None, Some(Format::Anthropic), Some(Format::OpenaiChat)] {
            let filter = make_prefilter(format);
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
        let prefilter = make_prefilter(None);
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
        let filter = make_prefilter(None);
        let block = b"{\"finish_reason\":0}\n{\"finish_reason\":1}\n{\"finish_reason\":2}\n";
        let mut hits = Hits::new(&filter, block);
        assert_eq!(hits.next(0, true), Some(1));
        assert_eq!(hits.next(20, false), None);
        assert_eq!(hits.next(40, true), Some(41));
    }
}
