# Shared by the bench scripts: a private nginx answering "Hello, World!" on a
# free loopback port, one worker pinned to a CPU. Source it, then:
#   bench_setup NAME                           sets out=bench/out/NAME-<time>, installs
#                                              the tools, builds corobench (unless
#                                              COROBENCH names a binary); sets corobench
#   start_nginx DIR CPU [WORKER_CONNECTIONS]   sets NGINX_URL, NGINX_PID, NGINX_WORKER_PID
#   stop_nginx
# The caller must have set an EXIT trap that calls stop_nginx.

bench_setup() {
    out=bench/out/$1-$(date +%Y%m%d-%H%M%S)
    mkdir -p "$out"
    ensure_tools
    # COROBENCH=/path/to/corobench: measure that binary as it is, unbuilt.
    corobench=${COROBENCH:-$PWD/target/release/corobench}
    [ -n "${COROBENCH:-}" ] || cargo build --release --locked --bin corobench >/dev/null
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
        listen 127.0.0.1:$port backlog=16384 reuseport;
        location / { default_type text/plain; return 200 'Hello, World!'; }
    }
}
CONF
    taskset -c "$cpu" nginx -c "$dir/nginx.conf" &
    NGINX_PID=$!
    NGINX_URL=http://127.0.0.1:$port/
    for _ in $(seq 100); do curl -s -o /dev/null "$NGINX_URL" && break; sleep 0.1; done
    NGINX_WORKER_PID=$(pgrep -P "$NGINX_PID" | head -n1)
}

stop_nginx() {
    if [ -n "${NGINX_PID:-}" ]; then
        kill -QUIT "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
        NGINX_PID=
    fi
}
