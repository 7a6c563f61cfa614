#!/bin/bash
# Starts php-fpm and nginx in the foreground as children of this script, in
# its process group, with private configurations written into $WORK_DIR.
# SIGTERM (corobench sends it to the whole group) stops both, then this
# script exits. nginx stays in the group; php-fpm leaves it (it calls
# setsid), so it is tied to this script's life instead (see below), and a
# SIGKILL to the group leaves nothing behind either.
#
# Environment: PORT, LISTEN_ADDR, TARGET_NAME, WORK_DIR, DATA_DIR, UPLOAD_DIR,
# DATABASE_URL (the contract's), CHILDREN (pm.max_children), NGINX_WORKERS,
# FASTCGI_KEEPALIVE (on|off: nginx keeps its FastCGI connections open),
# HTTP_PROTOCOL (http/1.1, h2 or h2c), TLS_CERT and TLS_KEY (PEM files: the
# port serves HTTPS, nginx terminating TLS).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
front_controller="$here/public/index.php"

die() {
  echo "php-fpm target: $*" >&2
  exit 2
}

positive_int() { # NAME VALUE
  [[ $2 =~ ^[0-9]{1,5}$ ]] && (($2 >= 1)) || die "$1 must be a positive integer, got '$2'"
}

[[ -n ${PORT:-} ]] || die "PORT must be set"
[[ -n ${WORK_DIR:-} ]] || die "WORK_DIR must be set"
CHILDREN=${CHILDREN:-8}
NGINX_WORKERS=${NGINX_WORKERS:-1}
FASTCGI_KEEPALIVE=${FASTCGI_KEEPALIVE:-off}
positive_int PORT "$PORT"
# LISTEN_ADDR: an IPv4 or IPv6 address (nginx wants the latter in brackets).
LISTEN_ADDR=${LISTEN_ADDR:-127.0.0.1}
if [[ $LISTEN_ADDR =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then
  nginx_listen="$LISTEN_ADDR:$PORT"
elif [[ $LISTEN_ADDR =~ ^[0-9a-fA-F:]+$ && $LISTEN_ADDR == *:* ]]; then
  nginx_listen="[$LISTEN_ADDR]:$PORT"
else
  die "LISTEN_ADDR must be an IP address such as 127.0.0.1 or 0.0.0.0, got '$LISTEN_ADDR'"
fi
positive_int CHILDREN "$CHILDREN"
positive_int NGINX_WORKERS "$NGINX_WORKERS"
case $FASTCGI_KEEPALIVE in
  # A kept FastCGI connection binds its FPM child to it: with more requests
  # in flight than children, connections queued in the FPM socket's backlog
  # wait while children idle on cached ones (see README), hence off by default.
  on) fastcgi_keep_conn=on upstream_keepalive="keepalive $CHILDREN;" ;;
  off) fastcgi_keep_conn=off upstream_keepalive="" ;;
  *) die "FASTCGI_KEEPALIVE must be on or off, got '$FASTCGI_KEEPALIVE'" ;;
esac
# The protocol decides the flags of nginx's listen line; the cleartext
# HTTP/1.1 configuration stays exactly as it was without them.
TLS_CERT=${TLS_CERT:-} TLS_KEY=${TLS_KEY:-}
serve_tls=0
if [[ -n $TLS_CERT || -n $TLS_KEY ]]; then
  [[ -n $TLS_CERT && -n $TLS_KEY ]] || die "TLS_CERT and TLS_KEY must be set together (PEM files), or neither"
  [[ -r $TLS_CERT ]] || die "TLS_CERT '$TLS_CERT' is not a readable file"
  [[ -r $TLS_KEY ]] || die "TLS_KEY '$TLS_KEY' is not a readable file"
  serve_tls=1
fi
HTTP_PROTOCOL=${HTTP_PROTOCOL:-http/1.1}
case $HTTP_PROTOCOL in
  http/1.1)
    listen_protocol=""
    if ((serve_tls)); then listen_protocol=" ssl"; fi
    ;;
  # nginx picks h2 by ALPN and still serves HTTP/1.1 to clients that offer only that.
  h2)
    ((serve_tls)) || die "HTTP_PROTOCOL=h2 is HTTP/2 over TLS: set TLS_CERT and TLS_KEY, or ask for h2c"
    listen_protocol=" ssl http2"
    ;;
  # nginx 1.22 serves cleartext HTTP/2 by prior knowledge only: HTTP/1.1
  # requests get no answer on this port.
  h2c)
    ((serve_tls)) && die "HTTP_PROTOCOL=h2c is cleartext HTTP/2: unset TLS_CERT and TLS_KEY, or ask for h2"
    listen_protocol=" http2"
    ;;
  *) die "HTTP_PROTOCOL must be http/1.1, h2 or h2c, got '$HTTP_PROTOCOL'" ;;
esac
[[ -d $WORK_DIR && -w $WORK_DIR ]] || die "WORK_DIR '$WORK_DIR' is not a writable directory"
FPM=$(command -v php-fpm8.2 || command -v php-fpm) || die "php-fpm8.2 is not on PATH (Debian: apt-get install php8.2-fpm)"
NGINX=$(command -v nginx) || die "nginx is not on PATH (Debian: apt-get install nginx)"

# A Unix socket path must fit in 108 bytes; a deep WORK_DIR falls back to /tmp.
socket_dir="$WORK_DIR"
if ((${#WORK_DIR} > 90)); then
  socket_dir=$(mktemp -d /tmp/corobench-fpm.XXXXXX)
fi
fpm_socket="$socket_dir/php-fpm.sock"
rm -f "$fpm_socket"

# As root, FPM needs a pool user (root itself, with -R) and nginx's workers
# must stay root to reach the socket and $WORK_DIR; as anyone else both
# simply run as that user and these lines are left out.
fpm_flags=(-F -O -y "$WORK_DIR/php-fpm.conf")
pool_user="" nginx_user=""
if (($(id -u) == 0)); then
  fpm_flags+=(-R)
  pool_user=$'user = root\ngroup = root'
  nginx_user="user root root;"
fi

# shellcheck source=write-configs.sh
source "$here/write-configs.sh"
write_fpm_conf
write_nginx_conf

fpm_pid="" nginx_pid=""
signalled=0
stop_children() {
  for pid in $fpm_pid $nginx_pid; do
    kill -TERM "$pid" 2>/dev/null || true
  done
}
cleanup() {
  [[ $socket_dir == "$WORK_DIR" ]] || rm -rf "$socket_dir"
}
on_signal() {
  signalled=1
  stop_children
}
trap on_signal TERM INT
trap cleanup EXIT

# FPM calls setsid() even in the foreground, leaving this process group, so
# a SIGKILL to the group would orphan it: PR_SET_PDEATHSIG makes the kernel
# send it SIGTERM when this script dies, however it dies.
setpriv --pdeathsig TERM -- "$FPM" "${fpm_flags[@]}" &
fpm_pid=$!
# nginx only starts once FPM listens, so /healthz never sees a 502.
for _ in $(seq 1 100); do
  [[ -S $fpm_socket ]] && break
  kill -0 "$fpm_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -S $fpm_socket ]] || { stop_children; wait; die "php-fpm did not open $fpm_socket"; }

"$NGINX" -p "$WORK_DIR/" -c "$WORK_DIR/nginx.conf" -e stderr &
nginx_pid=$!

# Returns when either exits or a trapped signal arrives; then stop both.
wait -n "$fpm_pid" "$nginx_pid" || true
((signalled)) || echo "php-fpm target: php-fpm or nginx exited on its own; stopping the other" >&2
stop_children
wait "$fpm_pid" "$nginx_pid" 2>/dev/null || true
((signalled)) || exit 1
