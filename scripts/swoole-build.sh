# Functions of scripts/swoole.sh: checking source archives, building
# liburing and Swoole from them, and the ini directories that select each
# build. Sourced, never run; `say`, `root` and the chosen sources come from
# swoole.sh.

# Bump when the build options change, so cached builds are not reused.
BUILD_RECIPE=1
# Rows `php --ri swoole` must show for each build; the io_uring build adds
# the engine's two. (Swoole 6 always builds OpenSSL and HTTP/2 in: its
# configure has no option for either, only this check.)
COMMON_ROWS=("openssl => " "http2 => enabled" "coroutine_pgsql => enabled")
URING_ROWS=("io_uring => enabled" "uring_socket => enabled")

version_at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }
target_of() { [ "$1" = epoll ] && echo swoole-epoll || echo swoole-uring; }
skipped_for() { [ "$1" = swoole ] && echo "swoole-epoll and swoole-uring will be skipped" || echo "swoole-uring will be skipped"; }

# The PHP that the targets run and its build tools; sets php_version,
# php_id (what a build depends on), scan_dir, phpize and php_config.
read_php() {
    php_version=$(php -r 'echo PHP_VERSION;')
    php_mm=$(php -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')
    php_id=$(php -r 'echo PHP_VERSION, PHP_ZTS ? "-zts" : "-nts", PHP_DEBUG ? "-debug" : "", " ", PHP_EXTENSION_DIR;')
    scan_dir=$(php -r 'echo PHP_CONFIG_FILE_SCAN_DIR;')
    jobs=$(nproc 2>/dev/null || echo 2)
}

install_packages() {
    [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
    mkdir -p "$root/logs"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$@" >"$root/logs/apt.log" 2>&1 \
        || { apt-get update -qq >>"$root/logs/apt.log" 2>&1 \
            && apt-get install -y -qq --no-install-recommends "$@" >>"$root/logs/apt.log" 2>&1; }
}

# What building needs: PHP's headers and phpize, libpq's and OpenSSL's
# headers, a C++ compiler; their packages are installed when one is
# missing (as root, with apt-get). Sets phpize and php_config.
ensure_build_tools() {
    phpize=$(command -v "phpize$php_mm" || command -v phpize)
    php_config=$(command -v "php-config$php_mm" || command -v php-config)
    if [ -n "$phpize" ] && [ -n "$php_config" ] && command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 \
        && pkg-config --exists libssl libpq 2>/dev/null; then
        return 0
    fi
    local packages=("php$php_mm-dev" libpq-dev libssl-dev pkg-config g++ make)
    if ! install_packages "${packages[@]}"; then
        say "building Swoole needs ${packages[*]}, which could not be installed (needs root and apt-get; log: $root/logs/apt.log): swoole-epoll and swoole-uring will be skipped"
        return 1
    fi
    phpize=$(command -v "phpize$php_mm" || command -v phpize)
    php_config=$(command -v "php-config$php_mm" || command -v php-config)
}

# check_archive KIND PATH EXPECTED_SHA256 ORIGIN SHA256_VARIABLE MARKER
# Refuses a missing file, a digest other than the expected one (none
# expected: not checked), an archive tar cannot read and one without
# TOP/MARKER; sets KIND_digest and KIND_top.
check_archive() {
    local kind=$1 path=$2 expected=$3 origin=$4 sha_variable=$5 marker=$6 name label actual listing top
    name=$([ "$kind" = swoole ] && echo Swoole || echo liburing)
    label="the $name archive $path (from $origin)"
    if [ ! -f "$path" ]; then
        say "$label does not exist: $(skipped_for "$kind")"
        return 1
    fi
    actual=$(sha256sum "$path" | cut -d' ' -f1)
    if [ -n "$expected" ] && [ "$actual" != "$expected" ]; then
        say "$label has SHA-256 $actual, not the expected $expected (set $sha_variable to accept another release): refusing it, $(skipped_for "$kind")"
        return 1
    fi
    if ! listing=$(tar -tzf "$path" 2>/dev/null); then
        say "$label cannot be read as a .tar.gz (corrupt, or another format): $(skipped_for "$kind")"
        return 1
    fi
    top=$(grep -m1 -E "^[^/]+/${marker}\$" <<<"$listing" | cut -d/ -f1)
    if [ -z "$top" ]; then
        say "$label is not a $name source (no */$marker in it): $(skipped_for "$kind")"
        return 1
    fi
    printf -v "${kind}_digest" %s "$actual"
    printf -v "${kind}_top" %s "$top"
}

# archive_file KIND ARCHIVE MEMBER: one file of a checked archive, on stdout.
archive_file() {
    local top_variable="${1}_top"
    tar -xzOf "$2" "${!top_variable}/$3" 2>/dev/null
}

# The last lines of a failed build's log, under its one line.
log_tail() { tail -n 6 "$1" | sed 's/^/  | /' >&2; }

# Builds liburing (static, position-independent, so swoole.so carries it
# and never meets the system's older liburing.so) into a prefix of its own.
build_liburing() {
    local version log work
    version=$(archive_file liburing "$liburing_archive" liburing.spec | sed -n 's/^Version:[[:space:]]*//p')
    if [ -z "$version" ]; then
        say "the liburing archive $liburing_archive has no version in liburing.spec, so it is not a liburing release: swoole-uring will be skipped"
        return 1
    fi
    if ! version_at_least "$version" 2.8; then
        say "liburing $version ($liburing_archive) is older than the 2.8 Swoole's io_uring sockets need: swoole-uring will be skipped"
        return 1
    fi
    uring_prefix=$root/liburing-${liburing_digest:0:16}-r$BUILD_RECIPE
    uring_label="liburing $version" uring_key="liburing-$liburing_digest"
    [ -f "$uring_prefix/.complete" ] && return 0
    ensure_build_tools || return 1
    log=$root/logs/liburing-build.log work=$(mktemp -d "$root/work.XXXXXX")
    rm -rf "$uring_prefix"
    if ! (tar -xzf "$liburing_archive" -C "$work" && cd "$work/$liburing_top" \
        && ./configure --prefix="$uring_prefix" && make -C src -j"$jobs" ENABLE_SHARED=0 LIBURING_CFLAGS=-fPIC \
        && make install ENABLE_SHARED=0) >"$log" 2>&1; then
        rm -rf "$work" "$uring_prefix"
        say "liburing $version failed to build (log: $log): swoole-uring will be skipped"
        log_tail "$log"
        return 1
    fi
    rm -rf "$work"
    touch "$uring_prefix/.complete" || return 1
    prune "$root" "liburing-*" "$uring_prefix"
}

# What a build of FLAVOUR depends on, as a short digest.
build_key() {
    local inputs="recipe=$BUILD_RECIPE flavour=$1 php=$php_id swoole=$swoole_digest"
    [ "$1" = uring ] && inputs="$inputs $uring_key"
    printf '%s' "$inputs" | sha256sum | cut -c1-16
}

# build_swoole FLAVOUR DIR: phpize, configure and make in a fresh copy of
# the source; DIR/swoole.so on success.
build_swoole() {
    local flavour=$1 dir=$2 log work options=(--enable-swoole-pgsql) flags=()
    log=$root/logs/$flavour-build.log work=$(mktemp -d "$root/work.XXXXXX")
    if [ "$flavour" = uring ]; then
        options+=(--enable-iouring --enable-uring-socket)
        # Swoole's configure probes read the first liburing.h the compiler
        # finds: the private prefix's headers go first.
        [ -n "$uring_prefix" ] && flags=("PKG_CONFIG_PATH=$uring_prefix/lib/pkgconfig" "CPPFLAGS=-I$uring_prefix/include")
    fi
    if ! (tar -xzf "$swoole_archive" -C "$work" && cd "$work/$swoole_top" && "$phpize" \
        && env "${flags[@]}" ./configure --with-php-config="$php_config" "${options[@]}" \
        && make -j"$jobs") >"$log" 2>&1; then
        rm -rf "$work"
        say "Swoole $swoole_version with $flavour sockets failed to build (log: $log): $(target_of "$flavour") will be skipped"
        log_tail "$log"
        return 1
    fi
    rm -rf "$dir" && mkdir -p "$dir" && cp "$work/$swoole_top/modules/swoole.so" "$dir/swoole.so" || {
        rm -rf "$work"
        say "Swoole $swoole_version with $flavour sockets built no modules/swoole.so (log: $log): $(target_of "$flavour") will be skipped"
        return 1
    }
    printf 'source: %s (%s)\nsha256: %s\nconfigure: %s %s\nphp: %s\n' "$swoole_archive" "$swoole_origin" \
        "$swoole_digest" "${flags[*]}" "${options[*]}" "$php_id" >"$dir/build.txt"
    rm -rf "$work"
}

# write_ini_dir FLAVOUR SO: DIR=$root/FLAVOUR.d holds links to PHP's own
# ini files (any other Swoole left out) and a swoole.ini loading SO; kept
# only when PHP, reading it, reports every row the build must have.
write_ini_dir() {
    local flavour=$1 so=$2 dir="$root/$1.d" next="$root/$1.d.new" file info missing=() row rows=("${COMMON_ROWS[@]}")
    [ "$flavour" = uring ] && rows+=("${URING_ROWS[@]}")
    rm -rf "$next" && mkdir -p "$next"
    for file in "$scan_dir"/*.ini; do
        [ -e "$file" ] || continue
        case ${file##*/} in *swoole*) continue ;; esac
        ln -s "$file" "$next/${file##*/}"
    done
    echo "extension=$so" >"$next/30-swoole.ini"
    info=$(PHP_INI_SCAN_DIR=$next php --ri swoole 2>&1)
    for row in "${rows[@]}"; do
        grep -q "^$row" <<<"$info" || missing+=("${row%% =>*}")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        rm -rf "$next"
        say "Swoole built with $flavour sockets ($so) does not report ${missing[*]} in php --ri swoole: $(target_of "$flavour") will be skipped"
        return 1
    fi
    rm -rf "$dir" && mv "$next" "$dir"
}

drop_ini_dir() { rm -rf "$root/$1.d"; }

# prune DIR GLOB KEEP: older builds of the same kind go.
prune() {
    local old
    for old in "$1"/$2; do
        [ "$old" = "$3" ] || [ ! -e "$old" ] || rm -rf "$old"
    done
}

# ready FLAVOUR: the build for the current sources, cached or made now,
# with its ini directory; one line either way.
ready() {
    local flavour=$1 key dir started variable engine
    key=$(build_key "$flavour")
    dir=$root/builds/$flavour-$key
    engine=$([ "$flavour" = uring ] && echo "io_uring sockets ($uring_label)" || echo "epoll sockets")
    variable=$([ "$flavour" = uring ] && echo SWOOLE_URING_INI_DIR || echo SWOOLE_EPOLL_INI_DIR)
    if [ -f "$dir/swoole.so" ]; then
        write_ini_dir "$flavour" "$dir/swoole.so" || { drop_ini_dir "$flavour"; return 1; }
        say "Swoole $swoole_version with $engine for PHP $php_version: cached build reused, nothing built ($variable=$root/$flavour.d)"
        return 0
    fi
    started=$SECONDS
    ensure_build_tools && build_swoole "$flavour" "$dir" && write_ini_dir "$flavour" "$dir/swoole.so" || {
        rm -rf "$dir"
        drop_ini_dir "$flavour"
        return 1
    }
    prune "$root/builds" "$flavour-*" "$dir"
    say "Swoole $swoole_version with $engine for PHP $php_version: built from $swoole_origin in $((SECONDS - started)) s ($variable=$root/$flavour.d)"
}
