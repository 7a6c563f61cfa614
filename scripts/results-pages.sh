#!/usr/bin/env bash
# The evidence behind docs/results/: results/MACHINE-KIND/SUITE.json.gz
# holds the newest complete run of each suite on each machine kind (a run
# file, `corobench export`). The pages are rebuilt from those files alone:
# they are imported into a scratch database and every page is `corobench
# pages` of it, so any clone can rebuild them and nothing is typed by hand.
#
#   scripts/results-pages.sh            rebuild docs/results/ and results/README.md from results/
#   scripts/results-pages.sh DB|FILE…   first put into results/ the newest complete run of each
#                                       suite on each machine kind among results/ and the
#                                       databases or run files given (another machine's runs)
#   scripts/results-pages.sh --check    rebuild into a scratch folder and fail when a committed
#                                       page differs from what results/ gives (`make test`)
set -euo pipefail
cd "$(dirname "$0")/.."
corobench=${COROBENCH:-target/release/corobench}
suites=(single-core-plaintext go-vs-swoole-io-wait php-fpm-vs-go-json goroutine-fanout-client ants-pool-sweep
    capacity-json scalability-connections scalability-pool static-file-servers memory-per-connection
    scheduler-fairness ants-queue-backlog short-connection-servers idle-goroutines-heap database-pool
    tls-cost tls-handshakes multiplexing head-of-line)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check=false
if [ "${1:-}" = --check ]; then
    check=true
    shift
fi

# Imports every committed run file into the database $1.
import_results() {
    local files=()
    shopt -s nullglob
    files=(results/*/*.json.gz)
    shopt -u nullglob
    if [ ${#files[@]} -gt 0 ]; then
        "$corobench" import "${files[@]}" --db "$1" >/dev/null
    fi
}

# Replaces the run files of results/ with the newest complete run of each
# listed suite on each machine kind in the database $1.
export_newest() {
    "$corobench" claims --db "$1" --format json | python3 -c '
import json, sys
wanted = set(sys.argv[1:])
for suite in json.load(sys.stdin)["suites"]:
    if suite["suite"] in wanted:
        for run in suite["runs"]:
            print(suite["suite"], run["machine"]["slug"], run["run_id"])' "${suites[@]}" > "$work/newest"
    find results -mindepth 2 -name '*.json.gz' -delete
    while read -r suite slug run; do
        mkdir -p "results/$slug"
        "$corobench" export "$run" --db "$1" -o "results/$slug/$suite.json.gz" >/dev/null
    done < "$work/newest"
    find results -mindepth 1 -type d -empty -delete
}

# Writes the pages of the database $1 into the folder $2 and the runs
# table, with what this folder holds, into the file $3.
render() {
    "$corobench" pages "${suites[@]}" --db "$1" -o "$2" --runs-table "$3"
    cat >> "$3" <<'EOF'

## The files

`MACHINE-KIND/SUITE.json.gz` is the run behind the suite's page on that
machine kind: a run file written by `corobench export` (gzip-compressed
JSON, docs/output.md), which `corobench import` stores again exactly.
`scripts/results-pages.sh` rebuilds docs/results/ and this file from these
files alone; `scripts/results-pages.sh DB…` first adds the newest complete
runs of the databases (or run files) given, one per suite and machine kind,
and `make test` fails when a committed page is not what these files give.
EOF
}

mkdir -p results
if [ $# -gt 0 ]; then
    merged="$work/merged.db"
    import_results "$merged"
    "$corobench" import "$@" --db "$merged"
    export_newest "$merged"
fi

import_results "$work/results.db"
if [ ! -f "$work/results.db" ]; then
    echo "results: no run files in results/; add runs with scripts/results-pages.sh DB…" >&2
    exit 1
fi
render "$work/results.db" "$work/pages" "$work/runs.md"

if $check; then
    if ! diff -r docs/results "$work/pages" >"$work/diff" || ! diff results/README.md "$work/runs.md" >>"$work/diff"; then
        head -n 40 "$work/diff" >&2
        echo "results: the committed pages are not what the run files in results/ give;" \
            "rebuild them with scripts/results-pages.sh and commit docs/results/ and results/README.md" >&2
        exit 1
    fi
    echo "results: every page of docs/results/ is what results/ gives ($(du -sh results | cut -f1) of runs)"
    exit 0
fi

rm -rf docs/results
mkdir -p docs/results
cp "$work/pages"/* docs/results/
cp "$work/runs.md" results/README.md
echo "results: pages rebuilt from $(find results -name '*.json.gz' | wc -l) run files ($(du -sh results | cut -f1))" >&2
