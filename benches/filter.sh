#!/usr/bin/env bash
# Measures the stream commands; not part of the test suite (tests never time anything).
#
#   benches/filter.sh [SIZE_MB] [ROUND_TRIPS]
#
# 1. `reasons filter` throughput on a generated MCP capture (both directions of a session:
#    listings, tools/call requests carrying reasons, progress and log notifications, results),
#    in MB/s, against `cat` on the same file. Best of three runs each.
# 2. The round-trip latency `reasons proxy` adds: ROUND_TRIPS sequential tools/call requests to
#    the test fixture server directly, then through the proxy.
set -euo pipefail
cd "$(dirname "$0")/.."

size_mb="${1:-100}"
round_trips="${2:-5000}"

cargo build --release --quiet --bin reasons --example mcp_fixture --example mcp_roundtrip
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
reasons="$target_dir/release/reasons"
fixture="$target_dir/release/examples/mcp_fixture"
roundtrip="$target_dir/release/examples/mcp_roundtrip"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
capture="$work/capture.jsonl"

python3 - "$capture" "$size_mb" <<'PY'
import json, random, sys

path, size_mb = sys.argv[1], int(sys.argv[2])
random.seed(7)
limit = size_mb * 1_000_000
tools = [{"name": f"tool_{n}", "description": f"Does thing {n}.",
          "inputSchema": {"type": "object",
                          "properties": {"path": {"type": "string"}, "content": {"type": "string"},
                                         "limit": {"type": "integer"}},
                          "required": ["path"]}} for n in range(20)]
words = "the quick brown fox jumps over a lazy dog while agents call tools for reasons".split()

def text(n):
    return " ".join(random.choice(words) for _ in range(n))

with open(path, "w") as out:
    def put(message):
        out.write(json.dumps(message, separators=(",", ":")) + "\n")
    put({"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"}}})
    put({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                               "serverInfo": {"name": "bench", "version": "1"}}})
    put({"jsonrpc": "2.0", "method": "notifications/initialized"})
    request = 1
    while out.tell() < limit:
        if request % 5000 == 1:
            put({"jsonrpc": "2.0", "id": request, "method": "tools/list"})
            put({"jsonrpc": "2.0", "id": request, "result": {"tools": tools}})
            request += 1
        tool = random.choice(tools)["name"]
        put({"jsonrpc": "2.0", "id": request, "method": "tools/call",
             "params": {"name": tool, "arguments": {"path": f"src/file_{request}.rs",
                                                    "content": text(random.randint(5, 60)),
                                                    "reason": text(random.randint(5, 15))}}})
        for step in range(2):
            put({"jsonrpc": "2.0", "method": "notifications/progress",
                 "params": {"progressToken": request, "progress": step + 1, "total": 2}})
        if request % 7 == 0:
            put({"jsonrpc": "2.0", "method": "notifications/message",
                 "params": {"level": "info", "data": text(12)}})
        put({"jsonrpc": "2.0", "id": request,
             "result": {"content": [{"type": "text", "text": text(random.randint(20, 400))}],
                        "isError": False}})
        request += 1
PY

bytes=$(stat -c %s "$capture")
lines=$(wc -l < "$capture")

# Best wall-clock seconds of three runs of a shell command.
best_of_three() {
    python3 - "$1" <<'PY'
import subprocess, sys, time
best = None
for _ in range(3):
    started = time.perf_counter()
    subprocess.run(sys.argv[1], shell=True, check=True)
    elapsed = time.perf_counter() - started
    best = elapsed if best is None else min(best, elapsed)
print(f"{best:.4f}")
PY
}

cat_s=$(best_of_three "cat < '$capture' > /dev/null")
filter_s=$(best_of_three "'$reasons' filter --reasons-log '$work/reasons.jsonl' < '$capture' > '$work/out.jsonl'")
cat_pipe_s=$(best_of_three "cat < '$capture' > '$work/cat.jsonl'")

stripped=$(($(wc -l < "$work/reasons.jsonl") / 3))
python3 - "$bytes" "$lines" "$cat_s" "$cat_pipe_s" "$filter_s" "$stripped" <<'PY'
import sys
size, lines, cat_s, cat_file_s, filter_s, stripped = sys.argv[1:]
size, cat_s, cat_file_s, filter_s = int(size), float(cat_s), float(cat_file_s), float(filter_s)
mb = size / 1e6
print(f"capture: {mb:.1f} MB, {int(lines)} lines, {stripped} reasons stripped per run")
print(f"cat > /dev/null:    {mb / cat_s:9.1f} MB/s")
print(f"cat > file:         {mb / cat_file_s:9.1f} MB/s")
print(f"reasons filter:     {mb / filter_s:9.1f} MB/s  ({filter_s / cat_file_s:.1f}x the time of cat > file)")
PY

echo "round trips, fixture directly:"
"$roundtrip" "$round_trips" -- "$fixture"
echo "round trips, through reasons proxy:"
"$roundtrip" "$round_trips" -- "$reasons" proxy --reasons-log /dev/null -- "$fixture"
