"""The pure parts of the HTTP contract (docs/contract.md).

Parameter parsing, the /mixed digest chain, the upload limit and the
configuration read from the environment. No I/O here, so pytest checks it
without a server.
"""

import hashlib
import ipaddress
import re
from dataclasses import dataclass
from typing import Mapping, Optional

MAX_UPLOAD_BYTES = 64 * 1024 * 1024

# name -> (min, max, default) for every query parameter the contract knows.
PARAMETERS = {
    "ms": (0, 10000, 10),
    "kb": (1, 10240, 1),
    "iters": (0, 1000000, 1000),
}

_INTEGER = re.compile(r"-?[0-9]{1,12}")
_LENGTH = re.compile(r"[0-9]{1,15}")
_THREADS = re.compile(r"^Threads:\s+([0-9]+)$", re.MULTILINE)


class BadParameter(ValueError):
    """A query parameter that is not an integer in its range; the message names it."""


def int_param(query: Mapping[str, str], name: str) -> int:
    """The value of `name` in `query`, its default when absent."""
    low, high, default = PARAMETERS[name]
    raw = query.get(name)
    if raw is None:
        return default
    if _INTEGER.fullmatch(raw) is None or not low <= int(raw) <= high:
        raise BadParameter(f"{name} must be an integer in {low}..={high}")
    return int(raw)


def digest_chain(iters: int) -> str:
    """h0 = 32 zero bytes, h(k+1) = SHA-256(h(k)); the lower-case hex of h(iters)."""
    digest = bytes(32)
    for _ in range(iters):
        digest = hashlib.sha256(digest).digest()
    return digest.hex()


def declared_length(header: Optional[str]) -> Optional[int]:
    """The Content-Length of an upload, None when absent (chunked); ValueError when malformed."""
    if header is None:
        return None
    if _LENGTH.fullmatch(header) is None:
        raise ValueError("Content-Length must be a non-negative integer")
    return int(header)


def threads_from_status(status_text: str) -> Optional[int]:
    """Threads of a process from the text of /proc/<pid>/status."""
    match = _THREADS.search(status_text)
    return int(match.group(1)) if match else None


def env_int(env: Mapping[str, str], name: str, default: int, high: int) -> int:
    """An integer in 1..=high from the environment, `default` when unset."""
    raw = env.get(name, "")
    if raw == "":
        return default
    if _LENGTH.fullmatch(raw) is None or not 1 <= int(raw) <= high:
        raise ValueError(f"{name} must be an integer in 1..={high}, got {raw!r}")
    return int(raw)


def listen_addr(env: Mapping[str, str]) -> str:
    """LISTEN_ADDR: the IP address to listen on, 127.0.0.1 when unset."""
    raw = env.get("LISTEN_ADDR", "").strip()
    if raw == "":
        return "127.0.0.1"
    try:
        return str(ipaddress.ip_address(raw))
    except ValueError:
        raise ValueError(
            f"LISTEN_ADDR must be an IP address such as 127.0.0.1 or 0.0.0.0, got {raw!r}"
        ) from None


PROTOCOLS = ("http/1.1", "h2", "h2c")


@dataclass(frozen=True)
class Protocol:
    """What the port speaks: HTTP_PROTOCOL, and TLS_CERT/TLS_KEY when it is HTTPS."""

    http: str
    tls_cert: Optional[str] = None
    tls_key: Optional[str] = None

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None


def read_protocol(env: Mapping[str, str]) -> Protocol:
    """HTTP_PROTOCOL (http/1.1 when unset), TLS_CERT and TLS_KEY, checked against each other."""
    http = env.get("HTTP_PROTOCOL", "").strip() or "http/1.1"
    if http not in PROTOCOLS:
        raise ValueError(f"HTTP_PROTOCOL must be http/1.1, h2 or h2c, got {http!r}")
    cert = env.get("TLS_CERT", "").strip() or None
    key = env.get("TLS_KEY", "").strip() or None
    if (cert is None) != (key is None):
        given, missing = ("TLS_CERT", "TLS_KEY") if key is None else ("TLS_KEY", "TLS_CERT")
        raise ValueError(f"{given} is set but {missing} is not: set both (PEM files) to serve HTTPS, or neither")
    if http == "h2" and cert is None:
        raise ValueError("HTTP_PROTOCOL=h2 is HTTP/2 over TLS: set TLS_CERT and TLS_KEY, or ask for h2c")
    if http == "h2c" and cert is not None:
        raise ValueError("HTTP_PROTOCOL=h2c is cleartext HTTP/2: unset TLS_CERT and TLS_KEY, or ask for h2")
    return Protocol(http, cert, key)


@dataclass(frozen=True)
class Config:
    listen: str
    port: int
    server_name: str
    data_dir: str
    upload_dir: str
    database_url: str
    workers: int
    db_pool: int
    protocol: Protocol = Protocol("http/1.1")


def read_config(env: Mapping[str, str]) -> Config:
    """The target's configuration; ValueError naming the variable when one is malformed."""
    return Config(
        listen=listen_addr(env),
        port=env_int(env, "PORT", 8080, 65535),
        server_name=env.get("TARGET_NAME") or "python-fastapi",
        data_dir=env.get("DATA_DIR") or ".",
        upload_dir=env.get("UPLOAD_DIR") or "/tmp",
        database_url=env.get("DATABASE_URL", ""),
        workers=env_int(env, "WORKERS", 1, 256),
        db_pool=env_int(env, "DB_POOL", 16, 1024),
        protocol=read_protocol(env),
    )
