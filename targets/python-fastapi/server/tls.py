"""uvicorn's TLS context for HTTP/1.1. A module of its own so that worker
processes, which unpickle their configuration, can import it."""

import ssl
from typing import Callable

import uvicorn


def agree_on_http1(_config: uvicorn.Config, default: Callable[[], ssl.SSLContext]) -> ssl.SSLContext:
    """uvicorn's own context, offering ALPN http/1.1 (httptools names no ALPN protocol)."""
    context = default()
    context.set_alpn_protocols(["http/1.1"])
    return context


def check_tls_files(cert: str, key: str) -> None:
    """Loads TLS_CERT and TLS_KEY once at start, so that a missing, unreadable or
    mismatched file stops the server with a message instead of failing each handshake."""
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(certfile=cert, keyfile=key)
    except OSError as error:  # ssl.SSLError is an OSError too
        raise ValueError(
            f"TLS_CERT {cert!r} and TLS_KEY {key!r} must be a PEM certificate chain and its private key: {error}"
        ) from None
