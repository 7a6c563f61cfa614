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
server_cpu=0
generator_cpu=1
source bench/lib/nginx.sh
bench_setup loadgen
corobench=$PWD/target/release/corobench
trap stop_nginx EXIT
start_nginx "$out/nginx" $server_cpu
url=$NGINX_URL
worker_pid=$NGINX_WORKER_PID
port=${url##*:}; port=${port%/}

# One measurement: "<tool> <conns> <round> <req/s> <cpu us/req> <max rss KiB>".
measure() {
    local tool=$1 conns=$2 round=$3 log="$out/$1-c$2-r$3"
    if [ "$tool" = wrk ]; then
        /usr/bin/time -f "%U %S %M" -o "$log.time" taskset -c $generator_cpu \
            wrk -t1 -c"$conns" -d"${seconds}s" "$url" > "$log.out"
    else
        /usr/bin/time -f "%U %S %M" -o "$log.time" taskset -c $generator_cpu \
            "$corobench" load -t1 -c"$conns" -d"${seconds}s" --backend "${tool#corobench-}" --json "$url" > "$log.out"
    fi
    python3 - "$tool" "$conns" "$round" "$log" <<'PY'
import json, re, sys
tool, conns, rnd, log = sys.argv[1:5]
user, system, rss_kib = open(log + ".time").read().split()[-3:]
text = open(log + ".out").read()
if tool == "wrk":
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    per_s = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
else:
    report = json.loads(text)
    requests, per_s = report["requests"], report["requests_per_s"]
cpu_us = (float(user) + float(system)) * 1e6 / requests
print(f"{tool} {conns} {rnd} {per_s:.0f} {cpu_us:.2f} {rss_kib}")
PY
}

echo "nginx on CPU $server_cpu (port $port), generators on CPU $generator_cpu; $rounds rounds × ${seconds}s, alternating"
results=$out/closed-loop.txt
: > "$results"
for conns in 50 256; do
    for round in $(seq "$rounds"); do
        measure wrk "$conns" "$round" | tee -a "$results"
        for backend in $backends; do measure "corobench-$backend" "$conns" "$round" | tee -a "$results"; done
    done
done

python3 - "$results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
table = {}
for tool, conns, _, per_s, cpu_us, rss in rows:
    table.setdefault((tool, int(conns)), []).append((float(per_s), float(cpu_us), int(rss)))
print("\nmedians (min-max)")
print(f"{'tool':18} {'conns':>5} {'req/s':>22} {'CPU µs/req':>20} {'max RSS':>9}")
for (tool, conns), values in sorted(table.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    per_s = [v[0] for v in values]; cpu = [v[1] for v in values]; rss = max(v[2] for v in values)
    print(f"{tool:18} {conns:5} {statistics.median(per_s):10,.0f} ({min(per_s):,.0f}-{max(per_s):,.0f})"
          f" {statistics.median(cpu):8.2f} ({min(cpu):.2f}-{max(cpu):.2f}) {rss/1024:7.1f}MB")
print("\nratios corobench / wrk (medians)")
for (tool, conns), values in sorted(table.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    if tool == "wrk":
        continue
    base = table[("wrk", conns)]
    ratio = lambda i: statistics.median(v[i] for v in values) / statistics.median(v[i] for v in base)
    print(f"{tool:18} c={conns:<4} req/s {ratio(0):.2f}x   CPU per request {ratio(1):.2f}x")
PY

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
