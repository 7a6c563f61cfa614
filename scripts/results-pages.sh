#!/usr/bin/env bash
# Renders docs/results/<suite>.md and .html from the newest stored run of
# each shipped suite that carries published claims, and of the capacity and
# scalability suites, writes the index with the count of claims judged
# (scripts/results-index.py), and prints the README's one-line verdicts.
# Every figure comes from `corobench report`; nothing is typed by hand. A
# suite with no run in the databases keeps its page and its verdicts.
#
#   scripts/results-pages.sh [DB…]   (default: ./corobench.db; each suite's
#                                      newest complete run in any of them)
set -euo pipefail
cd "$(dirname "$0")/.."
dbs=("${@:-corobench.db}")
corobench=${COROBENCH:-target/release/corobench}
suites=(single-core-plaintext go-vs-swoole-io-wait php-fpm-vs-go-json goroutine-fanout-client ants-pool-sweep
    capacity-json scalability-connections scalability-pool static-file-servers memory-per-connection
    scheduler-fairness ants-queue-backlog short-connection-servers idle-goroutines-heap database-pool)
mkdir -p docs/results
index=docs/results/README.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for suite in "${suites[@]}"; do
    run=""
    for db in "${dbs[@]}"; do
        run=$("$corobench" runs --db "$db" --json | python3 -c '
import json, sys
suite = sys.argv[1]
runs = [r for r in json.load(sys.stdin) if r["suite"] == suite and r["status"] == "complete"]
print(runs[0]["id"] if runs else "")' "$suite")
        [ -n "$run" ] && break
    done
    if [ -z "$run" ]; then
        if [ -f "docs/results/$suite.md" ] && grep -q "^| \[$suite\](" "$index"; then
            echo "results: no complete run of $suite in ${dbs[*]}: its page and verdicts are kept" >&2
            grep "^| \[$suite\](" "$index" | head -n1 > "$work/$suite.row"
        else
            echo "results: no complete run of $suite in ${dbs[*]}; run: corobench run suites/$suite.toml" >&2
        fi
        continue
    fi
    "$corobench" report "$run" --db "$db" --format md -o "docs/results/$suite.md"
    "$corobench" report "$run" --db "$db" --format html -o "docs/results/$suite.html"
    "$corobench" report "$run" --db "$db" --format json > "$work/$suite.json"
done
python3 scripts/results-index.py "$work" "${suites[@]}"
