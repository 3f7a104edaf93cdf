"""What the `reason` parameter costs on the public BFCL benchmark: run by benches/bfcl (and, on a
fixed slice, by tests/it/real_bfcl.rs).

usage: bfcl.py run REASONS LLAMA_PYTHON MODEL [--per-category N] [--from K] [--seed S] [--ids FILE]
                   [--categories A,B] [--arms direct,layer,layer-first] [--threads N]
                   [--stop-at HH:MM]
       bfcl.py merge RESULT.json…
       bfcl.py table RESULT.json…
       bfcl.py bound RESULT.json CATEGORIES N [ARM]

`run` starts llama.cpp's server with MODEL (tests/it/python/llama_server.py) and two gateways in
front of it (`reasons gateway`, the reason last, and `--reason-position first`), then asks every
drawn case of bfcl-eval's data once per arm, the arms in turn on each case (their order rotated
from one case to the next): **direct** (no layer), **layer**, **layer-first**. Declarations are
BFCL's own OpenAI function-calling conversion, the request OpenAI Chat with `tools`, temperature 0
and one seed; nothing in any prompt mentions reasons. The answer each arm's *client* got (the
calls after the gateway stripped them) is scored by BFCL's own checker (benches/bfcl_parts.py), so
a leaked `reason` or a damaged call counts against the layer.

Qwen2.5-Coder at this size answers a request with tools in a fenced JSON block rather than a tool
call, so where a call is expected the assistant's turn is started with Qwen's tag, as
benches/fill_rate.py does; in the irrelevance categories it is not (a started call could not be
taken back: "no call" would be impossible), so there the model answers as it would for a client.

Cases are drawn once per category: BFCL's ids shuffled by `random.Random("SEED:CATEGORY")`, the
first N taken (so a smaller N is a prefix of a larger one; `--from K` skips the first K, so
that a run can be extended, and `merge` adds such runs of one model up). The cases are asked
one category after the other in turn (the first of each, then the second of each…), so that a
run stopped early (`--stop-at HH:MM` UTC: no case is started after it; or SIGTERM: the case
under way is finished) has covered the categories evenly; it then reports the cases it asked,
and says which drawn ones it did not. `--ids FILE` (one id a line, `#`
comments) names the cases instead. Prints one JSON object: the cases drawn, and per category and
arm the accuracy with its 95% Wilson interval, the paired differences against direct (cases only
one arm got right, exact McNemar p), each layer arm's fill rate and `reasons check --lint` flag
rate (the real binary over the reasons log and the client's answers), prompt tokens added per
request and per declared tool, output tokens per reason, the gateway's added time, and every
answer. `table` turns such objects into a markdown table. `bound` gives the CI slice's bound
(tests/it/real_bfcl.rs): from a run's paired counts over CATEGORIES (comma-separated) for ARM
(default `layer`), the 99th percentile of the net paired loss on N cases if each case is lost
with the upper 95% Wilson bound of the run's share of only-direct-right cases and won with its
share of only-arm-right ones.
"""

import json
import math
import signal
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from itertools import zip_longest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

CATEGORIES = ["simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
              "live_simple", "live_multiple", "live_irrelevance"]
ARMS = ["direct", "layer", "layer-first"]
CALL_STARTED = {"role": "assistant", "content": '<tool_call>\n{"name": "'}
SETTINGS = {"model": "local", "temperature": 0, "seed": 42, "max_tokens": 400,
            "parallel_tool_calls": True}
N_CTX = 8192


# ---- statistics -----------------------------------------------------------------------------

def wilson(right, n, z=1.959963984540054):
    """The 95% Wilson score interval of right/n, as percentages."""
    if n == 0:
        return None
    p = right / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(100 * max(0.0, centre - half), 1), round(100 * min(1.0, centre + half), 1)]


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
    process = subprocess.Popen(
        [reasons, "gateway", "--listen", "127.0.0.1:0", "--upstream", upstream, "--reasons-log", log,
         "--no-restore", *extra],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return process, listening(process.stderr, "reasons gateway")


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
    """One case through one arm: what the client got, and what it cost."""
    messages = list(entry["question"][0])
    if "irrelevance" not in category:
        messages.append(CALL_STARTED)
    started = time.perf_counter()
    try:
        answer = post(url + "/v1/chat/completions", dict(SETTINGS, messages=messages, tools=tools))
    except urllib.error.HTTPError as error:
        return {"error": f"HTTP {error.code}: {error.read()[:300].decode(errors='replace')}",
                "seconds": time.perf_counter() - started}
    except Exception as error:  # a server that fails counts against the arm, as a user meets it
        return {"error": str(error)[:300], "seconds": time.perf_counter() - started}
    seconds = time.perf_counter() - started
    message = answer["choices"][0]["message"]
    timings = answer.get("timings") or {}
    return {
        "answer": answer,
        "tool_calls": message.get("tool_calls") or None,
        "content": message.get("content"),
        "seconds": seconds,
        "model_seconds": (timings.get("prompt_ms", 0) + timings.get("predicted_ms", 0)) / 1000,
        "prompt_tokens": answer.get("usage", {}).get("prompt_tokens"),
        "completion_tokens": answer.get("usage", {}).get("completion_tokens"),
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


def audit(reasons, log, session):
    """Fill and lint counts of one layer arm, by the real binary: `stats` and `check --lint` over
    the answers its client got, joined with the gateway's reasons log."""
    if not os.path.getsize(session):
        return {"calls": 0, "with_reason": 0, "blank": 0, "lint_flagged": 0, "findings": {}}
    logs = ["--reasons-log", log] if os.path.exists(log) else []
    stats = json.loads(subprocess.run(
        [reasons, "stats", "--lint", "--format", "json", *logs, session],
        capture_output=True, text=True, check=True).stdout)
    checked = subprocess.run([reasons, "check", "--lint", "--format", "jsonl", *logs, session],
                             capture_output=True, text=True)
    findings = {}
    for record in map(json.loads, checked.stdout.splitlines()):
        finding = record.get("finding", "")
        if "missing" not in finding:
            findings[finding] = findings.get(finding, 0) + 1
    totals = stats["totals"]
    return {"calls": totals["calls"], "with_reason": totals["present"], "blank": totals["blank"],
            "lint_flagged": totals.get("lint_flagged", 0), "findings": findings}


def run(argv):
    import bfcl_parts as parts
    reasons, llama_python, model = argv[:3]
    options = dict(zip(argv[3::2], argv[4::2]))
    seed = int(options.get("--seed", 36))
    per_category = int(options.get("--per-category", 10))
    categories = options.get("--categories", ",".join(CATEGORIES)).split(",")
    arms = options.get("--arms", ",".join(ARMS)).split(",")
    threads = options.get("--threads", "1")
    skip = int(options.get("--from", 0))
    cases, drawn = draw(categories, per_category, seed, options.get("--ids"), parts, skip)
    work = tempfile.mkdtemp(prefix="bfcl-")
    llama = subprocess.Popen(
        [llama_python, os.path.join(ROOT, "tests/it/python/llama_server.py"), model, str(N_CTX), threads],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(os.path.join(work, "llama.log"), "w"),
        text=True)
    llama_url = listening(llama.stdout, "llama.cpp's server")
    urls, logs, gateways = {"direct": llama_url}, {}, []
    for arm, extra in (("layer", ()), ("layer-first", ("--reason-position", "first"))):
        if arm in arms:
            logs[arm] = os.path.join(work, f"{arm}.jsonl")
            process, urls[arm] = gateway(reasons, llama_url, logs[arm], *extra)
            gateways.append(process)
    sessions = {arm: open(os.path.join(work, f"{arm}.session.jsonl"), "w") for arm in logs}
    started = time.time()
    records = []
    stop = {"asked": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(asked=True))
    stop_at = options.get("--stop-at")
    for number, (category, entry, answers) in enumerate(cases):
        if stop["asked"] or (stop_at and time.strftime("%H:%M", time.gmtime()) >= stop_at):
            print(f"bfcl: stopped before case {number + 1} of {len(cases)}", file=sys.stderr, flush=True)
            break
        tools = parts.openai_tools(entry["function"])
        record = {"id": entry["id"], "category": category, "tools": len(tools), "arms": {}}
        turn = number % len(arms)
        for arm in arms[turn:] + arms[:turn]:
            got = ask(urls[arm], category, entry, tools)
            if "error" in got:
                right, why = False, "request failed: " + got["error"]
            else:
                right, why = parts.score(category, entry, answers, got["tool_calls"], got["content"])
            answer = got.pop("answer", None)
            if answer is not None and arm in sessions:
                sessions[arm].write(json.dumps(answer) + "\n")
            got.update(right=right, why=why, leaked=leaked(entry, got.get("tool_calls")))
            record["arms"][arm] = got
        records.append(record)
        marks = " ".join(f"{arm}={'+' if got['right'] else '-'}" for arm, got in record["arms"].items())
        print(f"bfcl: {number + 1}/{len(cases)} {entry['id']}: {marks}", file=sys.stderr, flush=True)
    for session in sessions.values():
        session.close()
    reasons_taken = {arm: read_log(log) for arm, log in logs.items()}
    for record in records:
        for arm, got in record["arms"].items():
            taken = reasons_taken.get(arm, {})
            for call in got.get("tool_calls") or []:
                if call.get("id") in taken:
                    call["reason"] = taken[call["id"]]
    audits = {arm: audit(reasons, logs[arm], sessions[arm].name) for arm in logs}
    tokens_per_reason = []
    for arm in logs:
        for reason in reasons_taken[arm].values():
            text = ', "reason": ' + json.dumps(reason)
            tokens_per_reason.append(len(post(llama_url + "/tokenize", {"content": text})["tokens"]))
    props = json.load(urllib.request.urlopen(llama_url + "/props"))
    for process in gateways:
        process.kill()
    llama.kill()
    result = {
        "model": os.path.basename(model),
        "bfcl_eval": parts.version(),
        "stubbed_modules": parts.stubs_in_use(),
        "runtime": "xllamacpp " + subprocess.run(
            [llama_python, "-c", "import importlib.metadata as m; print(m.version('xllamacpp'))"],
            capture_output=True, text=True).stdout.strip(),
        "build": props.get("build_info"),
        "reasons": subprocess.run([reasons, "--version"], capture_output=True, text=True).stdout.strip(),
        "threads": int(threads), "n_ctx": N_CTX, "settings": SETTINGS, "arms": arms,
        "seed": seed, "per_category": None if options.get("--ids") else per_category, "from": skip,
        "ids_file": options.get("--ids"), "drawn": drawn,
        "not_asked": [entry["id"] for _, entry, _ in cases[len(records):]],
        "date": time.strftime("%Y-%m-%d", time.gmtime()), "seconds": round(time.time() - started),
        "categories": summarise(records, arms, audits, categories),
        "totals": summarise(records, arms, audits, None),
        "median_tokens_per_reason": statistics.median(tokens_per_reason) if tokens_per_reason else None,
        "tokens_per_reason": tokens_per_reason,
        "cases": records,
    }
    print(json.dumps(result, indent=1))


def read_log(path):
    if not os.path.exists(path):
        return {}
    with open(path) as lines:
        return {entry["call_id"]: entry["reason"] for entry in map(json.loads, lines)}


def summarise(records, arms, audits, categories):
    """Per category (or, with `categories` None, over every case): the figures of the doc."""
    groups = {}
    for record in records:
        key = record["category"] if categories is not None else "all"
        groups.setdefault(key, []).append(record)
    out = {}
    for key, group in groups.items():
        n = len(group)
        figures = {"cases": n, "arms": {}}
        for arm in arms:
            right = sum(record["arms"][arm]["right"] for record in group)
            figures["arms"][arm] = {"right": right, "accuracy": round(100 * right / n, 1),
                                    "wilson95": wilson(right, n),
                                    "leaked": sum(record["arms"][arm]["leaked"] for record in group),
                                    "failed_requests": sum("error" in record["arms"][arm] for record in group)}
            if arm == "direct" or "direct" not in arms:
                continue
            only_layer = sum(r["arms"][arm]["right"] and not r["arms"]["direct"]["right"] for r in group)
            only_direct = sum(r["arms"]["direct"]["right"] and not r["arms"][arm]["right"] for r in group)
            same_answer = sum(calls_of(r["arms"][arm]) == calls_of(r["arms"]["direct"]) for r in group)
            counted = [r for r in group
                       if r["arms"][arm].get("prompt_tokens") and r["arms"]["direct"].get("prompt_tokens")]
            added = [r["arms"][arm]["prompt_tokens"] - r["arms"]["direct"]["prompt_tokens"] for r in counted]
            per_tool = [a / r["tools"] for a, r in zip(added, counted) if r["tools"]]
            overhead = [(r["arms"][arm]["seconds"] - r["arms"][arm]["model_seconds"])
                        - (r["arms"]["direct"]["seconds"] - r["arms"]["direct"]["model_seconds"])
                        for r in group if "model_seconds" in r["arms"][arm] and "model_seconds" in r["arms"]["direct"]]
            calls = [call for r in group for call in r["arms"][arm].get("tool_calls") or []]
            with_reason = [call for call in calls if isinstance(call.get("reason"), str) and call["reason"].strip()]
            figures["arms"][arm].update({
                "minus_direct_points": round(100 * (only_layer - only_direct) / n, 1),
                "only_this_right": only_layer, "only_direct_right": only_direct,
                "mcnemar_p": mcnemar_exact(only_layer, only_direct),
                "same_calls_as_direct": same_answer,
                "calls": len(calls), "calls_with_reason": len(with_reason),
                "fill_rate": round(100 * len(with_reason) / len(calls), 1) if calls else None,
                "prompt_tokens_added_per_request": round(statistics.mean(added), 1) if added else None,
                "prompt_tokens_added_per_tool": round(statistics.mean(per_tool), 1) if per_tool else None,
                "completion_tokens_added_per_request": mean_or_none(
                    r["arms"][arm]["completion_tokens"] - r["arms"]["direct"]["completion_tokens"]
                    for r in group if r["arms"][arm].get("completion_tokens") is not None
                    and r["arms"]["direct"].get("completion_tokens") is not None),
                "gateway_added_ms_median": round(1000 * statistics.median(overhead), 2) if overhead else None,
                "gateway_added_ms_p95": round(1000 * percentile(overhead, 95), 2) if overhead else None,
            })
            if categories is None and arm in audits:
                audit_figures = audits[arm]
                present = audit_figures["with_reason"]
                figures["arms"][arm]["audit"] = dict(audit_figures, lint_rate=round(
                    100 * audit_figures["lint_flagged"] / present, 1) if present else None)
        out[key] = figures
    if categories is not None:
        out = {category: out[category] for category in categories if category in out}
    return out


def mean_or_none(values):
    values = list(values)
    return round(statistics.mean(values), 1) if values else None


def calls_of(got):
    """The calls as values: the gateway writes the arguments it rebuilt compactly."""
    def value(text):
        try:
            return json.loads(text)
        except Exception:
            return text
    return [(call["function"]["name"], value(call["function"]["arguments"]))
            for call in got.get("tool_calls") or []]


# ---- the table ------------------------------------------------------------------------------

def table(paths):
    rows = ["| model | category | n | direct | layer (last) | layer − direct (only L / only D, p) "
            "| layer-first | first − direct (only F / only D, p) | fill last / first |",
            "|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for path in paths:
        with open(path) as file:
            result = json.load(file)
        model = result["model"].replace("qwen2.5-coder-", "").replace("-instruct-q4_k_m.gguf", "")
        groups = list(result["categories"].items()) + [("**all**", result["totals"]["all"])]
        for category, figures in groups:
            arms = figures["arms"]

            def acc(arm):
                if arm not in arms:
                    return "–"
                low, high = arms[arm]["wilson95"]
                return f"{arms[arm]['accuracy']}% [{low}, {high}]"

            def diff(arm):
                if arm not in arms or "minus_direct_points" not in arms[arm]:
                    return "–"
                a = arms[arm]
                return f"{a['minus_direct_points']:+} pt ({a['only_this_right']}/{a['only_direct_right']}, p={a['mcnemar_p']})"

            def fill(arm):
                return f"{arms[arm]['fill_rate']}%" if arm in arms and arms[arm].get("fill_rate") is not None else "–"

            rows.append(f"| {model} | {category} | {figures['cases']} | {acc('direct')} | {acc('layer')} | "
                        f"{diff('layer')} | {acc('layer-first')} | {diff('layer-first')} | "
                        f"{fill('layer')} / {fill('layer-first')} |")
        totals = result["totals"]["all"]["arms"]
        for arm in ("layer", "layer-first"):
            if arm not in totals:
                continue
            a, audit_figures = totals[arm], totals[arm].get("audit", {})
            notes.append(
                f"- {model}, {arm}: {a['calls_with_reason']}/{a['calls']} calls with a reason "
                f"({a['fill_rate']}%); `check --lint` flags {audit_figures.get('lint_flagged')}/"
                f"{audit_figures.get('with_reason')} reasons ({audit_figures.get('lint_rate')}%); "
                f"prompt tokens added {a['prompt_tokens_added_per_request']} per request, "
                f"{a['prompt_tokens_added_per_tool']} per declared tool; output tokens "
                f"{a['completion_tokens_added_per_request']:+} per request; leaked reasons {a['leaked']}; "
                f"gateway added {a['gateway_added_ms_median']} ms median, {a['gateway_added_ms_p95']} ms p95.")
        notes.append(f"- {model}: median {result['median_tokens_per_reason']} tokens per reason "
                     f"(`, \"reason\": …` by the server's tokenizer); {result['seconds']} s, "
                     f"{result['threads']} threads, {result['date']}.")
    print("\n".join(rows + [""] + notes))


def merge(paths):
    """Runs of one model over more cases of the same draw, added up: the cases side by side, the
    figures computed again from them, the binary's audit counts summed."""
    results = []
    for path in paths:
        with open(path) as file:
            results.append(json.load(file))
    first = results[0]
    for other in results[1:]:
        for key in ("model", "seed", "arms", "settings", "bfcl_eval", "reasons", "runtime"):
            if other[key] != first[key]:
                sys.exit(f"bfcl: merge: {key} differs: {first[key]} and {other[key]}")
    merged = dict(first)
    merged["cases"] = [case for result in results for case in result["cases"]]
    merged["drawn"] = {}
    for result in results:
        for category, ids in result["drawn"].items():
            merged["drawn"].setdefault(category, []).extend(ids)
    merged["per_category"] = max(result["per_category"] or 0 for result in results)
    merged["from"] = min(result.get("from", 0) for result in results)
    merged["seconds"] = sum(result["seconds"] for result in results)
    merged["date"] = ", ".join(sorted({result["date"] for result in results}))
    audits = {}
    for result in results:
        for arm, figures in result["totals"]["all"]["arms"].items():
            for key, value in figures.get("audit", {}).items():
                if isinstance(value, int):
                    audits.setdefault(arm, {}).setdefault(key, 0)
                    audits[arm][key] += value
                elif isinstance(value, dict):
                    bucket = audits.setdefault(arm, {}).setdefault(key, {})
                    for finding, count in value.items():
                        bucket[finding] = bucket.get(finding, 0) + count
    merged["not_asked"] = [name for result in results for name in result.get("not_asked", [])]
    categories = [c for c in CATEGORIES if any(case["category"] == c for case in merged["cases"])]
    merged["categories"] = summarise(merged["cases"], merged["arms"], audits, categories)
    merged["totals"] = summarise(merged["cases"], merged["arms"], audits, None)
    tokens = [t for result in results for t in result.get("tokens_per_reason", [])]
    merged["tokens_per_reason"] = tokens
    merged["median_tokens_per_reason"] = statistics.median(tokens) if tokens else None
    print(json.dumps(merged, indent=1))


def bound(path, categories, n, arm="layer", quantile=0.99):
    with open(path) as file:
        result = json.load(file)
    cases = [case for case in result["cases"] if case["category"] in categories.split(",")]
    lost = sum(c["arms"]["direct"]["right"] and not c["arms"][arm]["right"] for c in cases)
    won = sum(c["arms"][arm]["right"] and not c["arms"]["direct"]["right"] for c in cases)
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
    print(json.dumps({"model": result["model"], "categories": categories, "cases": len(cases),
                      "only_direct_right": lost, "only_arm_right": won, "p_lost": round(p_lost, 4),
                      "p_won": round(p_won, 4), "n": int(n),
                      "quantile": quantile, "bound": total}))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        run(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "table":
        table(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "merge":
        merge(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "bound":
        bound(*sys.argv[2:])
    else:
        sys.exit(__doc__)
