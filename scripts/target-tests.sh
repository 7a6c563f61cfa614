#!/usr/bin/env bash
# The targets' own lints and unit tests, each in its ecosystem's idiom.
# A language whose toolchain is missing is skipped, saying so; any failure
# fails the script (after every language has run).
set -uo pipefail
cd "$(dirname "$0")/../targets"

cache=${COROBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/corobench}
failures=()
have() { command -v "$1" >/dev/null 2>&1; }
step() {
    local label=$1; shift
    echo "== $label"
    "$@" || failures+=("$label")
}

go_checks() {
    local module=$1
    local unformatted
    unformatted=$(cd "$module" && gofmt -l .)
    [ -z "$unformatted" ] || { echo "gofmt: needs formatting: $unformatted"; return 1; }
    (cd "$module" && go vet ./... && go test ./...)
}

python_checks() {
    local venv="$cache/test-venv-python-fastapi"
    python3 -m venv "$venv" && "$venv/bin/pip" install -q -r python-fastapi/requirements-dev.txt \
        && (cd python-fastapi && "$venv/bin/python" -m pyflakes server tests && "$venv/bin/python" -m pytest -q tests)
}

php_checks() {
    local file
    for file in php-fpm/public/*.php php-common/*.php php-common/tests/*.php; do
        php -l "$file" >/dev/null || { echo "php -l failed: $file"; return 1; }
    done
    bash -n php-fpm/run.sh php-fpm/write-configs.sh && sh -n php-common/swoole-php.sh \
        && sh php-common/tests/swoole_php_test.sh && php php-common/tests/contract_test.php \
        && bash ../scripts/tests/swoole_sh_test.sh
}

# The Swoole targets' own test, on each build that is here (scripts/swoole.sh
# makes them; the Makefile names them in SWOOLE_EPOLL_INI_DIR and
# SWOOLE_URING_INI_DIR).
swoole_checks() {
    local engine ran=0
    for engine in epoll io_uring; do
        if ! sh php-common/swoole-php.sh "$engine" php-common/swoole-probe.php "$engine" >/dev/null 2>&1; then
            echo "swoole with $engine sockets: skipped (no such Swoole build for this PHP; scripts/swoole.sh makes one)"
            continue
        fi
        sh php-common/swoole-php.sh "$engine" php-common/tests/swoole_gate_test.php || return 1
        ran=$((ran + 1))
    done
    [ "${COROBENCH_REQUIRE_SWOOLE:-0}" != 1 ] || [ "$ran" = 2 ] || { echo "COROBENCH_REQUIRE_SWOOLE=1 but not both Swoole builds are here"; return 1; }
}

rust_checks() {
    # One target directory for all Rust targets, in release like corobench's
    # own builds of them, so `corobench verify` reuses what these compile.
    # rust-common's runtime adapters sit behind features: check them all.
    local project=$1 features=()
    [ "$project" = rust-common ] && features=(--all-features)
    (cd "$project" && cargo fmt --check \
        && CARGO_TARGET_DIR="$cache/cargo-target" cargo clippy --release --all-targets --locked "${features[@]}" -- -D warnings \
        && CARGO_TARGET_DIR="$cache/cargo-target" cargo test --release --locked "${features[@]}")
}

java_checks() {
    # Built in a copy under the cache, so Maven's target/ never enters the
    # source folder (or its build hash).
    local jdk work="$cache/test-java-vthreads"
    jdk=$(sh java-vthreads/jdk.sh) || return 1
    rm -rf "$work" && mkdir -p "$work" && cp -R java-vthreads/pom.xml java-vthreads/src "$work"/ \
        && (cd "$work" && JAVA_HOME=$jdk mvn -B -q --no-transfer-progress test)
}

if have go; then
    for module in go-common go-nethttp go-ants go-gnet go-ants-tasks go-fanout-client go-fairness go-idle-goroutines ../examples/orders-service; do step "go: $module" go_checks "$module"; done
else
    echo "== go: skipped (go is not installed)"
fi
if have node; then
    step "node: node-http" bash -c 'cd node-http && node --check src/*.js && node --test test/'
else
    echo "== node: skipped (node is not installed)"
fi
if have python3; then step "python: python-fastapi" python_checks; else echo "== python: skipped (python3 is not installed)"; fi
if have php; then
    step "php: php-fpm, php-common" php_checks
    step "php: swoole-epoll, swoole-uring" swoole_checks
else
    echo "== php: skipped (php is not installed)"
fi
if have mvn && sh java-vthreads/jdk.sh >/dev/null 2>&1; then
    step "java: java-vthreads" java_checks
else
    echo "== java: skipped (needs Maven and a JDK 21 or newer)"
fi
for project in rust-common rust-axum rust-compio rust-monoio; do step "rust: $project" rust_checks "$project"; done

if [ ${#failures[@]} -gt 0 ]; then
    echo "target tests failed: ${failures[*]}" >&2
    exit 1
fi
echo "target tests: all passed"
