//! A real language model behind `reasons gateway`: llama.cpp's server with
//! Qwen2.5-Coder-0.5B-Instruct (`util/llama.rs`), asked through the official `openai` SDK, plain
//! and streamed (llama.cpp's own server-sent events). A relay between the gateway and the model
//! keeps what the model was asked and what it answered, so each call the client gets is compared
//! with the model's own.
//!
//! The model and its server are installed by `.ci/real-parts target/real-parts`, which `.ci/run`
//! runs before the ignored tests. Each test here is ignored by a plain `cargo test`, and fails
//! (never passes by skipping) when a part is missing.

use serde_json::{Map, Value};

use crate::report::page::escaped;
use crate::util::gateway::Gateway;
use crate::util::llama::{chat_calls, LlamaServer, Relay, ANSWER_LIMIT};
use crate::util::real_parts::python_script_within;
use crate::util::{arg, extract_records, read_reasons_log, run};

/// A call's arguments as an object.
#[track_caller]
fn object(arguments: &str) -> Map<String, Value> {
    match serde_json::from_str(arguments) {
        Ok(Value::Object(object)) => object,
        _ => panic!("arguments that are no JSON object: {arguments}"),
    }
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_model_calls_reach_the_openai_sdk_without_their_reasons_and_the_log_keeps_them() {
    let model = LlamaServer::start();
    let relay = Relay::start(&model);
    let gateway = Gateway::start(&relay.url(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session.jsonl");
    let got = python_script_within(
        "openai_model.py",
        &[&format!("http://{}/v1", gateway.address), arg(&session)],
        ANSWER_LIMIT * 3,
    );
    let exchanges = relay.exchanges();
    assert_eq!(exchanges.len(), 3, "{}", model.log_tail());
    let logged = read_reasons_log(&gateway.log);

    // Every tool the model was shown declares the layer's reason.
    for exchange in &exchanges {
        for tool in exchange.request["tools"].as_array().expect("tools") {
            let declared = &tool["function"]["parameters"]["properties"]["reason"];
            assert_eq!(declared, &reasons::layer::reason_property(), "{tool}");
        }
    }

    let mut reasons_written = Vec::new();
    for (exchange, way) in exchanges.iter().zip(["plain", "streamed", "next_turn"]) {
        let from_model = chat_calls(exchange.reply_status, &exchange.reply_body);
        let to_client = got[way].as_array().expect("the client's calls");
        assert!(!from_model.is_empty(), "{way}: the model made no call");
        assert_eq!(from_model.len(), to_client.len(), "{way}: {got}");
        for ((id, name, arguments), client) in from_model.iter().zip(to_client) {
            assert_eq!(client["id"], id.as_str(), "{way}");
            assert_eq!(client["name"], name.as_str(), "{way}");
            let client_arguments = client["arguments"].as_str().expect("a string");
            assert!(
                !object(client_arguments).contains_key("reason"),
                "{way}: the client got a reason: {client_arguments}"
            );
            let mut own = object(arguments);
            match own.shift_remove("reason") {
                // The model's own arguments less that one key, re-serialised in their order.
                Some(reason) => {
                    assert_eq!(client_arguments, Value::Object(own).to_string(), "{way}");
                    reasons_written.push((id.clone(), name.clone(), reason));
                }
                // Untouched: byte for byte what the model wrote.
                None => assert_eq!(client_arguments, arguments, "{way}"),
            }
        }
    }

    // Every reason the model wrote is in the log, beside its call; nothing else is.
    assert!(
        !reasons_written.is_empty(),
        "the model wrote no reason at all: {:?}",
        exchanges
            .iter()
            .map(|exchange| String::from_utf8_lossy(&exchange.reply_body).into_owned())
            .collect::<Vec<_>>()
    );
    assert_eq!(logged.len(), reasons_written.len(), "{logged:?}");
    for (id, name, reason) in &reasons_written {
        let entry = logged
            .iter()
            .find(|entry| entry["call_id"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} is not in the log: {logged:?}"));
        assert_eq!(entry["via"], "gateway");
        assert_eq!(entry["tool"], name.as_str());
        assert_eq!(&entry["reason"], reason);
        let touched = entry["touched"].as_str().unwrap_or_default();
        assert!(!touched.is_empty(), "{entry}");
    }

    // The next turn's history went to the model with the first call's reason given back.
    let first_call = &got["plain"][0];
    let first_reason = logged
        .iter()
        .find(|entry| entry["call_id"] == first_call["id"])
        .map(|entry| entry["reason"].clone())
        .expect("the first call, which the next turn's history holds, has a logged reason");
    let history = &exchanges[2].request["messages"];
    let sent_back = history
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["tool_calls"].as_array().into_iter().flatten())
        .find(|call| call["id"] == first_call["id"])
        .expect("the history holds the first call");
    let restored = object(sent_back["function"]["arguments"].as_str().unwrap());
    assert_eq!(restored.get("reason"), Some(&first_reason), "{sent_back}");
    let client_call = got["next_turn_messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["tool_calls"].as_array().into_iter().flatten())
        .find(|call| call["id"] == first_call["id"])
        .expect("the client's history holds the first call");
    let client_arguments = client_call["function"]["arguments"].as_str().unwrap();
    assert!(
        !object(client_arguments).contains_key("reason"),
        "the client's own history holds no reason: {client_arguments}"
    );

    // The audits read the session the client recorded, the reasons joined from the log.
    let log = arg(&gateway.log);
    let records = extract_records(&["--reasons-log", log, arg(&session)]);
    let calls: usize = ["plain", "streamed", "next_turn"]
        .iter()
        .map(|way| got[way].as_array().unwrap().len())
        .sum();
    assert_eq!(records.len(), calls, "{records:?}");
    for (id, _, reason) in &reasons_written {
        let record = records
            .iter()
            .find(|record| record["call_id"] == id.as_str())
            .unwrap_or_else(|| panic!("extract lacks {id}"));
        assert_eq!(record["format"], "openai-chat");
        assert_eq!(&record["reason"], reason);
        assert_eq!(record["reason_from"], "log");
        assert_eq!(record["status"], "present");
    }
    let stats = run(&[
        "stats",
        "--format",
        "json",
        "--reasons-log",
        log,
        arg(&session),
    ]);
    assert_eq!(stats.code, 0, "{}", stats.stderr);
    let totals = serde_json::from_str::<Value>(&stats.stdout).unwrap()["totals"].clone();
    assert_eq!(totals["calls"], calls);
    assert_eq!(totals["present"], reasons_written.len());
    assert_eq!(totals["missing"], calls - reasons_written.len());
    let report = run(&["report", "--reasons-log", log, arg(&session)]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    for (_, _, reason) in &reasons_written {
        let shown = escaped(reason.as_str().unwrap());
        assert!(report.stdout.contains(&shown), "the report lacks {reason}");
    }
}
