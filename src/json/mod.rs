//! A JSON tree for reading events, borrowed from the line it was parsed from.
//!
//! Readers look at a few keys of a few objects and skip the rest, mostly long strings: tool
//! output, file contents. Building `serde_json::Value`s for all of it (an allocation for every
//! string and key, a hash map for every object) was most of the time spent on lines that hold a
//! call. Here a string stays as written until a reader asks for it, objects are lists of entries
//! searched in place, and every node of a line lives in one buffer that is reused for the next
//! line: parsing allocates nothing once the buffers have grown.
//!
//! The tree must mean exactly what `serde_json::Value` means, so the parser accepts exactly what
//! `serde_json::from_str::<Value>` accepts: UTF-8, RFC 8259 with strict escapes (surrogates
//! paired), no raw control characters in strings, numbers that fit an `f64`, at most 127 nested
//! containers; and a key that comes twice keeps its first place and its last value, as in a
//! `Value` map. Whatever it rejects goes back to serde_json, whose verdict and message are final.
//!
//! The text is UTF-8 already (the reader checks each line with a SIMD validator first), so a
//! string is a slice of it: nothing is copied or checked again when a reader asks for one.

mod parser;
mod rejected;
mod string;
mod text;
mod tree;

pub(crate) use parser::Parser;

pub(crate) use tree::{Json, Object, Text};

/// serde_json's nesting limit: its 128th nested array or object is an error.
const MAX_DEPTH: usize = 127;

#[derive(Debug, Clone, Copy)]
enum Node {
    Null,
    Bool(bool),
    /// The number as written, `start..end` of the text.
    Number {
        start: usize,
        end: usize,
    },
    /// The string between its quotes, as written; `escaped` when it holds a backslash.
    String {
        start: usize,
        end: usize,
        escaped: bool,
    },
    /// Items at `first..first + len` of the node buffer; the array is `start..end` of the
    /// text.
    Array {
        first: u32,
        len: u32,
        start: usize,
        end: usize,
    },
    /// Entries at `first..first + 2 * len`: a key (a `String` node), then its value; `keys`
    /// has the [`fingerprint`] bit of every key set; the object ends just before `end` of the
    /// text (so that a member can be spliced in before its closing brace).
    Object {
        first: u32,
        len: u32,
        keys: u64,
        end: usize,
    },
}

/// The parser against serde_json, for the differential fuzz target (`fuzz/fuzz_targets/json.rs`):
/// built only for the fuzz targets (`cfg(fuzzing)`, or the `fuzzing` feature their crate turns on
/// so that `cargo check` sees it too), so the parser stays private to the crate everywhere else.
#[cfg(any(fuzzing, feature = "fuzzing"))]
pub mod differential {
    use serde_json::Value;

    use super::{Json, Parser};

    /// Panics when the tree and serde_json disagree on `text`: one accepts what the other
    /// rejects, or both accept it and read different values. Then a value of several, as a
    /// document is read: a value the parser takes from the start of `text` reads as serde_json
    /// reads that same slice.
    pub fn check(text: &str) {
        let mut parser = Parser::default();
        let tree = parser.parse(text).ok().map(Json::to_value);
        let reference = serde_json::from_str::<Value>(text).ok();
        assert_eq!(
            tree, reference,
            "parse disagrees with serde_json on {text:?}"
        );

        let mut at = 0;
        if let Ok(json) = parser.parse_next(text, &mut at) {
            let first = json.to_value();
            let reference = serde_json::from_str::<Value>(&text[..at]).ok();
            assert_eq!(
                Some(first),
                reference,
                "parse_next disagrees with serde_json on {:?}",
                &text[..at]
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;

    fn parsed(text: &str) -> Option<Value> {
        let mut parser = Parser::default();
        parser.parse(text).ok().map(Json::to_value)
    }

    /// What serde_json makes of `text`, compared with the tree: both reject it, or both read
    /// the same value.
    fn agrees(text: &str) {
        let reference = serde_json::from_str::<Value>(text).ok();
        assert_eq!(parsed(text), reference, "{text:?}");
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            r#"{"a":[1,-2.5e3,true,false,null,"x"],"b":{}}"#,
            " [ 1 , { \"k\" : \"v\" } ]\n",
            r#""caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t""#,
            "\"日本語\"",
            "0",
            "-0",
            "123456789012345678901234567890",
            "1E+2",
            "1e-400",
            "0e99999999999999999999",
            r#"{"a":1,"b":{"x":1},"a":2}"#,
            r#"{"a":1,"b":2,"\u0061":3}"#,
            r#"{"a":{"c":1},"b":2,"c":3,"d":4,"a":[5]}"#,
        ] {
            agrees(text);
        }
    }

    #[test]
    fn rejects_what_serde_json_rejects() {
        for text in [
            "",
            "01",
            "1.",
            "-",
            ".5",
            "+1",
            "1e",
            "1e400",
            "-1e400",
            "1e99999999999999999999",
            "\"\\uD800\"",
            "\"\\uDC00\"",
            "\"\\uD800\\n\"",
            "\"\\uD800\\uD800\"",
            "\"a\tb\"",
            "\"\\U0041\"",
            "\"\\x\"",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:2}",
            "[1 2]",
            "tru",
            "nul",
            "truex",
            "{} {}",
            "\"unclosed",
            "[",
            "{\"a\":",
        ] {
            agrees(text);
        }
    }

    #[test]
    fn the_nesting_limit_is_serde_jsons() {
        for depth in [126, 127, 128, 200] {
            let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            agrees(&text);
            let text = format!(
                "{}1{}",
                "{\"a\":[".repeat(depth / 2),
                "]}".repeat(depth / 2)
            );
            agrees(&text);
        }
    }

    #[test]
    fn strings_are_borrowed_until_decoded() {
        let mut parser = Parser::default();
        let json = parser.parse(r#"{"plain":"x","escaped":"a\"b"}"#).unwrap();
        let object = json.as_object().unwrap();
        assert!(matches!(
            object.get("plain").unwrap().as_str(),
            Some(Cow::Borrowed("x"))
        ));
        assert_eq!(object.get("escaped").unwrap().as_str().unwrap(), "a\"b");
        assert!(object.get("escaped").unwrap().as_text().unwrap().is("a\"b"));
    }

    #[test]
    fn several_keys_in_one_pass_are_what_each_lookup_finds() {
        let mut parser = Parser::default();
        let text = r#"{"type":"tool_use","\u0069d":"t1","name":"Bash","input":{},"id2":1,"":0}"#;
        let object = parser.parse(text).unwrap().as_object().unwrap();
        let keys = ["input", "id", "missing", "type", "", "input"];
        let each = object.get_each(keys).map(|found| found.map(Json::to_value));
        let one_by_one = keys.map(|key| object.get(key).map(Json::to_value));
        assert_eq!(each, one_by_one);
        assert_eq!(each[1], Some(Value::from("t1")));
        assert_eq!(each[2], None);
    }

    #[test]
    fn a_parser_is_reused_across_texts() {
        let mut parser = Parser::default();
        for text in [r#"[1,[2,[3]]]"#, r#"{"a":{"b":{}}}"#, "\"s\"", "[[]]"] {
            let json = parser.parse(text).map(Json::to_value);
            assert_eq!(json.ok(), serde_json::from_str(text).ok());
        }
    }

    /// An object's members as serde_json reads them, each value as written, keys written twice
    /// kept twice.
    fn raw_members(text: &str) -> Option<Vec<(String, String)>> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = Vec<(String, String)>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Self::Value, M::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value: &'de serde_json::value::RawValue = map.next_value()?;
                    members.push((key, value.get().to_owned()));
                }
                Ok(members)
            }
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let members = serde::Deserializer::deserialize_map(&mut deserializer, Members).ok()?;
        deserializer.end().ok()?;
        Some(members)
    }

    #[test]
    fn keys_written_twice_are_rejected_only_when_asked() {
        for text in [r#"{"a":1,"a":2}"#, r#"[{"x":{"b":1,"b":2}}]"#] {
            assert!(Parser::rejecting_duplicate_keys().parse(text).is_err());
            assert!(Parser::default().parse(text).is_ok());
        }
        assert!(Parser::rejecting_duplicate_keys()
            .parse(r#"{"a":1,"b":{"a":2}}"#)
            .is_ok());
    }

    /// JSON-ish text: valid JSON, cut and spliced and sprinkled with the characters that matter.
    fn jsonish() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            any::<bool>().prop_map(|flag| flag.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| n.to_string()),
            "[ -~é\u{1F600}\\\\\"\t]{0,8}".prop_map(|text| format!("\"{text}\"")),
            "(\\\\u[0-9a-fA-F]{4}|\\\\[\"\\\\/bfnrtxu]|[a-z]){0,4}"
                .prop_map(|text| format!("\"{text}\"")),
            "-?[0-9]{0,3}(\\.[0-9]{0,2})?([eE][+-]?[0-9]{0,4})?",
        ];
        let value = leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..5).prop_map(|entries| {
                    let entries: Vec<String> = entries
                        .into_iter()
                        .map(|(key, value)| format!("\"{key}\" : {value}"))
                        .collect();
                    format!("{{{}}}", entries.join(","))
                }),
            ]
        });
        (
            value,
            any::<prop::sample::Index>(),
            "[ ,:\\[\\]{}\"\\\\0-9a-z]{0,2}",
        )
            .prop_map(|(text, cut, noise)| {
                // Half the time, damage the text at one place.
                if cut.index(4) == 0 && !text.is_empty() {
                    let at = cut.index(text.len());
                    let at = (0..=at)
                        .rev()
                        .find(|&at| text.is_char_boundary(at))
                        .unwrap_or(0);
                    format!("{}{noise}{}", &text[..at], &text[at..])
                } else {
                    text
                }
            })
    }

    /// Keys of many lengths, sharing their beginnings, some written with escapes: as written,
    /// and as read.
    fn a_key() -> impl Strategy<Value = (String, String)> {
        prop_oneof![
            Just(("", "")),
            Just(("a", "a")),
            Just(("id", "id")),
            Just(("type", "type")),
            Just(("\\u0074ype", "type")),
            Just(("tool_use", "tool_use")),
            Just(("tool_use_id", "tool_use_id")),
            Just(("tool_use_i\\u0064", "tool_use_id")),
            Just(("tool_usE", "tool_usE")),
            Just(("abcdefgh", "abcdefgh")),
            Just(("abcdefghi", "abcdefghi")),
            Just(("abcdefghj", "abcdefghj")),
            Just(("abcdefgh\u{e9}", "abcdefgh\u{e9}")),
            Just(("\u{e9}t\u{e9}", "\u{e9}t\u{e9}")),
        ]
        .prop_map(|(written, read)| (written.to_owned(), read.to_owned()))
    }

    proptest! {
        #[test]
        fn a_key_is_found_as_serde_json_finds_it(
            keys in prop::collection::vec(a_key(), 0..6),
            looked_up in prop::collection::vec(a_key(), 1..4),
        ) {
            let members: Vec<String> = keys
                .iter()
                .enumerate()
                .map(|(n, (written, _))| format!("\"{written}\":{n}"))
                .collect();
            // No space before the closing brace: a last short key is read at the text's end.
            let text = format!("{{{}}}", members.join(","));
            let expected: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
            let mut parser = Parser::default();
            let object = parser.parse(&text).unwrap().as_object().unwrap();
            for (_, key) in &looked_up {
                prop_assert_eq!(object.get(key).map(Json::to_value), expected.get(key).cloned());
            }
            let [a, b, c] = [0, 1, 2].map(|n| &looked_up[n.min(looked_up.len() - 1)].1);
            let each = object.get_each([a, b, c]).map(|found| found.map(Json::to_value));
            prop_assert_eq!(each, [a, b, c].map(|key| expected.get(key).cloned()));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn accepts_and_reads_exactly_what_serde_json_does(text in jsonish()) {
            let reference = serde_json::from_str::<Value>(&text).ok();
            prop_assert_eq!(parsed(&text), reference, "{:?}", text);
        }

        /// An object's members as written are serde_json's raw members, whenever the parser
        /// that rejects keys written twice accepts the object.
        #[test]
        fn members_as_written_are_serde_jsons_raw_members(text in jsonish()) {
            let text = format!("{{ \"k\" :{text}, \"l\":[ {text} ] ,\"m\"\n:\t{text}}}");
            let mut parser = Parser::rejecting_duplicate_keys();
            if let Ok(json) = parser.parse(&text) {
                let members: Vec<(String, String)> = json
                    .as_object()
                    .unwrap()
                    .members_as_written()
                    .map(|(key, value, (start, end))| {
                        let written = &text[start..end];
                        assert_eq!(serde_json::from_str::<Value>(written).ok(), Some(value.to_value()));
                        (key.decode().into_owned(), written.to_owned())
                    })
                    .collect();
                prop_assert_eq!(Some(members), raw_members(&text));
            }
        }
    }
}
