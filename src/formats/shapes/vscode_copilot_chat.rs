//! VS Code GitHub Copilot Chat sessions (`<User>/workspaceStorage/<hash>/chatSessions/<id>.json`,
//! or `globalStorage/emptyWindowChatSessions/`): one document `{"version", "requesterUsername",
//! "responderUsername", "sessionId", "requests": [...]}`. A request's calls are what the model
//! asked for in each round, `result.metadata.toolCallRounds[].toolCalls[]` (`id`, `name`,
//! `arguments` as JSON text); its `response` shows each call again to the person
//! (`toolInvocationSerialized`, the tool's id, no arguments), and `toolCallResults` holds the
//! outputs by call id. The rounds are found wherever they sit, so the JSON lines newer builds
//! keep (a snapshot, then the changes to it) are read too.

use super::descriptor::{Outer, Shape};
use crate::formats::event_walk::{id_at, str_at, Call, Visit, WalkOptions, Walker};
use crate::json::{Json, Object};
use crate::record::Format;

pub(crate) const SHAPE: Shape = Shape {
    container: Some(is_chat_session),
    holds: Some(CHAT_SESSION),
    ..Shape::visiting(Format::VscodeCopilotChat, visit, &[&["\"toolCallRounds\""]])
};

const CHAT_SESSION: WalkOptions = WalkOptions {
    shapes: &[visit],
    catalogues: false,
    sessions: WalkOptions::SESSIONS,
    times: WalkOptions::TIMES,
};

fn is_chat_session(outer: &Outer<'_>) -> bool {
    outer.map.get("requests").is_some_and(Json::is_array)
        && (outer.map.contains_key("responderUsername")
            || outer.map.contains_key("requesterUsername"))
}

pub(crate) fn visit<'p>(map: Object<'p>, key: Option<&str>, walk: &mut Walker<'_, 'p>) -> Visit {
    match key {
        // Gemini CLI's `toolCalls` hold `args`; a round's hold `arguments`, as JSON text.
        Some("toolCalls") if map.get("arguments").is_some_and(Json::is_string) => {
            let Some(name) = str_at(map, "name") else {
                return Visit::Pass;
            };
            let arguments = walk.arguments(map.get("arguments"));
            walk.call(Call {
                format: Format::VscodeCopilotChat,
                call_id: id_at(map, "id"),
                tool: name.into_owned(),
                arguments,
                freeform: false,
            });
            Visit::Skip
        }
        Some("toolCallResults") => Visit::Skip,
        _ => Visit::Pass,
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::tests::support::{brief, expect, records};
    use crate::record::Format;
    use crate::record::Status::{Missing, Present};

    #[test]
    fn round_tool_calls_are_calls_and_their_mirrors_and_results_are_not() {
        let text = "{\n \"version\": 3,\n \"requesterUsername\": \"me\",\n \"responderUsername\": \"GitHub Copilot\",\n \"sessionId\": \"v-1\",\n \"requests\": [\n  {\"requestId\": \"r1\", \"timestamp\": 1762883113000, \"response\": [\n   {\"kind\": \"toolInvocationSerialized\", \"toolId\": \"copilot_readFile\", \"toolCallId\": \"c1\", \"isComplete\": true}\n  ], \"result\": {\"metadata\": {\"toolCallRounds\": [{\"response\": \"\", \"toolCalls\": [\n   {\"id\": \"c1\", \"name\": \"read_file\", \"arguments\": \"{\\\"filePath\\\":\\\"a\\\",\\\"reason\\\":\\\"See a.\\\"}\"},\n   {\"id\": \"c2\", \"name\": \"grep_search\", \"arguments\": \"{\\\"query\\\":\\\"x\\\"}\"}\n  ], \"id\": \"round\"}], \"toolCallResults\": {\"c1\": {\"content\": [{\"toolCalls\": [{\"id\": \"f\", \"name\": \"fake\", \"arguments\": \"{}\"}]}]}}}}}\n ]\n}\n";
        assert_eq!(
            brief(text),
            expect(&[(10, "read_file", Present), (11, "grep_search", Missing)])
        );
        let call = &records(text)[0];
        assert_eq!(call.format, Format::VscodeCopilotChat);
        assert_eq!(call.session.as_deref(), Some("v-1"));
        assert_eq!(call.call_id.as_deref(), Some("c1"));
        assert_eq!(call.timestamp.as_deref(), Some("1762883113000"));
    }
}
