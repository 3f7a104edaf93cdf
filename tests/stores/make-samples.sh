#!/bin/sh
# Writes the SQLite samples (samples/opencode.db, kilo.db, crush.db, goose.db, hermes.db,
# openclaw.db) from the SQL beside this script, with Debian's sqlite3 (and zstd, for OpenClaw's
# compressed events). Their schemas are those of the real stores in ../shared/corpus, or in the
# agents' own code (the columns the reader needs, and some others); the sessions are made up.
# Run from the project's root; the golden records (tests/golden) follow with
# `REASONS_BLESS=1 cargo test --test it samples`.
set -eu
here=$(dirname "$0")
for store in opencode kilo crush goose hermes openclaw; do
    rm -f "samples/$store.db"
    sqlite3 "samples/$store.db" "PRAGMA page_size = 1024;" ".read $here/$store.sql"
done
# OpenClaw keeps an event of 1 KiB or more as a zstd frame (level 1, with a checksum), its
# `event_json` null, when that saves a tenth: so does the sample.
event=$(mktemp)
trap 'rm -f "$event" "$event.zst"' EXIT
for rowid in $(sqlite3 samples/openclaw.db \
    "SELECT rowid FROM transcript_events WHERE event_utf8_bytes >= 1024"); do
    sqlite3 samples/openclaw.db \
        "SELECT writefile('$event', event_json) FROM transcript_events WHERE rowid = $rowid" >/dev/null
    zstd -q -1 --check -f "$event" -o "$event.zst"
    sqlite3 samples/openclaw.db "UPDATE transcript_events SET event_json = NULL,
        event_zstd = readfile('$event.zst'),
        navigation_json = '{\"version\":1,\"report\":{\"kind\":\"canonical\"},\"navigation\":{},\"reset\":{},\"model\":{},\"modelBytes\":0,\"modelWithoutCheckpointBytes\":0,\"withoutCustomDataBytes\":0}'
        WHERE rowid = $rowid"
done
for store in opencode kilo crush goose hermes openclaw; do
    sqlite3 "samples/$store.db" "VACUUM;"
done
