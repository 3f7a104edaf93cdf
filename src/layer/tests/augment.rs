//! The catalogue on its way out: what is augmented, what is left alone, what is tracked.

use serde_json::{json, Value};

use super::support::*;
use crate::layer::{
    augment_declaration, reason_property, strip_call, Declaration, Listing, Provider,
    ReasonPosition, Reasons, REASON_PARAM,
};

/// A call to `name` carrying a reason, in the OpenAI function shape.
fn call_with_reason(name: &str) -> Value {
    CallShape::OpenAi.call(1, name, json!({ "path": "a", "reason": "why" }))
}

#[test]
fn reason_property_is_exactly_the_specified_one() {
    assert_eq!(REASON_PARAM, "reason");
    assert_eq!(
        reason_property(),
        json!({
            "type": "string",
            "description":
                "One short sentence: why this call. Shown to the human reviewing the session."
        })
    );
}

#[test]
fn readable_declaration_gains_the_reason_property() {
    for shape in Shape::ALL {
        let declaration = shape.declare("fs_write", path_schema());
        let (layer, published) = listed(vec![declaration.clone()]);
        let mut expected = declaration.clone();
        let properties = format!("{}/properties", shape.schema_pointer());
        expected
            .pointer_mut(&properties)
            .and_then(Value::as_object_mut)
            .unwrap()
            .insert(REASON_PARAM.into(), reason_property());
        assert_same_bytes(&published[0], &expected);
        assert_eq!(layer.augmented_tools(), ["fs_write"], "{shape:?}");
    }
}

#[test]
fn reason_is_never_added_to_required() {
    let schemas = [
        path_schema(),
        json!({ "type": "object", "properties": {}, "required": [] }),
        json!({ "type": "object", "properties": { "path": {} } }),
    ];
    for shape in Shape::ALL {
        for schema in &schemas {
            let (_, published) = listed(vec![shape.declare("fs_write", schema.clone())]);
            let required = format!("{}/required", shape.schema_pointer());
            assert_eq!(
                published[0].pointer(&required),
                schema.get("required"),
                "{shape:?} {schema}"
            );
        }
    }
}

#[test]
fn declaration_is_copied_not_mutated() {
    for shape in Shape::ALL {
        let declaration = shape.declare("fs_write", path_schema());
        let layer = Reasons::new(Server::new(vec![declaration.clone()]));
        let first = layer.list_tools().unwrap();
        let second = layer.list_tools().unwrap();
        assert_same_bytes(&layer.inner().catalogue()[0], &declaration);
        assert_ne!(first[0], declaration, "{shape:?}: the copy is augmented");
        assert_same_bytes(&second[0], &first[0]);

        let mut listing = Listing::new();
        let published = listing.add(&declaration);
        assert_same_bytes(&declaration, &shape.declare("fs_write", path_schema()));
        assert_same_bytes(&published, &first[0]);
    }
}

/// Declarations the layer cannot read, each in every shape where it can be written: a name that
/// is not a string (or none), no schema object, or `properties` that is not an object.
fn unreadable_declarations() -> Vec<Value> {
    let mut declarations = vec![
        // No `function` (nor any other schema key).
        json!({ "type": "function", "name": "fs_write" }),
        json!({ "type": "function", "function": "fs_write" }),
        json!({ "type": "function", "function": null, "name": "fs_write",
                "parameters": path_schema() }),
        // Not a declaration at all.
        json!("fs_write"),
        json!(null),
        json!([path_schema()]),
    ];
    for shape in Shape::ALL {
        for name in [
            json!(42),
            json!(null),
            json!(["fs_write"]),
            json!({ "n": 1 }),
        ] {
            declarations.push(shape.declaration(Some(name), Some(path_schema())));
        }
        declarations.push(shape.declaration(None, Some(path_schema())));
        if shape != Shape::Responses {
            // A Responses declaration without `parameters` is no declaration at all: covered above.
            declarations.push(shape.declaration(Some(json!("fs_write")), None));
        }
        for schema in [
            json!("object"),
            json!(null),
            json!([]),
            json!(true),
            json!(3),
        ] {
            declarations.push(shape.declaration(Some(json!("fs_write")), Some(schema)));
        }
        for properties in [json!([]), json!("path"), json!(null), json!(1)] {
            let schema = json!({ "type": "object", "properties": properties });
            declarations.push(shape.declare("fs_write", schema));
        }
    }
    declarations
}

#[test]
fn unreadable_declaration_passes_exactly_and_is_untracked() {
    for declaration in unreadable_declarations() {
        assert!(
            matches!(
                Declaration::classify(&declaration),
                Declaration::Unreadable { .. }
            ),
            "{declaration}"
        );
        assert_eq!(
            augment_declaration(&declaration, ReasonPosition::Last),
            None,
            "{declaration}"
        );
        let readable = Shape::Mcp.declare("other", path_schema());
        let (layer, published) = listed(vec![declaration.clone(), readable]);
        assert_same_bytes(&published[0], &declaration);
        assert_eq!(layer.augmented_tools(), ["other"], "{declaration}");
        let call = call_with_reason("fs_write");
        assert_same_bytes(&forward(&layer, call.clone()), &call);
    }
}

#[test]
fn stray_top_level_name_does_not_make_a_nameless_function_augmentable() {
    for name in [json!(42), json!(null)] {
        let mut declaration = Shape::OpenAi.declaration(Some(name), Some(path_schema()));
        declaration["name"] = json!("fs_write");
        assert_eq!(
            augment_declaration(&declaration, ReasonPosition::Last),
            None,
            "{declaration}"
        );
        let (layer, published) = listed(vec![declaration.clone()]);
        assert_same_bytes(&published[0], &declaration);
        assert_eq!(layer.augmented_tools(), Vec::<String>::new());
    }
    let mut nameless = Shape::OpenAi.declaration(None, Some(path_schema()));
    nameless["name"] = json!("fs_write");
    let (layer, published) = listed(vec![nameless.clone()]);
    assert_same_bytes(&published[0], &nameless);
    assert_eq!(layer.augmented_tools(), Vec::<String>::new());
}

#[test]
fn missing_properties_are_created() {
    for shape in Shape::ALL {
        for schema in [
            json!({ "type": "object" }),
            json!({ "type": "object", "required": ["path"] }),
        ] {
            let (layer, published) = listed(vec![shape.declare("fs_write", schema.clone())]);
            let augmented = published[0].pointer(shape.schema_pointer()).unwrap();
            let mut expected = schema.clone();
            expected["properties"] = json!({ REASON_PARAM: reason_property() });
            assert_eq!(augmented, &expected, "{shape:?}");
            assert_eq!(layer.augmented_tools(), ["fs_write"]);
        }
    }
}

#[test]
fn schema_without_string_type_becomes_object() {
    for shape in Shape::ALL {
        for schema in [
            json!({ "properties": {} }),
            json!({ "type": null, "properties": {} }),
            json!({ "type": ["object", "null"], "properties": {} }),
            json!({ "type": 7, "properties": {} }),
            json!({}),
        ] {
            let (layer, published) = listed(vec![shape.declare("fs_write", schema.clone())]);
            let augmented = published[0].pointer(shape.schema_pointer()).unwrap();
            assert_eq!(augmented["type"], "object", "{shape:?} {schema}");
            assert_eq!(augmented["properties"][REASON_PARAM], reason_property());
            assert_eq!(layer.augmented_tools(), ["fs_write"]);
        }
    }
}

#[test]
fn schema_with_a_string_type_keeps_it() {
    for shape in Shape::ALL {
        let schema = json!({ "properties": {}, "type": "object", "additionalProperties": false });
        let (_, published) = listed(vec![shape.declare("fs_write", schema)]);
        let augmented = published[0].pointer(shape.schema_pointer()).unwrap();
        assert_same_bytes(
            augmented,
            &json!({
                "properties": { REASON_PARAM: reason_property() },
                "type": "object",
                "additionalProperties": false
            }),
        );
    }
}

/// A collision is published exactly as given, is not tracked, and its calls keep their reason.
#[track_caller]
fn assert_left_alone(declaration: Value) {
    assert_eq!(
        augment_declaration(&declaration, ReasonPosition::Last),
        None,
        "{declaration}"
    );
    let readable = Shape::OpenAi.declare("other", path_schema());
    let (layer, published) = listed(vec![declaration.clone(), readable]);
    assert_same_bytes(&published[0], &declaration);
    assert_eq!(layer.augmented_tools(), ["other"], "{declaration}");
    for shape in CallShape::ALL {
        for arguments in [
            json!({ "reason": "ABC-123", "x": 1 }),
            json!(r#"{"reason": "ABC-123", "x": 1}"#),
        ] {
            let call = shape.call(1, "collides", arguments);
            assert_same_bytes(&forward(&layer, call.clone()), &call);
        }
    }
}

#[test]
fn tool_declaring_reason_is_left_alone() {
    for shape in Shape::ALL {
        assert_left_alone(shape.declare("collides", declaring_reason_schema()));
        // Even a `reason` with no schema of its own, or a non-string one, is the tool's.
        let odd = json!({ "type": "object", "properties": { "reason": {} } });
        assert_left_alone(shape.declare("collides", odd));
        let numeric = json!({ "properties": { "reason": { "type": "integer" } } });
        assert_left_alone(shape.declare("collides", numeric));
    }
}

#[test]
fn tool_requiring_reason_is_left_alone() {
    for shape in Shape::ALL {
        assert_left_alone(shape.declare("collides", requiring_reason_schema()));
        let no_properties = json!({ "required": ["path", "reason"] });
        assert_left_alone(shape.declare("collides", no_properties));
    }
}

#[test]
fn augmented_declaration_listed_again_is_a_collision_of_the_layers_own() {
    for shape in Shape::ALL {
        let augmented = augment_declaration(
            &shape.declare("fs_write", path_schema()),
            ReasonPosition::Last,
        )
        .unwrap();
        assert_eq!(
            Declaration::classify(&augmented),
            Declaration::Collision {
                name: "fs_write".into(),
                layers_own: true
            }
        );
        assert_eq!(augment_declaration(&augmented, ReasonPosition::Last), None);
        let foreign = shape.declare("ticket", declaring_reason_schema());
        assert_eq!(
            Declaration::classify(&foreign),
            Declaration::Collision {
                name: "ticket".into(),
                layers_own: false
            }
        );
    }
}

#[test]
fn layer_over_layer_strips_once() {
    for shape in Shape::ALL {
        let server = Server::new(vec![shape.declare("fs_write", path_schema())]);
        let outer = Reasons::new(Reasons::new(server));
        let published = outer.list_tools().unwrap();
        let properties = format!("{}/properties", shape.schema_pointer());
        assert_eq!(
            published[0].pointer(&properties).unwrap(),
            &json!({ "path": { "type": "string" }, REASON_PARAM: reason_property() })
        );
        assert_eq!(outer.augmented_tools(), Vec::<String>::new());
        assert_eq!(outer.inner().augmented_tools(), ["fs_write"]);
        outer.execute(vec![call_with_reason("fs_write")]);
        let received = outer.inner().inner().last_batch();
        assert_eq!(received[0]["function"]["arguments"], json!({ "path": "a" }));
    }
}

#[test]
fn duplicate_name_with_any_unaugmented_copy_is_untracked() {
    let unaugmented = |shape: Shape| {
        [
            shape.declare("dup", declaring_reason_schema()),
            shape.declare("dup", requiring_reason_schema()),
            shape.declare("dup", json!({ "properties": [] })),
            shape.declaration(Some(json!("dup")), Some(json!("object"))),
        ]
    };
    for augmentable_shape in Shape::ALL {
        for other_shape in Shape::ALL {
            for other in unaugmented(other_shape) {
                let augmentable = augmentable_shape.declare("dup", path_schema());
                for catalogue in [
                    vec![augmentable.clone(), other.clone()],
                    vec![other.clone(), augmentable.clone()],
                ] {
                    let (layer, published) = listed(catalogue.clone());
                    assert_eq!(layer.augmented_tools(), Vec::<String>::new(), "{other}");
                    // The copy that could be read is still augmented; the other passes exactly.
                    for (sent, out) in catalogue.iter().zip(&published) {
                        match augment_declaration(sent, ReasonPosition::Last) {
                            Some(augmented) => assert_same_bytes(out, &augmented),
                            None => assert_same_bytes(out, sent),
                        }
                    }
                    let call = call_with_reason("dup");
                    assert_same_bytes(&forward(&layer, call.clone()), &call);
                }
            }
        }
    }
}

#[test]
fn duplicate_name_all_augmented_is_tracked() {
    let (layer, _) = listed(vec![
        Shape::OpenAi.declare("dup", path_schema()),
        Shape::Mcp.declare("dup", json!({})),
    ]);
    assert_eq!(layer.augmented_tools(), ["dup"]);
    let received = forward(&layer, call_with_reason("dup"));
    assert_eq!(received["function"]["arguments"], json!({ "path": "a" }));
}

#[test]
fn one_listing_may_mix_envelopes() {
    let catalogue = Shape::ALL
        .iter()
        .map(|shape| shape.declare(&format!("{shape:?}").to_lowercase(), path_schema()))
        .collect();
    let (layer, published) = listed(catalogue);
    assert_eq!(
        layer.augmented_tools(),
        ["anthropic", "gemini", "mcp", "openai", "responses"]
    );
    for (shape, declaration) in Shape::ALL.iter().zip(&published) {
        let reason = format!("{}/properties/{REASON_PARAM}", shape.schema_pointer());
        assert_eq!(declaration.pointer(&reason), Some(&reason_property()));
    }
}

#[test]
fn listing_spanning_pages_tracks_names_from_every_page() {
    let mut listing = Listing::new();
    listing.add_page(&[Shape::Mcp.declare("first", path_schema())]);
    let second = listing.add_page(&[
        Shape::Mcp.declare("second", path_schema()),
        Shape::Mcp.declare("ticket", declaring_reason_schema()),
    ]);
    assert_eq!(second.len(), 2);
    assert_same_bytes(
        &second[1],
        &Shape::Mcp.declare("ticket", declaring_reason_schema()),
    );
    let tracked = listing.tracked();
    assert_eq!(tracked.iter().collect::<Vec<_>>(), ["first", "second"]);
    let call = CallShape::McpRequest.call(1, "first", json!({ "reason": "r", "a": 1 }));
    let stripped = strip_call(call, &tracked);
    assert_eq!(stripped.call["params"]["arguments"], json!({ "a": 1 }));
}

#[test]
fn duplicate_name_across_pages_is_untracked() {
    let mut listing = Listing::new();
    listing.add_page(&[Shape::Mcp.declare("dup", path_schema())]);
    listing.add_page(&[Shape::Mcp.declare("dup", requiring_reason_schema())]);
    assert!(listing.tracked().is_empty());
}

#[test]
fn listing_replaces_the_tracked_set_wholesale() {
    let (layer, _) = listed(vec![
        Shape::OpenAi.declare("x", path_schema()),
        Shape::OpenAi.declare("y", path_schema()),
    ]);
    assert_eq!(layer.augmented_tools(), ["x", "y"]);

    layer.inner().publish(vec![
        Shape::Mcp.declare("y", path_schema()),
        Shape::Mcp.declare("z", path_schema()),
    ]);
    layer.list_tools().unwrap();
    assert_eq!(layer.augmented_tools(), ["y", "z"]);
    let call = call_with_reason("x");
    assert_same_bytes(&forward(&layer, call.clone()), &call);
    let received = forward(&layer, call_with_reason("z"));
    assert_eq!(received["function"]["arguments"], json!({ "path": "a" }));

    // A tool that now declares its own reason is no longer the layer's.
    layer.inner().publish(vec![
        Shape::Mcp.declare("y", declaring_reason_schema()),
        Shape::Mcp.declare("z", path_schema()),
    ]);
    layer.list_tools().unwrap();
    assert_eq!(layer.augmented_tools(), ["z"]);
    let call = call_with_reason("y");
    assert_same_bytes(&forward(&layer, call.clone()), &call);

    layer.inner().publish(vec![]);
    assert_eq!(layer.list_tools().unwrap(), Vec::<Value>::new());
    assert_eq!(layer.augmented_tools(), Vec::<String>::new());
    let call = call_with_reason("z");
    assert_same_bytes(&forward(&layer, call.clone()), &call);
}

#[test]
fn nothing_is_stripped_before_the_first_listing() {
    let layer = Reasons::new(Server::new(vec![
        Shape::OpenAi.declare("fs_write", path_schema())
    ]));
    assert_eq!(layer.augmented_tools(), Vec::<String>::new());
    for shape in CallShape::ALL {
        let call = shape.call(1, "fs_write", json!({ "reason": "why" }));
        assert_same_bytes(&forward(&layer, call.clone()), &call);
    }
}

#[test]
fn augmented_tools_are_sorted() {
    let names = ["zeta", "alpha", "mu", "Beta", "alpha_2"];
    let catalogue = names
        .iter()
        .map(|name| Shape::Anthropic.declare(name, path_schema()))
        .collect();
    let (layer, _) = listed(catalogue);
    assert_eq!(
        layer.augmented_tools(),
        ["Beta", "alpha", "alpha_2", "mu", "zeta"]
    );
}

#[test]
fn failed_listing_is_an_error_and_keeps_the_previous_tracked_set() {
    let (layer, _) = listed(vec![Shape::OpenAi.declare("fs_write", path_schema())]);
    layer.inner().fail_listing("server unreachable");
    let error = layer.list_tools().unwrap_err();
    assert_eq!(error.to_string(), "server unreachable");
    // A failed listing is no listing: the catalogue the model holds is still the last one, so
    // its calls are still stripped against it.
    assert_eq!(layer.augmented_tools(), ["fs_write"]);
    let received = forward(&layer, call_with_reason("fs_write"));
    assert_eq!(received["function"]["arguments"], json!({ "path": "a" }));
}

#[test]
fn failed_first_listing_strips_nothing() {
    let layer = Reasons::new(Server::new(vec![]));
    layer.inner().fail_listing("no catalogue");
    assert!(layer.list_tools().is_err());
    assert_eq!(layer.augmented_tools(), Vec::<String>::new());
    let call = call_with_reason("fs_write");
    assert_same_bytes(&forward(&layer, call.clone()), &call);
}

#[test]
fn a_strict_schema_is_left_alone_and_a_loose_one_is_augmented() {
    // OpenAI's strict function calling, and Anthropic's strict tool use, refuse a schema with a
    // property missing from `required`: the layer cannot extend one.
    let strict = [
        json!({"type": "function", "function": {"name": "fs_write", "strict": true,
            "parameters": path_schema()}}),
        json!({"type": "function", "name": "fs_write", "strict": true,
            "parameters": path_schema()}),
        json!({"name": "fs_write", "strict": true, "input_schema": path_schema()}),
    ];
    for declaration in strict {
        assert!(
            matches!(
                Declaration::classify(&declaration),
                Declaration::Unreadable { .. }
            ),
            "{declaration}"
        );
        let (layer, published) = listed(vec![declaration.clone()]);
        assert_same_bytes(&published[0], &declaration);
        assert!(layer.augmented_tools().is_empty());
        let loose: Value =
            serde_json::from_str(&declaration.to_string().replace("true", "false")).unwrap();
        assert!(
            augment_declaration(&loose, ReasonPosition::Last).is_some(),
            "{loose}"
        );
    }
}

#[test]
fn a_strict_schema_with_a_reason_of_its_own_is_a_collision() {
    let own = json!({"type": "object", "properties": {"reason": {"type": "string"}},
        "required": ["reason"], "additionalProperties": false});
    let declaration = json!({"type": "function", "name": "delete_branch", "strict": true,
        "parameters": own});
    assert!(matches!(
        Declaration::classify(&declaration),
        Declaration::Collision {
            layers_own: false,
            ..
        }
    ));
}

/// The property names of the published declaration's schema, in order.
fn property_names(shape: Shape, published: &Value) -> Vec<String> {
    let properties = format!("{}/properties", shape.schema_pointer());
    published
        .pointer(&properties)
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_reason_goes_first_or_last_in_every_envelope() {
    let schema = json!({
        "type": "object",
        "properties": { "path": { "type": "string" }, "mode": { "type": "string" } },
        "required": ["path"]
    });
    for shape in Shape::ALL {
        for (position, expected) in [
            (ReasonPosition::First, ["reason", "path", "mode"]),
            (ReasonPosition::Last, ["path", "mode", "reason"]),
        ] {
            let declaration = shape.declare("fs_write", schema.clone());
            let layer =
                Reasons::new(Server::new(vec![declaration.clone()])).reason_position(position);
            let published = layer.list_tools().unwrap();
            assert_eq!(property_names(shape, &published[0]), expected, "{shape:?}");
            // Only the place differs: the property, `required` and everything else are the same.
            let required = format!("{}/required", shape.schema_pointer());
            assert_eq!(published[0].pointer(&required), Some(&json!(["path"])));
            let reason = format!("{}/properties/reason", shape.schema_pointer());
            assert_eq!(published[0].pointer(&reason), Some(&reason_property()));
            assert_eq!(layer.augmented_tools(), ["fs_write"], "{shape:?}");
            // The same catalogue gives the same bytes, listing after listing.
            assert_same_bytes(&layer.list_tools().unwrap()[0], &published[0]);
            assert_same_bytes(
                &augment_declaration(&declaration, position).unwrap(),
                &published[0],
            );
            // And the reason still comes off the calls.
            let forwarded = forward(&layer, call_with_reason("fs_write"));
            assert!(!forwarded.to_string().contains("\"reason\""), "{forwarded}");
        }
    }
}

#[test]
fn the_reason_first_in_a_schema_without_properties_is_its_only_property() {
    for shape in Shape::ALL {
        let declaration = shape.declare("ping", json!({ "type": "object" }));
        let published =
            augment_declaration(&declaration, ReasonPosition::First).expect("augmented");
        assert_eq!(property_names(shape, &published), ["reason"], "{shape:?}");
    }
}

#[test]
fn the_place_changes_nothing_for_a_collision_or_an_unreadable_declaration() {
    for shape in Shape::ALL {
        for schema in [declaring_reason_schema(), requiring_reason_schema()] {
            let declaration = shape.declare("fs_write", schema);
            assert_eq!(
                augment_declaration(&declaration, ReasonPosition::First),
                None
            );
            let mut listing = Listing::new().placing(ReasonPosition::First);
            assert_same_bytes(&listing.add(&declaration), &declaration);
            assert!(listing.tracked().is_empty(), "{shape:?}");
        }
        let unreadable = shape.declaration(Some(json!("fs_write")), Some(json!("not a schema")));
        let mut listing = Listing::new().placing(ReasonPosition::First);
        assert_same_bytes(&listing.add(&unreadable), &unreadable);
    }
}

#[test]
fn the_default_place_is_last() {
    let layer = Reasons::new(Server::new(vec![]));
    assert_eq!(layer.position(), ReasonPosition::Last);
    let declaration = Shape::OpenAi.declare("fs_write", path_schema());
    assert_eq!(
        augment_declaration(&declaration, ReasonPosition::default()),
        augment_declaration(&declaration, ReasonPosition::Last)
    );
}
