#!/usr/bin/env bash
# corobench's load generator over TLS against wrk (OpenSSL) and h2load --h1
# (nghttp2, OpenSSL), side by side, on one core each.
#
# nginx (one worker, HTTPS, TLS 1.2 and 1.3, session tickets on, a
# self-signed ECDSA P-256 certificate) runs pinned to CPU 0; wrk, h2load
# and `corobench load` run alternately pinned to CPU 1. No tool checks the
# certificate (corobench: --insecure, which still verifies the handshake's
# signatures, as OpenSSL does without a check); every tool resumes sessions.
#   - kept-alive connections at 50 and 256: wrk, h2load --h1, corobench on
#     each backend (and with kernel TLS where the kernel has it)
#   - a connection per request at 50: wrk (Connection: close, so it
#     reconnects and resumes), corobench --no-keepalive; h2load cannot open a
#     connection per request and is left out there
# Generator CPU per request comes from GNU time (user + system of the
# whole process) for every tool alike; the ratios are to wrk.
#
#   bench/loadgen-tls-vs-wrk.sh [ROUNDS] [SECONDS]    (defaults: 3 rounds of 10 s)
#   BACKENDS="epoll io_uring" KTLS=1 bench/loadgen-tls-vs-wrk.sh
#       KTLS=1 adds corobench with --ktls (epoll); without the kernel's tls
#       module it is left out, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
seconds=${2:-10}
source bench/lib/generators.sh
trap stop_nginx EXIT

if ! command -v h2load >/dev/null 2>&1; then
    echo "installing nghttp2-client (h2load)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nghttp2-client >/dev/null
fi
bench_setup loadgen-tls
server_cpu=0
generator_cpu=1
corobench=$PWD/target/release/corobench
NGINX_TLS=1 start_nginx "$out/nginx" "$server_cpu"
url=$NGINX_URL

backends=${BACKENDS:-"epoll io_uring"}
if [ -n "${KTLS:-}" ]; then
    if "$corobench" load -n 10 -c 1 --insecure --ktls --backend epoll "$url" >/dev/null 2>"$out/ktls-check.txt"; then
        backends="$backends epoll+ktls"
    else
        echo "kernel TLS left out: $(cat "$out/ktls-check.txt")"
    fi
fi
wrk_script_args=()

echo "nginx (HTTPS) on CPU $server_cpu, generators on CPU $generator_cpu; $rounds rounds × ${seconds}s, alternating"
echo
echo "kept-alive connections"
baseline_tools="wrk h2load"
wrk_flags=()
h2load_flags=()
corobench_flags=(--insecure)
alternate "$out/keepalive.txt" "50 256"
summarise "$out/keepalive.txt"

echo
echo "a connection per request (wrk: Connection: close; h2load has no such mode)"
baseline_tools="wrk"
wrk_flags=(-H "Connection: close")
corobench_flags=(--insecure --no-keepalive)
alternate "$out/per-request.txt" "50"
summarise "$out/per-request.txt"
echo
echo "goal: corobench's CPU per request at most 0.8x wrk's"
echo "raw outputs: $out"
