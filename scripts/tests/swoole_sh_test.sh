#!/usr/bin/env bash
# scripts/swoole.sh on bad input and on its cache, with small stand-in
# archives (fake-swoole/, fake-liburing/) instead of the real releases:
# each bad input gets its one line and no build; a good pair is built
# once, then reused. Needs PHP; the cases that build need what building
# Swoole needs (skipped, saying so, without it).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../swoole.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

fail() { echo "swoole_sh_test: FAIL: $*" >&2; failures=$((failures + 1)); }
digest() { sha256sum "$1" | cut -d' ' -f1; }

# pack DIR TOP ARCHIVE: DIR's files under TOP/ in a .tar.gz.
pack() {
    rm -rf "$scratch/pack" && mkdir -p "$scratch/pack" && cp -R "$1" "$scratch/pack/$2"
    tar -czf "$3" -C "$scratch/pack" "$2"
}

# run NAME VAR=VALUE...: swoole.sh with a private cache and vendor folder,
# PECL off; its stderr in $scratch/NAME.err, exit status in $status.
run() {
    local name=$1
    shift
    env -u SWOOLE_SOURCE_ARCHIVE -u LIBURING_SOURCE_ARCHIVE -u SWOOLE_SOURCE_SHA256 -u LIBURING_SOURCE_SHA256 \
        COROBENCH_CACHE="$scratch/cache" COROBENCH_VENDOR_DIR="$scratch/vendor" SWOOLE_PECL_VERSION= \
        "$@" bash "$script" 2>"$scratch/$name.err"
    status=$?
}

# expect NAME STATUS PATTERN...: the run's status, and each pattern in its output.
expect() {
    local name=$1 want=$2 pattern
    shift 2
    [ "$status" = "$want" ] || fail "$name: exit status $status, not $want: $(cat "$scratch/$name.err")"
    for pattern in "$@"; do
        grep -qF -- "$pattern" "$scratch/$name.err" || fail "$name: no '$pattern' in: $(cat "$scratch/$name.err")"
    done
}

no_ini_dirs() {
    [ ! -e "$scratch/cache/swoole/epoll.d" ] && [ ! -e "$scratch/cache/swoole/uring.d" ] || fail "$1: an ini directory was left for targets to use"
}

mkdir -p "$scratch/vendor"
pack "$here/fake-swoole" swoole-0.0.1 "$scratch/swoole.tar.gz"
pack "$here/fake-liburing" liburing-2.15 "$scratch/liburing.tar.gz"
swoole_sha=$(digest "$scratch/swoole.tar.gz")
good=(SWOOLE_SOURCE_ARCHIVE="$scratch/swoole.tar.gz" SWOOLE_SOURCE_SHA256="$swoole_sha")

run nothing
expect nothing 1 "no Swoole source" "PECL is not asked" "SWOOLE_SOURCE_ARCHIVE" "$scratch/vendor"
no_ini_dirs nothing

run missing SWOOLE_SOURCE_ARCHIVE="$scratch/nowhere.tar.gz"
expect missing 1 "$scratch/nowhere.tar.gz" "does not exist" "swoole-epoll and swoole-uring will be skipped"
no_ini_dirs missing

run mismatch SWOOLE_SOURCE_ARCHIVE="$scratch/swoole.tar.gz"
expect mismatch 1 "has SHA-256 $swoole_sha, not the expected 57b321d11a95ea1a1830f57ea41a135a9af0d8f482dbd972b1da639c9ea4e4df" "SWOOLE_SOURCE_SHA256"
no_ini_dirs mismatch

head -c 4096 /dev/urandom >"$scratch/corrupt.tar.gz"
run corrupt SWOOLE_SOURCE_ARCHIVE="$scratch/corrupt.tar.gz" SWOOLE_SOURCE_SHA256="$(digest "$scratch/corrupt.tar.gz")"
expect corrupt 1 "cannot be read as a .tar.gz"
no_ini_dirs corrupt

mkdir -p "$scratch/other" && echo "not Swoole" >"$scratch/other/README"
pack "$scratch/other" other-1.0 "$scratch/other.tar.gz"
run other SWOOLE_SOURCE_ARCHIVE="$scratch/other.tar.gz" SWOOLE_SOURCE_SHA256="$(digest "$scratch/other.tar.gz")"
expect other 1 "is not a Swoole source (no */include/swoole_version.h in it)"
no_ini_dirs other

# What swoole.sh needs to build without installing anything.
if ! command -v phpize >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1 \
    || ! pkg-config --exists libssl libpq 2>/dev/null; then
    echo "swoole_sh_test: builds skipped (needs phpize, g++, make, and libssl's and libpq's development files)"
    [ "$failures" -eq 0 ] && echo "swoole_sh_test: ok (bad archives only)"
    exit $((failures > 0))
fi

# liburing too old: refused before building; the epoll build goes on.
cp -R "$here/fake-liburing" "$scratch/old-liburing" && sed -i 's/^Version: .*/Version: 2.3/' "$scratch/old-liburing/liburing.spec"
pack "$scratch/old-liburing" liburing-2.3 "$scratch/old-liburing.tar.gz"
run old "${good[@]}" LIBURING_SOURCE_ARCHIVE="$scratch/old-liburing.tar.gz" LIBURING_SOURCE_SHA256="$(digest "$scratch/old-liburing.tar.gz")"
expect old 1 "liburing 2.3" "older than the 2.8" "swoole-uring will be skipped" "with epoll sockets" "built from SWOOLE_SOURCE_ARCHIVE"
[ -d "$scratch/cache/swoole/epoll.d" ] || fail "old: no epoll build beside a liburing too old"
[ ! -e "$scratch/cache/swoole/uring.d" ] || fail "old: an io_uring build without liburing"

# liburing failing to build: its log's path and last lines.
cp -R "$here/fake-liburing" "$scratch/broken-liburing"
printf '#!/bin/sh\necho "this liburing refuses to configure" >&2\nexit 1\n' >"$scratch/broken-liburing/configure"
pack "$scratch/broken-liburing" liburing-2.15 "$scratch/broken-liburing.tar.gz"
run broken_liburing "${good[@]}" LIBURING_SOURCE_ARCHIVE="$scratch/broken-liburing.tar.gz" LIBURING_SOURCE_SHA256="$(digest "$scratch/broken-liburing.tar.gz")"
expect broken_liburing 1 "liburing 2.15 failed to build (log: $scratch/cache/swoole/logs/liburing-build.log)" "  | this liburing refuses to configure" "cached build reused"

# A Swoole that does not compile: its log's path and last lines, and no
# build left for the targets.
cp -R "$here/fake-swoole" "$scratch/broken-swoole" && echo '#error "this Swoole does not compile"' >>"$scratch/broken-swoole/swoole.c"
pack "$scratch/broken-swoole" swoole-0.0.1 "$scratch/broken-swoole.tar.gz"
run broken_swoole SWOOLE_SOURCE_ARCHIVE="$scratch/broken-swoole.tar.gz" SWOOLE_SOURCE_SHA256="$(digest "$scratch/broken-swoole.tar.gz")"
expect broken_swoole 1 "with epoll sockets failed to build (log: $scratch/cache/swoole/logs/epoll-build.log)" "this Swoole does not compile"
no_ini_dirs broken_swoole

# A good pair: both built, then both reused.
good+=(LIBURING_SOURCE_ARCHIVE="$scratch/liburing.tar.gz" LIBURING_SOURCE_SHA256="$(digest "$scratch/liburing.tar.gz")")
run first "${good[@]}"
expect first 0 "with epoll sockets for PHP" "with io_uring sockets (liburing 2.15) for PHP" "built from SWOOLE_SOURCE_ARCHIVE"
rows=$(PHP_INI_SCAN_DIR="$scratch/cache/swoole/uring.d" php --ri swoole 2>&1)
grep -q '^io_uring => enabled' <<<"$rows" || fail "first: the io_uring build does not call into its liburing: $rows"
run second "${good[@]}"
expect second 0 "with epoll sockets for PHP" "with io_uring sockets (liburing 2.15) for PHP"
[ "$(grep -c "cached build reused, nothing built" "$scratch/second.err")" = 2 ] || fail "second: built again: $(cat "$scratch/second.err")"

if [ "$failures" -gt 0 ]; then
    exit 1
fi
echo "swoole_sh_test: ok"
