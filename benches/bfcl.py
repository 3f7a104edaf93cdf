"""What the `reason` parameter costs on the public BFCL benchmark: run by benches/bfcl (and, on a
fixed slice, by tests/it/real/real_bfcl.rs).

usage: bfcl.py run REASONS LLAMA_PYTHON MODEL [--results FILE] [--per-category N] [--from K]
                   [--seed S] [--ids FILE] [--categories A,B] [--arms direct,last,first]
                   [--threads N] [--slots N] [--cases N] [--stop-at HH:MM]
       bfcl.py table [RESULTS.jsonl…]
       bfcl.py same RESULTS.jsonl RESULTS.jsonl
       bfcl.py bound CATEGORIES N [ARM] [RESULTS.jsonl…]

`run` starts llama.cpp's server with MODEL (tests/it/python/llama_server.py: `--threads` threads,
`--slots` requests decoded at once by continuous batching) and two gateways in front of it
(`reasons gateway --reason-position last`, and `first`), then asks every drawn case of bfcl-eval's
data once per arm: **direct** (no layer), **last**, **first**. Declarations are BFCL's own OpenAI
function-calling conversion, the request OpenAI Chat with `tools`, temperature 0 and one seed, and
no prompt cache (`cache_prompt: false`: an answer does not depend on what was asked before it, so
the slots, a resumed run or the arms' order cannot change it); nothing in any prompt mentions
reasons. The answer each arm's *client* got (the calls after the gateway stripped them) is scored
by BFCL's own checker (benches/bfcl_parts.py), so a leaked `reason` or a damaged call counts
against the layer.

Qwen2.5-Coder at this size answers a request with tools in a fenced JSON block rather than a tool
call, so where a call is expected the assistant's turn is started with Qwen's tag, as
benches/fill_rate.py does; in the irrelevance categories it is not (a started call could not be
taken back: "no call" would be impossible), so there the model answers as it would for a client.
By default only the categories that can separate the arms are drawn (SEPARATING below); the
irrelevance categories (every arm right by construction) and `parallel*` (every arm near 0: the
models write one call where several are wanted) are asked only when named (`--categories`, or
`--ids`, which looks in every category).

Cases are drawn once per category: BFCL's ids shuffled by `random.Random("SEED:CATEGORY")`, the
first N taken (so a smaller N is a prefix of a larger one; `--from K` skips the first K). The
cases are asked one category after the other in turn (the first of each, then the second of
each…). `--ids FILE` (one id a line, `#` comments) names the cases instead.

With `--results FILE` each finished case is appended to FILE as one JSON line (its id, category,
model, place in the draw, and per arm the calls the client got, each with the reason the gateway
logged, its tokens and `reasons check --lint`'s findings, BFCL's verdict `correct`, and the
request's tokens and time): all its arms or nothing, in one write. A run given the same FILE
again asks only the drawn cases FILE does not hold, in the drawn order, so a run can be stopped
at any time (SIGTERM, SIGHUP or Ctrl-C: the cases under way are finished and written, none is
started; `--stop-at HH:MM` UTC: none is started after it; `--cases N`: at most N this time) and
resumed; which cases count is decided by the clock, never by a result. A request the servers did
not answer (no connection, a time-out) stops the run without writing its case. Without `--results`,
`run` prints one JSON object: the cases, their figures (as `table` computes them) and the draw.

`table` reads results files (by default every benches/results/bfcl-*.jsonl), groups the lines by
model and prints a markdown table: per category and over the separating categories, each arm's
accuracy with its 95% Wilson interval and the paired difference (arm − direct) with its 95%
Newcombe interval (method 10 of Newcombe 1998: the Wilson intervals of both proportions combined
with the pairs' phi correlation) and the exact McNemar p; then fill and lint rates, the tokens the
reason costs, and the run's cases per hour. `same` says which answers differ between two results
files over their common cases (the determinism check). `bound` gives the CI slice's bound
(tests/it/real/real_bfcl.rs): from the paired counts of a model's results over CATEGORIES
(comma-separated) for ARM (default `last`), the 99th percentile of the net paired loss on N cases
if each case is lost with the upper 95% Wilson bound of the run's share of only-direct-right
cases and won with its share of only-arm-right ones.
"""

import glob
import json
import math
import os
import queue
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from itertools import zip_longest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

CATEGORIES = ["simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
              "live_simple", "live_multiple", "live_irrelevance"]
# The categories where the arms can differ: the irrelevance ones are right in every arm by
# construction (the turn is not started), `parallel*` near 0% in every arm (doc/bfcl.md).
SEPARATING = ["simple_python", "multiple", "live_simple", "live_multiple"]
ARMS = ["direct", "last", "first"]
POSITIONS = {"last": "last", "first": "first"}
CALL_STARTED = {"role": "assistant", "content": '<tool_call>\n{"name": "'}
SETTINGS = {"model": "local", "temperature": 0, "seed": 42, "max_tokens": 400,
            "parallel_tool_calls": True, "cache_prompt": False}
N_CTX = 8192
# What a results file's lines must share: the answers depend on each of them.
SAME_SETUP = ("seed", "threads", "slots", "n_ctx", "runtime", "bfcl_eval")
OPTIONS = {"--results", "--per-category", "--from", "--seed", "--ids", "--categories", "--arms",
           "--threads", "--slots", "--cases", "--stop-at"}
Z95 = 1.959963984540054
# A typical agent session's declared tools (Claude Code declares about 20).
SESSION_TOOLS = 20


# ---- statistics -----------------------------------------------------------------------------

def wilson_bounds(right, n, z=Z95):
    """The 95% Wilson score interval of right/n, as proportions."""
    p = right / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson(right, n):
    """The 95% Wilson score interval of right/n, as percentages."""
    if n == 0:
        return None
    low, high = wilson_bounds(right, n)
    return [round(100 * low, 1), round(100 * high, 1)]


def newcombe(both, only_arm, only_direct, neither):
    """The 95% interval of the paired difference p_arm − p_direct, in points: Newcombe's
    square-and-add interval for paired proportions, method 10 of R. G. Newcombe, Statistics in
    Medicine 17 (1998) 2635–2650, as Altman et al.'s "Statistics with confidence" (2000) and
    Fagerland, Lydersen and Laake's "Statistical Analysis of Contingency Tables" (2017, ch. 8) give
    it: the Wilson intervals of the two proportions, combined with the correlation phi of the
    pairs, whose numerator AD − BC is taken N/2 nearer zero when it is positive (and 0 when it is
    below N/2)."""
    n = both + only_arm + only_direct + neither
    if n == 0:
        return None
    p1, p2 = (both + only_arm) / n, (both + only_direct) / n
    l1, u1 = wilson_bounds(both + only_arm, n)
    l2, u2 = wilson_bounds(both + only_direct, n)
    margins = (both + only_arm) * (only_direct + neither) * (both + only_direct) * (only_arm + neither)
    cross = both * neither - only_arm * only_direct
    cross = cross - n / 2 if cross > n / 2 else 0 if cross >= 0 else cross
    phi = cross / math.sqrt(margins) if margins else 0.0
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    epsilon = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    difference = p1 - p2
    return [round(100 * max(-1.0, difference - delta), 1), round(100 * min(1.0, difference + epsilon), 1)]


def mcnemar_exact(only_a, only_b):
    """Two-sided exact McNemar p: the binomial test of the discordant pairs against 1/2."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return round(min(1.0, 2 * tail), 4)


def percentile(values, q):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


# ---- the servers ----------------------------------------------------------------------------

class Unanswered(Exception):
    """A request the servers did not answer at all: the harness's failure, not an answer."""


def post(url, body, timeout=900):
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.load(answer)


def listening(stream, what):
    for line in stream:
        if "listening on http://" in line:
            return "http://" + line.split("listening on http://")[1].split(",")[0].split()[0]
    sys.exit(f"bfcl: {what} did not start")


def gateway(reasons, upstream, log, *extra):
    # Its own session: a Ctrl-C meant for the run reaches the run, which finishes the cases under
    # way before it stops the servers.
    process = subprocess.Popen(
        [reasons, "gateway", "--listen", "127.0.0.1:0", "--upstream", upstream, "--reasons-log", log,
         "--no-restore", *extra],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    return process, listening(process.stderr, "reasons gateway")


class ReasonsLog:
    """The records a gateway logged, by call id, read as the log grows."""

    def __init__(self, path):
        self.path, self.offset, self.records = path, 0, {}

    def get(self, call_id):
        """The record of the call, as the gateway wrote it (a line of JSON), or None."""
        if call_id not in self.records and os.path.exists(self.path):
            with open(self.path, "rb") as log:
                log.seek(self.offset)
                data = log.read()
            complete = data[:data.rfind(b"\n") + 1]
            self.offset += len(complete)
            for line in complete.decode().splitlines():
                self.records[json.loads(line)["call_id"]] = line
        return self.records.get(call_id)


# ---- the cases ------------------------------------------------------------------------------

def draw(categories, per_category, seed, ids_file, parts, skip=0):
    """The cases to run, in order: per category, BFCL's entries drawn by the seed (or named)."""
    named = None
    if ids_file:
        with open(ids_file) as lines:
            named = [line.split("#")[0].strip() for line in lines]
        named = [name for name in named if name]
    cases, drawn = [], {}
    for category in categories:
        entries, answers = parts.load_category(category)
        by_id = {entry["id"]: entry for entry in entries}
        if named is not None:
            ids = [name for name in named if name in by_id]
        else:
            ids = sorted(by_id)
            random.Random(f"{seed}:{category}").shuffle(ids)
            ids = ids[skip:per_category]
        if not ids:
            continue
        drawn[category] = ids
        cases.append([(category, by_id[name], answers) for name in ids])
    # One category after the other in turn.
    cases = [case for turn in zip_longest(*cases) for case in turn if case is not None]
    if named is not None:
        missing = set(named) - {entry["id"] for _, entry, _ in cases}
        if missing:
            sys.exit(f"bfcl: {ids_file}: no such case in bfcl-eval: {', '.join(sorted(missing))}")
    return cases, drawn


def ask(url, category, entry, tools):
    """One case through one arm: what the client got, and what it cost. An HTTP error is the
    servers' answer (llama.cpp refuses a turn whose call it cannot parse), scored as wrong; no
    answer at all raises Unanswered."""
    messages = list(entry["question"][0])
    if "irrelevance" not in category:
        messages.append(CALL_STARTED)
    started = time.perf_counter()
    try:
        answer = post(url + "/v1/chat/completions", dict(SETTINGS, messages=messages, tools=tools))
    except urllib.error.HTTPError as error:
        return {"error": f"HTTP {error.code}: {error.read()[:300].decode(errors='replace')}",
                "seconds": round(time.perf_counter() - started, 3)}
    except Exception as error:
        raise Unanswered(f"{entry['id']}: {url}: {error}") from error
    seconds = time.perf_counter() - started
    message = answer["choices"][0]["message"]
    timings = answer.get("timings") or {}
    usage = answer.get("usage") or {}
    return {
        "answer": answer,
        "tool_calls": message.get("tool_calls") or None,
        "content": message.get("content") or None,
        "seconds": round(seconds, 3),
        "model_seconds": round((timings.get("prompt_ms", 0) + timings.get("predicted_ms", 0)) / 1000, 3),
        "prompt_seconds": round(timings.get("prompt_ms", 0) / 1000, 3),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
    }


def leaked(entry, tool_calls):
    """Whether a call the client got carries `reason` to a tool that does not declare one."""
    declared = {function["name"].replace(".", "_"): function["parameters"].get("properties", {})
                for function in entry["function"]}
    for call in tool_calls or []:
        try:
            arguments = json.loads(call["function"]["arguments"])
        except Exception:
            continue
        if isinstance(arguments, dict) and "reason" in arguments \
                and "reason" not in declared.get(call["function"]["name"], {}):
            return True
    return False


def lint(reasons, answer, logged, work):
    """`reasons check --lint`'s findings per call id for one answer (the real binary, over the
    answer the client got joined with the reasons the gateway logged for it)."""
    session = os.path.join(work, "lint.session.jsonl")
    log = os.path.join(work, "lint.reasons.jsonl")
    with open(session, "w") as file:
        file.write(json.dumps(answer) + "\n")
    with open(log, "w") as file:
        for record in logged.values():
            file.write(record + "\n")
    checked = subprocess.run([reasons, "check", "--lint", "--format", "jsonl", "--reasons-log", log, session],
                             capture_output=True, text=True)
    if "not reasons-log records" in checked.stderr or checked.returncode not in (0, 1):
        sys.exit(f"bfcl: reasons check --lint: {checked.stderr}")
    findings = {}
    for record in map(json.loads, checked.stdout.splitlines()):
        finding = record.get("finding", "")
        if finding and "missing" not in finding:
            findings.setdefault(record.get("call_id"), []).append(finding)
    return findings


def arm_line(reasons, llama_url, category, entry, answers, got, log, work, parts):
    """One arm's part of a results line: the calls the client got (each with the reason the
    gateway logged, its tokens and lint findings), BFCL's verdict, and the request's costs."""
    if "error" in got:
        correct, why = False, "request failed: " + got["error"]
    else:
        correct, why = parts.score(category, entry, answers, got["tool_calls"], got["content"])
    calls = [{"id": call.get("id"), "name": call["function"]["name"],
              "arguments": call["function"]["arguments"]} for call in got.get("tool_calls") or []]
    if log is not None:
        logged = {}
        for call in calls:
            record = log.get(call["id"])
            reason = json.loads(record).get("reason") if record else None
            call["reason"] = reason
            if isinstance(reason, str):
                logged[call["id"]] = record
                text = ', "reason": ' + json.dumps(reason)
                call["reason_tokens"] = len(post(llama_url + "/tokenize", {"content": text})["tokens"])
        findings = lint(reasons, got["answer"], logged, work) if logged else {}
        for call in calls:
            if isinstance(call["reason"], str) and call["reason"].strip():
                call["lint"] = findings.get(call["id"], [])
    out = {"calls": calls, "content": got.get("content"), "correct": correct, "why": why,
           "leaked": leaked(entry, got.get("tool_calls"))}
    for key in ("error", "prompt_tokens", "completion_tokens", "seconds", "model_seconds", "prompt_seconds"):
        if got.get(key) is not None:
            out[key] = got[key]
    return out


def cpu():
    """The processor's name: another one may compute a near tie the other way."""
    try:
        with open("/proc/cpuinfo") as info:
            for row in info:
                if row.startswith("model name"):
                    return row.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def model_label(model):
    """`0.5b` for qwen2.5-coder-0.5b-instruct-q4_k_m.gguf."""
    name = os.path.basename(model)
    return name.replace("qwen2.5-coder-", "").replace("-instruct-q4_k_m.gguf", "").replace(".gguf", "")


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_results(paths):
    """The lines of results files; a torn last line (a run killed inside its one write) is left
    out with a warning."""
    lines = []
    for path in paths:
        with open(path) as file:
            text = file.read()
        rows = text.split("\n")
        for number, row in enumerate(rows, 1):
            if not row.strip():
                continue
            try:
                lines.append(json.loads(row))
            except json.JSONDecodeError:
                if number == len(rows) and not text.endswith("\n"):
                    print(f"bfcl: {path}:{number}: a torn last line, left out", file=sys.stderr)
                    continue
                sys.exit(f"bfcl: {path}:{number}: not a results line")
    return lines


def drop_torn_tail(path):
    """Cut a torn last line (a run killed inside its one write) off the file, so that the next
    line is not written onto it."""
    with open(path, "rb+") as file:
        data = file.read()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            print(f"bfcl: {path}: a torn last line ({len(data) - keep} bytes) cut off", file=sys.stderr)
            file.truncate(keep)


def append_line(path, line):
    """One case, whole or not at all: one write of the complete line, then fsync."""
    data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if os.write(descriptor, data) != len(data):
            sys.exit(f"bfcl: {path}: short write")
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def run(argv):
    import bfcl_parts as parts
    reasons, llama_python, model = argv[:3]
    options = dict(zip(argv[3::2], argv[4::2]))
    unknown = set(options) - OPTIONS
    if unknown or len(argv[3:]) % 2:
        sys.exit(f"bfcl: unknown options {sorted(unknown) or argv[-1:]}\n\n{__doc__}")
    seed = int(options.get("--seed", 36))
    per_category = int(options.get("--per-category", 10))
    # Named cases are looked for in every category; drawn ones in those that separate the arms.
    categories = options.get("--categories", ",".join(CATEGORIES if "--ids" in options else SEPARATING)).split(",")
    arms = options.get("--arms", ",".join(ARMS)).split(",")
    if set(categories) - set(CATEGORIES) or set(arms) - set(ARMS) or "direct" not in arms:
        sys.exit(f"bfcl: categories are among {CATEGORIES}, arms among {ARMS} with direct")
    threads, slots = int(options.get("--threads", 1)), int(options.get("--slots", 1))
    skip = int(options.get("--from", 0))
    results_path = options.get("--results")
    label = model_label(model)
    cases, drawn = draw(categories, per_category, seed, options.get("--ids"), parts, skip)
    order = {entry["id"]: number for number, (_, entry, _) in enumerate(cases)}
    done, previous = set(), []
    if results_path and os.path.exists(results_path):
        drop_torn_tail(results_path)
        previous = read_results([results_path])
        for line in previous:
            if line["model"] != label or line.get("seed") != seed or line["id"] not in order:
                sys.exit(f"bfcl: {results_path}: {line['id']} ({line['model']}, seed {line.get('seed')}) "
                         f"is not a case of this draw ({label}, seed {seed}, {','.join(categories)})")
            if line["id"] in done:
                sys.exit(f"bfcl: {results_path}: {line['id']} twice")
            done.add(line["id"])
    todo = [case for case in cases if case[1]["id"] not in done]
    if "--cases" in options:
        todo = todo[:int(options["--cases"])]
    print(f"bfcl: {label}: {len(cases)} drawn, {len(done)} done, asking {len(todo)} "
          f"({threads} threads, {slots} slots)", file=sys.stderr, flush=True)

    work = tempfile.mkdtemp(prefix="bfcl-")
    processes = []
    stop = {"asked": False, "unanswered": None}

    def asked_to_stop(number, _frame):
        if not stop["asked"]:
            print(f"bfcl: signal {number}: finishing the cases under way", file=sys.stderr, flush=True)
        stop["asked"] = True
    signal.signal(signal.SIGTERM, asked_to_stop)
    signal.signal(signal.SIGINT, asked_to_stop)
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:  # under nohup it stays ignored
        signal.signal(signal.SIGHUP, asked_to_stop)
    lines = []
    session_started = now()
    try:
        llama = subprocess.Popen(
            [llama_python, os.path.join(ROOT, "tests/it/python/llama_server.py"), model, str(N_CTX),
             str(threads), str(slots)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=open(os.path.join(work, "llama.log"), "w"), text=True, start_new_session=True)
        processes.append(llama)
        llama_url = listening(llama.stdout, "llama.cpp's server")
        urls, logs = {"direct": llama_url}, {}
        for arm in arms:
            if arm != "direct":
                path = os.path.join(work, f"{arm}.reasons.jsonl")
                process, urls[arm] = gateway(reasons, llama_url, path, "--reason-position", POSITIONS[arm])
                processes.append(process)
                logs[arm] = ReasonsLog(path)
        setup = {
            "seed": seed, "threads": threads, "slots": slots, "n_ctx": N_CTX,
            "runtime": "xllamacpp " + subprocess.run(
                [llama_python, "-c", "import importlib.metadata as m; print(m.version('xllamacpp'))"],
                capture_output=True, text=True).stdout.strip(),
            "bfcl_eval": parts.version(),
            "reasons": subprocess.run([reasons, "--version"], capture_output=True, text=True).stdout.strip(),
            "cpu": cpu(),
        }
        # The answers depend on the threads and slots (doc/bfcl.md, "The run"): one results file
        # is one configuration.
        for line in previous:
            mismatched = [key for key in SAME_SETUP if line["setup"].get(key) != setup[key]]
            if mismatched:
                was = ", ".join(f"{key} {line['setup'].get(key)}" for key in mismatched)
                sys.exit(f"bfcl: {results_path}: {line['id']} was asked with {was}, not "
                         f"{', '.join(str(setup[key]) for key in mismatched)}: the answers depend "
                         f"on it; ask with the same, or into another file")

        # The requests, in the drawn order: each case's arms (their order rotated by the case's
        # place in the draw), `slots` of them at a time. Once a stop is asked no case is started,
        # but the arms of those started are asked, so that each is finished.
        jobs = [(index, arm) for index, (_, entry, _) in enumerate(todo)
                for arm in rotated(arms, order[entry["id"]])]
        lock, finished = threading.Lock(), queue.Queue()
        state = {"next": 0, "started": set(), "answers": {}}
        stop_at = options.get("--stop-at")

        def next_job():
            with lock:
                if stop_at and time.strftime("%H:%M", time.gmtime()) >= stop_at:
                    stop["asked"] = True
                if state["next"] >= len(jobs) or stop["unanswered"]:
                    return None
                index, arm = jobs[state["next"]]
                if stop["asked"] and index not in state["started"]:
                    return None
                state["next"] += 1
                state["started"].add(index)
                return index, arm

        def worker():
            while (job := next_job()) is not None:
                index, arm = job
                category, entry, _ = todo[index]
                try:
                    got = ask(urls[arm], category, entry, parts.openai_tools(entry["function"]))
                except Unanswered as error:
                    stop["unanswered"] = str(error)
                    break
                with lock:
                    state["answers"].setdefault(index, {})[arm] = got
                    if len(state["answers"][index]) == len(arms):
                        finished.put(index)
            finished.put(None)

        workers = [threading.Thread(target=worker, daemon=True) for _ in range(slots)]
        for thread in workers:
            thread.start()
        running = len(workers)
        while running:
            try:
                index = finished.get(timeout=1)
            except queue.Empty:
                continue
            if index is None:
                running -= 1
                continue
            category, entry, answers = todo[index]
            got = state["answers"].pop(index)
            line = {"id": entry["id"], "category": category, "model": label, "seed": seed,
                    "order": order[entry["id"]], "tools": len(entry["function"]),
                    "session": session_started, "at": now(), "setup": setup, "arms": {}}
            for arm in arms:
                line["arms"][arm] = arm_line(reasons, llama_url, category, entry, answers, got[arm],
                                             logs.get(arm), work, parts)
            if results_path:
                append_line(results_path, line)
            lines.append(line)
            marks = " ".join(f"{arm}={'+' if a['correct'] else '-'}" for arm, a in line["arms"].items())
            print(f"bfcl: {len(done) + len(lines)}/{len(cases)} {entry['id']}: {marks} {line['at']}",
                  file=sys.stderr, flush=True)
    finally:
        for process in processes:
            process.kill()
    print(f"bfcl: {label}: {len(lines)} cases this time; {len(done) + len(lines)} of {len(cases)} done",
          file=sys.stderr, flush=True)
    if stop["unanswered"]:
        print(f"bfcl: stopped: a request was not answered ({stop['unanswered']}); its case is not "
              f"written (server log: {work}/llama.log)", file=sys.stderr, flush=True)
        sys.exit(1)
    if not results_path:
        asked = {line["id"] for line in lines}
        print(json.dumps({
            "model": label, "setup": lines[0]["setup"] if lines else None, "arms": arms,
            "drawn": drawn, "not_asked": [entry["id"] for _, entry, _ in cases if entry["id"] not in asked],
            "categories": {category: figures(group, arms)
                           for category, group in by_category(lines, categories).items()},
            "totals": {"all": figures(lines, arms)},
            "cases": lines,
        }, indent=1))
    if stop["asked"] and not (stop_at and time.strftime("%H:%M", time.gmtime()) >= stop_at):
        sys.exit(130)


def rotated(arms, turn):
    turn %= len(arms)
    return arms[turn:] + arms[:turn]


def by_category(lines, categories):
    groups = {category: [line for line in lines if line["category"] == category] for category in categories}
    return {category: group for category, group in groups.items() if group}


# ---- the figures ----------------------------------------------------------------------------

def figures(group, arms):
    """Over a group of results lines: per arm the accuracy, and against direct the paired
    difference with its interval, the fill and lint rates, and what the reason costs."""
    n = len(group)
    out = {"cases": n, "arms": {}}
    for arm in arms:
        right = sum(line["arms"][arm]["correct"] for line in group)
        out["arms"][arm] = {"right": right, "accuracy": round(100 * right / n, 1) if n else None,
                            "wilson95": wilson(right, n),
                            "leaked": sum(line["arms"][arm]["leaked"] for line in group),
                            "failed_requests": sum("error" in line["arms"][arm] for line in group)}
        if arm == "direct":
            continue
        pairs = [(line["arms"][arm], line["arms"]["direct"]) for line in group]
        both = sum(a["correct"] and d["correct"] for a, d in pairs)
        only_arm = sum(a["correct"] and not d["correct"] for a, d in pairs)
        only_direct = sum(d["correct"] and not a["correct"] for a, d in pairs)
        neither = n - both - only_arm - only_direct
        counted = [(a, d, line["tools"]) for (a, d), line in zip(pairs, group)
                   if a.get("prompt_tokens") and d.get("prompt_tokens")]
        added = [a["prompt_tokens"] - d["prompt_tokens"] for a, d, _ in counted]
        per_tool = [(a["prompt_tokens"] - d["prompt_tokens"]) / tools for a, d, tools in counted if tools]
        overhead = [(a["seconds"] - a["model_seconds"]) - (d["seconds"] - d["model_seconds"])
                    for a, d in pairs if "model_seconds" in a and "model_seconds" in d]
        calls = [call for a, _ in pairs for call in a["calls"]]
        with_reason = [call for call in calls if isinstance(call.get("reason"), str) and call["reason"].strip()]
        flagged = [call for call in with_reason if call.get("lint")]
        reason_tokens = [call["reason_tokens"] for call in with_reason if "reason_tokens" in call]
        out["arms"][arm].update({
            "minus_direct_points": round(100 * (only_arm - only_direct) / n, 1) if n else None,
            "newcombe95": newcombe(both, only_arm, only_direct, neither),
            "only_this_right": only_arm, "only_direct_right": only_direct,
            "mcnemar_p": mcnemar_exact(only_arm, only_direct),
            "same_calls_as_direct": sum(calls_of(a) == calls_of(d) for a, d in pairs),
            "calls": len(calls), "calls_with_reason": len(with_reason),
            "fill_rate": round(100 * len(with_reason) / len(calls), 1) if calls else None,
            "lint_flagged": len(flagged),
            "lint_rate": round(100 * len(flagged) / len(with_reason), 1) if with_reason else None,
            "prompt_tokens_added_per_request": mean_or_none(added),
            "prompt_tokens_added_per_tool": mean_or_none(per_tool),
            "completion_tokens_added_per_request": mean_or_none(
                a["completion_tokens"] - d["completion_tokens"] for a, d in pairs
                if a.get("completion_tokens") is not None and d.get("completion_tokens") is not None),
            "reason_tokens_median": statistics.median(reason_tokens) if reason_tokens else None,
            "reason_tokens_mean": mean_or_none(reason_tokens),
            "gateway_added_ms_median": round(1000 * statistics.median(overhead), 2) if overhead else None,
            "gateway_added_ms_p95": round(1000 * percentile(overhead, 95), 2) if overhead else None,
        })
    return out


def mean_or_none(values):
    values = list(values)
    return round(statistics.mean(values), 1) if values else None


def calls_of(arm):
    """The calls as values: the gateway writes the arguments it rebuilt compactly."""
    def value(text):
        try:
            return json.loads(text)
        except Exception:
            return text
    return [(call["name"], value(call["arguments"])) for call in arm["calls"]]


# ---- the table ------------------------------------------------------------------------------

def results_files(paths):
    return paths or sorted(glob.glob(os.path.join(HERE, "results", "bfcl-*.jsonl")))


def by_model(paths):
    """Every results line of the files, per model; a case twice in one model is an error."""
    models = {}
    for line in read_results(results_files(paths)):
        model = models.setdefault(line["model"], {})
        if line["id"] in model:
            sys.exit(f"bfcl: {line['model']}: {line['id']} twice")
        model[line["id"]] = line
    return {model: list(lines.values()) for model, lines in sorted(models.items())}


def table(paths):
    rows = ["| model | category | n | direct | last | last − direct [95% CI] (only L / only D, p) "
            "| first | first − direct [95% CI] (only F / only D, p) | fill last / first | lint last / first |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for model, lines in by_model(paths).items():
        arms = [arm for arm in ARMS if all(arm in line["arms"] for line in lines)]
        categories = [category for category in CATEGORIES if any(line["category"] == category for line in lines)]
        groups = [(category, [line for line in lines if line["category"] == category]) for category in categories]
        separating = [line for line in lines if line["category"] in SEPARATING]
        groups.append(("**" + ", ".join(c for c in SEPARATING if c in categories) + "**", separating))
        for name, group in groups:
            if not group:
                continue
            result = figures(group, arms)["arms"]

            def acc(arm):
                if arm not in result:
                    return "–"
                low, high = result[arm]["wilson95"]
                return f"{result[arm]['accuracy']}% [{low}, {high}]"

            def diff(arm):
                if arm not in result:
                    return "–"
                a = result[arm]
                low, high = a["newcombe95"]
                return (f"{a['minus_direct_points']:+} pt [{low:+}, {high:+}] "
                        f"({a['only_this_right']}/{a['only_direct_right']}, p={a['mcnemar_p']})")

            def rate(arm, key):
                return f"{result[arm][key]}%" if arm in result and result[arm].get(key) is not None else "–"

            rows.append(f"| {model} | {name} | {len(group)} | {acc('direct')} | {acc('last')} | "
                        f"{diff('last')} | {acc('first')} | {diff('first')} | "
                        f"{rate('last', 'fill_rate')} / {rate('first', 'fill_rate')} | "
                        f"{rate('last', 'lint_rate')} / {rate('first', 'lint_rate')} |")
        totals = figures(separating or lines, arms)["arms"]
        for arm in arms[1:]:
            a = totals[arm]
            low, high = a["newcombe95"]
            notes.append(
                f"- {model}, {arm}: difference {a['minus_direct_points']:+} pt, 95% interval "
                f"[{low:+}, {high:+}] (half-width {(high - low) / 2:.1f}); {a['calls_with_reason']}/"
                f"{a['calls']} calls with a reason ({a['fill_rate']}%), `check --lint` flags "
                f"{a['lint_flagged']} ({a['lint_rate']}%); prompt tokens added "
                f"{a['prompt_tokens_added_per_request']} per request, {a['prompt_tokens_added_per_tool']} "
                f"per declared tool; output tokens {signed(a['completion_tokens_added_per_request'])} per "
                f"request, {a['reason_tokens_median']} per reason (median, `, \"reason\": …` by the "
                f"server's tokenizer); leaked {a['leaked']}; failed requests {a['failed_requests']}; "
                f"gateway added {a['gateway_added_ms_median']} ms median, {a['gateway_added_ms_p95']} ms p95; "
                f"a session declaring {SESSION_TOOLS} tools: {session_tokens(a)}.")
        notes.append(f"- {model}: " + pace(lines))
    print("\n".join(rows + [""] + notes))


def session_tokens(arm):
    """What the reason adds to a typical agent session's requests, from the run's figures."""
    per_tool = arm["prompt_tokens_added_per_tool"]
    if per_tool is None:
        return "–"
    return (f"+{SESSION_TOOLS * per_tool:.0f} prompt tokens a request (at the first uncached, then "
            f"read from the prompt cache), +{arm['reason_tokens_median']} output tokens a call that carries a reason")


def signed(value):
    return "–" if value is None else f"{value:+}"


def pace(lines):
    """The cases, the machine time they took (per session: its start to its last line) and the
    setups they ran with."""
    sessions = {}
    for line in lines:
        sessions.setdefault(line["session"], []).append(line)
    seconds = sum(max(epoch(line["at"]) for line in group) - epoch(start) for start, group in sessions.items())
    setups = sorted({f"{line['setup']['threads']} threads, {line['setup']['slots']} slots, "
                     f"{line['setup']['runtime']}, bfcl-eval {line['setup']['bfcl_eval']}" for line in lines})
    days = sorted({line["at"][:10] for line in lines})
    rate = f"{3600 * len(lines) / seconds:.0f} cases an hour" if seconds else "–"
    return (f"{len(lines)} cases in {seconds / 3600:.1f} h over {len(sessions)} sessions ({rate}); "
            f"{'; '.join(setups)}; {', '.join(days)}.")


def epoch(stamp):
    import calendar
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def same(first, second):
    """Which answers differ between two results files, over the cases both hold."""
    a = {line["id"]: line for line in read_results([first])}
    b = {line["id"]: line for line in read_results([second])}
    common = [name for name in a if name in b]
    differ = []
    compared = 0
    for name in common:
        for arm in a[name]["arms"]:
            if arm not in b[name]["arms"]:
                continue
            compared += 1
            x, y = a[name]["arms"][arm], b[name]["arms"][arm]
            if answer_of(x) != answer_of(y):
                differ.append({"id": name, "arm": arm, first: answer_of(x), second: answer_of(y)})
    print(json.dumps({"cases": len(common), "answers_compared": compared, "answers_differ": len(differ),
                      "differences": differ}, indent=1, ensure_ascii=False))
    return 0 if not differ else 1


def answer_of(arm):
    """What the client got, and the reasons the gateway logged: the whole answer, not the verdict."""
    return {"calls": [(call["name"], call["arguments"], call.get("reason")) for call in arm["calls"]],
            "content": arm.get("content"), "error": arm.get("error")}


def bound(categories, n, *rest, quantile=0.99):
    arm, paths = (rest[0], list(rest[1:])) if rest and rest[0] in ARMS else ("last", list(rest))
    models = by_model(paths)
    if "0.5b" not in models:
        sys.exit("bfcl: bound: no results of the 0.5b model")
    cases = [line for line in models["0.5b"] if line["category"] in categories.split(",")]
    lost = sum(c["arms"]["direct"]["correct"] and not c["arms"][arm]["correct"] for c in cases)
    won = sum(c["arms"][arm]["correct"] and not c["arms"]["direct"]["correct"] for c in cases)
    # The full run is a sample too: the share of cases lost is taken at its 95% Wilson upper
    # bound, so that a run that happened to lose none still allows the slice a few.
    p_lost, p_won = wilson(lost, len(cases))[1] / 100, won / len(cases)
    # The distribution of the sum of n draws of +1 (p_lost), -1 (p_won), 0: convolved exactly.
    sums = {0: 1.0}
    for _ in range(int(n)):
        step = {}
        for total, p in sums.items():
            for delta, q in ((1, p_lost), (-1, p_won), (0, 1 - p_lost - p_won)):
                step[total + delta] = step.get(total + delta, 0) + p * q
        sums = step
    running = 0.0
    for total in sorted(sums):
        running += sums[total]
        if running >= quantile:
            break
    print(json.dumps({"model": "0.5b", "categories": categories, "cases": len(cases),
                      "only_direct_right": lost, "only_arm_right": won, "p_lost": round(p_lost, 4),
                      "p_won": round(p_won, 4), "n": int(n), "quantile": quantile, "bound": total}))


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else None
    if command == "run":
        run(sys.argv[2:])
    elif command == "table":
        table(sys.argv[2:])
    elif command == "same" and len(sys.argv) == 4:
        sys.exit(same(*sys.argv[2:]))
    elif command == "bound" and len(sys.argv) >= 4:
        bound(*sys.argv[2:])
    else:
        sys.exit(__doc__)
