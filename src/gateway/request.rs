//! A request body with its `tools` augmented and everything else left as the bytes it came as.
//!
//! Only the top level of the body is read into keys and raw values: a conversation of megabytes
//! is copied, not parsed into a tree and written out again, and whatever it holds (numbers
//! beyond `f64`, escapes written one way or another) reaches the model exactly as the agent
//! wrote it.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::history::{restore, Recall};
use crate::apis::Api;
use crate::layer::wire::augment_tools;
use crate::layer::ToolNames;

/// A request after the layer.
#[derive(Debug, Default)]
pub struct Augmented {
    /// The body to forward, when it changed.
    pub body: Option<Vec<u8>>,
    /// The tools whose calls lose their reason in the answer.
    pub tracked: ToolNames,
    /// The agent's session, when the body names it.
    pub session: Option<String>,
    /// Why the tools were left as they came, when the body could not be read.
    pub problem: Option<String>,
    /// How many history calls were given their reason back.
    pub restored: usize,
}

/// Augments the `tools` of a request body in the API's shape, and gives the calls of its
/// history the reasons `recall` remembers (see `history`).
pub fn augment(api: Api, body: &[u8], recall: Option<&Recall>) -> Augmented {
    let object = match serde_json::from_slice::<TopLevel<'_>>(body) {
        Ok(object) => object,
        Err(error) => {
            return Augmented {
                problem: Some(format!("the request body is not a JSON object ({error})")),
                ..Augmented::default()
            }
        }
    };
    let session = match api {
        Api::Anthropic => object
            .get("metadata")
            .and_then(|metadata| super::anthropic::session_of(metadata.get())),
        _ => None,
    };
    let mut tools_at = object
        .0
        .iter()
        .enumerate()
        .filter(|(_, (key, _))| key == "tools");
    let (Some((at, (_, tools))), None) = (tools_at.next(), tools_at.next()) else {
        // No tools, or the key twice: which one would the API read? When in doubt, do not touch.
        return Augmented {
            session,
            ..Augmented::default()
        };
    };
    let Ok(Value::Array(declarations)) = serde_json::from_str::<Value>(tools.get()) else {
        return Augmented {
            session,
            problem: Some("the request's `tools` is not an array".to_owned()),
            ..Augmented::default()
        };
    };
    let listing = augment_tools(api, &declarations);
    let mut replaced = Vec::new();
    if listing.changed {
        replaced.push((at, Value::from(listing.tools).to_string()));
    }
    let mut restored = 0;
    let history = api
        .history()
        .zip(recall.filter(|recall| !recall.is_empty()));
    if let Some((history, recall)) = history.filter(|_| !listing.tracked.is_empty()) {
        let entries = object.0.iter().position(|(key, _)| key == history.key);
        let given = entries.and_then(|entries| {
            let raw = object.0[entries].1;
            Some((entries, restore(api, raw, &listing.tracked, recall)?))
        });
        if let Some((entries, (text, given))) = given {
            replaced.push((entries, text));
            restored = given;
        }
    }
    let body = (!replaced.is_empty()).then(|| object.with_values_at(&replaced));
    Augmented {
        body,
        tracked: listing.tracked,
        session,
        problem: None,
        restored,
    }
}

/// The top level of a JSON object: its keys in order, each with its value as raw text.
struct TopLevel<'a>(Vec<(String, &'a RawValue)>);

impl<'a> TopLevel<'a> {
    fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0
            .iter()
            .find_map(|(name, value)| (name == key).then_some(*value))
    }

    /// The object written compactly, with the values at some places replaced by these texts.
    fn with_values_at(&self, replaced: &[(usize, String)]) -> Vec<u8> {
        let raw_length: usize = self
            .0
            .iter()
            .map(|(key, raw)| key.len() + raw.get().len() + 4)
            .sum();
        let mut body = Vec::with_capacity(raw_length + 4096);
        body.push(b'{');
        for (n, (key, raw)) in self.0.iter().enumerate() {
            if n > 0 {
                body.push(b',');
            }
            serde_json::to_writer(&mut body, key).expect("a string serialises");
            body.push(b':');
            let text = replaced
                .iter()
                .find_map(|(at, text)| (*at == n).then_some(text.as_str()));
            body.extend_from_slice(text.unwrap_or(raw.get()).as_bytes());
        }
        body.push(b'}');
        body
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for TopLevel<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = TopLevel<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<TopLevel<'de>, M::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    entries.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(TopLevel(entries))
            }
        }
        deserializer
            .deserialize_map(Keys)
            .map_err(|error: D::Error| de::Error::custom(error))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::layer::{reason_property, REASON_PARAM};

    fn bash() -> Value {
        json!({"name": "Bash", "input_schema": {"type": "object",
            "properties": {"command": {"type": "string"}}, "required": ["command"]}})
    }

    #[test]
    fn only_the_tools_change_and_the_rest_keeps_its_bytes() {
        let body = format!(
            r#"{{ "model" : "m", "max_tokens": 1e400, "messages": [{{"role":"user","content":"caf\u00e9 \ud83d\ude00"}}], "tools": [{}] }}"#,
            bash()
        );
        let augmented = augment(Api::Anthropic, body.as_bytes(), None);
        let out = String::from_utf8(augmented.body.expect("augmented")).unwrap();
        assert!(out.starts_with(
            r#"{"model":"m","max_tokens":1e400,"messages":[{"role":"user","content":"caf\u00e9 \ud83d\ude00"}],"tools":["#
        ));
        let tools: Value =
            serde_json::from_str(&out[out.find("\"tools\":").unwrap() + 8..out.len() - 1]).unwrap();
        assert_eq!(
            tools[0]["input_schema"]["properties"][REASON_PARAM],
            reason_property()
        );
        assert_eq!(tools[0]["input_schema"]["required"], json!(["command"]));
        assert_eq!(augmented.tracked.into_iter().collect::<Vec<_>>(), ["Bash"]);
    }

    #[test]
    fn the_same_body_gives_the_same_bytes() {
        let body = json!({"model": "m", "tools": [bash(), {"type": "web_search_20250305",
            "name": "web_search", "max_uses": 5}]})
        .to_string();
        let first = augment(Api::Anthropic, body.as_bytes(), None).body.unwrap();
        for _ in 0..10 {
            assert_eq!(
                augment(Api::Anthropic, body.as_bytes(), None).body.unwrap(),
                first
            );
        }
    }

    #[test]
    fn server_tools_and_own_reasons_are_left_alone() {
        let own = json!({"name": "Explain", "input_schema": {"type": "object",
            "properties": {"reason": {"type": "string"}}}});
        let server = json!({"type": "web_search_20250305", "name": "web_search"});
        let body = json!({"tools": [own, server]}).to_string();
        let augmented = augment(Api::Anthropic, body.as_bytes(), None);
        assert_eq!(augmented.body, None);
        assert!(augmented.tracked.is_empty());
    }

    #[test]
    fn bodies_without_readable_tools_go_on_as_they_came() {
        for body in [
            &b"not json"[..],
            b"[1,2]",
            b"{\"model\":\"m\"}",
            b"{\"tools\":\"all\"}",
            b"{\"tools\":[],\"tools\":[{\"name\":\"a\",\"input_schema\":{}}]}",
            b"{\"tools\":[]}",
        ] {
            let augmented = augment(Api::Anthropic, body, None);
            assert_eq!(augmented.body, None, "{}", String::from_utf8_lossy(body));
            assert!(augmented.tracked.is_empty());
        }
        assert!(augment(Api::Anthropic, b"not json", None).problem.is_some());
        assert!(augment(Api::Anthropic, b"{\"tools\":\"all\"}", None)
            .problem
            .is_some());
    }
}
