#!/usr/bin/env bash
# Installs the Swoole extension that the swoole-epoll and swoole-uring
# targets need, through PECL, for the PHP on PATH; called by deps.sh. No
# package source carries Swoole, so PECL (pecl.php.net) must be reachable.
#
# Built with PostgreSQL support (the /db endpoint); with io_uring sockets too
# when liburing 2.8 or newer is installed (Swoole refuses older ones, and
# Debian 12 packages 2.3): without it, swoole-epoll works and swoole-uring
# is skipped. Every outcome is one line on stderr; the exit status is 0 when
# the extension is there afterwards, 1 otherwise.
set -uo pipefail

say() { echo "swoole: $*" >&2; }
has_swoole() { php --ri swoole >/dev/null 2>&1; }

if ! command -v php >/dev/null 2>&1; then
    say "PHP is not installed, so neither is Swoole: swoole-epoll and swoole-uring will be skipped"
    exit 1
fi
if has_swoole; then
    say "Swoole $(php -r 'echo phpversion("swoole");') is already installed"
    exit 0
fi
# Checked first: the development packages are worth installing only when
# the extension's source can then be fetched.
if ! php -r 'exit(@fsockopen("pecl.php.net", 443, $code, $message, 10) ? 0 : 1);'; then
    say "pecl.php.net cannot be reached from this machine, so the Swoole extension is not installed: swoole-epoll and swoole-uring will be skipped (targets/swoole-epoll/README.md says how to build it yourself)"
    exit 1
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    say "installing Swoole needs root and apt-get (for PHP's development headers and PECL): swoole-epoll and swoole-uring will be skipped"
    exit 1
fi
php_version=$(php -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends php-pear "php$php_version-dev" "php$php_version-mbstring" libpq-dev libssl-dev pkg-config >/dev/null; then
    say "PHP's development packages (php-pear, php$php_version-dev, libpq-dev) could not be installed: swoole-epoll and swoole-uring will be skipped"
    exit 1
fi

uring=no
liburing=$(pkg-config --modversion liburing 2>/dev/null || echo none)
if [ "$liburing" != none ] && [ "$(printf '%s\n2.8\n' "$liburing" | sort -V | head -n1)" = 2.8 ]; then
    uring=yes
fi
options="enable-openssl=\"yes\" enable-swoole-pgsql=\"yes\" enable-iouring=\"$uring\" enable-uring-socket=\"$uring\""
say "building Swoole through PECL ($options)"
if ! pecl install -f -D "$options" swoole >/tmp/swoole-pecl.log 2>&1; then
    say "pecl install swoole failed (log: /tmp/swoole-pecl.log): swoole-epoll and swoole-uring will be skipped"
    exit 1
fi
echo "extension=swoole.so" >"/etc/php/$php_version/mods-available/swoole.ini"
phpenmod -v "$php_version" -s cli swoole
if ! has_swoole; then
    say "Swoole was built but PHP does not load it (php --ri swoole fails): swoole-epoll and swoole-uring will be skipped"
    exit 1
fi
say "Swoole $(php -r 'echo phpversion("swoole");') installed"
if [ "$uring" = no ]; then
    say "built without io_uring sockets (liburing $liburing; Swoole needs 2.8 or newer): swoole-uring will be skipped"
fi
exit 0
