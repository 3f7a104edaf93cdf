#!/usr/bin/env bash
# Measures `reasons watch` and the hooks; not part of the test suite (tests never time anything).
#
#   benches/watch.sh [LOG_MB] [CALLS] [RECORDS]
#
# On a generated reasons log of LOG_MB (default 1024, i.e. 1 GB):
# 1. the hooks' answer time, process start included: `reasons hook codex` for a call logged near
#    the end, and for an id the log does not hold (the most it ever reads), median of 50 runs;
# 2. `reasons watch --plain`'s start: from spawning it to its last screenful (the last 10 calls)
#    written, median of 10 runs;
# 3. the delay from a line appended to the log to its call written by `watch --plain`, median
#    and 99th percentile over CALLS (default 1000) calls appended 5 ms apart;
# 4. watch's resident memory following RECORDS (default 1,000,000) records appended as fast as
#    Python writes them: at 10% and at 100% of them.
set -euo pipefail
cd "$(dirname "$0")/.."

log_mb="${1:-1024}"
calls="${2:-1000}"
records="${3:-1000000}"

cargo build --release --quiet --bin reasons
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
reasons="$target_dir/release/reasons"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "$reasons" "$work" "$log_mb" "$calls" "$records" <<'PY'
import json, os, statistics, subprocess, sys, threading, time

reasons, work, log_mb, calls, records = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
big = os.path.join(work, "big.jsonl")

def record(n, reason=None):
    return json.dumps({"time": "2026-12-01T10:11:12.000Z", "via": "gateway", "tool": "Bash",
        "call_id": f"toolu_{n:012d}", "reason": reason or f"Check the build step {n} before the release",
        "touched": f"cargo test -p crate{n % 97} -- --nocapture", "session": "3f2a9c1b-0000-4000-8000-000000000000"}) + "\n"

with open(big, "w") as out:
    written, n, chunk = 0, 0, []
    while written < log_mb << 20:
        line = record(n)
        chunk.append(line)
        written += len(line)
        n += 1
        if len(chunk) == 10000:
            out.write("".join(chunk)); chunk = []
    out.write("".join(chunk))
last = n - 1
print(f"reasons log: {os.path.getsize(big) / (1 << 20):.0f} MiB, {n:,} records")

def hook(call_id):
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
        "tool_use_id": call_id, "session_id": "s", "cwd": "/", "model": "m", "permission_mode": "default",
        "transcript_path": None, "turn_id": "t"}).encode()
    times = []
    for _ in range(50):
        start = time.perf_counter()
        out = subprocess.run([reasons, "hook", "codex", "--reasons-log", big], input=payload, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, min(times) * 1000, out.stdout.decode().strip()

starts = []
for _ in range(50):
    start = time.perf_counter()
    subprocess.run([reasons, "--version"], capture_output=True)
    starts.append(time.perf_counter() - start)
print(f"reasons --version (process start alone, for comparison): median {statistics.median(starts) * 1000:.2f} ms, best {min(starts) * 1000:.2f} ms")
for label, call_id in [("a call logged just now", f"toolu_{last - 3:012d}"), ("an id not in the log", "toolu_missing")]:
    ms, best, said = hook(call_id)
    print(f"hook codex, {label}: median {ms:.2f} ms, best {best:.2f} ms ({said[:60] or 'nothing printed'})")

def first_lines(path, count):
    start = time.perf_counter()
    child = subprocess.Popen([reasons, "watch", "--plain", "--reasons-log", path],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for _ in range(count):
        child.stdout.readline()
    elapsed = time.perf_counter() - start
    child.kill(); child.wait()
    return elapsed

starts = [first_lines(big, 10) for _ in range(10)]
print(f"watch --plain start on the log, to its last 10 calls written: median {statistics.median(starts) * 1000:.1f} ms")

# Latency: lines appended one at a time, each carrying its id; the time it is read back.
live = os.path.join(work, "live.jsonl")
open(live, "w").close()
child = subprocess.Popen([reasons, "watch", "--plain", "--reasons-log", live],
    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
written_at = {}
seen_at = {}
def reader():
    for line in child.stdout:
        # The touched text holds the number: `cargo test -p crateN …` is not unique, the reason is.
        text = line.decode()
        number = int(text.split("step ")[1].split(" ")[0])
        seen_at[number] = time.perf_counter()
        if len(seen_at) == calls:
            return
thread = threading.Thread(target=reader); thread.start()
time.sleep(0.3)
with open(live, "a") as out:
    for n in range(calls):
        line = record(n)
        written_at[n] = time.perf_counter()
        out.write(line); out.flush()
        time.sleep(0.005)
thread.join(timeout=30)
child.kill(); child.wait()
delays = sorted((seen_at[n] - written_at[n]) * 1000 for n in seen_at)
print(f"watch --plain, line appended to call written: {len(delays)} of {calls} calls, median {statistics.median(delays):.1f} ms, "
      f"p99 {delays[int(len(delays) * 0.99) - 1]:.1f} ms")

# Memory: RECORDS records followed.
flood = os.path.join(work, "flood.jsonl")
open(flood, "w").close()
child = subprocess.Popen([reasons, "watch", "--plain", "--reasons-log", flood],
    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
count = [0]
def drain():
    for _ in child.stdout:
        count[0] += 1
threading.Thread(target=drain, daemon=True).start()
# `watch` starts from the last lines of a log: what is written before it has opened the log would
# not all be shown. One record first, shown, then the flood.
with open(flood, "a") as out:
    out.write(record(records))
while count[0] < 1:
    time.sleep(0.01)
count[0] = 0
def rss():
    with open(f"/proc/{child.pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024
marks = {}
with open(flood, "a") as out:
    for n in range(records):
        out.write(record(n))
        if (n + 1) % (records // 10) == 0:
            out.flush()
            while count[0] < n + 1:
                time.sleep(0.01)
            marks[n + 1] = rss()
child.kill(); child.wait()
print("watch --plain resident memory following the records: " +
      ", ".join(f"{k:,}: {v:.1f} MiB" for k, v in marks.items()))
PY
