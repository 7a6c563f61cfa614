#!/usr/bin/env bash
# What an open loop costs the generator per request, against a closed loop
# on the same server: nginx (one worker) pinned to CPU 0, `corobench load`
# pinned to CPU 1, one thread. First the closed loop at 50 connections
# finds what nginx serves; then the open loop offers 25%, 50% and 75% of
# that, each round alternating with the closed loop so that drift hits
# both. CPU per request is the generator's own (`generator.cpu_us_per_request`
# of the JSON report: its threads' user + system time over the window ÷
# responses); the ratio open ÷ closed is the figure to keep within 1.5.
#
# A closed loop at full load is the cheapest case there is: the server never
# idles, so no send has to wake it, and each wake-up of the generator finds
# several responses. Below capacity every generator pays for the server's
# idling, whatever its loop. So each round also runs closed loops of 1, 2,
# 3, 4 and 6 connections, which nginx answers at lower rates, and the summary
# sets each open-loop rate beside the closed loop nearest to it in rate.
#
# Where h2load (nghttp2-client) is installed, each round also runs it at
# every open-loop rate (`--rps`, 50 connections, HTTP/1.1): another open-loop
# generator's cost at the same rate, to tell what any generator pays there
# from what corobench adds. Its CPU is its whole process's (user + system,
# from /usr/bin/time) ÷ the requests it completed, over a run with no warm-up.
#
# Before and after a change, give both binaries; their runs alternate too:
#   BEFORE=/path/to/old/corobench bench/open-loop-cost.sh [ROUNDS] [SECONDS]
# Without BEFORE only this tree's release build is measured.
#
# Another server than nginx: start it yourself on CPU 0 and give its URL;
# the generator stays on CPU 1:
#   taskset -c 0 my-server & URL=http://127.0.0.1:8080/plaintext bench/open-loop-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-10}
source bench/lib/nginx.sh
bench_setup open-loop-cost
if [ -n "${URL:-}" ]; then
    NGINX_URL=$URL
else
    trap stop_nginx EXIT
    start_nginx "$out/nginx" 0
fi
declare -A binaries=([after]="$PWD/target/release/corobench")
[ -n "${BEFORE:-}" ] && binaries[before]=$BEFORE

# One load run: prints "<binary> <schedule> <round> <req/s> <cpu µs/req> <send lag µs>".
# The schedule is "closed" (50 connections), "closed-cN" (N connections) or a rate.
run_one() {
    local name=$1 schedule=$2 round=$3 flags=(-c50) log
    log="$out/$name-$schedule-r$round.json"
    case $schedule in
        closed) ;;
        closed-c*) flags=(-c "${schedule#closed-c}") ;;
        *) flags+=(-R "$schedule") ;;
    esac
    taskset -c 1 "${binaries[$name]}" load -t1 -d "${seconds}s" --warmup 1s \
        "${flags[@]}" --json "$NGINX_URL" > "$log"
    python3 - "$name" "$schedule" "$round" "$log" <<'PY'
import json, sys
name, schedule, rnd, log = sys.argv[1:5]
r = json.load(open(log))
lag = r["open_loop"]["mean_send_lag_us"] if r.get("open_loop") else 0.0
print(f"{name} {schedule} {rnd} {r['requests_per_s']:.0f} "
      f"{r['generator']['cpu_us_per_request']:.2f} {lag:.1f}")
PY
}

# h2load at one rate: prints a line shaped as run_one's, with no send lag ("nan").
run_h2load() {
    local rate=$1 round=$2 log="$out/h2load-$1-r$2"
    /usr/bin/time -f "%U %S" -o "$log.time" taskset -c 1 h2load --h1 -t1 -c50 \
        -D "$seconds" --rps="$(python3 -c "print($rate / 50)")" "$NGINX_URL" > "$log.out"
    python3 - "$rate" "$round" "$log" <<'PY'
import re, sys
rate, rnd, log = sys.argv[1:4]
user, system = open(log + ".time").read().split()[-2:]
text = open(log + ".out").read()
done, succeeded = map(int, re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", text).groups())
per_s = float(re.search(r"finished in [\d.]+s, ([\d.]+) req/s", text).group(1))
if succeeded != done or not succeeded:
    print(f"warning: h2load reported failures in {log}.out", file=sys.stderr)
cpu_us = (float(user) + float(system)) * 1e6 / max(succeeded, 1)
print(f"h2load {rate} {rnd} {per_s:.0f} {cpu_us:.2f} nan")
PY
}

results=$out/results.txt
: > "$results"
command -v h2load >/dev/null 2>&1 ||
    echo "h2load is not installed (apt-get install nghttp2-client): no other generator at the same rates"
echo "the server on CPU 0 ($NGINX_URL), the generator on CPU 1; $rounds rounds × ${seconds}s"
# What nginx serves: the median of three closed loops (one run can be 20% off here).
for _ in 1 2 3; do
    run_one after closed 0 | tee -a "$results"
done
capacity=$(awk '$3 == 0 {print $4}' "$results" | sort -n | sed -n 2p)
echo "closed loop: $capacity req/s; open loop at 25%, 50% and 75% of it"
for round in $(seq "$rounds"); do
    for connections in 1 2 3 4 6; do
        for name in "${!binaries[@]}"; do
            run_one "$name" "closed-c$connections" "$round" | tee -a "$results"
        done
    done
    for share in 25 50 75; do
        rate=$((capacity * share / 100))
        for name in "${!binaries[@]}"; do
            run_one "$name" closed "$round" | tee -a "$results"
            run_one "$name" "$rate" "$round" | tee -a "$results"
        done
        if command -v h2load >/dev/null 2>&1; then
            run_h2load "$rate" "$round" | tee -a "$results"
        fi
    done
done

python3 - "$results" <<'PY'
import math, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {}
for name, schedule, rnd, per_s, cpu, lag in rows:
    if rnd == "0":
        continue
    by.setdefault((name, schedule), []).append((float(per_s), float(cpu), float(lag)))
median = lambda values, i: statistics.median(v[i] for v in values)
print(f"\n{'binary':8} {'schedule':>10} {'req/s':>8} {'CPU µs/req':>22} {'÷ closed c=50':>14} "
      f"{'÷ closed, same rate':>20} {'send lag µs':>12}")
# Each binary's open rates in order, then its closed loops; h2load last.
order = lambda key: (key[0] == "h2load", key[0], key[1].startswith("closed"),
                     int(key[1]) if key[1].isdigit() else key[1])
for (name, schedule), values in sorted(by.items(), key=lambda kv: order(kv[0])):
    cpus = [c for _, c, _ in values]
    # h2load is set beside this tree's closed loops.
    loops = name if name != "h2load" else "after"
    full = median(by[(loops, "closed")], 1)
    ratio = same_rate = ""
    if not schedule.startswith("closed"):
        ratio = f"{statistics.median(cpus) / full:.2f}"
        # The closed loop of few connections whose rate comes nearest.
        rate = median(values, 0)
        near = min((k for k in by if k[0] == loops and k[1].startswith("closed-c")),
                   key=lambda k: abs(median(by[k], 0) - rate))
        same_rate = f"{statistics.median(cpus) / median(by[near], 1):.2f} ({near[1][7:]})"
    lag = median(values, 2)
    lag = "-" if math.isnan(lag) else f"{lag:.1f}"
    print(f"{name:8} {schedule:>10} {median(values, 0):8.0f} {statistics.median(cpus):10.2f} "
          f"({min(cpus):.2f}-{max(cpus):.2f}) {ratio:>14} {same_rate:>20} {lag:>12}")
print("medians (min-max) over the rounds; closed: 50 connections, closed-cN: N connections;")
print("open: -R at the rate shown; 'same rate': against the closed-cN nearest in req/s;")
print("h2load: --rps at the rate shown, its process's CPU, beside this tree's closed loops")
PY
echo "raw outputs: $out"
