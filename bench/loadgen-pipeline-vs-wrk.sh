#!/usr/bin/env bash
# corobench's load generator against wrk with HTTP/1.1 pipelining, side by
# side, on one core each, as TechEmpower's plaintext test loads a server.
#
# nginx (one worker, `return 200 "Hello, World!"`) runs pinned to CPU 0;
# wrk (with bench/lib/pipeline.lua: one buffer of DEPTH requests per write)
# and `corobench load --pipeline DEPTH` run alternately pinned to CPU 1
# (A B A B ...). Generator CPU per request comes from GNU time (user +
# system of the whole process) for both tools alike. Prints the medians and
# the ratios corobench / wrk of req/s and CPU per request.
#
#   bench/loadgen-pipeline-vs-wrk.sh [ROUNDS] [SECONDS] [DEPTH]   (defaults: 3 rounds of 5 s, depth 16)
#   CONNECTIONS="64 256" BACKENDS="epoll io_uring" bench/loadgen-pipeline-vs-wrk.sh
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
seconds=${2:-5}
depth=${3:-16}
connection_counts=${CONNECTIONS:-256}
backends=${BACKENDS:-auto}
source bench/lib/generators.sh
trap stop_nginx EXIT
side_by_side pipeline
wrk_flags=(-s bench/lib/pipeline.lua)
wrk_script_args=("$depth")
corobench_flags=(--pipeline "$depth")

echo "nginx on CPU $server_cpu, generators on CPU $generator_cpu; pipeline depth $depth;" \
    "$rounds rounds × ${seconds}s, alternating"
results=$out/pipelined.txt
alternate "$results" "$connection_counts"

summarise "$results"
echo
echo "raw outputs: $out"
