#!/usr/bin/env bash
# `reasons report` against `reasons extract` on the same log of 100,000 calls: the page's size per
# call, and how long each takes (best of RUNS). Not a timed test: figures for the README.
#
#   benches/report.sh            # 100,000 calls, best of 5
#   CALLS=20000 RUNS=3 benches/report.sh
#   OPEN=1 benches/report.sh     # and how long headless Chromium takes to open the page
#   AGAINST=path/to/reasons OPEN=1 benches/report.sh   # the same for another build, side by side
#
# OPEN times the page in Debian's chromium, driven by the playwright of the browser tests
# (`target/real-parts/browser-venv`): to its load event, and to the mark its script leaves once
# its filters ran (`data-ready`).
set -euo pipefail
cd "$(dirname "$0")/.."

calls=${CALLS:-100000}
runs=${RUNS:-5}
dir=target/bench-data
mkdir -p "$dir"
log="$dir/report-$calls.jsonl"
page="$dir/report-$calls.html"

cargo build --release --quiet
reasons=target/release/reasons

# A Claude-Code-style transcript, as tests/it/report/browser.rs writes it: sessions of 1,000 calls over
# three days, shell, read, edit, search and todo calls, a third of them without a reason.
if ! [ -s "$log" ]; then
    awk -v calls="$calls" 'BEGIN {
        for (at = 0; at < calls; at++) {
            kind = at % 5; file = "/home/dev/project/src/module_" (at % 97) ".rs"
            if (kind == 0) { tool = "Bash"; input = "{\"command\":\"cargo test -q --test it case_" at "\",\"description\":\"Run one test\"" }
            else if (kind == 1) { tool = "Read"; input = "{\"file_path\":\"" file "\"" }
            else if (kind == 2) { tool = "Edit"; input = "{\"file_path\":\"" file "\",\"old_string\":\"let limit = " at ";\",\"new_string\":\"let limit = " (at + 1) ";\"" }
            else if (kind == 3) { tool = "Grep"; input = "{\"pattern\":\"fn case_" at "\",\"path\":\"src\"" }
            else { tool = "TodoWrite"; input = "{\"todos\":[{\"content\":\"Check the limits\",\"status\":\"in_progress\"}]" }
            if (at % 3 != 0) input = input ",\"reason\":\"Step " at ": see what the change needs next.\""
            input = input "}"
            printf "{\"type\":\"assistant\",\"sessionId\":\"session-%04d\",\"timestamp\":\"2026-11-%02dT09:%02d:%02d.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_%08d\",\"name\":\"%s\",\"input\":%s}]}}\n",
                int(at / 1000), 28 + int(at * 3 / calls), int(at / 60) % 60, at % 60, at, tool, input
        }
    }' > "$log"
fi

# The best wall-clock time of `runs` runs of a command, in milliseconds.
best() {
    local best_ms=""
    for _ in $(seq "$runs"); do
        local start end ms
        start=$(date +%s%N)
        "$@" > /dev/null
        end=$(date +%s%N)
        ms=$(( (end - start) / 1000000 ))
        if [ -z "$best_ms" ] || [ "$ms" -lt "$best_ms" ]; then best_ms=$ms; fi
    done
    echo "$best_ms"
}

# Seconds to the load event and to the script's mark, for each page given.
open_pages() {
    target/real-parts/browser-venv/bin/python - "$@" <<'PYTHON'
import sys, tempfile, time
from playwright.sync_api import sync_playwright
with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
    context = playwright.chromium.launch_persistent_context(
        profile, executable_path="/usr/bin/chromium", headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
    for page_file in sys.argv[1:]:
        page = context.new_page()
        started = time.monotonic()
        page.goto("file://" + page_file, wait_until="load", timeout=600_000)
        loaded = time.monotonic() - started
        page.wait_for_selector("html[data-ready]", state="attached", timeout=600_000)
        print(f"{loaded:.2f} {time.monotonic() - started:.2f}")
        page.close()
PYTHON
}

found=$("$reasons" extract --format jsonl "$log" | wc -l)
[ "$found" -eq "$calls" ] || { echo "extract found $found calls, not $calls" >&2; exit 1; }

extract_ms=$(best "$reasons" extract --format jsonl --arguments "$log")
extract_plain_ms=$(best "$reasons" extract --format jsonl "$log")
report_ms=$(best "$reasons" report "$log" -o "$page")
size=$(stat -c %s "$page")
if [ -n "${AGAINST:-}" ]; then
    against_page="$dir/report-$calls-against.html"
    against_ms=$(best "$AGAINST" report "$log" -o "$against_page")
    against_size=$(stat -c %s "$against_page")
fi
log_size=$(stat -c %s "$log")

awk -v calls="$calls" -v runs="$runs" -v log_size="$log_size" -v size="$size" \
    -v plain="$extract_plain_ms" -v args="$extract_ms" -v report="$report_ms" 'BEGIN {
    printf "%d calls, a log of %.1f MB (best of %d runs):\n", calls, log_size / 1e6, runs
    printf "  reasons extract --format jsonl              %6d ms\n", plain
    printf "  reasons extract --format jsonl --arguments  %6d ms\n", args
    printf "  reasons report -o page.html                 %6d ms  (%.2fx extract --arguments)\n", report, report / args
    printf "  the page: %.1f MB, %d bytes a call\n", size / 1e6, size / calls
}'
if [ -n "${AGAINST:-}" ]; then
    awk -v calls="$calls" -v size="$against_size" -v report="$against_ms" -v args="$extract_ms" 'BEGIN {
        printf "  against %s:\n", ENVIRON["AGAINST"]
        printf "  reasons report -o page.html                 %6d ms  (%.2fx extract --arguments)\n", report, report / args
        printf "  the page: %.1f MB, %d bytes a call\n", size / 1e6, size / calls
    }'
fi
if [ -n "${OPEN:-}" ]; then
    pages=("$PWD/$page")
    [ -n "${AGAINST:-}" ] && pages+=("$PWD/$against_page")
    # Alternately, every other round in the other order.
    for round in $(seq "$runs"); do
        if [ $((round % 2)) -eq 0 ] && [ ${#pages[@]} -gt 1 ]; then order=("${pages[1]}" "${pages[0]}"); else order=("${pages[@]}"); fi
        paste -d' ' <(printf '%s\n' "${order[@]}") <(open_pages "${order[@]}") |
            awk '{ printf "  opened in chromium: load event %6.2f s, ready %6.2f s  %s\n", $2, $3, $1 }'
    done
fi
