#!/usr/bin/env bash
# Installs what corobench and its targets need, on Debian or Ubuntu, as root.
# Only what is missing is installed. A toolchain that cannot be had is
# reported here, and corobench later skips the targets that need it, saying so.
#
#   scripts/deps.sh bench   what `make bench` needs: the targets' runtimes, PostgreSQL
#   scripts/deps.sh test    the same, plus what the tests use (Chromium, mandoc, benchstat)
set -uo pipefail

mode=${1:-bench}
missing_packages=()
notes=()

have() { command -v "$1" >/dev/null 2>&1; }
want_package() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed" || missing_packages+=("$1"); }
note() { notes+=("$1"); }

# Rust builds corobench itself: nothing works without it.
if ! have cargo; then
    echo "deps: cargo is not installed; install Rust 1.85 or newer (https://rustup.rs) and run this again" >&2
    exit 1
fi

have nginx || want_package nginx-light
# suites/static-file-servers.toml compares them with nginx.
have caddy || want_package caddy
have h2o || want_package h2o
have lighttpd || want_package lighttpd
# mbstring: Swoole's connection pool recognises a lost connection with it.
for p in php8.2-fpm php8.2-cli php8.2-pgsql php8.2-mbstring; do want_package "$p"; done
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || want_package postgresql
have node || { want_package nodejs; want_package npm; }
have go || want_package golang-go
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || want_package python3-venv
have setpriv || want_package util-linux
# `corobench run --profile` samples the server's stacks with perf.
have perf || want_package linux-perf
# java-vthreads needs a JDK 21 or newer, which Debian 12 does not package:
# Maven is worth installing only beside one.
if sh "$(dirname "$0")/../targets/java-vthreads/jdk.sh" >/dev/null 2>&1; then
    have mvn || want_package maven
else
    note "no JDK 21 or newer (Debian 12 packages only OpenJDK 17): java-vthreads will be skipped; install one (e.g. Temurin 21+) to measure it"
fi
if [ "$mode" = test ]; then
    have chromium || want_package chromium
    # Lints the manual pages `corobench man` prints.
    have mandoc || want_package mandoc
    # The [hosts] test runs an sshd inside each network namespace it makes.
    [ -x /usr/sbin/sshd ] || want_package openssh-server
fi

if [ ${#missing_packages[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ] || ! have apt-get; then
        note "not installed (needs root and apt-get): ${missing_packages[*]}; the targets that need them will be skipped"
    else
        echo "deps: installing ${missing_packages[*]}"
        export DEBIAN_FRONTEND=noninteractive
        # corobench starts private nginx, PHP-FPM and PostgreSQL instances of
        # its own: keep the packages from starting system-wide services.
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
            trap 'rm -f /usr/sbin/policy-rc.d' EXIT
        fi
        if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing_packages[@]}" >/dev/null; }; then
            # One unavailable package must not keep the others out.
            for p in "${missing_packages[@]}"; do
                apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 || note "could not install $p: the targets that need it will be skipped"
            done
        fi
    fi
fi

if [ "$mode" = test ] && have go && ! have benchstat && [ ! -x "$(go env GOPATH 2>/dev/null)/bin/benchstat" ]; then
    echo "deps: installing benchstat (golang.org/x/perf/cmd/benchstat)"
    go install golang.org/x/perf/cmd/benchstat@latest >/dev/null 2>&1 || note "could not install benchstat: the benchstat cross-check test will be skipped"
fi

if have go; then
    version=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
    major_minor=$(printf '%s\n' "$version" | cut -d. -f1,2)
    if [ "$(printf '%s\n1.22\n' "$major_minor" | sort -V | head -n1)" != "1.22" ]; then
        note "Go $version is older than 1.22: the Go targets will fail to build"
    fi
fi

# The two Swoole targets need an extension no package source carries.
have php && { bash "$(dirname "$0")/swoole.sh" || true; }

for n in "${notes[@]+"${notes[@]}"}"; do echo "deps: $n" >&2; done
exit 0
