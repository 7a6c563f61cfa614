#!/usr/bin/env bash
# Builds the Swoole extension the swoole-epoll and swoole-uring targets
# need, twice and side by side, for the PHP on PATH: once with epoll
# sockets, once with io_uring sockets against a liburing built into a
# private prefix (Swoole's io_uring sockets need liburing 2.8 or newer;
# Debian 12 packages 2.3). Called by deps.sh; runs alone too.
#
# Where the sources come from, first match wins:
#   SWOOLE_SOURCE_ARCHIVE, LIBURING_SOURCE_ARCHIVE  release archives (.tar.gz) you name;
#   PECL (pecl.php.net), when reachable, for Swoole's source (version
#     SWOOLE_PECL_VERSION, default 6.2.2; set it empty not to ask PECL);
#   swoole-6.2.2.tar.gz and liburing-2.15.tar.gz in a vendor folder:
#     $COROBENCH_VENDOR_DIR, else `shared/vendor` beside this checkout's
#     folder or beside one of its parents.
# An archive must have the SHA-256 in SWOOLE_SOURCE_SHA256 / LIBURING_SOURCE_SHA256
# (by default that of the release named above); a mismatch is refused.
#
# Builds are kept in $COROBENCH_CACHE/swoole, keyed by the sources' digests,
# PHP's version and the build options, so a second run builds nothing.
# Each build gets an ini directory there (epoll.d, uring.d: PHP's own
# conf.d plus the build's swoole.ini) for SWOOLE_EPOLL_INI_DIR and
# SWOOLE_URING_INI_DIR, which the Makefile exports and
# targets/php-common/swoole-php.sh reads.
#
# Every outcome is one line on stderr (a failed build adds its log's last
# lines); the exit status is 0 when both builds are ready, 1 otherwise.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/swoole-build.sh
. "$here/swoole-build.sh"

SWOOLE_DEFAULT_ARCHIVE=swoole-6.2.2.tar.gz
SWOOLE_DEFAULT_SHA256=57b321d11a95ea1a1830f57ea41a135a9af0d8f482dbd972b1da639c9ea4e4df
LIBURING_DEFAULT_ARCHIVE=liburing-2.15.tar.gz
LIBURING_DEFAULT_SHA256=b0a0bb58cebb159427d3581dfdaeae09b98ec02c4bdf56e243d6d6af8ab3183e
SWOOLE_PECL_VERSION=${SWOOLE_PECL_VERSION-6.2.2}
root=${COROBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/corobench}/swoole

say() { echo "swoole: $*" >&2; }

# The vendor folder: named, or `shared/vendor` beside the checkout's folder
# or one of its parents (a worktree sits a level deeper than a clone).
vendor_dir() {
    if [ -n "${COROBENCH_VENDOR_DIR:-}" ]; then
        echo "$COROBENCH_VENDOR_DIR"
        return
    fi
    local dir
    dir=$(dirname "$repo")
    while [ "$dir" != / ]; do
        [ -d "$dir/shared/vendor" ] && { echo "$dir/shared/vendor"; return; }
        dir=$(dirname "$dir")
    done
}

pecl_reachable() {
    [ -n "$SWOOLE_PECL_VERSION" ] || return 1
    command -v pecl >/dev/null 2>&1 || [ "$(id -u)" -eq 0 ] || return 1
    php -r 'exit(@fsockopen("pecl.php.net", 443, $code, $message, 5) ? 0 : 1);'
}

# Swoole's source from PECL, into $1: prints the archive's path.
pecl_download() {
    local into=$1
    command -v pecl >/dev/null 2>&1 || install_packages php-pear || return 1
    local archive="$into/swoole-$SWOOLE_PECL_VERSION.tgz"
    rm -f "$archive"
    if ! (cd "$into" && pecl download "swoole-$SWOOLE_PECL_VERSION" >"$into/pecl.log" 2>&1) || [ ! -f "$archive" ]; then
        say "pecl download swoole-$SWOOLE_PECL_VERSION failed (log: $into/pecl.log); trying the vendor folder"
        return 1
    fi
    echo "$archive"
}

# Sets swoole_archive, swoole_sha256 (expected; empty: not checked) and
# swoole_origin, in the order the header gives.
choose_swoole_source() {
    local vendor
    if [ -n "${SWOOLE_SOURCE_ARCHIVE:-}" ]; then
        swoole_archive=$SWOOLE_SOURCE_ARCHIVE swoole_origin=SWOOLE_SOURCE_ARCHIVE
        swoole_sha256=${SWOOLE_SOURCE_SHA256:-$SWOOLE_DEFAULT_SHA256}
        return 0
    fi
    if pecl_reachable; then
        mkdir -p "$root/pecl"
        swoole_archive=$(pecl_download "$root/pecl") && [ -n "$swoole_archive" ] && {
            swoole_origin="PECL (swoole-$SWOOLE_PECL_VERSION)" swoole_sha256=${SWOOLE_SOURCE_SHA256:-}
            return 0
        }
    fi
    vendor=$(vendor_dir)
    if [ -n "$vendor" ] && [ -f "$vendor/$SWOOLE_DEFAULT_ARCHIVE" ]; then
        swoole_archive=$vendor/$SWOOLE_DEFAULT_ARCHIVE swoole_origin="the vendor folder"
        swoole_sha256=${SWOOLE_SOURCE_SHA256:-$SWOOLE_DEFAULT_SHA256}
        return 0
    fi
    local pecl="pecl.php.net cannot be reached"
    [ -n "$SWOOLE_PECL_VERSION" ] || pecl="PECL is not asked (SWOOLE_PECL_VERSION is empty)"
    say "no Swoole source: $pecl, SWOOLE_SOURCE_ARCHIVE is unset and no vendor folder holds $SWOOLE_DEFAULT_ARCHIVE${vendor:+ (looked in $vendor)}; name a Swoole release archive with SWOOLE_SOURCE_ARCHIVE: swoole-epoll and swoole-uring will be skipped"
    return 1
}

# Sets liburing_archive and liburing_sha256; empty archive: none at hand.
choose_liburing_source() {
    local vendor
    liburing_archive=${LIBURING_SOURCE_ARCHIVE:-} liburing_origin=LIBURING_SOURCE_ARCHIVE
    liburing_sha256=${LIBURING_SOURCE_SHA256:-$LIBURING_DEFAULT_SHA256}
    if [ -z "$liburing_archive" ]; then
        vendor=$(vendor_dir)
        if [ -n "$vendor" ] && [ -f "$vendor/$LIBURING_DEFAULT_ARCHIVE" ]; then
            liburing_archive=$vendor/$LIBURING_DEFAULT_ARCHIVE liburing_origin="the vendor folder"
        fi
    fi
}

# The io_uring build's liburing: built from its archive, else the system's
# when new enough. Sets uring_prefix (empty: the system's) and uring_label;
# returns 1, saying why, when there is none.
prepare_liburing() {
    if [ -n "$liburing_archive" ]; then
        check_archive liburing "$liburing_archive" "$liburing_sha256" "$liburing_origin" LIBURING_SOURCE_SHA256 src/include/liburing.h || return 1
        build_liburing || return 1
        return 0
    fi
    local system
    system=$(pkg-config --modversion liburing 2>/dev/null || echo none)
    if [ "$system" != none ] && version_at_least "$system" 2.8; then
        uring_prefix= uring_label="the system's liburing $system" uring_key="system-liburing-$system"
        return 0
    fi
    say "no liburing 2.8 or newer (the system has $system; Swoole's io_uring sockets need 2.8): name a liburing release archive with LIBURING_SOURCE_ARCHIVE: swoole-uring will be skipped"
    return 1
}

main() {
    if ! command -v php >/dev/null 2>&1; then
        say "PHP is not installed, so neither is Swoole: swoole-epoll and swoole-uring will be skipped"
        return 1
    fi
    mkdir -p "$root/logs" || { say "cannot create $root: swoole-epoll and swoole-uring will be skipped"; return 1; }
    # Two `make` runs at once build once: the second waits, then reuses.
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$root/.lock"
        flock -n 9 || { say "another build of Swoole is running here; waiting for it"; flock 9; }
    fi
    read_php || return 1
    local swoole_archive swoole_sha256 swoole_origin liburing_archive liburing_sha256 liburing_origin
    if ! choose_swoole_source \
        || ! check_archive swoole "$swoole_archive" "$swoole_sha256" "$swoole_origin" SWOOLE_SOURCE_SHA256 include/swoole_version.h; then
        drop_ini_dir epoll
        drop_ini_dir uring
        return 1
    fi
    swoole_version=$(archive_file swoole "$swoole_archive" include/swoole_version.h | sed -n 's/^#define SWOOLE_VERSION "\(.*\)"/\1/p')
    choose_liburing_source
    local status=0 uring_prefix= uring_label= uring_key=
    ready epoll || status=1
    if prepare_liburing; then
        ready uring || status=1
    else
        drop_ini_dir uring
        status=1
    fi
    return "$status"
}

main; exit $?
