//! A team's gateway: `--serve-reasons` and `reasons hook AGENT --gateway URL`, and replicas that
//! share their reasons through `--store` on a real Redis (Debian's `redis-server`, started on a
//! free loopback port and stopped after).

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::gateway::Gateway;
use crate::util::redis::Redis;
use crate::util::upstream::{bash_tool, declares_tools, read_request, request, Reply, Upstream};
use crate::util::{arg, eventually, read_reasons_log, run_with_stdin, write_reasons_log};

const REASON: &str = "See what the build left behind";

/// A model that answers each request with a Bash call whose id the request's last user message
/// names (`call ID`), with a reason; a request whose history already holds the call's result
/// gets text.
fn model(request: &Value) -> Vec<Value> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    match last["content"]
        .as_str()
        .and_then(|text| text.strip_prefix("call "))
    {
        Some(id) => vec![json!({"type": "tool_use", "id": id, "name": "Bash",
            "input": {"command": "ls target", "reason": REASON}})],
        None => vec![json!({"type": "text", "text": "Done."})],
    }
}

/// Turn 1 of a session: the user asks, the model calls Bash as `id`.
fn first_turn(id: &str, stream: bool) -> Value {
    json!({"model": "claude-test", "max_tokens": 100, "stream": stream, "tools": [bash_tool()],
        "messages": [{"role": "user", "content": format!("call {id}")}]})
}

/// Turn 2: the history as Claude Code sends it back, the call without its reason, and its result.
fn second_turn(id: &str) -> Value {
    json!({"model": "claude-test", "max_tokens": 100, "stream": false, "tools": [bash_tool()],
        "messages": [
            {"role": "user", "content": format!("call {id}")},
            {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Bash",
                "input": {"command": "ls target"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                "content": "debug"}]}]})
}

/// Sends a turn through a gateway; the agent never sees a reason.
#[track_caller]
fn turn(gateway: &Gateway, body: &Value) -> Reply {
    let reply = gateway.post("/v1/messages", body.to_string().as_bytes());
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert!(
        !String::from_utf8_lossy(&reply.body).contains(REASON),
        "a reason reached the agent"
    );
    reply
}

/// The input of the Bash call `id` in the history of the last request the upstream received
/// that holds it.
fn restored_input(upstream: &Upstream, id: &str) -> Value {
    let last = upstream
        .tool_requests("/v1/messages")
        .into_iter()
        .rfind(|request| request["messages"].as_array().is_some_and(|m| m.len() > 1))
        .expect("a second turn went upstream");
    last["messages"][1]["content"][0]
        .clone()
        .as_object()
        .filter(|block| block["id"] == id)
        .map(|block| block["input"].clone())
        .expect("the call in the history")
}

fn get(gateway: &Gateway, path: &str) -> Reply {
    request(gateway.address, "GET", path, &[], b"")
}

/// Claude Code's `PreToolUse` input for a Bash call.
fn claude_hook_input(id: &str) -> String {
    json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash",
        "tool_input": {"command": "ls target"}, "tool_use_id": id})
    .to_string()
}

#[test]
fn serve_reasons_answers_one_call_by_id_and_nothing_else() {
    let upstream = Upstream::messages(model);
    let gateway = Gateway::start(&upstream.url(), &["--serve-reasons"]);
    assert!(
        gateway
            .startup
            .contains("serving /reasons/v1/calls/{call_id}"),
        "{}",
        gateway.startup
    );
    turn(&gateway, &first_turn("toolu_served01", true));
    let answer = get(&gateway, "/reasons/v1/calls/toolu_served01");
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("cache-control"), Some("no-store"));
    let mut record = answer.json();
    let time = record
        .as_object_mut()
        .unwrap()
        .shift_remove("time")
        .unwrap();
    assert!(time.as_str().unwrap().ends_with('Z'), "{time}");
    assert_eq!(
        record,
        json!({"call_id": "toolu_served01", "tool": "Bash", "reason": REASON,
            "touched": "ls target"})
    );
    let forwarded = upstream.received().len();
    // No listing, no search, no other method, no other id: 404, and nothing goes upstream.
    for (method, path) in [
        ("GET", "/reasons/v1/calls/toolu_other"),
        ("GET", "/reasons/v1/calls/"),
        ("GET", "/reasons/v1/calls/toolu_served01/more"),
        ("GET", "/reasons/v1/calls/%zz"),
        ("POST", "/reasons/v1/calls/toolu_served01"),
        ("DELETE", "/reasons/v1/calls/toolu_served01"),
    ] {
        let answer = request(gateway.address, method, path, &[], b"");
        assert_eq!(answer.status, 404, "{method} {path}");
        assert!(!String::from_utf8_lossy(&answer.body).contains(REASON));
    }
    assert_eq!(upstream.received().len(), forwarded);
}

#[test]
fn without_serve_reasons_the_route_is_any_path_and_goes_upstream() {
    let upstream = Upstream::messages(model);
    let gateway = Gateway::start(&upstream.url(), &[]);
    turn(&gateway, &first_turn("toolu_unserved", false));
    let answer = get(&gateway, "/reasons/v1/calls/toolu_unserved");
    assert_eq!(answer.status, 404);
    assert!(!String::from_utf8_lossy(&answer.body).contains(REASON));
    assert_eq!(
        upstream.received().last().unwrap().path,
        "/reasons/v1/calls/toolu_unserved"
    );
}

#[test]
fn a_restarted_gateway_serves_what_its_log_holds() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    write_reasons_log(&log, &[("Bash", "toolu_before", "Logged before the start")]);
    let upstream = Upstream::messages(model);
    let gateway = Gateway::start_logging_to(&upstream.url(), &log, &["--serve-reasons"]);
    let answer = get(&gateway, "/reasons/v1/calls/toolu_before");
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["reason"], "Logged before the start");
}

#[test]
fn a_hook_asks_the_gateway_first_then_its_own_log() {
    let upstream = Upstream::messages(model);
    let gateway = Gateway::start(&upstream.url(), &["--serve-reasons"]);
    turn(&gateway, &first_turn("toolu_hooked", false));
    // The person's own log is elsewhere, and holds another call.
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("own.jsonl");
    write_reasons_log(&own, &[("Bash", "toolu_local", "Only in my own log")]);
    let url = format!("http://{}", gateway.address);
    let hook = |id: &str, gateway: &str| {
        let run = run_with_stdin(
            &[
                "hook",
                "claude-code",
                "--gateway",
                gateway,
                "--reasons-log",
                arg(&own),
            ],
            claude_hook_input(id).as_bytes(),
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.stderr, "");
        run.stdout
    };
    assert_eq!(
        hook("toolu_hooked", &url),
        format!(
            "{}\n",
            json!({"systemMessage": format!("model's reason for Bash: {REASON}")})
        )
    );
    assert!(hook("toolu_local", &url).contains("Only in my own log"));
    assert_eq!(hook("toolu_nowhere", &url), "");
    // A gateway that is not there: the log answers, and the agent is never held up.
    let gone = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    assert!(hook("toolu_local", &gone).contains("Only in my own log"));
    assert_eq!(hook("toolu_hooked", &gone), "");
    // One that accepts and never answers: given up on, the log answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let start = Instant::now();
    assert!(hook("toolu_local", &silent_url).contains("Only in my own log"));
    assert!(start.elapsed() < Duration::from_secs(5));
    drop(silent);
    // Gemini CLI sends no id: found in the log by what the call touched, as without --gateway.
    let gemini = json!({"hook_event_name": "BeforeTool", "tool_name": "Bash",
        "tool_input": {"command": "ls target"}});
    fn touched_log(path: &Path) {
        let line = json!({"time": "2026-12-01T10:11:12.000Z", "via": "gateway", "tool": "Bash",
            "call_id": "g1", "reason": "Gemini's own", "touched": "ls target"});
        std::fs::write(path, format!("{line}\n")).unwrap();
    }
    touched_log(&own);
    let run = run_with_stdin(
        &[
            "hook",
            "gemini-cli",
            "--gateway",
            &url,
            "--reasons-log",
            arg(&own),
        ],
        gemini.to_string().as_bytes(),
    );
    assert!(run.stdout.contains("Gemini's own"), "{}", run.stdout);
}

// Real Redis: two replicas, one store.

/// A replica: its own log (its own machine), the shared store.
fn replica(upstream: &Upstream, redis: &Redis) -> Gateway {
    Gateway::start(
        &upstream.url(),
        &[
            "--serve-reasons",
            "--store",
            &redis.url(),
            "--store-ttl",
            "1h",
        ],
    )
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn two_replicas_on_one_redis_restore_and_serve_each_others_reasons() {
    let redis = Redis::start();
    let upstream = Upstream::messages(model);
    let (a, b) = (replica(&upstream, &redis), replica(&upstream, &redis));
    assert!(
        a.startup.contains(&format!("kept in {}", redis.url())),
        "{}",
        a.startup
    );
    // Turn 1 through A (streamed), turn 2 through B: the model gets its reason back.
    turn(&a, &first_turn("toolu_acrossAB", true));
    assert!(read_reasons_log(&b.log).is_empty(), "B took nothing itself");
    let url_b = format!("http://{}", b.address);
    eventually("B serves A's reason", || {
        (get(&b, "/reasons/v1/calls/toolu_acrossAB").status == 200).then_some(())
    });
    turn(&b, &second_turn("toolu_acrossAB"));
    assert_eq!(
        restored_input(&upstream, "toolu_acrossAB"),
        json!({"command": "ls target", "reason": REASON})
    );
    // A hook on a person's machine, pointed at B, finds the reason A took.
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    let run = run_with_stdin(
        &[
            "hook",
            "claude-code",
            "--gateway",
            &url_b,
            "--reasons-log",
            arg(&empty),
        ],
        claude_hook_input("toolu_acrossAB").as_bytes(),
    );
    assert!(run.stdout.contains(REASON), "{}", run.stdout);
    assert_eq!(
        b.stderr_until(|_| true),
        "",
        "nothing said while the store answers"
    );
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn a_store_stopped_and_restarted_never_stops_a_request_and_is_used_again() {
    let mut redis = Redis::start();
    let upstream = Upstream::messages(model);
    let (a, b) = (replica(&upstream, &redis), replica(&upstream, &redis));
    turn(&a, &first_turn("toolu_before_stop", false));
    eventually("B serves it", || {
        (get(&b, "/reasons/v1/calls/toolu_before_stop").status == 200).then_some(())
    });
    redis.stop();
    // Every request is answered, plain and streamed, and no reason reaches the agent.
    for n in 0..6 {
        let id = format!("toolu_down{n}");
        turn(&a, &first_turn(&id, n % 2 == 1));
        turn(&b, &second_turn(&id));
    }
    // Each replica says so, once.
    for gateway in [&a, &b] {
        let said = gateway.stderr_once("serving on without it");
        assert_eq!(said.matches("serving on without it").count(), 1, "{said}");
        assert!(said.contains(&redis.url()), "{said}");
    }
    // A's own reasons are still A's: in its log, and given back by A.
    assert_eq!(read_reasons_log(&a.log).len(), 7);
    turn(&a, &second_turn("toolu_down0"));
    assert_eq!(
        restored_input(&upstream, "toolu_down0")["reason"],
        REASON,
        "A restores what it took itself"
    );
    redis.restart();
    for gateway in [&a, &b] {
        let said = gateway.stderr_once("is back");
        assert_eq!(said.matches("is back").count(), 1, "{said}");
    }
    // Back: a reason A takes now reaches B's restoration and B's route.
    turn(&a, &first_turn("toolu_after_restart", true));
    eventually(
        &format!(
            "B serves it; A said {:?}, B said {:?}",
            a.stderr_until(|_| true),
            b.stderr_until(|_| true)
        ),
        || (get(&b, "/reasons/v1/calls/toolu_after_restart").status == 200).then_some(()),
    );
    turn(&b, &second_turn("toolu_after_restart"));
    assert_eq!(
        restored_input(&upstream, "toolu_after_restart")["reason"],
        REASON
    );
}

/// A load balancer for one test: each request that declares tools goes to the next replica in
/// turn (the first to A, the second to B, …), every other request to A, each answer written back
/// whole, and the connection closed after it.
struct Balancer {
    address: std::net::SocketAddr,
}

impl Balancer {
    fn start(replicas: [std::net::SocketAddr; 2]) -> Balancer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let turns = Arc::new(AtomicUsize::new(0));
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let turns = Arc::clone(&turns);
                thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let Some(received) = read_request(&mut reader) else {
                        return;
                    };
                    let body: Value = serde_json::from_slice(&received.body).unwrap_or_default();
                    let to = match declares_tools(&body) {
                        true => replicas[turns.fetch_add(1, Ordering::SeqCst) % 2],
                        false => replicas[0],
                    };
                    let headers: Vec<(&str, &str)> = received
                        .headers
                        .iter()
                        .filter(|(name, _)| {
                            !["host", "connection", "content-length", "transfer-encoding"]
                                .contains(&name.as_str())
                        })
                        .map(|(name, value)| (name.as_str(), value.as_str()))
                        .collect();
                    let reply = request(
                        to,
                        &received.method,
                        &received.path,
                        &headers,
                        &received.body,
                    );
                    let mut head = format!("HTTP/1.1 {} OK\r\n", reply.status);
                    for (name, value) in &reply.headers {
                        if !["connection", "content-length", "transfer-encoding"]
                            .contains(&name.as_str())
                        {
                            head.push_str(&format!("{name}: {value}\r\n"));
                        }
                    }
                    head.push_str(&format!(
                        "content-length: {}\r\nconnection: close\r\n\r\n",
                        reply.body.len()
                    ));
                    let mut stream = stream;
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(&reply.body);
                });
            }
        });
        Balancer { address }
    }
}

#[test]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn real_claude_code_through_two_replicas_gets_back_the_reason_the_other_one_took() {
    use crate::util::claude_code::{bash_call, scripted, ClaudeCode, BASH_ID, BASH_REASON};
    let redis = Redis::start();
    let upstream = Upstream::messages(scripted(vec![bash_call()]));
    let (a, b) = (replica(&upstream, &redis), replica(&upstream, &redis));
    let balancer = Balancer::start([a.address, b.address]);
    // Claude Code talks to the balancer as to one gateway; its hook reads A's log (the hook is
    // not what this test is about).
    ClaudeCode::run_at(
        &format!("http://{}", balancer.address),
        &a.log,
        "Run the command: echo hello-from-stub",
        "Bash",
        &[],
        &[],
    );
    let requests = upstream.tool_requests("/v1/messages");
    assert_eq!(requests.len(), 2, "a tool call, then the final text");
    // Turn 1 went through A, which took the reason; turn 2 through B, which took nothing.
    assert_eq!(read_reasons_log(&a.log).len(), 1);
    assert!(read_reasons_log(&b.log).is_empty());
    let second = &requests[1];
    let call = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .find(|block| block["type"] == "tool_use" && block["id"] == BASH_ID)
        .expect("the call in turn 2's history")
        .clone();
    assert_eq!(
        call["input"]["reason"],
        BASH_REASON,
        "{call}; B said {:?}",
        b.stderr_until(|_| true)
    );
}

#[test]
fn hook_install_writes_the_gateway_into_the_hooks_command() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    let log = dir.path().join("reasons.jsonl");
    let run = crate::util::run(&[
        "hook",
        "install",
        "claude-code",
        "--file",
        arg(&settings),
        "--reasons-log",
        arg(&log),
        "--gateway",
        "https://reasons.team.example",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    let command = written["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        command.ends_with(&format!(
            " hook claude-code --reasons-log {} --gateway https://reasons.team.example",
            log.display()
        )),
        "{command}"
    );
}

#[test]
fn a_store_that_is_not_there_is_said_once_and_every_request_is_answered() {
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let upstream = Upstream::messages(model);
    let gateway = Gateway::start(
        &upstream.url(),
        &["--serve-reasons", "--store", &format!("redis://{closed}/0")],
    );
    for n in 0..4 {
        let id = format!("toolu_nostore{n}");
        turn(&gateway, &first_turn(&id, n % 2 == 0));
        turn(&gateway, &second_turn(&id));
        // What this replica took, it still restores and serves.
        assert_eq!(restored_input(&upstream, &id)["reason"], REASON);
        assert_eq!(
            get(&gateway, &format!("/reasons/v1/calls/{id}")).status,
            200
        );
    }
    let said = gateway.stderr_once("serving on without it");
    assert_eq!(said.matches("reasons: the store").count(), 1, "{said}");
    assert!(said.contains(&format!("redis://{closed}/0")), "{said}");
}

#[test]
fn a_store_url_that_is_not_redis_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("reasons.jsonl");
    // A gateway that starts anyway never ends by itself: bounded.
    let gateway = |extra: &[&str]| -> crate::util::Run {
        let mut command = crate::util::reasons();
        command
            .args([
                "gateway",
                "--listen",
                "127.0.0.1:0",
                "--reasons-log",
                arg(&log),
            ])
            .args(extra);
        crate::util::bounded::run_bounded_within(command, Duration::from_secs(10)).into()
    };
    let run = gateway(&["--store", "http://127.0.0.1:6379"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with(
            "reasons: --store http://127.0.0.1:6379: give a redis://HOST:PORT[/DB] URL"
        ),
        "{}",
        run.stderr
    );
    for ttl in ["7w", "0", ""] {
        let run = gateway(&["--store-ttl", ttl]);
        assert_eq!(run.code, 2, "{ttl}: {}", run.stderr);
        assert!(
            run.stderr
                .starts_with(&format!("reasons: --store-ttl {ttl}")),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_replica_killed_mid_stream_leaves_the_client_a_cut_stream_and_never_a_reason() {
    use std::io::Read;
    use std::sync::Mutex;
    let events = crate::util::upstream::message_events(&[
        json!({"type": "text", "text": "Thinking it over"}),
        json!({"type": "tool_use", "id": "toolu_killed", "name": "Bash",
            "input": {"command": "ls target", "reason": REASON}}),
    ]);
    // Everything but the call's end (and the message's): the call's fragments wait in the
    // gateway when it dies.
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let gate = Mutex::new(Some(gate));
    let split = events.len() - 3;
    let (first, rest) = (events[..split].to_vec(), events[split..].to_vec());
    let upstream = Upstream::start(move |_| {
        let gate = gate.lock().unwrap().take().expect("one request");
        crate::util::upstream::Answer::Gated(first.clone(), gate, rest.clone())
    });
    let mut gateway = Gateway::start(&upstream.url(), &["--serve-reasons"]);
    let mut stream = TcpStream::connect(gateway.address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let body = first_turn("toolu_killed", true).to_string();
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0; 4096];
    while !String::from_utf8_lossy(&seen).contains("\"text\":\"over\"") {
        let read = stream.read(&mut buffer).expect("the text arrives");
        assert!(read > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buffer[..read]);
    }
    // The call's start went on (it holds no argument yet); its fragments are held back.
    thread::sleep(Duration::from_millis(300));
    gateway.kill();
    let _ = stream.read_to_end(&mut seen);
    drop(release);
    let text = String::from_utf8_lossy(&seen);
    assert!(!text.contains(REASON), "{text}");
    assert!(!text.contains("message_stop"), "the stream was cut: {text}");
    assert!(
        read_reasons_log(&gateway.log).is_empty(),
        "the call never completed"
    );
}
