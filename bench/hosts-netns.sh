#!/usr/bin/env bash
# A `[hosts]` run of real reference targets across network namespaces that
# stand in for machines: a server host and two generator hosts, each with
# its own address and its own sshd, joined by a bridge in a coordinator
# namespace that runs `corobench run`. The same targets are measured twice
# side by side: with both generators (their reports merged) and with one.
# It prints each target's req/s both ways and their ratio, and the clock
# offsets measured per host; both runs stay in a results database.
#
#   bench/hosts-netns.sh [TRIALS] [DURATION] [TARGETS…]
#       (defaults: 3 trials of 3s; go-nethttp rust-axum node-http)
#
# Needs root, iproute2 and openssh-server (`make deps` installs them). All
# the traffic stays inside the namespaces this script makes, and every
# process it started is stopped when it ends. Every host shares this
# machine's CPUs: the server is pinned to CPU 0 and every generator to
# CPU 1, so two generators split one core and the ratio says what merging
# costs, not what a second machine would add.
set -euo pipefail
cd "$(dirname "$0")/.."

trials=${1:-3}
duration=${2:-3s}
shift $(($# < 2 ? $# : 2))
targets=("${@:-go-nethttp}")
[ $# -eq 0 ] && targets=(go-nethttp rust-axum node-http)
corobench=${COROBENCH:-$PWD/target/release/corobench}
[ -x "$corobench" ] || { echo "build corobench first: cargo build --release" >&2; exit 2; }
source bench/lib/netns-lab.sh

lab=$(mktemp -d /tmp/corobench-hosts.XXXXXX)
cleanup() {
    [ -z "${lab_coordinator:-}" ] || lab_down
    echo "hosts: the namespaces are gone; runs and logs are in $lab" >&2
}
trap cleanup EXIT

# write_spec NAME GENERATORS…: the targets on the hosts, one plaintext workload.
write_spec() {
    local name=$1 list generators
    shift
    list=$(printf '"%s", ' "${targets[@]}")
    generators=$(printf '"ssh://root@%s", ' "$@")
    cat > "$lab/$name.toml" <<EOF
name = "$name"
targets = [${list%, }]
[run]
trials = $trials
duration = "$duration"
warmup = "1s"
[schedule]
connections = 32
[[workloads]]
name = "plaintext"
path = "/plaintext"
[hosts]
server = "ssh://root@${lab_addresses[0]}"
generators = [${generators%, }]
server_cpus = "0"
generator_cpus = "1"
ssh_config = "$lab/ssh_config"
targets_dir = "$PWD/targets"
install_dir = "$lab/install"
EOF
}

# run NAME: `corobench run` in the coordinator; prints the run's id.
run() {
    ip netns exec "$lab_coordinator" "$corobench" run "$lab/$1.toml" --db "$lab/runs.db" \
        > "$lab/$1.out" 2> "$lab/$1.log" || {
        echo "hosts: the $1 run failed; see $lab/$1.log" >&2
        tail -5 "$lab/$1.log" >&2
        exit 1
    }
    "$corobench" runs --db "$lab/runs.db" --json | python3 -c '
import json, sys
print(next(r["id"] for r in json.load(sys.stdin) if r["suite"] == sys.argv[1]))' "$1"
}

lab_up "$lab" "cbb$$" 10.232.0 || { echo "hosts: no lab of namespaces here" >&2; exit 2; }
write_spec two-generators "${lab_addresses[1]}" "${lab_addresses[2]}"
write_spec one-generator "${lab_addresses[1]}"
two=$(run two-generators)
one=$(run one-generator)
echo "runs: $two (two generators), $one (one generator) in $lab/runs.db"
"$corobench" report "$two" --db "$lab/runs.db" --format json > "$lab/two.json"
"$corobench" report "$one" --db "$lab/runs.db" --format json > "$lab/one.json"
python3 - "$lab/two.json" "$lab/one.json" <<'PY'
import json, sys

def medians(path):
    report = json.load(open(path))
    rows = {}
    for scenario in report["scenarios"]:
        rows[scenario["target"]] = scenario["metrics"]["requests_per_s"]["median"]
    return report, rows

two, merged = medians(sys.argv[1])
_, single = medians(sys.argv[2])
print(f"{'target':<14} {'2 generators':>14} {'1 generator':>14} {'ratio':>7}")
for target, value in merged.items():
    alone = single.get(target)
    ratio = f"{value / alone:.2f}" if alone else "—"
    print(f"{target:<14} {value:>14,.0f} {alone or 0:>14,.0f} {ratio:>7}")
for host in two["run"]["provenance"].get("hosts", []):
    if host.get("clock_offset_us") is not None:
        print(f"clock offset of {host['role']} {host['address']}: "
              f"{host['clock_offset_us']} µs ± {host['clock_uncertainty_us']} µs")
PY
