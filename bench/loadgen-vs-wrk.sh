#!/usr/bin/env bash
# corobench's load generator against wrk, side by side, on one core each.
#
# nginx (one worker, `return 200 "Hello, World!"`) runs pinned to CPU 0; wrk
# and `corobench load` run alternately pinned to CPU 1 (A B A B ...), at 50
# and 256 connections. Generator CPU per request comes from GNU time (user +
# system of the whole process) for both tools alike. Then an open-loop check:
# 20,000 req/s for 25 s while nginx is frozen for 1 s (SIGSTOP/SIGCONT), with
# corobench's corrected and uncorrected p99 next to the value an honest
# measurement must show.
#
#   bench/loadgen-vs-wrk.sh [ROUNDS] [SECONDS]      (defaults: 3 rounds of 10 s)
#   BACKENDS="epoll io_uring" bench/loadgen-vs-wrk.sh   also compare both backends
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
seconds=${2:-10}
backends=${BACKENDS:-auto}
source bench/lib/generators.sh
trap stop_nginx EXIT
side_by_side loadgen
worker_pid=$NGINX_WORKER_PID
port=${url##*:}; port=${port%/}
wrk_flags=()
wrk_script_args=()
corobench_flags=()

echo "nginx on CPU $server_cpu (port $port), generators on CPU $generator_cpu; $rounds rounds × ${seconds}s, alternating"
results=$out/closed-loop.txt
alternate "$results" "50 256"

summarise "$results"

# Open loop: 20,000 req/s for 25 s; nginx's worker frozen 1 s at t = 15 s.
echo
echo "open loop: 20,000 req/s, 50 connections, 25 s; nginx frozen for 1 s at t = 15 s"
taskset -c $generator_cpu "$corobench" load -t1 -c50 -R 20000 -d25s --json "$url" > "$out/open-loop.json" &
load_pid=$!
sleep 15
kill -STOP "$worker_pid"
sleep 1
kill -CONT "$worker_pid"
wait "$load_pid"
python3 - "$out/open-loop.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
p = lambda lat, q: next(x["latency_us"] for x in lat["percentiles"] if x["percentile"] == q) / 1e6
window = report["elapsed_s"]
# Requests arriving during a 1 s stall wait 0..1 s (uniformly): they are
# 1/window of all, so the top 1% sits at 1 - 0.01 * window seconds.
expected = 1 - 0.01 * window
open_loop = report["open_loop"]
print(f"  achieved {open_loop['achieved_rate_per_s']:,.0f} req/s of {open_loop['requested_rate_per_s']:,.0f}"
      f" ({open_loop['achieved_rate_per_s'] / open_loop['requested_rate_per_s']:.3f}); send lag mean {open_loop['mean_send_lag_us']:.0f} µs")
corrected = p(report["latency"], 99.0)
uncorrected = p(report["latency_uncorrected"], 99.0)
print(f"  corrected p99   {corrected:.3f} s   (expected ≈ {expected:.3f} s for a {window:.1f} s window; ratio {corrected / expected:.2f})")
print(f"  uncorrected p99 {uncorrected * 1000:.2f} ms  (what a tool that times from the actual send reports)")
PY
echo
echo "raw outputs: $out"
