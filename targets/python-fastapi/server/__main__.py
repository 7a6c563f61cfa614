"""Entry point: uvicorn with uvloop and httptools, WORKERS processes."""

import os
import sys

import uvicorn

from server.contract import read_config

# How long a stopping server lets requests in flight finish.
GRACEFUL_SHUTDOWN_S = 3


def main() -> None:
    try:
        config = read_config(os.environ)
    except ValueError as error:
        print(f"python-fastapi: {error}", file=sys.stderr)
        sys.exit(2)
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
    )


if __name__ == "__main__":
    main()
