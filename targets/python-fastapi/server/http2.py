"""h2 and h2c under Hypercorn, on the same asyncio model as uvicorn: one
uvloop event loop per process, WORKERS processes (one, in this process, by
default). The FastAPI application is the one uvicorn serves."""

from hypercorn.config import Config as HypercornConfig
from hypercorn.run import run as hypercorn_run

from server.contract import Config


def hypercorn_config(config: Config, graceful_shutdown_s: float) -> HypercornConfig:
    settings = HypercornConfig()
    settings.application_path = "server.http2_app:app"
    host = f"[{config.listen}]" if ":" in config.listen else config.listen
    settings.bind = [f"{host}:{config.port}"]
    settings.worker_class = "uvloop"
    # Hypercorn's 0 runs the one event loop in this process, as uvicorn does
    # with one worker; more start that many processes under a supervisor.
    settings.workers = 0 if config.workers == 1 else config.workers
    # Hypercorn sends GOAWAY after 1,000 requests on a connection, and a
    # stream still running then (a slow one beside the fast ones) can no
    # longer be answered, so the connection hangs until the client gives
    # up. uvicorn and the other targets set no such limit: neither does this.
    settings.keep_alive_max_requests = 2**62
    settings.accesslog = None
    settings.loglevel = "WARNING"
    settings.graceful_timeout = graceful_shutdown_s
    # The application adds Server (TARGET_NAME); Hypercorn adds Date.
    settings.include_server_header = False
    if config.protocol.tls:
        settings.certfile = config.protocol.tls_cert
        settings.keyfile = config.protocol.tls_key
        settings.alpn_protocols = ["h2", "http/1.1"]
    return settings


def run(config: Config, graceful_shutdown_s: float) -> int:
    """Serves until SIGTERM; h2c comes by prior knowledge (or by Upgrade) on a cleartext port."""
    return hypercorn_run(hypercorn_config(config, graceful_shutdown_s))
