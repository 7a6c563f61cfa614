#!/bin/sh
# swoole-php.sh: each Swoole target's PHP reads the ini directory named for
# its engine, and nothing else changes when none is named.
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "memory_limit=123M" > "$dir/limit.ini"
fail() { echo "swoole_php_test: $*" >&2; exit 1; }

got=$(SWOOLE_EPOLL_INI_DIR=$dir sh swoole-php.sh epoll -r 'echo ini_get("memory_limit");')
[ "$got" = 123M ] || fail "epoll with SWOOLE_EPOLL_INI_DIR read memory_limit=$got, not 123M"
got=$(SWOOLE_EPOLL_INI_DIR=$dir sh swoole-php.sh io_uring -r 'echo ini_get("memory_limit");')
[ "$got" != 123M ] || fail "io_uring read the directory meant for epoll"
got=$(SWOOLE_URING_INI_DIR=$dir sh swoole-php.sh io_uring -r 'echo ini_get("memory_limit");')
[ "$got" = 123M ] || fail "io_uring with SWOOLE_URING_INI_DIR read memory_limit=$got, not 123M"
if SWOOLE_EPOLL_INI_DIR=$dir/missing sh swoole-php.sh epoll -v >/dev/null 2>&1; then
    fail "a missing ini directory was accepted"
fi
if sh swoole-php.sh kqueue -v >/dev/null 2>&1; then
    fail "an unknown engine was accepted"
fi
echo "swoole_php_test: ok"
