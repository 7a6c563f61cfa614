#!/usr/bin/env bash
# 10,000 concurrent connections from one generator thread for 60 s against a
# private nginx: every connection must work, and the generator's resident
# memory must stay under 50 MB and flat (sampled every 5 s).
#
#   bench/loadgen-many-connections.sh [CONNECTIONS] [SECONDS] [BACKEND]
set -euo pipefail
cd "$(dirname "$0")/.."
connections=${1:-10000}
seconds=${2:-60}
backend=${3:-auto}
source bench/lib/nginx.sh
bench_setup many-connections
trap stop_nginx EXIT
start_nginx "$out/nginx" 0 "$connections"
echo "corobench load -c $connections -d ${seconds}s --backend $backend against nginx on CPU 0; generator on CPU 1"

taskset -c 1 target/release/corobench load -t1 -c "$connections" -d "${seconds}s" --timeout 30s \
    --backend "$backend" --json "$NGINX_URL" > "$out/report.json" &
load_pid=$!
: > "$out/rss.txt"
while kill -0 "$load_pid" 2>/dev/null; do
    sleep 5
    rss_kib=$(awk '/^VmRSS:/ {print $2}' "/proc/$load_pid/status" 2>/dev/null || true)
    open=$(ls "/proc/$load_pid/fd" 2>/dev/null | wc -l || true)
    [ -n "$rss_kib" ] && echo "$rss_kib $open" | tee -a "$out/rss.txt" | awk '{printf "  RSS %6.1f MB, %d open descriptors\n", $1/1024, $2}'
done
wait "$load_pid"
python3 - "$out/report.json" "$out/rss.txt" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
rss_mb = [int(line.split()[0]) / 1024 for line in open(sys.argv[2]) if line.strip()]
errors = {k: v for k, v in report["errors"].items() if v}
print(f"\n{report['connections']:,} connections: {report['requests_per_s']:,.0f} req/s over {report['elapsed_s']:.0f} s,"
      f" p99 {report['latency']['percentiles'][3]['latency_us'] / 1000:.1f} ms, errors {errors or 'none'}")
if rss_mb:
    print(f"generator RSS: max {max(rss_mb):.1f} MB, first {rss_mb[0]:.1f} MB, last {rss_mb[-1]:.1f} MB"
          f" ({'under' if max(rss_mb) < 50 else 'OVER'} 50 MB; change {rss_mb[-1] - rss_mb[0]:+.1f} MB)")
PY
