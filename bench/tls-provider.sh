#!/usr/bin/env bash
# Which crypto provider behind rustls costs corobench's generator less CPU
# per request over TLS: aws-lc-rs or ring, side by side.
#
# nginx (one worker, HTTPS, TLS 1.2 and 1.3, session tickets on, a
# self-signed ECDSA P-256 certificate) runs pinned to CPU 0; one corobench
# binary built with both providers runs pinned to CPU 1, alternating
# `--tls-provider aws-lc-rs` and `--tls-provider ring` (A B A B ...), with
# kept-alive connections and with a connection per request (a handshake
# per request, resumed). The certificate is not checked (--insecure, as
# wrk does; signatures still are), so both pay the same handshake work.
# Generator CPU per request comes from GNU time (user + system).
#
#   bench/tls-provider.sh [ROUNDS] [SECONDS]      (defaults: 5 rounds of 10 s)
#   BACKENDS="epoll io_uring" bench/tls-provider.sh   (default: epoll)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-5}
seconds=${2:-10}
source bench/lib/generators.sh
trap stop_nginx EXIT

out=bench/out/tls-provider-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
ensure_tools
echo "building corobench with both crypto providers"
cargo build --release --locked -p corobench --bin corobench --features corobench-load/ring >/dev/null
corobench=$PWD/target/release/corobench
server_cpu=0
generator_cpu=1
NGINX_TLS=1 start_nginx "$out/nginx" "$server_cpu"
url=$NGINX_URL

baseline_tools=""
backends=""
for backend in ${BACKENDS:-epoll}; do
    backends="$backends $backend+aws-lc-rs $backend+ring"
done
wrk_flags=()
wrk_script_args=()

echo "nginx (HTTPS) on CPU $server_cpu, corobench on CPU $generator_cpu; $rounds rounds × ${seconds}s, alternating"
echo
echo "kept-alive connections"
corobench_flags=(--insecure)
alternate "$out/keepalive.txt" "50"
for backend in ${BACKENDS:-epoll}; do
    summarise "$out/keepalive.txt" "corobench-$backend+aws-lc-rs"
done

echo
echo "a connection per request (a resumed handshake each)"
corobench_flags=(--insecure --no-keepalive)
alternate "$out/per-request.txt" "50"
for backend in ${BACKENDS:-epoll}; do
    summarise "$out/per-request.txt" "corobench-$backend+aws-lc-rs"
done
echo
echo "raw outputs: $out"
