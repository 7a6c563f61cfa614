#!/usr/bin/env bash
# How long `corobench merge` takes for 64 generator reports, each with a full
# HDR histogram and a per-second timeline of SECONDS rows.
#
# One real 2 s `corobench load --json` against the test-kit server (pinned to
# CPU 0, the generator to CPU 1) gives a real histogram; 64 copies of it are
# made distinct generators (own host name, window start within 1 ms of the
# others) and given a SECONDS-row timeline, as a run of that length has. The
# merge of all 64 is then timed ROUNDS times; the median is printed.
#
#   bench/merge-64.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
rounds=${2:-7}
reports=64
out=bench/out/merge-64-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
cargo build --release --locked -p corobench -p corobench-testkit >/dev/null
corobench=$PWD/target/release/corobench
testkit=$PWD/target/release/corobench-testkit

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$port taskset -c 0 "$testkit" 2>/dev/null &
kit_pid=$!
trap 'kill "$kit_pid" 2>/dev/null; wait "$kit_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done
taskset -c 1 "$corobench" load --json -c 8 -d 2s "http://127.0.0.1:$port/plaintext" > "$out/real.json"

python3 - "$out" "$reports" "$seconds" <<'PY'
import copy, json, sys
out, reports, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
real = json.load(open(f"{out}/real.json"))
row = dict(real["timeline"][0])
for i in range(reports):
    report = copy.deepcopy(real)
    report["host"] = f"generator-{i:02d}"
    report["window_start_unix_us"] = real["window_start_unix_us"] + i * 13
    report["elapsed_s"] = float(seconds)
    report["timeline"] = [dict(row, second=s) for s in range(seconds)]
    json.dump(report, open(f"{out}/gen-{i:02d}.json", "w"))
PY

bytes=$(cat "$out"/gen-*.json | wc -c)
python3 - "$corobench" "$out" "$rounds" "$reports" "$seconds" "$bytes" <<'PY'
import glob, statistics, subprocess, sys, time
corobench, out, rounds, reports, seconds, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
files = sorted(glob.glob(f"{out}/gen-*.json"))
times = []
for _ in range(rounds):
    start = time.perf_counter()
    merged = subprocess.run([corobench, "merge", "--json", *files], check=True, capture_output=True)
    times.append(time.perf_counter() - start)
open(f"{out}/merged.json", "wb").write(merged.stdout)
print(f"corobench merge of {reports} reports ({seconds} timeline seconds each, {size / 1e6:.1f} MB of JSON): "
      f"median {statistics.median(times) * 1000:.0f} ms over {rounds} runs "
      f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}), whole process included")
PY
