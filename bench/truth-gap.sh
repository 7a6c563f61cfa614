#!/usr/bin/env bash
# How far each load generator's latency is from the server's own truth.
#
# The oracle (bench/oracle, a small Go net/http program) records each
# handler's own service time: 1 ms, and 50 ms for every 20th request. It
# runs with GOMAXPROCS=1 on CPU 0; each generator runs a closed loop of 20
# connections on CPU 1 for SECONDS, alone, after a reset of the oracle's
# record: `corobench load` on each backend, each with its own clock and with
# kernel receive stamps (`--kernel-stamps`), on epoll also with send stamps
# (`--kernel-send-stamps`), then wrk (`--latency`). The
# table gives each generator's p50/p90/p99, the oracle's for the same
# requests, and the gap (generator − oracle): what the kernel, the server's
# HTTP handling outside its handler and the generator itself add.
#
#   bench/truth-gap.sh [ROUNDS] [SECONDS]         (defaults: 3 rounds of 10 s)
#   COROBENCH=target/debug/corobench bench/truth-gap.sh 1 2   a quick check
#                                                 with a binary already built
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
seconds=${2:-10}
server_cpu=0
generator_cpu=1
connections=20
out=bench/out/truth-gap-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"

command -v go >/dev/null || { echo "Go is needed to build bench/oracle" >&2; exit 1; }
if ! command -v wrk >/dev/null; then
    echo "installing wrk"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null
fi
if [ -z "${COROBENCH:-}" ]; then
    cargo build --release --locked --bin corobench >/dev/null
    COROBENCH=$PWD/target/release/corobench
fi
(cd bench/oracle && go build -o "$OLDPWD/$out/oracle" .)

oracle_pid=
stop_oracle() {
    if [ -n "$oracle_pid" ]; then
        kill "$oracle_pid" 2>/dev/null || true
        wait "$oracle_pid" 2>/dev/null || true
    fi
}
trap stop_oracle EXIT
GOMAXPROCS=1 taskset -c "$server_cpu" "$out/oracle" > "$out/oracle.log" 2>&1 &
oracle_pid=$!
for _ in $(seq 100); do
    grep -q '^listening on' "$out/oracle.log" 2>/dev/null && break
    sleep 0.05
done
addr=$(sed -n 's/^listening on //p' "$out/oracle.log")
[ -n "$addr" ] || { echo "the oracle did not start: $(cat "$out/oracle.log")" >&2; exit 1; }
url=http://$addr/
truth() { curl -sf "http://$addr/_truth?reset=1"; }

generator() {
    local tool=$1 log=$2
    if [ "$tool" = wrk ]; then
        taskset -c "$generator_cpu" wrk -t1 -c"$connections" -d"${seconds}s" --latency "$url" > "$log"
    else
        local backend=${tool#corobench-} stamps=()
        if [ "${backend%-kernel-send}" != "$backend" ]; then
            backend=${backend%-send}
            stamps=(--kernel-send-stamps)
        fi
        if [ "${backend%-kernel}" != "$backend" ]; then
            backend=${backend%-kernel}
            stamps+=(--kernel-stamps)
        fi
        taskset -c "$generator_cpu" "$COROBENCH" load -t1 -c"$connections" -d"${seconds}s" \
            --backend "$backend" "${stamps[@]}" --percentiles 50,90,99 --json "$url" > "$log"
    fi
}

echo "oracle on CPU $server_cpu ($addr), generators on CPU $generator_cpu;" \
    "$connections connections, $rounds rounds × ${seconds}s; $(uname -m), $(nproc) CPUs:" \
    "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
# Warm the oracle's goroutines and buffers; not recorded.
generator wrk "$out/warm-up.txt"
truth > /dev/null
results=$out/results.txt
: > "$results"
for round in $(seq "$rounds"); do
    for tool in corobench-epoll corobench-epoll-kernel corobench-epoll-kernel-send \
        corobench-io_uring corobench-io_uring-kernel wrk; do
        log=$out/$tool-r$round.out
        generator "$tool" "$log"
        truth > "$log.truth"
        echo "$tool $round $log" >> "$results"
    done
done

python3 - "$results" <<'PY'
import json, re, statistics, sys

def generator_us(tool, log):
    text = open(log).read()
    if tool == "wrk":
        # "     50%    1.33ms" in wrk's latency distribution
        unit = {"us": 1, "ms": 1e3, "s": 1e6}
        found = dict(re.findall(r"^\s+(50|90|99)%\s+([\d.]+\w+)", text, re.M))
        def us(v):
            n, u = re.match(r"([\d.]+)(\w+)", v).groups()
            return float(n) * unit[u]
        return {p: us(found[str(p)]) for p in (50, 90, 99)}
    report = json.loads(text)
    by = {x["percentile"]: x["latency_us"] for x in report["latency"]["percentiles"]}
    return {p: float(by[float(p)]) for p in (50, 90, 99)}

rows, cpu, delay = {}, {}, {}
for line in open(sys.argv[1]):
    tool, _, log = line.split()
    gen = generator_us(tool, log)
    truth = json.load(open(log + ".truth"))
    if tool != "wrk":
        report = json.load(open(log))
        cpu.setdefault(tool, []).append(report["generator"]["cpu_us_per_request"])
        if report.get("kernel_stamps"):
            delay.setdefault(tool, []).append(report["kernel_stamps"]["mean_read_delay_us"])
    rows.setdefault(tool, []).append(
        {p: (gen[p], truth[f"p{p}_us"]) for p in (50, 90, 99)})

print("\nlatency in ms, medians over rounds: generator / oracle (gap = generator - oracle)")
print(f"{'generator':26}" + "".join(f"{'p' + str(p):>26}" for p in (50, 90, 99)))
for tool, runs in rows.items():
    cells = []
    for p in (50, 90, 99):
        g = statistics.median(r[p][0] for r in runs) / 1e3
        t = statistics.median(r[p][1] for r in runs) / 1e3
        cells.append(f"{g:7.3f} / {t:7.3f} ({g - t:+6.3f})")
    print(f"{tool:26}" + "".join(f"{c:>26}" for c in cells))
print("\ncorobench's CPU per request (median): " + ", ".join(
    f"{tool} {statistics.median(v):.2f} µs" for tool, v in cpu.items()))
print("from the kernel's receipt to corobench's read, mean (median over rounds): " + ", ".join(
    f"{tool} {statistics.median(v):.1f} µs" for tool, v in delay.items()))
PY
echo "raw output in $out"
