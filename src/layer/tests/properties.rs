//! Property tests: for arbitrary declarations and calls, hostile ones included, the layer changes
//! nothing but what the rules say it changes.
//!
//! Where a case is built in a known envelope, an oracle written here from the rules says what
//! must happen; for arbitrary JSON, the properties still bound what may happen.

use proptest::collection::vec as vec_of;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use serde_json::{Map, Value};

use super::support::*;
use crate::layer::{
    augment_declaration, reason_property, strip_call, Declaration, Listing, ReasonPosition,
    ToolNames, REASON_PARAM,
};

/// A few hundred cases each, so the suite stays fast; `PROPTEST_CASES` asks for a deeper run.
fn config() -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        cases: match std::env::var_os("PROPTEST_CASES") {
            Some(_) => default.cases,
            None => 256,
        },
        failure_persistence: None,
        ..default
    }
}

fn tracked() -> ToolNames {
    ["a".to_owned(), "b".to_owned()].into()
}

fn text(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

/// Object keys: mostly ones that mean something to an envelope or come close to `reason`.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(vec![
            "path", "x", "Reason", "reason ", "reasons", "", "name", "arguments", "input",
            "function", "type", "properties", "required",
        ])
        .prop_map(String::from),
        1 => "\\PC{0,8}",
    ]
}

fn json_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        select(vec![REASON_PARAM, "", " ", r#"{"reason":1}"#]).prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec_of(inner.clone(), 0..4).prop_map(Value::Array),
            vec_of((key(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
    .boxed()
}

/// Entries without `reason`, and maybe a reason inserted at any position.
fn object_maybe_with_reason() -> impl Strategy<Value = Map<String, Value>> {
    (
        vec_of((key(), json_value()), 0..5),
        option::weighted(0.75, json_value()),
        any::<Index>(),
    )
        .prop_map(|(mut entries, reason, at)| {
            entries.retain(|(key, _)| key != REASON_PARAM);
            if let Some(reason) = reason {
                entries.insert(at.index(entries.len() + 1), (REASON_PARAM.into(), reason));
            }
            entries.into_iter().collect()
        })
}

/// How a model may have written an object as a string.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Compact,
    Pretty,
    Padded,
}

impl Layout {
    fn strategy() -> impl Strategy<Value = Layout> {
        select(vec![Layout::Compact, Layout::Pretty, Layout::Padded])
    }

    fn render(self, object: &Map<String, Value>) -> String {
        match self {
            Layout::Compact => serde_json::to_string(object).unwrap(),
            Layout::Pretty => serde_json::to_string_pretty(object).unwrap(),
            Layout::Padded => format!(" \n{}\t ", serde_json::to_string(object).unwrap()),
        }
    }
}

fn arguments() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => object_maybe_with_reason().prop_map(Value::Object),
        3 => (object_maybe_with_reason(), Layout::strategy())
            .prop_map(|(object, layout)| Value::String(layout.render(&object))),
        1 => select(vec!["", " ", "\n\t ", "\u{a0}"]).prop_map(Value::from),
        1 => (object_maybe_with_reason(), any::<Index>()).prop_map(|(object, cut)| {
            let whole = serde_json::to_string(&object).unwrap();
            let chars = whole.chars().count();
            Value::String(whole.chars().take(cut.index(chars)).collect())
        }),
        1 => json_value().prop_map(|value| Value::String(value.to_string())),
        1 => "\\PC{0,16}".prop_map(Value::from),
        1 => json_value(),
    ]
    .boxed()
}

fn call_name() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        5 => select(vec!["a", "b"]).prop_map(|name| Some(Value::from(name))),
        2 => select(vec!["c", REASON_PARAM, ""]).prop_map(|name| Some(Value::from(name))),
        1 => json_value().prop_map(Some),
        1 => Just(None),
    ]
}

/// What the rules say about a call built in a known envelope.
#[derive(Debug, Clone)]
struct CallOracle {
    strips: bool,
    pointer: &'static str,
}

#[derive(Debug, Clone)]
struct CallCase {
    call: Value,
    oracle: Option<CallOracle>,
}

/// SPEC §1, written again from the text: a call to a tracked name whose arguments are an object,
/// or a string holding one, with `reason` in it.
fn should_strip(name: &Option<Value>, arguments: &Option<Value>) -> bool {
    let Some(Value::String(name)) = name else {
        return false;
    };
    let object = match arguments {
        Some(Value::Object(object)) => object.clone(),
        Some(Value::String(text)) => match serde_json::from_str(text) {
            Ok(Value::Object(object)) => object,
            _ => return false,
        },
        _ => return false,
    };
    tracked().contains(name) && object.contains_key(REASON_PARAM)
}

fn shaped_call() -> impl Strategy<Value = CallCase> {
    (
        select(CallShape::ALL.to_vec()),
        any::<u32>(),
        call_name(),
        option::weighted(0.9, arguments()),
    )
        .prop_map(|(shape, n, name, arguments)| CallCase {
            oracle: Some(CallOracle {
                strips: should_strip(&name, &arguments),
                pointer: shape.arguments_pointer(),
            }),
            call: shape.call_with(n.into(), name, arguments),
        })
}

/// The pieces of every call envelope, put together at random.
fn hostile_call() -> impl Strategy<Value = CallCase> {
    let body = || {
        (
            call_name(),
            option::of(arguments()),
            option::of(arguments()),
            option::of(arguments()),
        )
            .prop_map(|(name, arguments, input, args)| {
                let mut body = Map::new();
                let pieces = [
                    ("name", name),
                    ("arguments", arguments),
                    ("input", input),
                    ("args", args),
                ];
                for (key, value) in pieces {
                    if let Some(value) = value {
                        body.insert(key.into(), value);
                    }
                }
                body
            })
    };
    let nested = prop_oneof![body().prop_map(Value::Object), json_value()];
    let call = (
        body(),
        option::of(select(vec![
            "function",
            "function_call",
            "tool_use",
            "text",
        ])),
        option::of(select(vec!["tools/call", "tools/list"])),
        option::of(nested.clone()),
        option::of(nested.clone()),
        option::of(nested),
        option::of(json_value()),
    )
        .prop_map(
            |(mut call, kind, method, function, params, function_call, id)| {
                let pieces = [
                    ("type", kind.map(Value::from)),
                    ("method", method.map(Value::from)),
                    ("function", function),
                    ("params", params),
                    ("functionCall", function_call),
                    ("id", id),
                ];
                for (key, value) in pieces {
                    if let Some(value) = value {
                        call.insert(key.into(), value);
                    }
                }
                Value::Object(call)
            },
        );
    prop_oneof![4 => call, 1 => json_value()].prop_map(|call| CallCase { call, oracle: None })
}

fn call_case() -> impl Strategy<Value = CallCase> {
    prop_oneof![3 => shaped_call(), 1 => hostile_call()]
}

/// Whether `output` is `input` with `reason` taken out of the arguments at `pointer`, and nothing
/// else changed: an object keeps its other keys in order, a string becomes the compact form.
fn is_input_minus_reason(input: &Value, output: &Value, pointer: &str, reason: &Value) -> bool {
    let (Some(before), Some(after)) = (input.pointer(pointer), output.pointer(pointer)) else {
        return false;
    };
    if text(&with(output, pointer, before.clone())) != text(input) {
        return false;
    }
    match (before, after) {
        (Value::Object(before), Value::Object(after)) => {
            let mut expected = before.clone();
            expected.shift_remove(REASON_PARAM).as_ref() == Some(reason)
                && text(&Value::Object(expected)) == text(&Value::Object(after.clone()))
        }
        (Value::String(before), Value::String(after)) => {
            let Ok(Value::Object(mut expected)) = serde_json::from_str::<Value>(before) else {
                return false;
            };
            let Ok(Value::Object(got)) = serde_json::from_str::<Value>(after) else {
                return false;
            };
            expected.shift_remove(REASON_PARAM).as_ref() == Some(reason)
                && got == expected
                && text(&Value::Object(got.clone())) == *after
                && got.keys().eq(expected.keys())
        }
        _ => false,
    }
}

/// Where a declaration keeps its name, in a known shape.
fn name_pointer(shape: Shape) -> &'static str {
    match shape {
        Shape::OpenAi => "/function/name",
        _ => "/name",
    }
}

/// SPEC §1, written again from the text: a string name, a schema object whose `properties` (if
/// any) is an object, and no `reason` of the tool's own, declared or required.
fn augmentable(declaration: &Value, shape: Shape) -> bool {
    let Some(Value::String(_)) = declaration.pointer(name_pointer(shape)) else {
        return false;
    };
    let Some(Value::Object(schema)) = declaration.pointer(shape.schema_pointer()) else {
        return false;
    };
    let declares = match schema.get("properties") {
        None => false,
        Some(Value::Object(properties)) => properties.contains_key(REASON_PARAM),
        Some(_) => return false,
    };
    let requires = schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|required| required.contains(&Value::from(REASON_PARAM)));
    !declares && !requires
}

/// `declaration` with the reason property added to the schema at `pointer`, as the rules say.
fn expected_augmentation(declaration: &Value, pointer: &str) -> Option<Value> {
    let mut expected = declaration.clone();
    let schema = expected.pointer_mut(pointer)?.as_object_mut()?;
    if !schema.get("type").is_some_and(Value::is_string) {
        schema.insert("type".into(), Value::from("object"));
    }
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?
        .insert(REASON_PARAM.into(), reason_property());
    Some(expected)
}

/// Every JSON pointer at which some envelope keeps a call's arguments.
const ARGUMENT_POINTERS: [&str; 6] = [
    "/function/arguments",
    "/arguments",
    "/params/arguments",
    "/input",
    "/functionCall/args",
    "/args",
];

const SCHEMA_POINTERS: [&str; 5] = [
    "/function/parameters",
    "/parameters",
    "/inputSchema",
    "/input_schema",
    "/parametersJsonSchema",
];

fn properties_object() -> impl Strategy<Value = Value> {
    (
        vec_of((key(), json_value()), 0..3),
        option::weighted(0.3, prop_oneof![Just(reason_property()), json_value()]),
    )
        .prop_map(|(entries, reason)| {
            let mut properties: Map<String, Value> = entries.into_iter().collect();
            if let Some(reason) = reason {
                properties.insert(REASON_PARAM.into(), reason);
            }
            Value::Object(properties)
        })
}

fn required_list(with_reason: bool) -> impl Strategy<Value = Value> {
    let mut names = vec!["path", "x", "Reason"];
    if with_reason {
        names.push(REASON_PARAM);
    }
    vec_of(select(names).prop_map(Value::from), 0..3).prop_map(Value::Array)
}

fn schema() -> BoxedStrategy<Value> {
    let object = (
        vec_of((key(), json_value()), 0..2),
        option::of(prop_oneof![
            select(vec!["object", "array", "string"]).prop_map(Value::from),
            json_value(),
        ]),
        option::of(prop_oneof![4 => properties_object(), 1 => json_value()]),
        option::of(prop_oneof![4 => required_list(true), 1 => json_value()]),
    )
        .prop_map(|(extra, kind, properties, required)| {
            let mut schema: Map<String, Value> = extra.into_iter().collect();
            for (key, value) in [
                ("type", kind),
                ("properties", properties),
                ("required", required),
            ] {
                if let Some(value) = value {
                    schema.insert(key.into(), value);
                }
            }
            Value::Object(schema)
        });
    prop_oneof![5 => object, 1 => json_value()].boxed()
}

#[derive(Debug, Clone)]
struct DeclarationCase {
    declaration: Value,
    shape: Option<Shape>,
}

fn declaration_case() -> impl Strategy<Value = DeclarationCase> {
    let declaration_name = prop_oneof![
        4 => "[a-z_]{1,6}".prop_map(|name| Some(Value::from(name))),
        1 => json_value().prop_map(Some),
        1 => Just(None),
    ];
    let shaped = (
        select(Shape::ALL.to_vec()),
        declaration_name,
        option::weighted(0.9, schema()),
        option::weighted(0.2, "[a-z_]{1,6}"),
    )
        .prop_map(|(shape, name, schema, outer_name)| {
            let mut declaration = shape.declaration(name, schema);
            if let (Shape::OpenAi, Some(outer_name)) = (shape, outer_name) {
                // A stray top-level name: the tool's name is still `function.name`.
                declaration["name"] = Value::from(outer_name);
            }
            DeclarationCase {
                declaration,
                shape: Some(shape),
            }
        });
    let hostile_key = select(vec![
        "type",
        "name",
        "function",
        "parameters",
        "inputSchema",
        "input_schema",
        "parametersJsonSchema",
    ]);
    let piece = prop_oneof![schema(), json_value()];
    let hostile = prop_oneof![
        3 => vec_of((hostile_key, piece), 0..5).prop_map(|entries| {
            Value::Object(entries.into_iter().map(|(key, value)| (key.to_owned(), value)).collect())
        }),
        1 => json_value(),
    ]
    .prop_map(|declaration| DeclarationCase {
        declaration,
        shape: None,
    });
    prop_oneof![3 => shaped, 1 => hostile]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn prop_untouched_calls_equal_their_input(case in call_case()) {
        let before = text(&case.call);
        let stripped = strip_call(case.call.clone(), &tracked());
        if let Some(oracle) = &case.oracle {
            prop_assert_eq!(stripped.reason.is_some(), oracle.strips, "{}", before);
        }
        if stripped.reason.is_none() {
            prop_assert_eq!(text(&stripped.call), before);
        }
    }

    #[test]
    fn prop_stripped_call_equals_its_input_minus_reason(case in call_case()) {
        let stripped = strip_call(case.call.clone(), &tracked());
        if let Some(reason) = &stripped.reason {
            let pointers = match &case.oracle {
                Some(oracle) => vec![oracle.pointer],
                None => ARGUMENT_POINTERS.to_vec(),
            };
            prop_assert!(
                pointers
                    .iter()
                    .any(|pointer| is_input_minus_reason(&case.call, &stripped.call, pointer, reason)),
                "{} became {}",
                text(&case.call),
                text(&stripped.call)
            );
        }
    }

    #[test]
    fn prop_augmenting_never_changes_required_nor_mutates_its_input(case in declaration_case()) {
        let before = text(&case.declaration);
        let augmented = augment_declaration(&case.declaration, ReasonPosition::Last);
        let mut listing = Listing::new();
        let published = listing.add(&case.declaration);
        prop_assert_eq!(text(&case.declaration), before.clone());
        if let Some(shape) = case.shape {
            prop_assert_eq!(augmented.is_some(), augmentable(&case.declaration, shape), "{}", before);
        }
        match &augmented {
            None => {
                prop_assert_eq!(text(&published), before.clone());
                prop_assert!(listing.tracked().is_empty());
            }
            Some(augmented) => {
                prop_assert_eq!(text(&published), text(augmented));
                prop_assert_eq!(listing.tracked().len(), 1);
                let pointers = match case.shape {
                    Some(shape) => vec![shape.schema_pointer()],
                    None => SCHEMA_POINTERS.to_vec(),
                };
                let pointer = pointers.into_iter().find(|pointer| {
                    expected_augmentation(&case.declaration, pointer)
                        .is_some_and(|expected| text(&expected) == text(augmented))
                });
                prop_assert!(pointer.is_some(), "{} became {}", before, text(augmented));
                let required = format!("{}/required", pointer.unwrap());
                prop_assert_eq!(augmented.pointer(&required), case.declaration.pointer(&required));
            }
        }
    }

    #[test]
    fn prop_augmenting_is_idempotent_on_its_output(case in declaration_case()) {
        if let Some(augmented) = augment_declaration(&case.declaration, ReasonPosition::Last) {
            let name = Declaration::classify(&case.declaration).name().map(str::to_owned);
            prop_assert_eq!(augment_declaration(&augmented, ReasonPosition::Last), None);
            prop_assert_eq!(
                Declaration::classify(&augmented),
                Declaration::Collision { name: name.unwrap(), layers_own: true }
            );
            let mut listing = Listing::new();
            prop_assert_eq!(text(&listing.add(&augmented)), text(&augmented));
            prop_assert!(listing.tracked().is_empty());
        }
    }

    #[test]
    fn prop_augment_then_strip_returns_the_original_arguments(
        shape in select(Shape::ALL.to_vec()),
        call_shape in select(CallShape::ALL.to_vec()),
        name in "\\PC{1,10}",
        kind in option::of(json_value()),
        properties in vec_of((key(), json_value()), 0..3),
        required in option::of(required_list(false)),
        original in vec_of((key(), json_value()), 0..5),
        reason in json_value(),
        at in any::<Index>(),
        layout in option::of(Layout::strategy()),
    ) {
        let mut schema = Map::new();
        if let Some(kind) = kind {
            schema.insert("type".into(), kind);
        }
        let properties: Map<String, Value> =
            properties.into_iter().filter(|(key, _)| key != REASON_PARAM).collect();
        schema.insert("properties".into(), Value::Object(properties));
        if let Some(required) = required {
            schema.insert("required".into(), required);
        }
        let mut listing = Listing::new();
        listing.add(&shape.declare(&name, Value::Object(schema)));
        let tracked = listing.tracked();
        prop_assert!(tracked.contains(&name));

        let mut original: Vec<(String, Value)> = original;
        original.retain(|(key, _)| key != REASON_PARAM);
        let original: Map<String, Value> = original.into_iter().collect();
        let mut written: Vec<(String, Value)> = original.clone().into_iter().collect();
        written.insert(at.index(written.len() + 1), (REASON_PARAM.into(), reason.clone()));
        let written: Map<String, Value> = written.into_iter().collect();
        let arguments = match layout {
            Some(layout) => Value::String(layout.render(&written)),
            None => Value::Object(written),
        };

        let stripped = strip_call(call_shape.call(1, &name, arguments), &tracked);
        prop_assert_eq!(stripped.reason, Some(reason));
        let forwarded = stripped.call.pointer(call_shape.arguments_pointer()).unwrap();
        let forwarded = match forwarded {
            Value::String(text) => serde_json::from_str::<Value>(text).unwrap(),
            other => other.clone(),
        };
        prop_assert_eq!(text(&forwarded), text(&Value::Object(original)));
    }
}
