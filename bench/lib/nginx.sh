# Shared by the bench scripts: a private nginx answering "Hello, World!" on a
# free loopback port, one worker pinned to a CPU. Source it, then:
#   bench_setup NAME                           sets out=bench/out/NAME-<time>, installs
#                                              the tools, builds corobench
#   start_nginx DIR CPU [WORKER_CONNECTIONS]   sets NGINX_URL, NGINX_PID, NGINX_WORKER_PID
#   stop_nginx
# With NGINX_TLS=1 nginx serves HTTPS (TLS 1.2 and 1.3, session tickets on)
# with a throwaway self-signed ECDSA certificate made in DIR, and NGINX_URL
# is https://.
# The caller must have set an EXIT trap that calls stop_nginx.

bench_setup() {
    out=bench/out/$1-$(date +%Y%m%d-%H%M%S)
    mkdir -p "$out"
    ensure_tools
    cargo build --release --locked --bin corobench >/dev/null
}

ensure_tools() {
    local missing=()
    command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
    command -v wrk >/dev/null 2>&1 || missing+=(wrk)
    [ -x /usr/bin/time ] || missing+=(time)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_nginx() {
    local dir=$1 cpu=$2 connections=${3:-4096} port files hard
    port=$(free_port)
    # nginx closes connections near its worker_connections limit: leave room,
    # within the descriptors this shell may hand it.
    hard=$(ulimit -Hn)
    files=$((connections * 2 + 128))
    [ "$hard" = unlimited ] || [ "$files" -le "$hard" ] || files=$hard
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    local listen_tls="" tls_conf="" scheme=http
    if [ -n "${NGINX_TLS:-}" ]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
            -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
            -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
        listen_tls=" ssl"
        tls_conf="ssl_certificate $dir/cert.pem; ssl_certificate_key $dir/key.pem; ssl_protocols TLSv1.2 TLSv1.3; ssl_session_tickets on; ssl_session_cache shared:tls:10m;"
        scheme=https
    fi
    cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile $files;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections $((files - 64)); multi_accept on; use epoll; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    keepalive_requests 10000000;
    keepalive_timeout 300s;
    server {
        listen 127.0.0.1:$port$listen_tls backlog=16384 reuseport;
        $tls_conf
        location / { default_type text/plain; return 200 'Hello, World!'; }
    }
}
CONF
    taskset -c "$cpu" nginx -c "$dir/nginx.conf" &
    NGINX_PID=$!
    NGINX_URL=$scheme://127.0.0.1:$port/
    for _ in $(seq 100); do curl -sk -o /dev/null "$NGINX_URL" && break; sleep 0.1; done
    NGINX_WORKER_PID=$(pgrep -P "$NGINX_PID" | head -n1)
}

stop_nginx() {
    if [ -n "${NGINX_PID:-}" ]; then
        kill -QUIT "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
        NGINX_PID=
    fi
}
