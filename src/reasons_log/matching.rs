//! The rules by which a logged reason meets its call when the ids do not simply agree: Gemini
//! CLI's `<tool>__<id>`, Pi's and OpenClaw's `<call id>|<item id>`, and a call known without an
//! id (the same tool, the same thing touched). The audit's join, the hooks and `watch` all match
//! by these.

/// The API's id within an id Gemini CLI records: it records a call under `<tool>__<id>`, the
/// API's `functionCall.id` behind its tool's name, where the layer logged the API's id. `None`
/// for an id not of that form. The one rule by which the audit's join and `watch` match the two.
pub fn gemini_api_id<'a>(tool: &str, call_id: &'a str) -> Option<&'a str> {
    call_id.strip_prefix(tool)?.strip_prefix("__")
}

/// The API's call id within an id Pi's runtime (Pi, OpenClaw) records for a call of the OpenAI
/// Responses API: `<call_id>|<item id>` (`call_x|fc_x`), the call's id and its output item's
/// joined at the first `|`, where the layer logged the call's id. `None` for an id not of that
/// form (either side empty, as their runtime reads it too).
pub fn responses_call_id(call_id: &str) -> Option<&str> {
    let (call, item) = call_id.split_once('|')?;
    (!call.is_empty() && !item.is_empty()).then_some(call)
}

/// Whether a call known without an id is the call a record was logged for: the same tool, and
/// the same thing touched (an empty summary says nothing, and matches nothing). The one rule by
/// which a hook finds the reason of a call that arrives without an id and `watch` puts a logged
/// reason beside the call an agent's log records.
pub fn same_tool_same_touched(
    tool: &str,
    touched: &str,
    other_tool: &str,
    other_touched: &str,
) -> bool {
    tool == other_tool && !touched.is_empty() && touched == other_touched
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_without_an_id_is_matched_by_tool_and_what_it_touched_never_by_nothing() {
        assert!(same_tool_same_touched("Bash", "ls", "Bash", "ls"));
        assert!(!same_tool_same_touched("Bash", "ls", "Read", "ls"));
        assert!(!same_tool_same_touched("Bash", "ls", "Bash", "ls -l"));
        assert!(!same_tool_same_touched("Bash", "", "Bash", ""));
        assert_eq!(gemini_api_id("Bash", "Bash__c1"), Some("c1"));
        assert_eq!(gemini_api_id("Bash", "Read__c1"), None);
        assert_eq!(gemini_api_id("Bash", "c1"), None);
    }

    #[test]
    fn a_call_and_item_id_is_matched_by_its_call_part() {
        assert_eq!(responses_call_id("call_x|fc_x"), Some("call_x"));
        assert_eq!(responses_call_id("call_x|fc_x|more"), Some("call_x"));
        for id in ["call_x", "|fc_x", "call_x|", "|"] {
            assert_eq!(responses_call_id(id), None, "{id}");
        }
    }
}
