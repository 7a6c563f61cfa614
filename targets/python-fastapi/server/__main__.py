"""Entry point: uvicorn (uvloop, httptools) for HTTP/1.1, in cleartext or
over TLS; Hypercorn (uvloop, h2) for h2 and h2c, which uvicorn's default
HTTP implementations do not speak. WORKERS processes either way."""

import os
import sys

import uvicorn

from server.contract import Config, read_config
from server.tls import agree_on_http1, check_tls_files

# How long a stopping server lets requests in flight finish.
GRACEFUL_SHUTDOWN_S = 3


def main() -> None:
    try:
        config = read_config(os.environ)
        if config.protocol.tls:
            check_tls_files(config.protocol.tls_cert, config.protocol.tls_key)
    except ValueError as error:
        print(f"python-fastapi: {error}", file=sys.stderr)
        sys.exit(2)
    if config.protocol.http == "http/1.1":
        run_uvicorn(config)
    else:
        from server import http2

        sys.exit(http2.run(config, GRACEFUL_SHUTDOWN_S))


def run_uvicorn(config: Config) -> None:
    tls = {}
    if config.protocol.tls:
        tls = {
            "ssl_certfile": config.protocol.tls_cert,
            "ssl_keyfile": config.protocol.tls_key,
            "ssl_context_factory": agree_on_http1,
        }
    uvicorn.run(
        "server.app:app",
        host=config.listen,
        port=config.port,
        workers=config.workers,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
        # uvicorn adds these to every response, its own error responses too.
        server_header=False,
        headers=[("server", config.server_name)],
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        **tls,
    )


if __name__ == "__main__":
    main()
