#!/usr/bin/env bash
# What the live view costs the load generator. `corobench load` against nginx
# (one worker pinned to CPU 0), the generator pinned to CPU 1, one thread and
# 50 connections; each round runs it once under a terminal with the live view
# (a 120 × 40 pseudo-terminal made by script(1)) and once without (stdout a
# file: plain output), alternating so that drift hits both. Two figures per
# run: the generator threads' CPU per request (`generator.cpu_us_per_request`
# of the JSON report: what the view's publication, four copies a second per
# thread, could add to) and the whole process's (corobench's user + system
# time ÷ responses, which also counts the view's drawing thread).
#   bench/live-view-cost.sh [ROUNDS] [SECONDS]
# COROBENCH=/path/to/corobench measures that binary instead of this tree's
# release build.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-10}
source bench/lib/nginx.sh
bench_setup live-view-cost
trap stop_nginx EXIT
start_nginx "$out/nginx" 0

# One load run: prints "<mode> <round> <req/s> <generator µs/req> <process µs/req>".
run_one() {
    local mode=$1 round=$2 log="$out/$1-r$2" load
    load=(taskset -c 1 /usr/bin/time -f "%U %S" -o "$log.time" "$corobench" load -t1 -c50
        -d "${seconds}s" --warmup 1s --json "$NGINX_URL")
    if [ "$mode" = view ]; then
        TERM=xterm-256color script -qec "stty cols 120 rows 40; $(printf '%q ' "${load[@]}")" \
            /dev/null > "$log.out"
    else
        "${load[@]}" > "$log.out" 2> "$log.err"
    fi
    python3 - "$mode" "$round" "$log" <<'PY'
import json, sys
mode, rnd, log = sys.argv[1:4]
text = open(log + ".out", errors="replace").read().replace("\r\n", "\n")
left = text.rfind("\x1b[?1049l")
if mode == "view" and left < 0:
    sys.exit(f"the live view did not show in {log}.out")
rest = text[left:] if left >= 0 else text
report, _ = json.JSONDecoder().raw_decode(rest[rest.index("{"):])
user, system = open(log + ".time").read().split()[-2:]
process = (float(user) + float(system)) * 1e6 / report["requests"]
print(f"{mode} {rnd} {report['requests_per_s']:.0f} "
      f"{report['generator']['cpu_us_per_request']:.3f} {process:.3f}")
PY
}

results=$out/results.txt
: > "$results"
echo "nginx on CPU 0 ($NGINX_URL), the generator on CPU 1; $rounds rounds × ${seconds}s, with and without the view"
for round in $(seq "$rounds"); do
    run_one plain "$round" | tee -a "$results"
    run_one view "$round" | tee -a "$results"
done

python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {}
for mode, _, per_s, generator, process in rows:
    by.setdefault(mode, []).append((float(per_s), float(generator), float(process)))
def column(mode, i):
    values = [row[i] for row in by[mode]]
    return statistics.median(values), min(values), max(values)
print(f"\n{'':6} {'req/s':>24} {'generator CPU µs/req':>26} {'process CPU µs/req':>26}")
for mode in ("plain", "view"):
    cells = []
    for i in range(3):
        median, low, high = column(mode, i)
        cells.append(f"{median:10.2f} ({low:.2f}-{high:.2f})")
    print(f"{mode:6} " + " ".join(f"{c:>26}" for c in cells))
for i, name in ((1, "generator"), (2, "process")):
    ratio = column("view", i)[0] / column("plain", i)[0]
    print(f"view ÷ plain, {name} CPU per request: {ratio:.3f}")
print("medians (min-max) over the rounds")
PY
echo "raw outputs: $out"
