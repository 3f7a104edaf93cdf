//! The Gemini envelope: declarations grouped under a tool's `functionDeclarations`, two schema
//! keys, and calls as `functionCall` parts or bare `functionCall` objects. The rules themselves
//! run over Gemini in every other test file through `Shape::Gemini` and the Gemini call shapes.

use serde_json::{json, Value};

use super::support::*;
use crate::apis::Api;
use crate::layer::{
    augment_declaration, reason_property, strip_call, strip_noting, Declaration, Listing,
    ReasonPosition, TakenReason, ToolNames, REASON_PARAM,
};

fn tracked(names: &[&str]) -> ToolNames {
    names.iter().map(|name| (*name).to_owned()).collect()
}

#[test]
fn declaration_with_openapi_parameters_gains_the_reason_property() {
    let declaration = json!({ "name": "read_file", "description": "Reads.", "parameters": {
        "type": "OBJECT", "properties": { "path": { "type": "STRING" } }, "required": ["path"] } });
    let augmented = augment_declaration(&declaration, ReasonPosition::Last).expect("augmentable");
    assert_eq!(
        augmented.pointer("/parameters/properties/reason"),
        Some(&reason_property())
    );
    // Gemini's own spelling of the type is kept: only a missing or non-string one is replaced.
    assert_eq!(
        augmented.pointer("/parameters/type"),
        Some(&json!("OBJECT"))
    );
    assert_eq!(
        augmented.pointer("/parameters/required"),
        declaration.pointer("/parameters/required")
    );
}

#[test]
fn declaration_with_parameters_json_schema_in_either_spelling_gains_the_reason_property() {
    for key in ["parametersJsonSchema", "parameters_json_schema"] {
        let declaration = json!({ "name": "run_shell_command", key: { "type": "object",
            "properties": { "command": { "type": "string" } } } });
        let augmented =
            augment_declaration(&declaration, ReasonPosition::Last).expect("augmentable");
        let pointer = format!("/{key}/properties/{REASON_PARAM}");
        assert_eq!(
            augmented.pointer(&pointer),
            Some(&reason_property()),
            "{key}"
        );
    }
}

#[test]
fn declaration_with_two_schemas_is_unreadable() {
    let declaration = json!({ "name": "both", "parameters": path_schema(),
        "parametersJsonSchema": path_schema() });
    assert_eq!(
        Declaration::classify(&declaration),
        Declaration::Unreadable {
            name: Some("both".into())
        }
    );
    let mut listing = Listing::new();
    assert_same_bytes(&listing.add(&declaration), &declaration);
    assert!(listing.tracked().is_empty());
}

#[test]
fn declaration_with_no_schema_is_unreadable_but_keeps_its_name_from_being_tracked() {
    let mut listing = Listing::new();
    listing.add_page(&[
        gemini_tool(vec![
            json!({ "name": "dup", "description": "No arguments." }),
        ]),
        gemini_tool(vec![Shape::Gemini.declare("dup", path_schema())]),
    ]);
    assert!(listing.tracked().is_empty());
}

#[test]
fn gemini_tool_is_a_group_augmented_declaration_by_declaration() {
    let tool = gemini_tool(vec![
        Shape::Gemini.declare("run_shell_command", path_schema()),
        json!({ "name": "glob", "parameters": path_schema() }),
        Shape::Gemini.declare("ticket", declaring_reason_schema()),
        json!({ "name": 7, "parameters": path_schema() }),
    ]);
    let mut listing = Listing::new();
    let published = listing.add(&tool);
    assert!(published
        .pointer("/functionDeclarations/0/parametersJsonSchema/properties/reason")
        .is_some());
    assert!(published
        .pointer("/functionDeclarations/1/parameters/properties/reason")
        .is_some());
    assert_same_bytes(
        &published["functionDeclarations"][2],
        &tool["functionDeclarations"][2],
    );
    assert_same_bytes(
        &published["functionDeclarations"][3],
        &tool["functionDeclarations"][3],
    );
    assert_eq!(listing.tracked(), tracked(&["glob", "run_shell_command"]));
    // Copied, never mutated: the request's own tool is as it came.
    assert!(tool
        .pointer("/functionDeclarations/0/parametersJsonSchema/properties/reason")
        .is_none());
}

#[test]
fn snake_case_group_is_read_too() {
    let tool = json!({ "function_declarations": [Shape::Gemini.declare("ls", path_schema())] });
    let mut listing = Listing::new();
    let published = listing.add(&tool);
    assert!(published
        .pointer("/function_declarations/0/parametersJsonSchema/properties/reason")
        .is_some());
    assert_eq!(listing.tracked(), tracked(&["ls"]));
}

#[test]
fn tools_without_function_declarations_pass_exactly() {
    let tools = [
        json!({ "googleSearch": {} }),
        json!({ "codeExecution": {} }),
        json!({ "urlContext": {} }),
        json!({ "functionDeclarations": "not an array" }),
    ];
    let mut listing = Listing::new();
    for (published, tool) in listing.add_page(&tools).iter().zip(&tools) {
        assert_same_bytes(published, tool);
    }
    assert!(listing.tracked().is_empty());
}

#[test]
fn other_keys_beside_the_group_are_kept_in_order() {
    let tool = json!({ "googleSearch": {}, "functionDeclarations": [
        Shape::Gemini.declare("ls", path_schema())], "x": 1 });
    let published = Listing::new().add(&tool);
    let keys: Vec<&String> = published.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["googleSearch", "functionDeclarations", "x"]);
}

#[test]
fn duplicate_name_across_groups_with_one_left_alone_is_untracked() {
    let mut listing = Listing::new();
    listing.add_page(&[
        gemini_tool(vec![Shape::Gemini.declare("dup", path_schema())]),
        gemini_tool(vec![Shape::Gemini.declare("dup", requiring_reason_schema())]),
    ]);
    assert!(listing.tracked().is_empty());
}

#[test]
fn part_and_bare_function_call_are_gemini_calls() {
    let part = json!({ "functionCall": { "name": "ls", "args": {} } });
    let bare = json!({ "name": "ls", "args": {}, "id": "x" });
    assert_eq!(Api::of_call(&part), Some(Api::Gemini));
    assert_eq!(Api::of_call(&bare), Some(Api::Gemini));
}

#[test]
fn bare_object_with_other_keys_is_no_gemini_call() {
    // A Gemini CLI session's record of a call, with its result: history, not a forward.
    let record = json!({ "id": "c1", "name": "ls", "args": { "reason": "r" },
        "result": [], "status": "success" });
    assert_eq!(Api::of_call(&record), None);
    assert_same_bytes(&strip_call(record.clone(), &tracked(&["ls"])).call, &record);
    // A `functionResponse` answers a call: name and response, no args.
    let response = json!({ "functionResponse": { "name": "ls", "response": { "args": 1 } } });
    assert_eq!(Api::of_call(&response), None);
}

#[test]
fn part_keeps_its_thought_signature_and_key_order() {
    let part = json!({ "thoughtSignature": "c2ln", "functionCall": {
        "name": "ls", "args": { "dir": ".", "reason": "See the files" } } });
    let stripped = strip_call(part, &tracked(&["ls"]));
    assert_eq!(stripped.reason, Some(json!("See the files")));
    assert_eq!(
        serde_json::to_string(&stripped.call).unwrap(),
        r#"{"thoughtSignature":"c2ln","functionCall":{"name":"ls","args":{"dir":"."}}}"#
    );
}

#[test]
fn taken_reason_carries_the_function_call_id_when_there_is_one() {
    let take = |mut call: Value| {
        let mut taken: Vec<TakenReason> = Vec::new();
        assert!(strip_noting(&mut call, &tracked(&["ls"]), &mut taken));
        taken.pop().unwrap()
    };
    let with_id = take(json!({ "functionCall": { "id": "gc_1", "name": "ls",
        "args": { "reason": "r" } } }));
    assert_eq!(with_id.call_id.as_deref(), Some("gc_1"));
    let without = take(json!({ "functionCall": { "name": "ls", "args": { "reason": "r" } } }));
    assert_eq!((without.tool.as_str(), without.call_id), ("ls", None));
}

#[test]
fn function_call_that_is_not_an_object_is_no_call() {
    let part = json!({ "functionCall": "ls", "name": "ls", "args": { "reason": "r" } });
    // Not a part (its `functionCall` is no object) and not a bare call (it holds another key).
    assert_eq!(Api::of_call(&part), None);
    let value: Value = part.clone();
    assert_same_bytes(&strip_call(value, &tracked(&["ls"])).call, &part);
}

#[test]
fn part_beside_a_stray_function_key_that_is_no_object_is_still_a_gemini_call() {
    let part = json!({ "function": "x", "functionCall": { "name": "ls",
        "args": { "reason": "r", "a": 1 } } });
    assert_eq!(Api::of_call(&part), Some(Api::Gemini));
    let stripped = strip_call(part, &tracked(&["ls"]));
    assert_eq!(stripped.reason, Some(json!("r")));
    assert_eq!(stripped.call["functionCall"]["args"], json!({ "a": 1 }));
}
