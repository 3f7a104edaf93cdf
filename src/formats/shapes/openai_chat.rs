//! OpenAI Chat Completions `tool_calls[].{id, function: {name, arguments}}`: in responses, in
//! request histories, and in streamed chunks whose fragments are joined per index.

use super::descriptor::Shape;
use crate::apis::openai_chat::{index_or_position, Fragment, StreamKey, StreamedCall};
use crate::formats::catalogue;
use crate::formats::event_walk::{id_at, str_at, str_is, Call, Visit, Walker};
use crate::formats::fragments::Place;
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    stream_tokens: &["\"finish_reason\""],
    flush: Some(flush),
    ..Shape::visiting(Format::OpenaiChat, visit, &[TOKENS, catalogue::TOKENS])
};

/// A message's or a chunk's `tool_calls`.
pub(crate) const TOKENS: &[&str] = &["\"tool_calls\""];

pub(crate) fn visit<'p>(map: Object<'p>, key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    if str_is(map, "role", "tool") {
        return Visit::Skip;
    }
    if key == Some("tool_calls") {
        return if tool_call(map, walk) {
            Visit::Skip
        } else {
            Visit::Pass
        };
    }
    if is_chunk(map) {
        read_chunk(map, walk);
        return Visit::Skip;
    }
    Visit::Pass
}

/// Records the call an entry of `tool_calls` is (`{id, function: {name, arguments}}`); false
/// when it is not one. Hermes keeps its lists of them as JSON text, and decodes them to here.
pub(crate) fn tool_call(map: Object<'_>, walk: &mut Walker<'_, '_>) -> bool {
    let function = map.get("function").and_then(Json::as_object);
    let Some((function, name)) =
        function.and_then(|function| Some((function, str_at(function, "name")?)))
    else {
        return false;
    };
    let arguments = walk.arguments(function.get("arguments"));
    walk.call(Call {
        format: Format::OpenaiChat,
        call_id: id_at(map, "id"),
        tool: name.into_owned(),
        arguments,
        freeform: false,
    });
    true
}

fn is_chunk(map: Object<'_>) -> bool {
    str_is(map, "object", "chat.completion.chunk")
        || map
            .get("choices")
            .and_then(Json::as_array)
            .is_some_and(|mut choices| {
                choices.any(|choice| {
                    choice
                        .as_object()
                        .is_some_and(|choice| choice.contains_key("delta"))
                })
            })
}

fn read_chunk(map: Object<'_>, walk: &mut Walker) {
    let completion = id_at(map, "id");
    let choices = map.get("choices").and_then(Json::as_array);
    let mut ended = Vec::new();
    for (position, choice) in choices.into_iter().flatten().enumerate() {
        let Some(choice) = choice.as_object() else {
            continue;
        };
        let choice_index = index_or_position(choice.get("index").and_then(Json::as_u64), position);
        let stream = (completion.clone(), choice_index);
        let fragments = choice
            .get("delta")
            .and_then(Json::as_object)
            .and_then(|delta| delta.get("tool_calls"))
            .and_then(Json::as_array);
        for (position, fragment) in fragments.into_iter().flatten().enumerate() {
            if let Some(fragment) = fragment.as_object() {
                add_fragment(walk, &stream, position, fragment, &mut ended);
            }
        }
        if choice
            .get("finish_reason")
            .is_some_and(|reason| !reason.is_null())
        {
            walk.fragments.chat.finish(&stream, &mut ended);
        }
    }
    for call in ended {
        finish(walk, call);
    }
}

fn add_fragment(
    walk: &mut Walker,
    stream: &StreamKey,
    position: usize,
    fragment: Object<'_>,
    ended: &mut Vec<StreamedCall<Place>>,
) {
    let id = id_at(fragment, "id");
    let function = fragment.get("function").and_then(Json::as_object);
    let name = function.and_then(|function| str_at(function, "name"));
    let arguments = function.and_then(|function| str_at(function, "arguments"));
    let fragment = Fragment {
        index: index_or_position(fragment.get("index").and_then(Json::as_u64), position),
        id: id.as_deref(),
        name: name.as_deref(),
        arguments: arguments.as_deref(),
    };
    // Calls ended by this fragment go out at once, before the call it starts.
    let before = ended.len();
    let place = walk
        .fragments
        .chat
        .starts(stream, &fragment)
        .then(|| walk.place());
    walk.fragments
        .chat
        .fragment(stream, fragment, || place.unwrap_or_default(), ended);
    for call in ended.drain(before..).collect::<Vec<_>>() {
        finish(walk, call);
    }
}

fn finish(walk: &mut Walker, call: StreamedCall<Place>) {
    if call.name.is_empty() {
        return;
    }
    let arguments = walk.string_arguments(&call.arguments);
    walk.call_at(
        Call {
            format: Format::OpenaiChat,
            call_id: call.id,
            tool: call.name,
            arguments,
            freeform: false,
        },
        call.with,
    );
}

/// Hands over every streamed call still open: the stream ended without a finish reason.
pub(crate) fn flush(walk: &mut Walker) {
    let mut ended = Vec::new();
    walk.fragments.chat.end(&mut ended);
    for call in ended {
        finish(walk, call);
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Status::{Freeform, Missing, Present};

    #[test]
    fn tool_calls_are_calls_and_their_arguments_string_is_decoded() {
        let text = r#"{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\",\"reason\":\"asked\"}"}}]}}]}"#;
        let call = &records(text)[0];
        assert_eq!(
            (call.tool.as_str(), call.reason.as_deref()),
            ("get_weather", Some("asked"))
        );
    }

    #[test]
    fn role_tool_messages_are_never_calls() {
        let text = r#"{"messages":[{"role":"tool","tool_call_id":"c","content":"x","tool_calls":[{"id":"c","function":{"name":"n","arguments":"{}"}}]}]}"#;
        assert!(records(text).is_empty());
    }

    #[test]
    fn arguments_that_are_not_a_json_object_are_freeform() {
        let text = r#"{"tool_calls":[{"id":"c","function":{"name":"sh","arguments":"ls -la"}}]}"#;
        assert_eq!(brief(text), expect(&[(1, "sh", Freeform)]));
    }

    #[test]
    fn streamed_fragments_are_joined_per_index_and_handed_over_at_the_finish() {
        let chunk = |delta: &str, finish: &str| {
            format!(
                r#"{{"id":"cc","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
            )
        };
        let text = [
            chunk(r#"{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"first","arguments":""}}]}"#, "null"),
            chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"reason\":"}}]}"#, "null"),
            chunk(r#"{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"second","arguments":"{}"}}]}"#, "null"),
            chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":" \"r\"}"}}]}"#, "null"),
            chunk("{}", r#""tool_calls""#),
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[(1, "first", Present), (3, "second", Missing)])
        );
    }

    #[test]
    fn a_finish_chunk_without_fragments_ends_its_calls_before_the_next_stream() {
        // Streams logged without completion ids share one key: only the finish tells them apart.
        let chunk = |delta: &str, finish: &str| {
            format!(r#"{{"choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#)
        };
        let call = |name: &str| {
            format!(
                r#"{{"tool_calls":[{{"index":0,"function":{{"name":"{name}","arguments":"{{}}"}}}}]}}"#
            )
        };
        let text = [
            chunk(&call("first"), "null"),
            chunk("{}", r#""tool_calls""#),
            chunk(&call("second"), "null"),
            chunk(r#"{"content":""}"#, r#""stop""#),
            chunk(&call("third"), "null"),
        ]
        .join("\n");
        assert_eq!(
            brief(&text),
            expect(&[
                (1, "first", Missing),
                (3, "second", Missing),
                (5, "third", Missing)
            ])
        );
    }

    #[test]
    fn a_new_id_at_an_index_in_use_starts_the_next_streamed_call() {
        let chunk = |id: &str, name: &str| {
            format!(
                r#"{{"id":"cc","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"{id}","function":{{"name":"{name}","arguments":"{{}}"}}}}]}}}}]}}"#
            )
        };
        let text = format!("{}\n{}\n", chunk("a", "one"), chunk("b", "two"));
        assert_eq!(
            brief(&text),
            expect(&[(1, "one", Missing), (2, "two", Missing)])
        );
    }
}
