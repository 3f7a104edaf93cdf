//! The other agents' logs (OpenCode, Kilo, Copilot CLI, Qwen Code, Cline, Cursor, Crush,
//! Goose, VS Code Copilot Chat, Kiro CLI, Pi, OpenClaw, Antigravity, Grok, Hermes and Droid),
//! as the audit commands meet them: joined with a reasons log, found in their usual folders, and
//! named by `stats --by format`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::util::stores::{opencode_part, opencode_tool, store, KILO_TABLES, OPENCODE_SCHEMA};
use crate::util::{arg, extract_records, records, run, write_reasons_log};

/// A stripped call of every agent that gives its calls ids takes its reason from the reasons
/// log by that id: OpenCode's and Kilo's `callID`, Copilot's `toolCallId`, Qwen's
/// `functionCall.id`, Cline's `tool_use.id`, Crush's, Goose's and Hermes's call ids, and
/// OpenClaw's `<call id>|<item id>` by its call id, which the layer logged.
#[test]
fn a_stripped_call_of_each_agent_takes_its_reason_from_the_log_by_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let kilo = dir.path().join("kilo.db");
    let connection = store(&kilo, &format!("{OPENCODE_SCHEMA}{KILO_TABLES}"));
    opencode_part(
        &connection,
        "prt_1",
        "ses_k",
        &opencode_tool("call_kilo", json!({"command": "ls", "description": "List"})),
    );
    let log = dir.path().join("reasons.jsonl");
    write_reasons_log(
        &log,
        &[
            ("bash", "call_b1", "Run the tests that fail."),
            ("run_shell_command", "call_q2", "Qwen's reason."),
            ("read_files", "toolu_c2", "Cline's reason."),
            ("edit", "call_e1", "The edit's reason."),
            ("developer__shell", "tr_d2", "Goose's reason."),
            ("bash", "call_kilo", "Kilo's reason."),
            ("read_file", "call_hb2", "Hermes's reason."),
            ("write", "call_Wn27KpXc4dRa", "OpenClaw's reason."),
        ],
    );
    let paths = [
        "samples/opencode.db",
        arg(&kilo),
        "samples/copilot-cli.events.jsonl",
        "samples/qwen-code.jsonl",
        "samples/cline.messages.json",
        "samples/crush.db",
        "samples/goose.db",
        "samples/hermes.db",
        "samples/openclaw.db",
    ];
    let mut args = vec!["--reasons-log", arg(&log)];
    args.extend(paths);
    let found = extract_records(&args);
    let joined: BTreeMap<String, Vec<(String, String)>> = found
        .iter()
        .filter(|record| record["reason_from"] == "log")
        .fold(BTreeMap::new(), |mut joined, record| {
            joined
                .entry(record["format"].as_str().unwrap().to_owned())
                .or_default()
                .push((
                    record["call_id"].as_str().unwrap().to_owned(),
                    record["reason"].as_str().unwrap().to_owned(),
                ));
            joined
        });
    let expected: BTreeMap<String, Vec<(String, String)>> = [
        (
            "opencode",
            vec![
                ("call_b1", "Run the tests that fail."),
                ("call_e1", "The edit's reason."),
            ],
        ),
        ("kilo", vec![("call_kilo", "Kilo's reason.")]),
        ("copilot-cli", vec![("call_b1", "Run the tests that fail.")]),
        ("qwen-code", vec![("call_q2", "Qwen's reason.")]),
        ("cline", vec![("toolu_c2", "Cline's reason.")]),
        ("crush", vec![("call_e1", "The edit's reason.")]),
        ("goose", vec![("tr_d2", "Goose's reason.")]),
        ("hermes", vec![("call_hb2", "Hermes's reason.")]),
        (
            "openclaw",
            vec![("call_Wn27KpXc4dRa|fc_68a2c3f71d09", "OpenClaw's reason.")],
        ),
    ]
    .into_iter()
    .map(|(format, calls)| {
        let calls = calls
            .into_iter()
            .map(|(id, reason)| (id.to_owned(), reason.to_owned()))
            .collect();
        (format.to_owned(), calls)
    })
    .collect();
    assert_eq!(joined, expected);
    // A call that carries its own reason keeps it, whatever the log says.
    assert!(found
        .iter()
        .filter(|record| record["reason_from"] == "call")
        .all(|record| record["status"] != "missing"
            || record["call_id"].is_null()
            || ![
                "call_b1",
                "call_q2",
                "toolu_c2",
                "call_e1",
                "tr_d2",
                "call_kilo",
                "call_hb2",
                "call_Wn27KpXc4dRa|fc_68a2c3f71d09"
            ]
            .contains(&record["call_id"].as_str().unwrap())));
}

#[test]
fn stats_by_format_names_every_agent_as_people_say_it() {
    let run = run(&["stats", "--by", "format", "--format", "json", "samples"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats: Value = serde_json::from_str(&run.stdout).unwrap();
    let keys: Vec<&str> = stats["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|group| group["key"].as_str().unwrap())
        .collect();
    for name in [
        "opencode",
        "kilo",
        "copilot-cli",
        "qwen-code",
        "cline",
        "cursor",
        "crush",
        "goose",
        "vscode-copilot-chat",
        "kiro-cli",
        "pi",
        "openclaw",
        "antigravity",
        "grok-cli",
        "hermes",
        "factory-droid",
    ] {
        assert!(keys.contains(&name), "{name} not in {keys:?}");
    }
}

/// `reasons stats --by format --format json` with no PATH, on a terminal (`script` gives it one,
/// as a person typing it would; without it the test cannot check anything, so it fails), in
/// `home` with `env`: what the terminal showed, the announcements and the stats.
fn stats_of_the_usual_places(home: &std::path::Path, env: &[(&str, &std::path::Path)]) -> String {
    let output =
        crate::util::reasons_on_a_terminal(&["stats", "--by", "format", "--format", "json"])
            .env("HOME", home)
            .envs(env.iter().copied())
            .output()
            .unwrap();
    String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n")
}

/// `reasons run cline` honoured `CLINE_DATA_DIR` while discovery read `~/.cline/data/sessions`
/// whatever it said, so a run with the variable set counted none of its calls: both read Cline's
/// home in one place now.
#[test]
fn with_no_path_the_cline_sessions_are_read_from_cline_data_dir() {
    let home = tempfile::tempdir().unwrap();
    let moved = home.path().join("cline-elsewhere");
    let session = "sessions/1796126400000_ada01/1796126400000_ada01.messages.json";
    std::fs::create_dir_all(moved.join(session).parent().unwrap()).unwrap();
    std::fs::copy(
        crate::util::root().join("samples/cline.messages.json"),
        moved.join(session),
    )
    .unwrap();
    let data = home.path().join("data");
    let text = stats_of_the_usual_places(
        home.path(),
        &[("CLINE_DATA_DIR", &moved), ("XDG_DATA_HOME", &data)],
    );
    let announced = format!("reasons: reading {}", moved.join("sessions").display());
    assert!(text.contains(&announced), "{text}");
    let json = &text[text.find("{\"totals\"").expect("the stats")..];
    let stats: Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(stats["groups"][0]["key"], "cline", "{stats}");
    assert_eq!(stats["groups"][0]["calls"], 2, "{stats}");
}

/// Qwen Code writes its chats under `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, as it documents;
/// reading `~/.qwen` whatever they said counted none of them.
#[test]
fn with_no_path_the_qwen_chats_are_read_from_its_runtime_folder_else_qwen_home() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let chat = "projects/-home-ada-shop/chats/9d3e7a10.jsonl";
    for (variables, holder) in [
        (&["QWEN_HOME"][..], "qwen-global"),
        (&["QWEN_HOME", "QWEN_RUNTIME_DIR"][..], "qwen-runtime"),
    ] {
        let folder = home.path().join(holder);
        std::fs::create_dir_all(folder.join(chat).parent().unwrap()).unwrap();
        std::fs::copy(
            crate::util::root().join("samples/qwen-code.jsonl"),
            folder.join(chat),
        )
        .unwrap();
        let global = home.path().join("qwen-global");
        let runtime = home.path().join("qwen-runtime");
        let mut env: Vec<(&str, &std::path::Path)> = vec![("XDG_DATA_HOME", &data)];
        for variable in variables {
            env.push(match *variable {
                "QWEN_HOME" => ("QWEN_HOME", &global),
                _ => ("QWEN_RUNTIME_DIR", &runtime),
            });
        }
        let text = stats_of_the_usual_places(home.path(), &env);
        let announced = format!("reasons: reading {}", folder.join("projects").display());
        assert!(text.contains(&announced), "{variables:?}: {text}");
        if holder == "qwen-runtime" {
            assert!(
                !text.contains("qwen-global"),
                "the runtime folder wins: {text}"
            );
        }
        let json = &text[text.find("{\"totals\"").expect("the stats")..];
        let stats: Value = serde_json::from_str(json.trim()).unwrap();
        assert_eq!(stats["groups"][0]["key"], "qwen-code", "{stats}");
        assert!(stats["groups"][1].is_null(), "one agent's calls: {stats}");
    }
}

/// With no PATH on a terminal, the usual place of every agent is read and announced: the
/// samples copied where each agent writes its own.
#[test]
fn with_no_path_and_a_terminal_every_agents_usual_place_is_read_and_announced() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let config = home.path().join("config");
    let places = [
        (
            "samples/cline.messages.json",
            home.path()
                .join(".cline/data/sessions/1796126400000_ada01/1796126400000_ada01.messages.json"),
        ),
        (
            "samples/copilot-cli.events.jsonl",
            home.path()
                .join(".copilot/session-state/5b0c2f4e/events.jsonl"),
        ),
        (
            "samples/qwen-code.jsonl",
            home.path()
                .join(".qwen/projects/-home-ada-shop/chats/9d3e7a10.jsonl"),
        ),
        (
            "samples/cursor.jsonl",
            home.path()
                .join(".cursor/projects/home-ada-shop/agent-transcripts/c1/c1.jsonl"),
        ),
        ("samples/opencode.db", data.join("opencode/opencode.db")),
        (
            "samples/opencode-export.json",
            data.join("opencode/storage/part/msg_x2/prt_x3.json"),
        ),
        ("samples/kilo.db", data.join("kilo/kilo.db")),
        ("samples/goose.db", data.join("goose/sessions/sessions.db")),
        (
            "samples/goose-legacy.jsonl",
            data.join("goose/sessions/20261130_1.jsonl"),
        ),
        (
            "samples/vscode-copilot-chat.json",
            config.join("Code/User/workspaceStorage/9f2c41/chatSessions/3b9e6c1d.json"),
        ),
        (
            "samples/kiro-cli.jsonl",
            home.path().join(".kiro/sessions/cli/7d1c0b9a.jsonl"),
        ),
        (
            "samples/pi.jsonl",
            home.path().join(
                ".pi/agent/sessions/--home-dev-src-ledger--/2026-05-04T08-30-00-000Z_0199a3c2.jsonl",
            ),
        ),
        (
            "samples/openclaw.jsonl",
            home.path()
                .join(".openclaw/agents/main/sessions/5d0c7a91.jsonl"),
        ),
        (
            "samples/openclaw.db",
            home.path()
                .join(".openclaw/agents/main/agent/openclaw-agent.sqlite"),
        ),
        (
            "samples/antigravity.jsonl",
            home.path().join(
                ".gemini/antigravity-cli/brain/c0ffee/.system_generated/logs/transcript.jsonl",
            ),
        ),
        (
            "samples/grok-cli.updates.jsonl",
            home.path()
                .join(".grok/sessions/%2Fhome%2Fdev%2Fproj/019fd001/updates.jsonl"),
        ),
        (
            "samples/hermes-session.json",
            home.path()
                .join(".hermes/sessions/session_20260806_091500_4f2a1c.json"),
        ),
        ("samples/hermes.db", home.path().join(".hermes/state.db")),
        (
            "samples/factory-droid.jsonl",
            home.path()
                .join(".factory/sessions/-home-dev-src-uploader/6f1e2d3c.jsonl"),
        ),
    ];
    for (sample, place) in &places {
        std::fs::create_dir_all(place.parent().unwrap()).unwrap();
        std::fs::copy(crate::util::root().join(sample), place).unwrap();
    }
    // Another application's database beside Goose's: not announced, not warned about.
    rusqlite::Connection::open(data.join("goose/sessions/cache.db"))
        .unwrap()
        .execute_batch("CREATE TABLE entry (key TEXT, value TEXT);")
        .unwrap();
    let text = stats_of_the_usual_places(
        home.path(),
        &[("XDG_DATA_HOME", &data), ("XDG_CONFIG_HOME", &config)],
    );
    for place in [
        home.path().join(".cline/data/sessions"),
        home.path().join(".copilot/session-state"),
        home.path().join(".qwen/projects"),
        home.path()
            .join(".cursor/projects/home-ada-shop/agent-transcripts"),
        data.join("opencode/opencode.db"),
        data.join("opencode/storage"),
        data.join("kilo/kilo.db"),
        data.join("goose/sessions"),
        config.join("Code/User/workspaceStorage/9f2c41/chatSessions"),
        home.path().join(".kiro/sessions/cli"),
        home.path().join(".pi/agent/sessions"),
        home.path().join(".openclaw/agents/main/sessions"),
        home.path()
            .join(".openclaw/agents/main/agent/openclaw-agent.sqlite"),
        home.path().join(".gemini/antigravity-cli/brain"),
        home.path().join(".grok/sessions"),
        home.path().join(".hermes/sessions"),
        home.path().join(".hermes/state.db"),
        home.path().join(".factory/sessions"),
    ] {
        assert!(
            text.contains(&format!("reasons: reading {}\n", place.display())),
            "{} not announced:\n{text}",
            place.display()
        );
    }
    assert!(!text.contains("cache.db"), "{text}");
    assert!(!text.contains("SQLite"), "{text}");
    let json = &text[text.find("{\"totals\"").expect("the stats")..];
    let stats: Value = serde_json::from_str(json.trim()).unwrap();
    let counts: BTreeMap<&str, u64> = stats["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|group| {
            (
                group["key"].as_str().unwrap(),
                group["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: BTreeMap<&str, u64> = [
        ("cline", 2),
        ("copilot-cli", 2),
        ("qwen-code", 2),
        ("cursor", 2),
        // The store's three, and the export's one (in a part file of the legacy tree).
        ("opencode", 4),
        ("kilo", 1),
        ("goose", 3),
        ("vscode-copilot-chat", 4),
        ("kiro-cli", 3),
        ("pi", 3),
        // The session file's two, and the store's two.
        ("openclaw", 4),
        ("antigravity", 2),
        ("grok-cli", 2),
        ("hermes", 4),
        ("factory-droid", 2),
    ]
    .into_iter()
    .collect();
    assert_eq!(counts, expected);
}

/// A folder PATH finds the agents' files too: their JSON logs, and the `.db` and `.sqlite` files
/// that are agents' stores, while other databases in it are passed over without a word.
#[test]
fn a_folder_finds_the_agents_stores_and_passes_over_other_databases_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project/.crush");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(
        crate::util::root().join("samples/crush.db"),
        project.join("crush.db"),
    )
    .unwrap();
    let openclaw = dir.path().join(".openclaw/agents/main/agent");
    std::fs::create_dir_all(&openclaw).unwrap();
    std::fs::copy(
        crate::util::root().join("samples/openclaw.db"),
        openclaw.join("openclaw-agent.sqlite"),
    )
    .unwrap();
    for n in 0..20 {
        rusqlite::Connection::open(dir.path().join(format!("project/other-{n}.db")))
            .unwrap()
            .execute_batch("CREATE TABLE messages (id TEXT, body TEXT);")
            .unwrap();
    }
    std::fs::write(dir.path().join("project/notes.db"), "not a database\n").unwrap();
    let run = run(&["extract", "--format", "jsonl", arg(dir.path())]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let found = records(&run.stdout);
    let formats: Vec<&str> = found
        .iter()
        .map(|record| record["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats, ["openclaw", "openclaw", "crush", "crush"]);
}

/// Copilot appends to `events.jsonl` as the session goes: read while it writes, the line it has
/// not finished is one warning, and every call before it is found.
#[test]
fn a_copilot_event_log_cut_mid_line_warns_once_and_keeps_the_calls_before_it() {
    let sample =
        std::fs::read_to_string(crate::util::root().join("samples/copilot-cli.events.jsonl"))
            .unwrap();
    let lines: Vec<&str> = sample.lines().collect();
    let cut = format!("{}\n{}", lines[..4].join("\n"), &lines[4][..40]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    std::fs::write(&path, cut).unwrap();
    let run = run(&["extract", "--format", "jsonl", arg(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!("reasons: {}:5: truncated last line\n", arg(&path))
    );
    let ids: Vec<Value> = records(&run.stdout)
        .iter()
        .map(|record| record["call_id"].clone())
        .collect();
    assert_eq!(ids, [json!("call_v1"), json!("call_b1")]);
}

/// The agents of `corpus-new-agents/` join a reasons log by the ids their logs give calls
/// (Antigravity's calls have none).
#[test]
fn a_stripped_call_of_each_new_agent_takes_its_reason_from_the_log_by_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    let logged = [
        ("vscode-copilot-chat", "read_file", "toolu_vs_02__vscode-2"),
        ("kiro-cli", "fs_read", "tooluse_k2"),
        ("pi", "read", "toolu_pi_02"),
        ("grok-cli", "run_terminal_cmd", "call-7f3e-1"),
        ("hermes", "read_file", "call_h2"),
        ("factory-droid", "Read", "toolu_droid_02"),
    ];
    let reasons: Vec<(&str, &str, String)> = logged
        .iter()
        .map(|(format, tool, id)| (*tool, *id, format!("{format}'s reason.")))
        .collect();
    let reasons: Vec<(&str, &str, &str)> = reasons
        .iter()
        .map(|(tool, id, reason)| (*tool, *id, reason.as_str()))
        .collect();
    write_reasons_log(&log, &reasons);
    let found = extract_records(&[
        "--reasons-log",
        arg(&log),
        "samples/vscode-copilot-chat.json",
        "samples/kiro-cli.jsonl",
        "samples/pi.jsonl",
        "samples/grok-cli.updates.jsonl",
        "samples/hermes.jsonl",
        "samples/factory-droid.jsonl",
    ]);
    let joined: Vec<(String, String, String)> = found
        .iter()
        .filter(|record| record["reason_from"] == "log")
        .map(|record| {
            (
                record["format"].as_str().unwrap().to_owned(),
                record["call_id"].as_str().unwrap().to_owned(),
                record["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = logged
        .iter()
        .map(|(format, _, id)| {
            (
                (*format).to_owned(),
                (*id).to_owned(),
                format!("{format}'s reason."),
            )
        })
        .collect();
    assert_eq!(joined, expected);
}
