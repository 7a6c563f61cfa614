#!/usr/bin/env bash
# Regenerates the benchstat reference outputs that
# crates/corobench-stats/tests/benchstat_fixtures.rs compares against.
#
# Each folder under crates/corobench-stats/tests/fixtures/benchstat/ holds two
# inputs in Go benchmark format, old.txt (the baseline) and new.txt. For each,
# this writes benchstat's text table (benchstat.txt), its CSV table
# (benchstat.csv) and the warnings CSV mode sends to stderr
# (benchstat-warnings.txt), and records the benchstat version in VERSION.
#
# Needs benchstat on PATH or in $BENCHSTAT; it is published as the Go module
# golang.org/x/perf/cmd/benchstat (go install golang.org/x/perf/cmd/benchstat@latest).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fixtures="$root/crates/corobench-stats/tests/fixtures/benchstat"
benchstat="${BENCHSTAT:-$(command -v benchstat || echo "$(go env GOPATH 2>/dev/null)/bin/benchstat")}"

if [[ ! -x "$benchstat" ]]; then
    echo "benchstat not found: install it (see the comment at the top of $0) or set BENCHSTAT" >&2
    exit 2
fi

go version -m "$benchstat" | awk '$1 == "mod" || $1 == "dep" { print $2, $3 }' >"$fixtures/VERSION"

for set in "$fixtures"/*/; do
    if [[ ! -f "$set/old.txt" || ! -f "$set/new.txt" ]]; then
        echo "skipping $set: it needs old.txt and new.txt" >&2
        continue
    fi
    # Run inside the folder so the column labels are the bare file names.
    (
        cd "$set"
        "$benchstat" old.txt new.txt >benchstat.txt
        "$benchstat" -format csv old.txt new.txt >benchstat.csv 2>benchstat-warnings.txt
    )
    echo "wrote ${set#"$root"/}benchstat.{txt,csv} and benchstat-warnings.txt"
done
