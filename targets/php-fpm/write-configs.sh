# Sourced by run.sh: writes the private php-fpm and nginx configurations into
# $WORK_DIR. Everything either server writes (pid files, temp files, the
# FastCGI socket) stays there; logs go to stderr, access logs are off.
# shellcheck shell=bash

write_fpm_conf() {
  cat >"$WORK_DIR/php-fpm.conf" <<CONF
[global]
pid = $WORK_DIR/php-fpm.pid
error_log = /proc/self/fd/2
log_level = warning
daemonize = no

[corobench]
$pool_user
listen = $fpm_socket
listen.backlog = 4096
; Exactly CHILDREN processes for the whole run: the model under test.
pm = static
pm.max_children = $CHILDREN
pm.max_requests = 0
; The contract's environment (TARGET_NAME, DATA_DIR, ...) reaches the script.
clear_env = no
catch_workers_output = yes
decorate_workers_output = no
; Uploads are streamed from php://input, never parsed into \$_POST or files.
php_admin_value[enable_post_data_reading] = Off
php_admin_flag[expose_php] = off
php_admin_value[memory_limit] = 256M
php_admin_value[max_execution_time] = 0
CONF
}

write_fastcgi_params() {
  cat >"$WORK_DIR/fastcgi-common.conf" <<CONF
fastcgi_param SCRIPT_FILENAME $front_controller;
fastcgi_param QUERY_STRING \$query_string;
fastcgi_param REQUEST_METHOD \$request_method;
fastcgi_param CONTENT_TYPE \$content_type;
fastcgi_param REQUEST_URI \$request_uri;
fastcgi_param DOCUMENT_URI \$document_uri;
fastcgi_param SERVER_PROTOCOL \$server_protocol;
fastcgi_param GATEWAY_INTERFACE CGI/1.1;
fastcgi_param REMOTE_ADDR \$remote_addr;
fastcgi_param REMOTE_PORT \$remote_port;
fastcgi_param SERVER_ADDR \$server_addr;
fastcgi_param SERVER_PORT \$server_port;
fastcgi_pass php_fpm;
CONF
}

# Statuses nginx may answer itself before PHP runs. Each is redirected to a
# URI of its own that reaches PHP with the status as a parameter (a named
# location cannot serve errors met while reading the request line, and
# \$status reads 0 after the redirect). PHP honours the parameter only on an
# internal redirect (\$request_uri differs from \$uri).
nginx_statuses=(400 413 414)

nginx_error_pages() {
  for status in "${nginx_statuses[@]}"; do
    echo "        error_page $status = /.corobench-status/$status;"
  done
}

nginx_error_locations() {
  for status in "${nginx_statuses[@]}"; do
    cat <<CONF
        location = /.corobench-status/$status {
            # Over HTTP/2 nginx skips a refused body without marking it
            # discarded, and would refuse it again here, answering 413 itself.
            client_max_body_size 0;
            fastcgi_param COROBENCH_NGINX_STATUS $status;
            include $WORK_DIR/fastcgi-common.conf;
        }
CONF
  done
}

# The TLS lines of the server block, when TLS_CERT and TLS_KEY are set:
# TLS 1.2 and 1.3, resumption by ticket (nginx's default) and by session id
# from a cache all workers share, and nothing said in cleartext.
nginx_tls() {
  ((serve_tls)) || return 0
  cat <<CONF
        ssl_certificate "$TLS_CERT";
        ssl_certificate_key "$TLS_KEY";
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:corobench_tls:10m;
        # A cleartext request on this port is closed unanswered (nginx would
        # answer it with a cleartext 400 otherwise: code 497).
        error_page 497 = @cleartext_on_tls;
        location @cleartext_on_tls {
            return 444;
        }
CONF
}

# HTTP/2 has no chunked encoding: a body of unknown length comes without
# Content-Length, and FPM reads a body only as far as CONTENT_LENGTH says.
# Over HTTP/2 such an upload is therefore read whole by nginx first (into
# \$WORK_DIR/nginx-temp), which then knows the length; uploads that declare
# it stream to PHP as over HTTP/1.1.
nginx_unsized_upload() {
  [[ $listen_protocol == *http2* ]] || return 0
  cat <<CONF
        location = /upload {
            if (\$http_content_length = "") {
                rewrite ^ /.corobench-unsized-upload last;
            }
            fastcgi_param CONTENT_LENGTH \$content_length;
            include $WORK_DIR/fastcgi-common.conf;
        }

        # A client asking for this URI itself reaches PHP, which answers 404.
        location = /.corobench-unsized-upload {
            fastcgi_request_buffering on;
            fastcgi_param CONTENT_LENGTH \$content_length;
            include $WORK_DIR/fastcgi-common.conf;
        }

CONF
}

write_nginx_conf() {
  write_fastcgi_params
  mkdir -p "$WORK_DIR/nginx-temp"
  cat >"$WORK_DIR/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes $NGINX_WORKERS;
pid $WORK_DIR/nginx.pid;
error_log stderr warn;
$nginx_user

events {
    worker_connections 16384;
}

http {
    access_log off;
    server_tokens off;
    client_body_temp_path $WORK_DIR/nginx-temp/client_body;
    fastcgi_temp_path $WORK_DIR/nginx-temp/fastcgi;
    proxy_temp_path $WORK_DIR/nginx-temp/proxy;
    uwsgi_temp_path $WORK_DIR/nginx-temp/uwsgi;
    scgi_temp_path $WORK_DIR/nginx-temp/scgi;
    # A load generator's connection is never closed after N requests.
    keepalive_requests 100000000;
    keepalive_timeout 75s;

    upstream php_fpm {
        server unix:$fpm_socket;
        $upstream_keepalive
    }

    server {
        listen $nginx_listen${listen_protocol} backlog=4096;
$(nginx_tls)
        # nginx refuses a larger Content-Length before reading the body and
        # hands the 413 to PHP so it carries the contract's
        # headers; smaller bodies stream to PHP as they arrive.
        client_max_body_size 64m;
        fastcgi_request_buffering off;
        fastcgi_keep_conn $fastcgi_keep_conn;
        # Responses are buffered in memory up to 512 KiB, never in temp files:
        # past that the FPM child waits for the client, as it would alone.
        fastcgi_buffer_size 16k;
        fastcgi_buffers 32 16k;
        fastcgi_max_temp_file_size 0;
$(nginx_error_pages)
        error_page 502 504 = @fpm_down;

        location / {
            fastcgi_param CONTENT_LENGTH \$content_length;
            include $WORK_DIR/fastcgi-common.conf;
        }

$(nginx_unsized_upload)
$(nginx_error_locations)

        location @fpm_down {
            default_type application/json;
            return 502 '{"error":"php-fpm is not answering"}';
        }
    }
}
CONF
}
