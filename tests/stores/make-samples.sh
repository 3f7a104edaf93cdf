#!/bin/sh
# Writes the SQLite samples (samples/opencode.db, kilo.db, crush.db, goose.db) from the SQL
# beside this script, with Debian's sqlite3. Their schemas are those of the real stores in
# ../shared/corpus (the columns the reader needs, and some others); the sessions are made up.
# Run from the project's root; the golden records (tests/golden) follow with
# `REASONS_BLESS=1 cargo test --test it samples`.
set -eu
here=$(dirname "$0")
for store in opencode kilo crush goose; do
    rm -f "samples/$store.db"
    sqlite3 "samples/$store.db" "PRAGMA page_size = 1024;" ".read $here/$store.sql" "VACUUM;"
done
