"""The application as Hypercorn serves it: every response carries Server
(uvicorn adds it itself), and no connection-specific header, which HTTP/2
forbids (the 413's Connection: close is HTTP/1.1's way to stop reading)."""

import os

from server.app import app as fastapi_app
from server.contract import read_config

CONNECTION_HEADERS = frozenset({b"connection", b"keep-alive", b"transfer-encoding", b"upgrade"})


def with_server_header(app, server_name: str):
    server = (b"server", server_name.encode("latin-1"))

    async def served(scope, receive, send):
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_with_server(message):
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() not in CONNECTION_HEADERS]
                message = {**message, "headers": [*headers, server]}
            await send(message)

        await app(scope, receive, send_with_server)

    return served


app = with_server_header(fastapi_app, read_config(os.environ).server_name)
