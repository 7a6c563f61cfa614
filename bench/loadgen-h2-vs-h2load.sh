#!/usr/bin/env bash
# corobench's load generator over HTTP/2 against h2load (nghttp2), side by
# side, on one core each.
#
# nginx (one worker, `http2` on its listener, TLS 1.2 and 1.3 with a
# self-signed ECDSA P-256 certificate for h2, cleartext for h2c) runs pinned
# to CPU 0; h2load and `corobench load` run alternately pinned to CPU 1.
# Each runs 10 connections with -m 1, 10 and 100 streams per connection
# (nginx allows 128 at once), in cleartext (h2c by prior knowledge, h2load's
# default for http://) and over TLS (ALPN h2; neither tool checks the
# certificate). Generator CPU per request comes from GNU time (user + system
# of the whole process) for both tools alike; the ratios are to h2load.
#
#   bench/loadgen-h2-vs-h2load.sh [ROUNDS] [SECONDS]    (defaults: 3 rounds of 10 s)
#   BACKENDS="epoll io_uring" CONNECTIONS=10 STREAMS="1 10 100" bench/loadgen-h2-vs-h2load.sh
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
seconds=${2:-10}
connections=${CONNECTIONS:-10}
streams_list=${STREAMS:-"1 10 100"}
source bench/lib/generators.sh
trap stop_nginx EXIT

if ! command -v h2load >/dev/null 2>&1; then
    echo "installing nghttp2-client (h2load)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nghttp2-client >/dev/null
fi
bench_setup loadgen-h2
server_cpu=0
generator_cpu=1
# COROBENCH: another build of corobench (a quick functional check with a debug one).
corobench=${COROBENCH:-$PWD/target/release/corobench}
backends=${BACKENDS:-"epoll io_uring"}
baseline_tools=h2load
# h2load speaks HTTP/2 here (no --h1); wrk has no HTTP/2 and takes no part.
h2load_h1=
wrk_flags=()
wrk_script_args=()

# One protocol: nginx serving it, then every -m, both tools alternating.
run_protocol() {
    local protocol=$1 tls_flags=()
    if [ "$protocol" = h2 ]; then
        NGINX_TLS=1 NGINX_H2=1 start_nginx "$out/nginx-$protocol" "$server_cpu"
        tls_flags=(--h2 --insecure)
    else
        NGINX_H2=1 start_nginx "$out/nginx-$protocol" "$server_cpu"
        tls_flags=(--h2c)
    fi
    url=$NGINX_URL
    echo
    echo "$protocol: nginx on CPU $server_cpu, generators on CPU $generator_cpu; $rounds rounds × ${seconds}s, -c $connections"
    for streams in $streams_list; do
        echo
        echo "$protocol, -m $streams"
        h2load_flags=(-m "$streams")
        corobench_flags=("${tls_flags[@]}" -m "$streams")
        alternate "$out/$protocol-m$streams.txt" "$connections"
        summarise "$out/$protocol-m$streams.txt" h2load
    done
    stop_nginx
}

run_protocol h2c
run_protocol h2
echo
echo "goal: at least h2load's req/s per generator core, at most 0.8x its CPU per request"
echo "raw outputs: $out"
