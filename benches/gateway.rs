//! `cargo bench --bench gateway`: what `reasons gateway` adds to a model API's answers.
//!
//! A scripted model API on loopback (the one the tests use) streams answers in each envelope the
//! gateway rewrites — Anthropic Messages, OpenAI Chat, OpenAI Responses, Gemini — and the same
//! requests go to it directly and through the release gateway, on one kept-alive connection
//! each. For each envelope the benchmark prints:
//!
//! - the time to the first event of a streamed answer holding a call with a reason, median and
//!   90th percentile, direct and through the gateway, and the median added;
//! - the time a 1.4 MiB streamed answer (4096 text deltas, then a call) takes, median of 50,
//!   direct and through the gateway;
//!
//! then the gateway's resident memory after a warm-up and after 10,000 more requests (each a
//! call whose reason is taken off and logged), how long `reasons hook claude-code` takes to
//! find a reason near the end of a large log, and what giving the logged reasons back to a
//! request's history adds to a request whose history holds 200 calls (against `--no-restore`,
//! in the same run: the median of nine sessions, each with fresh gateways and connections; for
//! tool results of a listing and of a kilobyte each), with what the reasons' bytes alone and
//! 100 bytes more cost, and the layer's own work on that body in process.
//!
//! `cargo bench --bench gateway -- restoration` prints only the restoration's figures.
//!
//! `cargo bench --bench gateway -- store` compares, in one run, the first event through a
//! gateway with `--store` on a real Redis (Debian's `redis-server`, started on a free loopback
//! port) and through one without: for a first turn (the reason is written in the background),
//! and for a turn whose history holds 20 calls the replica does not remember (one `MGET` before
//! the request goes upstream: another replica's turn, each time); and through one with `--otlp`
//! whose collector is away (every span dropped and counted).
//!
//! `cargo bench --bench gateway -- against OTHER` compares this build's gateway with another
//! build of `reasons` (an older commit's, say) in one run: the same requests alternately through
//! each, the first event and the unpaced 1.4 MiB answer for each envelope, and their ratio.
//!
//! `cargo bench --bench gateway -- soak` runs the soak instead: `REASONS_SOAK_AGENTS` agents
//! (default 50) for `REASONS_SOAK_MINUTES` minutes (default 10), each sending one streamed
//! request after another (the four envelopes in turn) to a flaky upstream that cuts
//! `REASONS_SOAK_CUTS` per mille of its answers at a random byte (default 10: 1%) and stalls
//! `REASONS_SOAK_STALLS` per mille past the agents' patience of 2 s (default 10). It prints the
//! requests answered, cut and given up on, the reasons logged against those taken off answers
//! that arrived whole, any reason that reached an agent, and the gateway's resident memory and
//! open descriptors every `REASONS_SOAK_EVERY` seconds (default 30).
//!
//! Settings, from the environment: `REASONS_BENCH_REQUESTS` (requests timed for the first
//! event, default 2000), `REASONS_BENCH_SOAK` (requests between the two memory readings,
//! default 10000).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

#[allow(dead_code)]
#[path = "../tests/it/util/upstream.rs"]
mod upstream;

use upstream::{
    bash_tool, chat_chunks, gemini_chunk, listening_address, message_events, read_chunks,
    read_headers, responses_events, sse, Answer, Upstream,
};

const REASONS: &str = env!("CARGO_BIN_EXE_reasons");

/// The time between the events of a paced answer: 10,000 events a second, far faster than any
/// model samples, yet a pace at which the gateway keeps up instead of queueing.
const PAUSE_MICROS: u64 = 100;

/// One model API: the path its requests go to, a request body declaring a shell tool, and its
/// answers as the scripted upstream streams them.
#[derive(Clone)]
struct Envelope {
    name: &'static str,
    path: &'static str,
    body: String,
    /// A short answer: a little text and one call with a reason.
    small: Vec<Vec<u8>>,
    /// About 1.4 MiB of text in 4096 deltas, then the same call.
    big: Vec<Vec<u8>>,
}

fn main() {
    let requests = setting("REASONS_BENCH_REQUESTS", 2000);
    let soak = setting("REASONS_BENCH_SOAK", 10_000);
    // `cargo bench --bench gateway -- restoration`: only the history restoration's figures.
    if std::env::args().skip(1).any(|arg| arg == "restoration") {
        let dir = tempfile::tempdir().expect("a temporary directory");
        restoration_cost(dir.path(), requests);
        return;
    }
    if std::env::args().skip(1).any(|arg| arg == "soak") {
        soak_flaky();
        return;
    }
    // `cargo bench --bench gateway -- store`: --store against no store, side by side.
    if std::env::args().skip(1).any(|arg| arg == "store") {
        store_cost(requests, soak);
        return;
    }
    // `cargo bench --bench gateway -- against OTHER`: this build against another.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(other) = args.iter().skip_while(|arg| *arg != "against").nth(1) {
        against(std::path::Path::new(&other), requests);
        return;
    }
    let envelopes = envelopes();
    let upstream = scripted_model(&envelopes);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("reasons.jsonl");
    let (mut child, gateway) = start_gateway(&upstream.url(), &log, &[]);
    let mut direct = Client::connect(upstream.address);
    let mut through = Client::connect(gateway);
    println!(
        "reasons gateway against a scripted model API on loopback ({} cores)\n",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for envelope in &envelopes {
        for _ in 0..200 {
            direct.post(envelope.path, &envelope.body);
            through.post(envelope.path, &envelope.body);
        }
    }
    let rss_warm = rss_kib(child.id());
    println!(
        "{:<10} {:>23} {:>23} {:>8}  {:>25} {:>7}  {:>27} {:>7}",
        "",
        "first event, direct",
        "through the gateway",
        "added",
        "paced 1.4 MiB, direct/gw",
        "added",
        "unpaced 1.4 MiB, direct/gw",
        "added"
    );
    for envelope in &envelopes {
        // Alternating, so that a slow spell of the machine falls on both alike.
        let (mut first_direct, mut first_through) = (Vec::new(), Vec::new());
        for _ in 0..requests {
            first_direct.push(direct.post(envelope.path, &envelope.body).first_event);
            first_through.push(through.post(envelope.path, &envelope.body).first_event);
        }
        let whole = |client_a: &mut Client, client_b: &mut Client, path: &str, runs: usize| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                a.push(client_a.post(path, &envelope.body).total);
                b.push(client_b.post(path, &envelope.body).total);
            }
            (percentile(&mut a, 50), percentile(&mut b, 50))
        };
        let paced = whole(
            &mut direct,
            &mut through,
            &format!("{}?paced", envelope.path),
            5,
        );
        let unpaced = whole(
            &mut direct,
            &mut through,
            &format!("{}?big", envelope.path),
            50,
        );
        let added = |(direct, through): (Duration, Duration)| {
            (through.as_secs_f64() / direct.as_secs_f64() - 1.0) * 100.0
        };
        let (median_direct, median_through) = (
            percentile(&mut first_direct, 50),
            percentile(&mut first_through, 50),
        );
        println!(
            "{:<10} {:>6.1} µs (p90 {:>6.1}) {:>6.1} µs (p90 {:>6.1}) {:>5.1} µs  {:>9.1} / {:>6.1} ms {:>+6.1}%  {:>11.2} / {:>6.2} ms {:>+6.1}%",
            envelope.name,
            micros(median_direct),
            micros(percentile(&mut first_direct, 90)),
            micros(median_through),
            micros(percentile(&mut first_through, 90)),
            micros(median_through) - micros(median_direct),
            millis(paced.0),
            millis(paced.1),
            added(paced),
            millis(unpaced.0),
            millis(unpaced.1),
            added(unpaced),
        );
    }
    println!(
        "targets: at most 1000 µs added to the first event (median), at most +5% on the paced answer"
    );
    println!("(unpaced, the upstream writes as fast as it can, and it, the client and the gateway share the cores)\n");

    let before = rss_kib(child.id());
    for n in 0..soak {
        let envelope = &envelopes[n % envelopes.len()];
        through.post(envelope.path, &envelope.body);
    }
    let after = rss_kib(child.id());
    println!(
        "gateway resident memory: {rss_warm} KiB after warm-up, {before} KiB before and {after} KiB after {soak} more requests"
    );
    let logged = std::fs::read_to_string(&log)
        .expect("the reasons log")
        .lines()
        .count();
    println!("reasons logged: {logged}");
    let _ = child.kill();
    let _ = child.wait();
    hook_latency(dir.path());
    restoration_cost(dir.path(), requests);
}

/// The scripted model API, answering each envelope's path: a small answer, or with `?big` the
/// 1.4 MiB answer at once, or with `?paced` the same paced.
fn scripted_model(envelopes: &[Envelope]) -> Upstream {
    let answers = envelopes.to_vec();
    Upstream::keeping(0, move |request| {
        let Envelope { small, big, .. } = answers
            .iter()
            .find(|envelope| request.path.starts_with(envelope.path))
            .expect("a scripted path");
        if request.path.contains("paced") {
            Answer::Paced(big.clone(), Duration::from_micros(PAUSE_MICROS))
        } else if request.path.contains("big") {
            Answer::Events(big.clone())
        } else {
            Answer::Events(small.clone())
        }
    })
}

/// How one soak request ended, as its agent saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Whole, its call's reason taken off.
    Whole,
    /// Broken off (the upstream cut it).
    Cut,
    /// The agent gave up waiting (the upstream stalled).
    GaveUp,
}

/// N agents for D minutes against a flaky upstream (see the top of the file).
fn soak_flaky() {
    let agents = setting("REASONS_SOAK_AGENTS", 50);
    let minutes = setting("REASONS_SOAK_MINUTES", 10);
    let cuts = setting("REASONS_SOAK_CUTS", 10) as u64;
    let stalls = setting("REASONS_SOAK_STALLS", 10) as u64;
    let every = Duration::from_secs(setting("REASONS_SOAK_EVERY", 30) as u64);
    let patience = Duration::from_secs(2);
    let envelopes = envelopes();
    let answers: Vec<(&'static str, Vec<u8>)> = envelopes
        .iter()
        .map(|envelope| (envelope.path, envelope.small.concat()))
        .collect();
    let drawn = std::sync::atomic::AtomicU64::new(0x9e37_79b9_7f4a_7c15);
    let upstream = Upstream::keeping(0, move |request| {
        let (_, bytes) = answers
            .iter()
            .find(|(path, _)| request.path.starts_with(path))
            .expect("a scripted path");
        // A shared xorshift: which answers break, and where, differs from run to run only by
        // the order the agents' requests arrive in.
        let mut x = drawn.fetch_add(0x9e37_79b9_7f4a_7c15, std::sync::atomic::Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let roll = x % 1000;
        let at = (x >> 20) as usize % bytes.len();
        if roll < cuts {
            Answer::Faulty(bytes.clone(), at, upstream::Fault::Close)
        } else if roll < cuts + stalls {
            Answer::Faulty(bytes.clone(), at, upstream::Fault::Stall(patience * 2))
        } else {
            Answer::Events(bytes.chunks(64).map(<[u8]>::to_vec).collect())
        }
    });
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("reasons.jsonl");
    let (mut child, gateway) = start_gateway(&upstream.url(), &log, &[]);
    let pid = child.id();
    println!(
        "soak: {agents} agents for {minutes} min, {:.1}% cuts and {:.1}% stalls of {} s, on {} cores",
        cuts as f64 / 10.0,
        stalls as f64 / 10.0,
        (patience * 2).as_secs(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let deadline = Instant::now() + Duration::from_secs(60 * minutes as u64);
    let tally = std::sync::Arc::new(std::sync::Mutex::new((0usize, 0usize, 0usize, 0usize)));
    let workers: Vec<_> = (0..agents)
        .map(|agent| {
            let envelopes = envelopes.clone();
            let tally = std::sync::Arc::clone(&tally);
            std::thread::spawn(move || {
                let mut n = agent;
                while Instant::now() < deadline {
                    let envelope = &envelopes[n % envelopes.len()];
                    n += 1;
                    let (ended, leaked) = soak_request(gateway, envelope, patience);
                    let mut tally = tally.lock().expect("the tally");
                    match ended {
                        Ended::Whole => tally.0 += 1,
                        Ended::Cut => tally.1 += 1,
                        Ended::GaveUp => tally.2 += 1,
                    }
                    tally.3 += usize::from(leaked);
                }
            })
        })
        .collect();
    let start = Instant::now();
    println!(
        "{:>8} {:>10} {:>9} {:>8}",
        "minute", "answered", "RSS KiB", "fds"
    );
    let sample = |at: Duration| {
        let answered = tally.lock().expect("the tally").0;
        println!(
            "{:>8.1} {:>10} {:>9} {:>8}",
            at.as_secs_f64() / 60.0,
            answered,
            rss_kib(pid),
            descriptors(pid)
        );
    };
    sample(Duration::ZERO);
    while Instant::now() < deadline {
        std::thread::sleep(every.min(deadline.saturating_duration_since(Instant::now())));
        sample(start.elapsed());
    }
    for worker in workers {
        worker.join().expect("an agent");
    }
    // The stalled answers whose agents left are dropped by the gateway at once; let the last
    // streams finish.
    std::thread::sleep(Duration::from_secs(1));
    sample(start.elapsed());
    let (whole, cut, gave_up, leaked) = *tally.lock().expect("the tally");
    let logged = std::fs::read_to_string(&log)
        .map(|text| text.lines().count())
        .unwrap_or(0);
    println!(
        "\nrequests: {} ({whole} whole, {cut} broken off, {gave_up} given up on); {:.0} a second",
        whole + cut + gave_up,
        (whole + cut + gave_up) as f64 / start.elapsed().as_secs_f64()
    );
    println!(
        "reasons: {whole} taken off answers that arrived whole, {logged} logged ({} more: calls \
         that completed before their stream broke off); reasons that reached an agent: {leaked}",
        logged as i64 - whole as i64
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// One streamed request of a soak's agent, on a connection of its own: how it ended, and
/// whether anything of a reason reached the agent.
fn soak_request(gateway: SocketAddr, envelope: &Envelope, patience: Duration) -> (Ended, bool) {
    let Ok(stream) = TcpStream::connect(gateway) else {
        return (Ended::Cut, false);
    };
    let _ = stream.set_read_timeout(Some(patience));
    let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
    let mut writer = stream;
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: soak\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        envelope.path,
        envelope.body.len()
    );
    if writer
        .write_all(&[head.as_bytes(), envelope.body.as_bytes()].concat())
        .is_err()
    {
        return (Ended::Cut, false);
    }
    let mut status = String::new();
    let mut body = Vec::new();
    let ended = match reader.read_line(&mut status) {
        Ok(_) if status.contains(" 200 ") => match read_headers(&mut reader) {
            Some(_) => match read_chunks(&mut reader, &mut body) {
                Some(()) => Ended::Whole,
                None => timed_out_or_cut(&mut reader),
            },
            None => Ended::Cut,
        },
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => Ended::GaveUp,
        Err(error) if error.kind() == std::io::ErrorKind::TimedOut => Ended::GaveUp,
        _ => Ended::Cut,
    };
    let text = String::from_utf8_lossy(&body);
    (
        ended,
        text.contains("See what the folder holds") || text.contains("\\\"reason"),
    )
}

/// Whether a chunked body that did not end was given up on (the read timed out) or cut.
fn timed_out_or_cut(reader: &mut BufReader<TcpStream>) -> Ended {
    let mut probe = [0; 1];
    match reader.read(&mut probe) {
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Ended::GaveUp
        }
        _ => Ended::Cut,
    }
}

fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

/// This build's gateway against another build's, on the same requests, alternately.
fn against(other: &std::path::Path, requests: usize) {
    let envelopes = envelopes();
    let upstream = scripted_model(&envelopes);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (mut this, this_at) = start_gateway_of(
        REASONS.as_ref(),
        &upstream.url(),
        &dir.path().join("this.jsonl"),
        &[],
    );
    let (mut that, that_at) =
        start_gateway_of(other, &upstream.url(), &dir.path().join("that.jsonl"), &[]);
    let (mut this_client, mut that_client) = (Client::connect(this_at), Client::connect(that_at));
    println!(
        "this build's gateway ({REASONS}) against {} ({} cores)\n",
        other.display(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for envelope in &envelopes {
        for _ in 0..200 {
            this_client.post(envelope.path, &envelope.body);
            that_client.post(envelope.path, &envelope.body);
        }
    }
    println!(
        "{:<10} {:>14} {:>14} {:>7}  {:>17} {:>17} {:>7}",
        "", "first event", "other build", "ratio", "unpaced 1.4 MiB", "other build", "ratio"
    );
    for envelope in &envelopes {
        let timed =
            |runs: usize, path: &str, client: &mut Client, other: &mut Client, first: bool| {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                for _ in 0..runs {
                    let (x, y) = (
                        client.post(path, &envelope.body),
                        other.post(path, &envelope.body),
                    );
                    a.push(if first { x.first_event } else { x.total });
                    b.push(if first { y.first_event } else { y.total });
                }
                (percentile(&mut a, 50), percentile(&mut b, 50))
            };
        let first = timed(
            requests,
            envelope.path,
            &mut this_client,
            &mut that_client,
            true,
        );
        let big = format!("{}?big", envelope.path);
        let whole = timed(100, &big, &mut this_client, &mut that_client, false);
        let ratio = |(a, b): (Duration, Duration)| a.as_secs_f64() / b.as_secs_f64();
        println!(
            "{:<10} {:>11.1} µs {:>11.1} µs {:>7.3}  {:>14.2} ms {:>14.2} ms {:>7.3}",
            envelope.name,
            micros(first.0),
            micros(first.1),
            ratio(first),
            millis(whole.0),
            millis(whole.1),
            ratio(whole),
        );
    }
    for child in [&mut this, &mut that] {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// What giving the reasons back to a request's history costs: 200 earlier calls in the history,
/// each logged, through a gateway that restores and one that does not (`--no-restore`),
/// alternately, on one kept-alive connection each; once with the short tool results of a
/// listing, once with results of a kilobyte each, as a real session's are.
fn restoration_cost(dir: &std::path::Path, requests: usize) {
    let short = "a.txt\nb.txt\nc.txt".to_owned();
    let longer: String = (0..16)
        .map(|n| format!("-rw-r--r-- 1 dev dev 4096 Dec  1 08:00 notes-{n:02}.txt\n"))
        .collect();
    restoration_cost_with(dir, requests, &short);
    restoration_cost_with(dir, requests, &longer);
}

fn restoration_cost_with(dir: &std::path::Path, requests: usize, result: &str) {
    const CALLS: usize = 200;
    let answer = message_events(&[json!({"type": "text", "text": "Done."})]);
    let log = dir.join("history.jsonl");
    let mut text = String::new();
    let mut messages = vec![json!({"role": "user", "content": "Tidy the folder."})];
    for n in 0..CALLS {
        let id = format!("toolu_history_{n:04}");
        let record = json!({"time": "2026-12-01T08:00:00.000Z", "via": "gateway", "tool": "Bash",
            "call_id": id, "reason": "Look at what the folder holds before changing it"});
        text.push_str(&format!("{record}\n"));
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": format!("ls -la dir{n}")}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": id, "content": result}]}));
    }
    std::fs::write(&log, text).expect("the log is written");
    let body = json!({"model": "m", "max_tokens": 64, "stream": true, "messages": messages,
        "tools": [bash_tool()]})
    .to_string();
    // What the reasons' bytes alone cost: the body as the restoring gateway sent it upstream
    // (its history already holding the reasons), through `--no-restore` beside the original;
    // and the original with 100 bytes more, to tell a cost per byte from a step.
    let member = |user: &str| format!(",\"metadata\":{{\"user_id\":\"{user}\"}}");
    let user = "x".repeat(100 - member("").len());
    let padded = format!("{}{}}}", &body[..body.len() - 1], member(&user));
    assert_eq!(padded.len(), body.len() + 100);
    // Fresh gateways, connections and upstream for each session: on this kind of machine one
    // connection can stay a tenth of a millisecond slower than another for its whole life,
    // whatever it carries, so one session's difference says little.
    const SESSIONS: usize = 9;
    let (mut added, mut reasons_alone, mut hundred_bytes) = (Vec::new(), Vec::new(), Vec::new());
    let mut with_reasons = String::new();
    for _ in 0..SESSIONS {
        // The first two requests are looked at: one restored, one not.
        let answer = answer.clone();
        let upstream = Upstream::keeping(2, move |_| Answer::Events(answer.clone()));
        let (mut restoring, restoring_at) = start_gateway(&upstream.url(), &log, &[]);
        let (mut plain, plain_at) = start_gateway(&upstream.url(), &log, &["--no-restore"]);
        let (mut with, mut without) = (Client::connect(restoring_at), Client::connect(plain_at));
        let session_requests = requests / SESSIONS;
        let [restoring_added] = added_medians(
            session_requests,
            &mut [&mut with, &mut without],
            [&body, &body],
        );
        added.push(restoring_added);
        let received = upstream.received();
        let given = |n: usize| {
            String::from_utf8_lossy(&received[n].body)
                .matches("before changing it")
                .count()
        };
        assert_eq!(
            (given(0), given(1)),
            (CALLS, 0),
            "the history got its reasons back"
        );
        with_reasons = String::from_utf8(received[0].body.clone()).expect("a UTF-8 body");
        let [alone, hundred] = added_medians(
            session_requests,
            &mut [&mut without],
            [&with_reasons, &body, &padded, &body],
        );
        reasons_alone.push(alone);
        hundred_bytes.push(hundred);
        for child in [&mut restoring, &mut plain] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    println!(
        "history of {CALLS} logged calls, results of {} bytes ({} KB a request): {} ms added by restoring against --no-restore (target: at most 0.2 ms)",
        result.len(),
        body.len() / 1000,
        over_sessions(&mut added),
    );
    println!(
        "  sent as it is with --no-restore, the restored body ({} KB) adds {} ms: what its bytes cost on the way; the original with 100 bytes more adds {} ms",
        with_reasons.len() / 1000,
        over_sessions(&mut reasons_alone),
        over_sessions(&mut hundred_bytes),
    );
    // The same request in this process, without the sockets and the other processes whose
    // scheduling the figures above include: the layer's own work on the body.
    let mut recall = reasons::gateway::Recall::default();
    reasons::reasons_log::read_end(&log, reasons::gateway::RECALL_TAIL, &mut |logged| {
        recall.note_logged(logged)
    })
    .expect("the log is read");
    let (mut restored, mut sent) = (Vec::new(), Vec::new());
    for _ in 0..requests {
        for (recall, times) in [
            (
                Some(&recall as &dyn reasons::gateway::Lookup),
                &mut restored,
            ),
            (None, &mut sent),
        ] {
            let start = Instant::now();
            let (_, augmented) = reasons::gateway::Exchange::new(
                reasons::apis::Api::Anthropic,
                "/v1/messages",
                body.as_bytes(),
                true,
                recall,
                reasons::layer::ReasonPosition::Last,
            );
            times.push(start.elapsed());
            assert!(augmented.is_some());
        }
    }
    let (median_with, median_without) = (percentile(&mut restored, 50), percentile(&mut sent, 50));
    println!(
        "  in process: median {:.1} µs restoring, {:.1} µs with --no-restore, {:+.1} µs added",
        micros(median_with),
        micros(median_without),
        micros(median_with) - micros(median_without),
    );
}

/// The median of the sessions' figures, and their least and greatest.
fn over_sessions(figures: &mut [f64]) -> String {
    figures.sort_by(f64::total_cmp);
    format!(
        "{:+.3} (median of {} sessions, {:+.3} to {:+.3})",
        figures[figures.len() / 2],
        figures.len(),
        figures[0],
        figures[figures.len() - 1],
    )
}

/// Sends the bodies in turn, each pair (`bodies[0]` and `[1]`, `[2]` and `[3]`, …) through the
/// clients (the first of a pair through the first client and the second through the second,
/// or both through one), 200 rounds of warm-up and then `requests`, every other round in the
/// reverse order (a request can be quicker or slower for the one before it); returns how many
/// milliseconds longer the median of each pair's first took than its second's.
fn added_medians<const PAIRS: usize, const BODIES: usize>(
    requests: usize,
    clients: &mut [&mut Client],
    bodies: [&str; BODIES],
) -> [f64; PAIRS] {
    assert_eq!(BODIES, 2 * PAIRS, "bodies come in pairs");
    let mut times = vec![Vec::new(); BODIES];
    for round in 0..requests + 200 {
        for step in 0..BODIES {
            let n = if round % 2 == 0 {
                step
            } else {
                BODIES - 1 - step
            };
            let body = bodies[n];
            let client = if clients.len() == 1 { 0 } else { n % 2 };
            let timing = clients[client].post("/v1/messages", body);
            if round >= 200 {
                times[n].push(timing.total);
            }
        }
    }
    std::array::from_fn(|pair| {
        let first = percentile(&mut times[2 * pair], 50);
        millis(first) - millis(percentile(&mut times[2 * pair + 1], 50))
    })
}

/// How long `reasons hook claude-code` takes to find a reason near the end of a large log.
fn hook_latency(dir: &std::path::Path) {
    let log = dir.join("large.jsonl");
    let mut text = String::new();
    for n in 0..200_000 {
        let record = json!({"time": "2026-12-01T08:00:00.000Z", "via": "gateway", "tool": "Bash",
            "call_id": format!("toolu_{n:08}"), "reason": "Look at what the folder holds before changing it"});
        text.push_str(&record.to_string());
        text.push('\n');
    }
    std::fs::write(&log, &text).expect("the log is written");
    // Claude Code's PreToolUse payload: the hook answers only the agent it is for.
    let input = json!({"session_id": "bench", "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_00199990"})
    .to_string();
    let mut times = Vec::new();
    for _ in 0..50 {
        let start = Instant::now();
        let mut hook = Command::new(REASONS)
            .args(["hook", "claude-code", "--reasons-log"])
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the hook runs");
        hook.stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("written");
        let output = hook.wait_with_output().expect("the hook ends");
        times.push(start.elapsed());
        assert!(String::from_utf8_lossy(&output.stdout).contains("systemMessage"));
    }
    println!(
        "reasons hook, a log of {} MB (200,000 reasons), the call 10 from its end: median {:.2} ms, process start included",
        text.len() / 1_000_000,
        millis(percentile(&mut times, 50))
    );
}

fn envelopes() -> Vec<Envelope> {
    let text = "All work and no play makes a dull model. ".repeat(6);
    let arguments = json!({"command": "ls -la", "reason": "See what the folder holds"});
    let schema = json!({"type": "object", "properties": {"command": {"type": "string"}}});
    let ask = "Where is the config?";
    let anthropic_small = message_events(&[
        json!({"type": "text", "text": "Let me look."}),
        json!({"type": "tool_use", "id": "toolu_bench", "name": "Bash", "input": arguments}),
    ]);
    // The text block's deltas go between its start and its stop.
    let mut anthropic_big = message_events(&[
        json!({"type": "text", "text": ""}),
        json!({"type": "tool_use", "id": "toolu_bench", "name": "Bash", "input": arguments}),
    ]);
    let text_delta = sse(
        "content_block_delta",
        &json!({"type": "content_block_delta",
        "index": 0, "delta": {"type": "text_delta", "text": text}}),
    );
    anthropic_big.splice(2..2, std::iter::repeat_n(text_delta, 4096));

    let chat_call = [("call_bench", "shell", arguments.clone())];
    let chat_small = chat_chunks(&chat_call);
    let mut chat_big = chat_small.clone();
    let text_chunk = format!(
        "data: {}\n\n",
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
    );
    chat_big.splice(1..1, std::iter::repeat_n(text_chunk.into_bytes(), 4096));

    let responses_small = responses_events("call_bench", "shell", &arguments);
    let mut responses_big = responses_small.clone();
    let text_event = format!(
        "event: response.output_text.delta\ndata: {}\n\n",
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
            "content_index": 0, "delta": text})
    );
    responses_big.splice(1..1, std::iter::repeat_n(text_event.into_bytes(), 4096));

    let gemini_call = format!(
        "data: {}\r\n\r\n",
        gemini_chunk("run_shell_command", &arguments)
    );
    let gemini_text = format!(
        "data: {}\r\n\r\n",
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
            "index": 0}]})
    );
    let gemini_small = vec![
        gemini_text.clone().into_bytes(),
        gemini_call.clone().into_bytes(),
    ];
    let mut gemini_big: Vec<Vec<u8>> =
        std::iter::repeat_n(gemini_text.into_bytes(), 4096).collect();
    gemini_big.push(gemini_call.into_bytes());

    vec![
        Envelope {
            name: "anthropic",
            path: "/v1/messages",
            body: json!({"model": "m", "max_tokens": 64, "stream": true,
                "messages": [{"role": "user", "content": ask}], "tools": [bash_tool()]})
            .to_string(),
            small: anthropic_small,
            big: anthropic_big,
        },
        Envelope {
            name: "chat",
            path: "/v1/chat/completions",
            body: json!({"model": "m", "stream": true,
                "messages": [{"role": "user", "content": ask}],
                "tools": [{"type": "function", "function": {"name": "shell", "parameters": schema}}]})
            .to_string(),
            small: chat_small,
            big: chat_big,
        },
        Envelope {
            name: "responses",
            path: "/v1/responses",
            body: json!({"model": "m", "stream": true, "input": ask,
                "tools": [{"type": "function", "name": "shell", "parameters": schema}]})
            .to_string(),
            small: responses_small,
            big: responses_big,
        },
        Envelope {
            name: "gemini",
            path: "/v1beta/models/m:streamGenerateContent",
            body: json!({"contents": [{"role": "user", "parts": [{"text": ask}]}],
                "tools": [{"functionDeclarations": [{"name": "run_shell_command",
                    "parametersJsonSchema": schema}]}]})
            .to_string(),
            small: gemini_small,
            big: gemini_big,
        },
    ]
}

fn start_gateway(upstream: &str, log: &std::path::Path, extra: &[&str]) -> (Child, SocketAddr) {
    start_gateway_of(REASONS.as_ref(), upstream, log, extra)
}

/// The same, with some build of `reasons`.
fn start_gateway_of(
    reasons: &std::path::Path,
    upstream: &str,
    log: &std::path::Path,
    extra: &[&str],
) -> (Child, SocketAddr) {
    let mut child = Command::new(reasons)
        .args([
            "gateway",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            upstream,
            "--reasons-log",
        ])
        .arg(log)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reasons gateway starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr
        .read_line(&mut line)
        .expect("the gateway says where it listens");
    let address = listening_address(&line).unwrap_or_else(|| panic!("no address in {line:?}"));
    // The reasons go to stderr too: read them so the gateway never waits on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, address)
}

/// One kept-alive HTTP/1.1 connection.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

struct Timing {
    first_event: Duration,
    total: Duration,
}

impl Client {
    fn connect(address: SocketAddr) -> Client {
        let stream = TcpStream::connect(address).expect("the server accepts");
        stream.set_nodelay(true).expect("no delay");
        Client {
            reader: BufReader::new(stream.try_clone().expect("a second handle")),
            writer: stream,
        }
    }

    fn post(&mut self, path: &str, body: &str) -> Timing {
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\nx-api-key: bench\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        let start = Instant::now();
        self.writer
            .write_all(&[head.as_bytes(), body.as_bytes()].concat())
            .expect("sent");
        let mut status = String::new();
        self.reader.read_line(&mut status).expect("a status line");
        assert!(status.contains(" 200 "), "{status}");
        read_headers(&mut self.reader).expect("headers");
        // The first chunk holds the first event.
        let mut size = String::new();
        self.reader.read_line(&mut size).expect("a chunk");
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        let mut chunk = vec![0; size + 2];
        self.reader.read_exact(&mut chunk).expect("the chunk");
        let first_event = start.elapsed();
        let mut rest = Vec::new();
        read_chunks(&mut self.reader, &mut rest).expect("the answer ends");
        Timing {
            first_event,
            total: start.elapsed(),
        }
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn percentile(samples: &mut [Duration], percent: usize) -> Duration {
    samples.sort();
    samples[(samples.len() - 1) * percent / 100]
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// The first event through a gateway with `--store` on a real Redis against one without, the
/// same requests alternately through each.
fn store_cost(requests: usize, soak: usize) {
    let redis_server = std::path::Path::new("/usr/bin/redis-server");
    assert!(
        redis_server.exists(),
        "/usr/bin/redis-server is missing: install the real parts with `.ci/real-parts target/real-parts`"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut redis = Command::new(redis_server)
        .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
        .args(["--save", "", "--appendonly", "no", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "redis-server did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let envelopes = envelopes();
    let anthropic = &envelopes[0];
    let upstream = scripted_model(&envelopes);
    let store = format!("redis://127.0.0.1:{port}/0");
    let (mut with, with_address) = start_gateway(
        &upstream.url(),
        &dir.path().join("with.jsonl"),
        &["--store", &store],
    );
    let (mut without, without_address) =
        start_gateway(&upstream.url(), &dir.path().join("without.jsonl"), &[]);
    // --otlp with the collector away: every span is dropped (and counted), none waited for.
    let away = format!(
        "http://127.0.0.1:{}",
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port()
    );
    let (mut exporting, exporting_address) = start_gateway(
        &upstream.url(),
        &dir.path().join("otlp.jsonl"),
        &["--otlp", &away],
    );
    let (mut through_store, mut through_plain, mut through_otlp) = (
        Client::connect(with_address),
        Client::connect(without_address),
        Client::connect(exporting_address),
    );
    // A turn whose history holds 20 Bash calls (without reasons) that no replica took.
    let mut history = vec![json!({"role": "user", "content": "Look around."})];
    for n in 0..20 {
        let id = format!("toolu_other_replica_{n:04}");
        history.push(
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": id,
            "name": "Bash", "input": {"command": format!("ls dir{n}")}}]}),
        );
        history.push(json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": id, "content": "a.txt b.txt"}]}));
    }
    let later_turn = json!({"model": "m", "max_tokens": 64, "stream": true,
        "messages": history, "tools": [bash_tool()]})
    .to_string();
    println!(
        "--store on a real Redis against no store, first event, {requests} requests each, alternating:"
    );
    for (name, body) in [
        ("first turn", &anthropic.body),
        ("20 calls unknown", &later_turn),
    ] {
        for _ in 0..200 {
            through_store.post(anthropic.path, body);
            through_plain.post(anthropic.path, body);
        }
        let (mut stored, mut plain, mut exported) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..requests {
            stored.push(through_store.post(anthropic.path, body).first_event);
            plain.push(through_plain.post(anthropic.path, body).first_event);
            exported.push(through_otlp.post(anthropic.path, body).first_event);
        }
        let (median_store, median_plain) =
            (percentile(&mut stored, 50), percentile(&mut plain, 50));
        println!(
            "  {name:<17} with --store {:>6.1} µs (p90 {:>6.1}), without {:>6.1} µs (p90 {:>6.1}): {:+.1} µs at the median",
            micros(median_store),
            micros(percentile(&mut stored, 90)),
            micros(median_plain),
            micros(percentile(&mut plain, 90)),
            micros(median_store) - micros(median_plain),
        );
        let median_otlp = percentile(&mut exported, 50);
        println!(
            "  {:<17} with --otlp, the collector away: {:>6.1} µs (p90 {:>6.1}): {:+.1} µs at the median",
            "",
            micros(median_otlp),
            micros(percentile(&mut exported, 90)),
            micros(median_otlp) - micros(median_plain),
        );
    }
    println!("target: at most 300 µs added at the median");
    // Every reason taken becomes a span that cannot be sent: the queue is bounded and drops, so
    // memory stays where it was however many reasons go by.
    let before = rss_kib(exporting.id());
    for _ in 0..soak {
        through_otlp.post(anthropic.path, &anthropic.body);
    }
    let after = rss_kib(exporting.id());
    println!(
        "  the --otlp gateway, its collector away all along: {before} KiB resident, then {after} KiB after {soak} more reasons"
    );
    for child in [&mut with, &mut without, &mut exporting, &mut redis] {
        let _ = child.kill();
        let _ = child.wait();
    }
}
