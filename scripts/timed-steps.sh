#!/usr/bin/env bash
# Runs `make STEP` for each STEP in order, stopping at the first that
# fails, and prints how long each took, so every `make test` (and CI) shows
# where its time goes.
#
#   scripts/timed-steps.sh STEP...
set -uo pipefail
cd "$(dirname "$0")/.."

summary=()
for step in "$@"; do
    started=$(date +%s)
    make --no-print-directory "$step"
    status=$?
    seconds=$(( $(date +%s) - started ))
    summary+=("$(printf '%-14s %5d s' "$step" "$seconds")")
    if [ "$status" -ne 0 ]; then
        echo "make $step failed (exit $status) after $seconds s" >&2
        printf '%s\n' "== time per step" "${summary[@]}" >&2
        exit "$status"
    fi
done
printf '%s\n' "== time per step" "${summary[@]}"
