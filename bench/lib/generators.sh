# Shared by the bench scripts that put corobench's load generator beside wrk.
# Source it, set an EXIT trap that calls stop_nginx, then:
#   side_by_side NAME           builds corobench and starts nginx pinned to CPU 0;
#                               sets out, url, corobench, server_cpu, generator_cpu (1)
# With `seconds` and these arrays set (empty for none):
#   wrk_flags=(...)       extra wrk flags before the URL (e.g. -s script.lua)
#   wrk_script_args=(...) arguments for the wrk script, after `--`
#   corobench_flags=(...) extra `corobench load` flags
#   h2load_flags=(...)    extra h2load flags (optional)
#   h2load_h1=            set empty for h2load to speak HTTP/2 (default: --h1)
#   log_prefix=NAME-      put before each run's log files (optional)
#   measure TOOL CONNS ROUND    one timed run of `wrk`, `h2load` (--h1) or
#                               `corobench-<backend>[+ktls][+aws-lc-rs|+ring]`, printing
#                               "<tool> <conns> <round> <req/s> <cpu us/req> <max rss KiB>"
#   alternate RESULTS "CONNS..."  `rounds` rounds at each connection count: each of
#                               `baseline_tools` (default: wrk), then corobench on each
#                               of `backends`, appended to RESULTS
#   summarise RESULTS [BASE]    medians (min-max) per tool and connections, and the
#                               ratios tool / BASE (default wrk) of req/s and CPU per request

source bench/lib/nginx.sh

side_by_side() {
    server_cpu=0
    generator_cpu=1
    bench_setup "$1"
    corobench=$PWD/target/release/corobench
    start_nginx "$out/nginx" "$server_cpu"
    url=$NGINX_URL
}

measure() {
    local tool=$1 conns=$2 round=$3 log="$out/${log_prefix:-}$1-c$2-r$3"
    if [ "$tool" = wrk ]; then
        /usr/bin/time -f "%U %S %M" -o "$log.time" taskset -c "$generator_cpu" \
            wrk -t1 -c"$conns" -d"${seconds}s" "${wrk_flags[@]}" "$url" \
            ${wrk_script_args[@]+-- "${wrk_script_args[@]}"} > "$log.out"
    elif [ "$tool" = h2load ]; then
        /usr/bin/time -f "%U %S %M" -o "$log.time" taskset -c "$generator_cpu" \
            h2load ${h2load_h1---h1} -t1 -c"$conns" -D "$seconds" ${h2load_flags[@]+"${h2load_flags[@]}"} \
            "$url" > "$log.out"
    else
        # corobench-<backend>, with +ktls and +<provider> for TLS variants.
        # No warm-up: wrk and h2load have none, and the process's CPU is
        # divided by the requests counted, so corobench must spend none
        # outside its measured window either.
        local variant=${tool#corobench-} extra=()
        case $variant in *+ktls*) extra+=(--ktls) ;; esac
        case $variant in *+aws-lc-rs*) extra+=(--tls-provider aws-lc-rs) ;; *+ring*) extra+=(--tls-provider ring) ;; esac
        /usr/bin/time -f "%U %S %M" -o "$log.time" taskset -c "$generator_cpu" \
            "$corobench" load -t1 -c"$conns" -d"${seconds}s" --warmup 0s --backend "${variant%%+*}" \
            "${corobench_flags[@]}" ${extra[@]+"${extra[@]}"} --json "$url" > "$log.out"
    fi
    python3 - "$tool" "$conns" "$round" "$log" <<'PY'
import json, re, sys
tool, conns, rnd, log = sys.argv[1:5]
user, system, rss_kib = open(log + ".time").read().split()[-3:]
text = open(log + ".out").read()
if tool == "wrk":
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    per_s = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    if re.search(r"Non-2xx|Socket errors", text):
        print(f"warning: wrk reported errors in {log}.out", file=sys.stderr)
elif tool == "h2load":
    total, done, succeeded = map(int, re.search(r"requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded", text).groups())
    requests = succeeded
    per_s = float(re.search(r"finished in [\d.]+s, ([\d.]+) req/s", text).group(1))
    if succeeded != done:
        print(f"warning: h2load reported failures in {log}.out", file=sys.stderr)
else:
    report = json.loads(text)
    requests, per_s = report["requests"], report["requests_per_s"]
    errors = report["errors"]
    if errors["read"] or errors["timeout"] or errors.get("protocol") or errors.get("refused_stream"):
        print(f"warning: corobench reported errors in {log}.out", file=sys.stderr)
cpu_us = (float(user) + float(system)) * 1e6 / requests
print(f"{tool} {conns} {rnd} {per_s:.0f} {cpu_us:.2f} {rss_kib}")
PY
}

alternate() {
    local results=$1 conns round backend tool
    : > "$results"
    for conns in $2; do
        for round in $(seq "$rounds"); do
            for tool in ${baseline_tools-wrk}; do
                measure "$tool" "$conns" "$round" | tee -a "$results"
            done
            for backend in $backends; do
                measure "corobench-$backend" "$conns" "$round" | tee -a "$results"
            done
        done
    done
}

summarise() {
    python3 - "$1" "${2:-wrk}" <<'PY'
import statistics, sys
base_tool = sys.argv[2]
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
print(f"\nratios tool / {base_tool} (medians)")
for (tool, conns), values in sorted(table.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    if tool == base_tool or (base_tool, conns) not in table:
        continue
    base = table[(base_tool, conns)]
    ratio = lambda i: statistics.median(v[i] for v in values) / statistics.median(v[i] for v in base)
    print(f"{tool:18} c={conns:<4} req/s {ratio(0):.2f}x   CPU per request {ratio(1):.2f}x")
PY
}
