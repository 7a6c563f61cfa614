"""The FastAPI application: one handler per endpoint on this process's event
loop. Waits are `asyncio.sleep`; CPU work and file reads run on the loop and
block it, which is this model's truth."""

import asyncio
import contextlib
import hashlib
import os
import time
import uuid

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException

from server import contract
from server.db import DatabaseUnavailable, World

config = contract.read_config(os.environ)
world = World(config.database_url, config.db_pool)
PAYLOAD_PATH = os.path.join(config.data_dir, "payload.bin")


@contextlib.asynccontextmanager
async def lifespan(_app: FastAPI):
    await world.open()
    yield
    await world.close()


app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)


def error(status: int, message: str, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


@app.exception_handler(HTTPException)
async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
    if exc.status_code == 404:
        return error(404, f"no such path: {request.url.path}")
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        return error(405, f"{request.url.path} answers {allowed} only", exc.headers)
    return error(exc.status_code, str(exc.detail), exc.headers)


@app.exception_handler(contract.BadParameter)
async def bad_parameter(_request: Request, exc: contract.BadParameter) -> JSONResponse:
    return error(400, str(exc))


@app.exception_handler(Exception)
async def internal_error(_request: Request, exc: Exception) -> JSONResponse:
    return error(500, f"internal error: {exc}")


@app.get("/healthz")
async def healthz() -> Response:
    return PlainTextResponse("ok")


@app.get("/plaintext")
async def plaintext() -> Response:
    return PlainTextResponse("Hello, World!")


@app.get("/json")
async def json_hello() -> Response:
    return JSONResponse({"message": "Hello, World!"})


async def wait_at_least(ms: int) -> None:
    """Waits `ms` or a little more, never less: the loop's timer can fire a
    fraction of a millisecond early (a 200 ms wait was once answered after
    199.86 ms), and the contract promises the whole wait."""
    deadline = time.monotonic() + ms / 1000
    while (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(left)


@app.get("/io")
async def io(request: Request) -> Response:
    ms = contract.int_param(request.query_params, "ms")
    await wait_at_least(ms)
    return JSONResponse({"message": "Hello, World!", "waited_ms": ms})


@app.get("/db")
async def db() -> Response:
    try:
        return JSONResponse(await world.random_row())
    except DatabaseUnavailable as exc:
        return error(503, str(exc))


@app.get("/file")
async def file(request: Request) -> Response:
    length = contract.int_param(request.query_params, "kb") * 1024
    with open(PAYLOAD_PATH, "rb") as payload:
        data = payload.read(length)
    if len(data) < length:
        return error(500, f"payload.bin holds {len(data)} bytes, fewer than kb asks for")
    return Response(data, media_type="application/octet-stream")


@app.get("/mixed")
async def mixed(request: Request) -> Response:
    iters = contract.int_param(request.query_params, "iters")
    ms = contract.int_param(request.query_params, "ms")
    digest = contract.digest_chain(iters)
    await wait_at_least(ms)
    return JSONResponse({"digest": digest, "iters": iters, "waited_ms": ms})


@app.get("/stats")
async def stats() -> Response:
    with open("/proc/self/status", encoding="ascii") as status:
        threads = contract.threads_from_status(status.read())
    return JSONResponse(
        {"model": "event-loop", "threads": threads, "tasks": len(asyncio.all_tasks()), "heap_bytes": None}
    )


def too_large() -> JSONResponse:
    # Connection: close makes uvicorn drop the connection instead of reading the rest.
    message = f"the body must be at most {contract.MAX_UPLOAD_BYTES} bytes"
    return error(413, message, {"Connection": "close"})


def remove_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


@app.post("/upload")
async def upload(request: Request) -> Response:
    try:
        declared = contract.declared_length(request.headers.get("content-length"))
    except ValueError as exc:
        return error(400, str(exc))
    if declared is not None and declared > contract.MAX_UPLOAD_BYTES:
        return too_large()
    path = os.path.join(config.upload_dir, f"upload-{os.getpid()}-{uuid.uuid4().hex}")
    digest = hashlib.sha256()
    received = 0
    try:
        with open(path, "wb") as sink:
            async for chunk in request.stream():
                received += len(chunk)
                if received > contract.MAX_UPLOAD_BYTES:
                    remove_quietly(path)
                    return too_large()
                digest.update(chunk)
                sink.write(chunk)
    except BaseException:
        remove_quietly(path)
        raise
    body = {"bytes": received, "sha256": digest.hexdigest()}
    return JSONResponse(body, background=BackgroundTask(remove_quietly, path))
