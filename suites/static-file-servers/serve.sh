#!/bin/sh
# Starts one static-file server for suites/static-file-servers.toml in the
# foreground, on 127.0.0.1:PORT with one worker (one server core), serving
# WORK/www: a small text file, 4 KiB and 1 MiB files. The configuration is
# written into WORK, the trial's own folder, so nothing outside it changes.
#
#   serve.sh SERVER PORT WORK      SERVER: nginx, caddy, h2o or lighttpd
set -eu
server=$1 port=$2 work=$3
www=$work/www
mkdir -p "$www" "$work/tmp"
[ -f "$www/small.txt" ] || printf 'Hello, static world!\n' > "$www/small.txt"
[ -f "$www/4k.bin" ] || yes corobench | head -c 4096 > "$www/4k.bin"
[ -f "$www/1m.bin" ] || yes corobench | head -c 1048576 > "$www/1m.bin"
chmod -R a+rX "$work"

case $server in
nginx)
    cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    types { text/plain txt; application/octet-stream bin; }
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    server { listen 127.0.0.1:$port; root $www; }
}
CONF
    exec nginx -p "$work" -c "$work/nginx.conf"
    ;;
caddy)
    cat > "$work/Caddyfile" <<CONF
{
    admin off
    auto_https off
    storage file_system $work/caddy
}
http://127.0.0.1:$port {
    root * $www
    file_server
}
CONF
    # One Go thread runs Go code: one server core, as for the others.
    GOMAXPROCS=1 XDG_DATA_HOME=$work XDG_CONFIG_HOME=$work \
        exec caddy run --config "$work/Caddyfile" --adapter caddyfile
    ;;
h2o)
    cat > "$work/h2o.conf" <<CONF
num-threads: 1
user: nobody
listen:
  host: 127.0.0.1
  port: $port
error-log: $work/h2o-error.log
hosts:
  "default":
    paths:
      /:
        file.dir: $www
CONF
    exec h2o -c "$work/h2o.conf"
    ;;
lighttpd)
    cat > "$work/lighttpd.conf" <<CONF
server.document-root = "$www"
server.bind = "127.0.0.1"
server.port = $port
server.errorlog = "$work/lighttpd-error.log"
server.max-keep-alive-requests = 1000000
mimetype.assign = (".txt" => "text/plain", ".bin" => "application/octet-stream")
CONF
    exec lighttpd -D -f "$work/lighttpd.conf"
    ;;
*)
    echo "serve.sh: unknown server $server (nginx, caddy, h2o or lighttpd)" >&2
    exit 2
    ;;
esac
