#!/usr/bin/env bash
# The generator's own bill: system calls, context switches and epoll_ctl
# calls per request of corobench's load generator and of wrk, side by side.
#
# nginx (one worker) runs pinned to CPU 0; wrk and `corobench load` (each
# backend) run alternately pinned to CPU 1 under
#   perf stat -e raw_syscalls:sys_enter,context-switches,syscalls:sys_enter_epoll_ctl
# which counts in the kernel for the whole generator process (its threads
# included), start-up and connection set-up too: over a window of several
# seconds at tens of thousands of requests per second those are a few
# hundred calls, well under 0.01 per request. Each figure is divided by the
# requests the tool itself reports.
#
#   bench/loadgen-syscalls-vs-wrk.sh [ROUNDS] [SECONDS] [CONNECTIONS]
#                                    (defaults: 3 rounds of 5 s at 50 connections)
#   BACKENDS="epoll io_uring" is the default; the kernel must let perf count
#   tracepoints (root, or kernel.perf_event_paranoid ≤ -1 with tracefs readable).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
seconds=${2:-5}
conns=${3:-50}
backends=${BACKENDS:-epoll io_uring}
events=raw_syscalls:sys_enter,context-switches,syscalls:sys_enter_epoll_ctl
source bench/lib/generators.sh
trap stop_nginx EXIT
command -v perf >/dev/null 2>&1 || {
    echo "perf is not installed: apt-get install linux-perf" >&2
    exit 2
}
side_by_side loadgen-syscalls
port=${url##*:}; port=${port%/}

# One run of TOOL under perf stat: "<tool> <round> <requests> <syscalls> <ctx> <epoll_ctl>".
counted() {
    local tool=$1 round=$2 log="$out/$1-r$2"
    if [ "$tool" = wrk ]; then
        perf stat -x, -e "$events" -o "$log.perf" -- taskset -c "$generator_cpu" \
            wrk -t1 -c"$conns" -d"${seconds}s" "$url" > "$log.out"
    else
        # No warm-up (wrk has none): every call counted belongs to a counted request.
        perf stat -x, -e "$events" -o "$log.perf" -- taskset -c "$generator_cpu" \
            "$corobench" load -t1 -c"$conns" -d"${seconds}s" --warmup 0s --backend "${tool#corobench-}" \
            --json "$url" > "$log.out"
    fi
    python3 - "$tool" "$round" "$log" <<'PY'
import json, re, sys
tool, rnd, log = sys.argv[1:4]
counts = {}
for line in open(log + ".perf"):
    fields = line.strip().split(",")
    if len(fields) > 2 and fields[0].replace(".", "").isdigit():
        counts[fields[2]] = int(float(fields[0]))
    elif len(fields) > 2 and fields[2]:
        sys.exit(f"perf could not count {fields[2]} ({fields[0]}): see {log}.perf")
text = open(log + ".out").read()
if tool == "wrk":
    requests = int(re.search(r"(\d+) requests in", text).group(1))
else:
    requests = json.loads(text)["requests"]
print(tool, rnd, requests, counts["raw_syscalls:sys_enter"], counts["context-switches"],
      counts["syscalls:sys_enter_epoll_ctl"])
PY
}

results=$out/counts.txt
: > "$results"
echo "nginx on CPU $server_cpu (port $port), generators on CPU $generator_cpu;" \
     "$rounds rounds × ${seconds}s at $conns connections, alternating"
for round in $(seq "$rounds"); do
    counted wrk "$round" | tee -a "$results"
    for backend in $backends; do
        counted "corobench-$backend" "$round" | tee -a "$results"
    done
done

echo
grep -m1 'model name' /proc/cpuinfo | sed 's/^model name\s*: /CPU: /'
echo "kernel: $(uname -r)"
python3 - "$results" <<'PY'
import statistics, sys
table = {}
for line in open(sys.argv[1]):
    tool, _, requests, syscalls, ctx, epoll_ctl = line.split()
    n = int(requests)
    table.setdefault(tool, []).append((int(syscalls) / n, int(ctx) / n, int(epoll_ctl) / n))
print(f"{'generator':20} {'syscalls/req':>22} {'ctx switches/req':>22} {'epoll_ctl/req':>22}")
def cell(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"
for tool, rows in table.items():
    print(f"{tool:20} {cell([r[0] for r in rows]):>22} {cell([r[1] for r in rows]):>22}"
          f" {cell([r[2] for r in rows]):>22}")
print("medians of the rounds (min-max)")
PY
echo "raw outputs: $out"
