#!/bin/sh
# PHP for one of the Swoole targets: swoole-php.sh ENGINE PHP-ARGS...
#
# Which socket engine Swoole uses is fixed when the extension is built, and
# one PHP configuration loads one build. To measure both targets in one run,
# keep a second build in its own ini scan directory (a copy of conf.d whose
# swoole.ini names the other swoole.so) and point SWOOLE_EPOLL_INI_DIR or
# SWOOLE_URING_INI_DIR at it: that target's PHP then reads that directory
# instead of the default. Unset, PHP's own configuration applies.
set -eu
engine=${1:-}
[ $# -gt 0 ] && shift
case $engine in
epoll) dir=${SWOOLE_EPOLL_INI_DIR:-} ;;
io_uring) dir=${SWOOLE_URING_INI_DIR:-} ;;
*)
    echo "usage: swoole-php.sh epoll|io_uring PHP-ARGS..." >&2
    exit 2
    ;;
esac
if [ -n "$dir" ]; then
    if [ ! -d "$dir" ]; then
        echo "swoole-php.sh: the ini directory for $engine ($dir) does not exist" >&2
        exit 2
    fi
    PHP_INI_SCAN_DIR=$dir
    export PHP_INI_SCAN_DIR
fi
exec php "$@"
