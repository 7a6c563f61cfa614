#!/usr/bin/env bash
# Open-loop accuracy: at each requested rate, the rate achieved and how late
# requests left, until the generator (one thread on CPU 1) cannot keep up.
# nginx runs on CPU 0.
#
#   [BACKEND=epoll|io_uring] bench/loadgen-open-loop.sh [SECONDS] [RATES...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
shift || true
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(1000 5000 10000 20000 40000 60000 80000)
source bench/lib/nginx.sh
bench_setup open-loop
trap stop_nginx EXIT
start_nginx "$out/nginx" 0
printf '%10s %10s %8s %12s %12s %10s %10s\n' requested achieved ratio "lag mean" "lag max" "p50*" "p50"
for rate in "${rates[@]}"; do
    taskset -c 1 target/release/corobench load -t1 -c 128 --backend "${BACKEND:-auto}" -R "$rate" -d "${seconds}s" --warmup 1s --json "$NGINX_URL" > "$out/rate-$rate.json"
    python3 - "$out/rate-$rate.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o = r["open_loop"]
p50 = lambda lat: lat["percentiles"][0]["latency_us"]
flag = "  generator-bound" if any(w["kind"] == "generator_bound" for w in r["warnings"]) else ""
flag += "  schedule missed" if any(w["kind"] == "schedule_missed" for w in r["warnings"]) else ""
print(f"{o['requested_rate_per_s']:10,.0f} {o['achieved_rate_per_s']:10,.0f} {o['achieved_rate_per_s'] / o['requested_rate_per_s']:8.4f}"
      f" {o['mean_send_lag_us']:10.0f}µs {o['max_send_lag_us']:10}µs {p50(r['latency']):8}µs {p50(r['latency_uncorrected']):8}µs{flag}")
PY
done
echo "p50*: from the intended send time (corrected); p50: from the actual send"
