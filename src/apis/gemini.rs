//! Gemini: `functionDeclarations` grouped in a request's `tools`, `functionCall` parts in an
//! answer's candidates. A streamed answer's chunks each carry whole parts, so a call never spans
//! two chunks; a chunk may hold several calls, often without ids.

use serde_json::{json, Map, Value};

use super::{items, ApiShape, ModelProvider};

/// The keys under which a Gemini declaration may keep its schema (its JSON name, and the proto
/// field name the API accepts too). A declaration holds exactly one of them.
const SCHEMA_KEYS: [&str; 3] = [
    "parametersJsonSchema",
    "parameters_json_schema",
    "parameters",
];

/// The keys a bare Gemini `functionCall` object may hold.
const CALL_KEYS: [&str; 3] = ["name", "args", "id"];

/// The keys under which a Gemini tool groups its function declarations.
pub const GROUP_KEYS: [&str; 2] = ["functionDeclarations", "function_declarations"];

/// The function declarations of a Gemini tool (`{"functionDeclarations":[…]}`), when `tool` is
/// one: the key they sit under, and the array. Other tools (`googleSearch`, `codeExecution`, …)
/// hold none.
pub fn gemini_group(tool: &Value) -> Option<(&'static str, &Vec<Value>)> {
    let object = tool.as_object()?;
    GROUP_KEYS
        .into_iter()
        .find_map(|key| Some((key, object.get(key)?.as_array()?)))
}

/// Whether an object is a bare `functionCall`: it holds nothing but `name`, `args` and `id`. A
/// Gemini CLI session records its calls as `{"id","name","args","result",…}`, and history is not
/// a call on its way to a tool.
pub(super) fn is_bare_call(object: &Map<String, Value>) -> bool {
    object.contains_key("name")
        && object.contains_key("args")
        && object.keys().all(|key| CALL_KEYS.contains(&key.as_str()))
}

/// Gemini's shape.
pub struct Gemini;

impl ApiShape for Gemini {
    /// A declaration that holds more than one of its schema keys has none the layer can trust:
    /// the API refuses it, and extending one schema would leave the other saying otherwise.
    fn schema_key(&self, body: &Map<String, Value>) -> Option<&'static str> {
        let mut present = SCHEMA_KEYS
            .into_iter()
            .filter(|key| body.contains_key(*key));
        match (present.next(), present.next()) {
            (Some(key), None) => Some(key),
            _ => None,
        }
    }

    fn call_body<'a>(&self, call: &'a Value) -> Option<&'a Map<String, Value>> {
        match call.get("functionCall") {
            Some(call) => call.as_object(),
            None => call.as_object(),
        }
    }

    fn call_body_mut<'a>(&self, call: &'a mut Value) -> Option<&'a mut Map<String, Value>> {
        match call.get("functionCall").is_some() {
            true => call.get_mut("functionCall")?.as_object_mut(),
            false => call.as_object_mut(),
        }
    }

    fn arguments_key(&self) -> &'static str {
        "args"
    }

    fn call_id<'a>(&self, call: &'a Value) -> Option<&'a Value> {
        self.call_body(call)?.get("id")
    }

    /// A tool holding `functionDeclarations`; anything else (`googleSearch`…) goes on as it came.
    fn declares_a_function(&self, tool: &Value) -> bool {
        gemini_group(tool).is_some()
    }

    /// `candidates[].content.parts[]`, in one answer, one streamed chunk, or the array a
    /// `streamGenerateContent` without `alt=sse` answers with.
    fn answer_calls<'a>(&self, answer: &'a mut Value) -> Vec<&'a mut Value> {
        let answers: Vec<&mut Value> = match answer {
            Value::Array(answers) => answers.iter_mut().collect(),
            answer => vec![answer],
        };
        answers
            .into_iter()
            .flat_map(|answer| items(answer, "candidates"))
            .filter_map(|candidate| candidate.get_mut("content"))
            .flat_map(|content| items(content, "parts"))
            .collect()
    }

    /// `…/models/MODEL:generateContent` and `…:streamGenerateContent`.
    fn serves(&self, path: &str) -> bool {
        path.contains("/models/")
            && (path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent"))
    }

    fn provider(&self) -> Option<ModelProvider> {
        Some(ModelProvider {
            name: "gemini",
            default_upstream: "https://generativelanguage.googleapis.com",
        })
    }

    /// Gemini's clients send `x-goog-api-key`, and its paths are `/v1beta/…` or
    /// `…/models/MODEL:ACTION` (`countTokens`, `embedContent`).
    fn claims(&self, path: &str, has_header: &dyn Fn(&str) -> bool) -> bool {
        has_header("x-goog-api-key")
            || path.starts_with("/v1beta/")
            || path
                .rsplit_once("/models/")
                .is_some_and(|(_, model)| model.contains(':'))
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        let kind = match status {
            400..=499 => "INVALID_ARGUMENT",
            _ => "UNAVAILABLE",
        };
        json!({"error": {"code": status, "message": message, "status": kind}})
    }
}
