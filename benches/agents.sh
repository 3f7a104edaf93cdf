#!/bin/sh
# The stores and event logs of the other agents, at size: `reasons stats` on a generated OpenCode
# database against `sqlite3` selecting the same JSON column, and on a generated Copilot CLI
# `events.jsonl` against `jq` extracting each call's id, name and reason (and `cat`), with peak
# memory. Run from the project's root, on a quiet machine:
#
#     benches/agents.sh                        # 1 GiB each
#     REASONS_BENCH_MB=256 benches/agents.sh   # smaller, quicker
#
# REASONS_BENCH_RUNS (default 3) rounds, best run counts; REASONS_BENCH_DIR where the data goes
# (default target/bench-data/agents, written once per size). Needs python3, sqlite3, jq and GNU
# time; builds the release binary first.
set -eu

mb=${REASONS_BENCH_MB:-1024}
runs=${REASONS_BENCH_RUNS:-3}
dir=${REASONS_BENCH_DIR:-target/bench-data/agents}
bin=target/release/reasons
for tool in python3 sqlite3 jq /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "agents.sh: $tool is needed" >&2; exit 2; }
done
cargo build --release --quiet
mkdir -p "$dir"
db="$dir/opencode-$mb.db"
events="$dir/events-$mb.jsonl"

# Deterministic sessions of a few KB a turn: most bytes in tool output, as in real logs; about
# 30% of the calls without a reason. Prints the number of calls it wrote.
generate() {
    python3 - "$1" "$2" "$3" <<'EOF'
import json, os, random, sqlite3, sys
kind, path, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
target = mb << 20
random.seed(7)
words = "the cart test file list read run check build fix error value path line".split()
def text(n):
    return " ".join(random.choice(words) for _ in range(n // 5))
def arguments(turn, n):
    args = {"command": f"pytest -q tests/test_{turn % 97}.py -k case_{n}", "description": "Run the tests"}
    if random.random() > 0.3:
        args["reason"] = "Check the fix before telling the user it works."
    return args
calls = 0
if kind == "opencode":
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript("""PRAGMA journal_mode = wal; PRAGMA synchronous = off;
      CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
        `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
      CREATE INDEX `part_session_idx` ON `part` (`session_id`);""")
    size, turn, rows = 0, 0, []
    while size < target:
        turn += 1
        session, message, t = f"ses_{turn // 50:08d}", f"msg_{turn:09d}", 1796000000000 + turn * 1000
        parts = [{"type": "step-start", "snapshot": "4f1c"},
                 {"type": "reasoning", "text": text(600), "time": {"start": t, "end": t + 5}}]
        for n in range(random.choice((1, 1, 2))):
            calls += 1
            parts.append({"type": "tool", "tool": "bash", "callID": f"call_{turn}_{n}",
                          "state": {"status": "completed", "input": arguments(turn, n),
                                    "output": text(random.randint(1500, 5000)),
                                    "time": {"start": t + 10, "end": t + 20}}})
        parts.append({"reason": "tool-calls", "type": "step-finish", "tokens": {"input": 2050, "output": 163}})
        for n, part in enumerate(parts):
            data = json.dumps(part, separators=(",", ":"))
            size += len(data) + 80
            rows.append((f"prt_{turn:09d}_{n}", message, session, t, t, data))
        if len(rows) > 20000:
            db.executemany("INSERT INTO part VALUES (?,?,?,?,?,?)", rows)
            rows = []
    db.executemany("INSERT INTO part VALUES (?,?,?,?,?,?)", rows)
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
else:
    with open(path + ".part", "w") as out:
        size, turn, event = 0, 0, 0
        def write(kind, data):
            global size, event
            event += 1
            line = json.dumps({"type": kind, "data": data, "id": f"ev-{event}",
                               "timestamp": "2026-12-01T10:00:00.000Z", "parentId": f"ev-{event - 1}"},
                              separators=(",", ":"))
            out.write(line + "\n")
            size += len(line) + 1
        write("session.start", {"sessionId": "5b0c2f4e-bench", "version": 1, "producer": "copilot-agent"})
        while size < target:
            turn += 1
            write("user.message", {"content": text(200), "attachments": []})
            write("assistant.turn_start", {"turnId": str(turn)})
            requests = []
            for n in range(random.choice((1, 1, 2))):
                calls += 1
                requests.append({"toolCallId": f"call_{turn}_{n}", "name": "bash",
                                 "arguments": arguments(turn, n), "type": "function"})
            write("assistant.message", {"messageId": f"m{turn}", "content": text(300),
                                        "reasoningText": text(600), "toolRequests": requests})
            for request in requests:
                write("tool.execution_start", {"toolCallId": request["toolCallId"],
                                               "toolName": "bash", "arguments": request["arguments"]})
            for request in requests:
                write("tool.execution_complete", {"toolCallId": request["toolCallId"], "success": True,
                                                  "result": {"content": text(random.randint(1500, 5000))}})
            write("assistant.turn_end", {"turnId": str(turn)})
    os.rename(path + ".part", path)
print(calls)
EOF
}

if [ ! -s "$db.calls" ]; then generate opencode "$db" "$mb" >"$db.calls"; fi
if [ ! -s "$events.calls" ]; then generate copilot "$events" "$mb" >"$events.calls"; fi

# The best wall time of `runs` runs of a command, in milliseconds, and its peak memory in KiB.
best() {
    best_ms=; best_kb=
    round=0
    while [ "$round" -lt "$runs" ]; do
        start=$(date +%s%N)
        /usr/bin/time -f %M -o "$dir/time" sh -c "$1" >/dev/null
        ms=$(( ($(date +%s%N) - start) / 1000000 ))
        kb=$(cat "$dir/time")
        if [ -z "$best_ms" ] || [ "$ms" -lt "$best_ms" ]; then best_ms=$ms; fi
        if [ -z "$best_kb" ] || [ "$kb" -gt "$best_kb" ]; then best_kb=$kb; fi
        round=$((round + 1))
    done
}

row() {
    best "$2"
    bytes=$3
    printf '| %s | %s ms | %s MB/s | %s MiB |\n' "$1" "$best_ms" \
        "$(( bytes / 1000 / (best_ms > 0 ? best_ms : 1) ))" "$(( best_kb / 1024 ))"
    eval "$4=$best_ms"
}

check() {
    found=$("$bin" stats --format json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["calls"])')
    want=$(cat "$1.calls")
    [ "$found" = "$want" ] || { echo "agents.sh: $1: reasons found $found calls, the generator wrote $want" >&2; exit 1; }
}
check "$db"
check "$events"

db_bytes=$(stat -c %s "$db")
events_bytes=$(stat -c %s "$events")
cat "$db" "$events" >/dev/null
echo "OpenCode store: $db, $((db_bytes >> 20)) MiB, $(cat "$db.calls") calls; best of $runs"
echo
echo '| command | time | throughput | peak memory |'
echo '| --- | ---: | ---: | ---: |'
row '`sqlite3 -readonly DB "SELECT data FROM part"`' "sqlite3 -readonly '$db' 'SELECT data FROM part'" "$db_bytes" sqlite_ms
row '`reasons stats --format json DB`' "'$bin' stats --format json '$db'" "$db_bytes" reasons_db_ms
echo
echo "reasons / sqlite3: $(python3 -c "print(f'{$reasons_db_ms / $sqlite_ms:.2f}x')")"
echo
echo "Copilot CLI events: $events, $((events_bytes >> 20)) MiB, $(cat "$events.calls") calls; best of $runs"
echo
echo '| command | time | throughput | peak memory |'
echo '| --- | ---: | ---: | ---: |'
row '`cat`' "cat '$events'" "$events_bytes" cat_ms
row '`jq` (id, name, reason of each call)' "jq -c 'select(.type == \"assistant.message\") | .data.toolRequests[]? | [.toolCallId, .name, .arguments.reason]' '$events'" "$events_bytes" jq_ms
row '`reasons stats --format json`, 1 thread' "RAYON_NUM_THREADS=1 '$bin' stats --format json '$events'" "$events_bytes" one_ms
row '`reasons stats --format json`' "'$bin' stats --format json '$events'" "$events_bytes" all_ms
echo
echo "reasons / jq: $(python3 -c "print(f'{$jq_ms / $one_ms:.1f}x faster on 1 thread, {$jq_ms / $all_ms:.1f}x on all')")"
