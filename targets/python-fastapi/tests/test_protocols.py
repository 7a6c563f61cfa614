import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import pytest

from server import contract
from server.http2 import hypercorn_config
from server.http2_app import with_server_header

TARGET = Path(__file__).resolve().parent.parent


def test_protocol_defaults_to_cleartext_http1():
    protocol = contract.read_config({}).protocol
    assert (protocol.http, protocol.tls) == ("http/1.1", False)


def test_protocol_pairs_tls_files_with_the_protocol():
    tls = {"TLS_CERT": "/c.pem", "TLS_KEY": "/k.pem"}
    assert contract.read_protocol({**tls, "HTTP_PROTOCOL": "h2"}) == contract.Protocol("h2", "/c.pem", "/k.pem")
    assert contract.read_protocol({**tls}).tls
    assert contract.read_protocol({"HTTP_PROTOCOL": "h2c"}) == contract.Protocol("h2c")


@pytest.mark.parametrize(
    "env, message",
    [
        ({"HTTP_PROTOCOL": "h3"}, "HTTP_PROTOCOL must be http/1.1, h2 or h2c, got 'h3'"),
        ({"TLS_CERT": "/c.pem"}, "TLS_CERT is set but TLS_KEY is not"),
        ({"TLS_KEY": "/k.pem"}, "TLS_KEY is set but TLS_CERT is not"),
        ({"HTTP_PROTOCOL": "h2"}, "HTTP_PROTOCOL=h2 is HTTP/2 over TLS"),
        ({"HTTP_PROTOCOL": "h2c", "TLS_CERT": "/c", "TLS_KEY": "/k"}, "HTTP_PROTOCOL=h2c is cleartext HTTP/2"),
    ],
)
def test_protocol_errors_name_the_variable(env, message):
    with pytest.raises(ValueError, match=message):
        contract.read_config(env)


def test_hypercorn_runs_one_loop_in_process_and_offers_h2_over_tls():
    env = {"PORT": "8443", "LISTEN_ADDR": "::1", "HTTP_PROTOCOL": "h2", "TLS_CERT": "/c", "TLS_KEY": "/k"}
    settings = hypercorn_config(contract.read_config(env), 3)
    assert settings.bind == ["[::1]:8443"]
    assert (settings.workers, settings.worker_class) == (0, "uvloop")
    assert (settings.certfile, settings.keyfile) == ("/c", "/k")
    assert settings.alpn_protocols == ["h2", "http/1.1"]
    assert not settings.include_server_header
    # No GOAWAY after 1,000 requests: it wedged connections with a stream open.
    assert settings.keep_alive_max_requests >= 2**62
    four = hypercorn_config(contract.read_config({"HTTP_PROTOCOL": "h2c", "WORKERS": "4"}), 3)
    assert four.workers == 4 and not four.ssl_enabled


def test_responses_get_the_server_header_and_lose_connection_headers():
    sent = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 413, "headers": [(b"connection", b"close")]})

    async def send(message):
        sent.append(message)

    asyncio.run(with_server_header(app, "python-fastapi")({"type": "http"}, None, send))
    assert sent[0]["headers"] == [(b"server", b"python-fastapi")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def h2c_server():
    port = free_port()
    work = tempfile.mkdtemp()
    Path(work, "payload.bin").write_bytes(bytes(i % 251 for i in range(4096)))
    env = {**os.environ, "PORT": str(port), "TARGET_NAME": "python-fastapi", "DATA_DIR": work,
           "UPLOAD_DIR": work, "HTTP_PROTOCOL": "h2c"}
    server = subprocess.Popen([sys.executable, "-m", "server"], cwd=TARGET, env=env)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, "the server exited at start"
                time.sleep(0.1)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_h2c_streams_run_concurrently_with_the_contract_headers(h2c_server):
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    sock = socket.create_connection(("127.0.0.1", h2c_server), timeout=20)
    headers = [(":method", "GET"), (":scheme", "http"), (":authority", "127.0.0.1")]
    slow, fast = 1, 3
    connection.send_headers(slow, [*headers, (":path", "/io?ms=5000")], end_stream=True)
    connection.send_headers(fast, [*headers, (":path", "/plaintext")], end_stream=True)
    sock.sendall(connection.data_to_send())
    finished, answered, body = [], {}, b""
    while fast not in finished:
        data = sock.recv(65536)
        assert data, "the server closed the connection"
        for event in connection.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                answered[event.stream_id] = dict(event.headers)
            elif isinstance(event, h2.events.DataReceived) and event.stream_id == fast:
                body += event.data
            elif isinstance(event, h2.events.StreamEnded):
                finished.append(event.stream_id)
        sock.sendall(connection.data_to_send())
    sock.close()
    assert finished == [fast], "the slow stream ended before the fast one beside it"
    assert body == b"Hello, World!"
    assert answered[fast][b":status"] == b"200"
    assert answered[fast][b"server"] == b"python-fastapi"
    assert answered[fast][b"content-length"] == b"13"
    assert b"date" in answered[fast]


def test_missing_tls_files_stop_the_start_naming_both():
    from server.tls import check_tls_files

    with pytest.raises(ValueError, match=r"^TLS_CERT '/nonexistent/c.pem' and TLS_KEY '/nonexistent/k.pem' must be"):
        check_tls_files("/nonexistent/c.pem", "/nonexistent/k.pem")
