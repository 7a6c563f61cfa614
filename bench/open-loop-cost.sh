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
# Before and after a change, give both binaries; their runs alternate too:
#   BEFORE=/path/to/old/corobench bench/open-loop-cost.sh [ROUNDS] [SECONDS]
# Without BEFORE only this tree's release build is measured.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-10}
source bench/lib/nginx.sh
bench_setup open-loop-cost
trap stop_nginx EXIT
start_nginx "$out/nginx" 0
declare -A binaries=([after]="$PWD/target/release/corobench")
[ -n "${BEFORE:-}" ] && binaries[before]=$BEFORE

# One load run: prints "<binary> <schedule> <round> <req/s> <cpu µs/req> <send lag µs>".
run_one() {
    local name=$1 schedule=$2 round=$3 flags=() log
    log="$out/$name-$schedule-r$round.json"
    [ "$schedule" = closed ] || flags=(-R "$schedule")
    taskset -c 1 "${binaries[$name]}" load -t1 -c50 -d "${seconds}s" --warmup 1s \
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

results=$out/results.txt
: > "$results"
echo "nginx on CPU 0 ($NGINX_URL), the generator on CPU 1; $rounds rounds × ${seconds}s"
capacity=$(run_one after closed 0 | tee -a "$results" | awk '{print $4}')
echo "closed loop: $capacity req/s; open loop at 25%, 50% and 75% of it"
for round in $(seq "$rounds"); do
    for share in 25 50 75; do
        rate=$((capacity * share / 100))
        for name in "${!binaries[@]}"; do
            run_one "$name" closed "$round" | tee -a "$results"
            run_one "$name" "$rate" "$round" | tee -a "$results"
        done
    done
done

python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {}
for name, schedule, rnd, per_s, cpu, lag in rows:
    if rnd == "0":
        continue
    by.setdefault((name, schedule), []).append((float(cpu), float(lag)))
print(f"\n{'binary':8} {'schedule':>10} {'CPU µs/req':>22} {'open ÷ closed':>14} {'send lag µs':>12}")
for (name, schedule), values in sorted(by.items()):
    cpus = [c for c, _ in values]
    closed = statistics.median(c for c, _ in by[(name, "closed")])
    ratio = "" if schedule == "closed" else f"{statistics.median(cpus) / closed:.2f}"
    print(f"{name:8} {schedule:>10} {statistics.median(cpus):10.2f} ({min(cpus):.2f}-{max(cpus):.2f})"
          f" {ratio:>14} {statistics.median(l for _, l in values):12.1f}")
print("medians (min-max) over the rounds; closed: 50 connections; open: -R at the rate shown")
PY
echo "raw outputs: $out"
