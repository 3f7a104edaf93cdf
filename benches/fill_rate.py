"""How often a real model fills in `reason` behind `reasons gateway`: run by benches/fill-rate.

usage: fill_rate.py REASONS LLAMA_PYTHON MODEL [--tasks N] [--second N] [--threads N]

Starts llama.cpp's server with MODEL (tests/it/python/llama_server.py) and two gateways in front
of it, one restoring the history's reasons and one with `--no-restore`. Sends each task of TASKS
(one user request; tools for the shell, reading, editing, searching and three MCP-style tools) at
temperature 0 with a fixed seed, `tool_choice: "required"`, the assistant's turn started with
Qwen's `<tool_call>` tag. Then, for the first N tasks whose call carried a reason, the next turn
(the call as the client got it, a result, one more call asked for) through each gateway. Nothing
in any prompt mentions reasons. Prints one JSON object: per tool, calls, with a reason, blank,
flagged by `check --lint` (and how many of those restate or describe the call, or copy the
parameter's description); the next turn's fill rate with and without restoration; the median
number of tokens a reason costs; the runtime's version.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def schema(properties, required):
    return {"type": "object", "properties": properties, "required": required}


def tool(name, description, properties, required):
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": schema(properties, required)}}


TEXT = {"type": "string"}
TOOLS = [
    tool("bash", "Run a shell command in the project's folder and return its output.",
         {"command": TEXT}, ["command"]),
    tool("read_file", "Read a text file of the project.", {"path": TEXT}, ["path"]),
    tool("edit_file", "Replace one exact text in a file with another.",
         {"path": TEXT, "old_text": TEXT, "new_text": TEXT}, ["path", "old_text", "new_text"]),
    tool("grep", "Search the project's files for a regular expression.",
         {"pattern": TEXT, "path": TEXT}, ["pattern"]),
    tool("github__create_issue", "Open an issue in a GitHub repository (MCP server github).",
         {"repo": TEXT, "title": TEXT, "body": TEXT}, ["repo", "title"]),
    tool("postgres__query", "Run a read-only SQL query on the app's database (MCP server postgres).",
         {"sql": TEXT}, ["sql"]),
    tool("fetch__get", "Fetch a web page and return it as text (MCP server fetch).",
         {"url": TEXT}, ["url"]),
]
SYSTEM = "You are a coding agent working in a Rust web service's repository. Act with the tools."

# A fixed task set: what a user asks an agent, in the user's words. The tool a task suits is
# written beside it for the reader; the count per tool is of the calls the model made.
TASKS = [
    ("shell", "Run the tests."), ("shell", "Build the project in release mode."),
    ("shell", "What changed since the last commit?"), ("shell", "Format the code."),
    ("shell", "Show the last five commits."), ("shell", "How big is the target folder?"),
    ("shell", "Run clippy and treat warnings as errors."), ("shell", "Which branch am I on?"),
    ("shell", "Install the dependencies and update the lock file."),
    ("shell", "Start the server on port 8080 in the background."),
    ("read", "Show me Cargo.toml."), ("read", "What does src/main.rs do?"),
    ("read", "Open the README."), ("read", "Read the CI workflow in .github/workflows/ci.yml."),
    ("read", "Look at the config in config/default.toml."), ("read", "Print src/routes/users.rs."),
    ("read", "What is in the CHANGELOG?"), ("read", "Read the migration migrations/001_init.sql."),
    ("edit", "In src/main.rs, change the port 3000 to 8080."),
    ("edit", "Rename the function get_user to find_user in src/routes/users.rs."),
    ("edit", "Fix the typo 'recieve' to 'receive' in src/mail.rs."),
    ("edit", "Bump the version in Cargo.toml from 0.3.1 to 0.3.2."),
    ("edit", "In config/default.toml set log_level to debug."),
    ("edit", "Replace unwrap() with expect(\"user id\") in src/routes/users.rs."),
    ("edit", "Make the timeout 30 seconds instead of 10 in src/client.rs."),
    ("edit", "Add serde = \"1\" under [dependencies] in Cargo.toml."),
    ("search", "Where is parse_config defined?"), ("search", "Find every TODO in src."),
    ("search", "Which files use tokio::spawn?"), ("search", "Find where the port number is read."),
    ("search", "Search for unwrap() calls in the routes."),
    ("search", "Where do we log errors with eprintln?"),
    ("search", "Find the tests that mention the database."),
    ("search", "Look for hard-coded passwords."),
    ("mcp", "Open an issue in acme/web titled 'Login fails with empty password'."),
    ("mcp", "How many users signed up last week? Ask the database."),
    ("mcp", "Fetch https://docs.rs/axum/latest/axum/ and summarise the routing section."),
    ("mcp", "File a GitHub issue in acme/web about the flaky test in tests/api.rs."),
    ("mcp", "Count the orders with status 'failed' in the database."),
    ("mcp", "Get the release notes at https://github.com/tokio-rs/tokio/releases."),
]


def in_turn(tasks):
    """The tasks taken in turn from each kind, so that the first N (--tasks N) span every kind."""
    kinds = {}
    for task in tasks:
        kinds.setdefault(task[0], []).append(task)
    queues, turned = list(kinds.values()), []
    while any(queues):
        for queue in queues:
            if queue:
                turned.append(queue.pop(0))
    return turned


TASKS = in_turn(TASKS)
CALL_STARTED = {"role": "assistant", "content": '<tool_call>\n{"name": "'}
SETTINGS = {"model": "local", "tools": TOOLS, "tool_choice": "required", "parallel_tool_calls": False,
            "temperature": 0, "seed": 42, "max_tokens": 160}
RESULT = "done (exit 0)"


def post(url, body, timeout=600):
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.load(answer)


def listening(stream, what):
    """The address in the first line of `stream` that says where `what` listens."""
    for line in stream:
        if "listening on http://" in line:
            return "http://" + line.split("listening on http://")[1].split(",")[0].split()[0]
    sys.exit(f"fill_rate: {what} did not start")


def gateway(reasons, upstream, log, *extra):
    process = subprocess.Popen(
        [reasons, "gateway", "--listen", "127.0.0.1:0", "--upstream", upstream, "--reasons-log", log, *extra],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return process, listening(process.stderr, "reasons gateway")


def logged(log):
    if not os.path.exists(log):
        return {}
    with open(log) as lines:
        return {entry["call_id"]: entry["reason"] for entry in map(json.loads, lines)}


def main():
    reasons, llama_python, model = sys.argv[1:4]
    options = dict(zip(sys.argv[4::2], sys.argv[5::2]))
    tasks = TASKS[: int(options.get("--tasks", len(TASKS)))]
    second = int(options.get("--second", 10))
    threads = options.get("--threads", "1")
    work = tempfile.mkdtemp(prefix="fill-rate-")
    llama = subprocess.Popen(
        [llama_python, os.path.join(ROOT, "tests/it/python/llama_server.py"), model, "4096", threads],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(os.path.join(work, "llama.log"), "w"), text=True)
    llama_url = listening(llama.stdout, "llama.cpp's server")
    restoring_log, plain_log = os.path.join(work, "restoring.jsonl"), os.path.join(work, "plain.jsonl")
    restoring, restoring_url = gateway(reasons, llama_url, restoring_log)
    plain, plain_url = gateway(reasons, llama_url, plain_log, "--no-restore")
    session_path = os.path.join(work, "session.jsonl")
    session = open(session_path, "w")
    started = time.time()
    turns, failures = [], 0
    for kind, task in tasks:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
        try:
            answer = post(restoring_url + "/v1/chat/completions", dict(SETTINGS, messages=messages + [CALL_STARTED]))
        except Exception as error:  # a server error is counted, as a user would meet it
            failures += 1
            print(f"fill_rate: {task!r}: {error}", file=sys.stderr)
            continue
        session.write(json.dumps(answer) + "\n")
        calls = answer["choices"][0]["message"].get("tool_calls") or []
        turns.append((messages, calls))
        print(f"fill_rate: {kind}: {[call['function']['name'] for call in calls]}", file=sys.stderr)
    session.close()
    first_reasons = logged(restoring_log)

    # The next turn, through each gateway, after calls that carried a reason.
    next_turn = {"restored": [0, 0], "not_restored": [0, 0]}
    with_reason = [(messages, calls) for messages, calls in turns
                   if calls and all(call["id"] in first_reasons for call in calls)][:second]
    for messages, calls in with_reason:
        history = messages + [{"role": "assistant", "content": "", "tool_calls": calls}]
        history += [{"role": "tool", "tool_call_id": call["id"], "content": RESULT} for call in calls]
        history.append({"role": "user", "content": "Good. What is the next step? Do it."})
        for way, url, log in (("restored", restoring_url, restoring_log), ("not_restored", plain_url, plain_log)):
            try:
                answer = post(url + "/v1/chat/completions", dict(SETTINGS, messages=history + [CALL_STARTED]))
            except Exception as error:
                failures += 1
                print(f"fill_rate: next turn {way}: {error}", file=sys.stderr)
                continue
            got = logged(log)
            for call in answer["choices"][0]["message"].get("tool_calls") or []:
                next_turn[way][0] += 1
                next_turn[way][1] += bool(got.get(call["id"], "").strip())

    # Per tool, from the session the client recorded with the reasons joined from the log.
    stats = json.loads(subprocess.run(
        [reasons, "stats", "--lint", "--format", "json", "--reasons-log", restoring_log, session_path],
        capture_output=True, text=True, check=True).stdout)
    findings = subprocess.run(
        [reasons, "check", "--lint", "--format", "jsonl", "--reasons-log", restoring_log, session_path],
        capture_output=True, text=True).stdout
    restating = {}
    for record in map(json.loads, findings.splitlines()):
        finding = record["finding"]
        if any(kind in finding for kind in ("restates", "describes", "parameter's description")):
            restating.setdefault(record["tool"], set()).add(record["call_id"])
    tools = {}
    for group in stats["groups"]:
        tools[group["key"]] = {"calls": group["calls"], "with_reason": group["present"], "blank": group["blank"],
                               "lint_flagged": group.get("lint_flagged", 0),
                               "restates_or_describes": len(restating.get(group["key"], ()))}
    costs = []
    for reason in first_reasons.values():
        fragment = ', "reason": ' + json.dumps(reason)
        costs.append(len(post(llama_url + "/tokenize", {"content": fragment})["tokens"]))
    props = json.load(urllib.request.urlopen(llama_url + "/props"))
    for process in (restoring, plain):
        process.kill()
    llama.kill()
    print(json.dumps({
        "model": os.path.basename(model), "tasks": len(tasks), "failed_requests": failures,
        "tools": tools, "totals": {"calls": stats["totals"]["calls"], "with_reason": stats["totals"]["present"],
                                   "blank": stats["totals"]["blank"],
                                   "lint_flagged": stats["totals"].get("lint_flagged", 0),
                                   "restates_or_describes": sum(len(ids) for ids in restating.values())},
        "next_turn": {way: {"calls": calls, "with_reason": filled} for way, (calls, filled) in next_turn.items()},
        "median_reason_tokens": statistics.median(costs) if costs else None,
        "runtime": "xllamacpp " + subprocess.run(
            [llama_python, "-c", "import importlib.metadata as m; print(m.version('xllamacpp'))"],
            capture_output=True, text=True).stdout.strip(),
        "build": props.get("build_info"), "threads": int(threads), "seconds": round(time.time() - started),
        "reasons": sorted(first_reasons.values()),
    }, indent=1))


if __name__ == "__main__":
    main()
