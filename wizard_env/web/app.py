"""The web table's HTTP app (Starlette): two pages, their static files and a small JSON API.

The routes are ``openapi.OPERATIONS``, the one declaration of the API's contract: each operation's ``name`` is
the handler of this module that answers it, and ``GET /openapi.json`` serves the schema made from them.
docs/web.md is the API's user documentation (its route table is ``openapi.route_table()``).

Every refused request is a 4xx answer with a JSON body ``{"error": "..."}`` and changes nothing; an
unexpected error is a 500 with one line, and the server goes on.
Work on games and files runs in daemon threads, ``MAX_WORKERS`` at once: a request waits for its thread at
most the time per request (then 504; the thread's moves are kept), and ``stop()`` (``app.state.stop``, called on
Ctrl-C) answers every waiting request at once, so a server never waits on an agent to shut down.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from wizard_env.util.checks import JSONIntegerError, json_loads

from .library import MAX_UPLOAD_BYTES, ReplayFolder, read_upload
from .limits import DEFAULT_OPPONENTS, MAX_WORKERS, MOVE_SECONDS, RequestError, too_slow
from .openapi import MAX_JSON_BYTES, MEDIA_TYPES, OPERATIONS, SECURITY_HEADERS, STATIC, STATIC_FILES, openapi_schema
from .tables import Tables

#: Seconds a request waits past its time per request for an agent's move already started, before its 504.
GRACE_SECONDS = 1.0
#: Hosts a loopback server answers to: a page elsewhere that rebinds its name to 127.0.0.1 is refused.
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]

Handler = Callable[[Request], Awaitable[Response]]


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=SECURITY_HEADERS)


def _api(handler: Callable[[Request], Awaitable[Any]]) -> Handler:
    """A JSON endpoint: its result as JSON, a RequestError as its status with the message, anything else a 500."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await handler(request), headers=SECURITY_HEADERS)
        except RequestError as err:
            return _error(str(err), err.status)
        except Exception as err:  # a bug: one line for the page, and the server keeps running
            return _error(f"internal error ({type(err).__name__}: {str(err)[:200]})", 500)

    return endpoint


async def _body(request: Request, limit: int) -> bytes:
    """The request body, read up to ``limit`` bytes (RequestError 413 past it, before reading it all)."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise RequestError(f"the request is {int(length):,} bytes; at most {limit:,} are read", 413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestError(f"the request is over {limit:,} bytes; at most {limit:,} are read", 413)
        chunks.append(chunk)
    return b"".join(chunks)


async def _json(request: Request) -> Any:
    """The JSON body (RequestError 415 for another content type: a form of another site cannot send it)."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise RequestError("send the body as JSON, with Content-Type: application/json", 415)
    data = await _body(request, MAX_JSON_BYTES)
    try:
        return json_loads(data)
    except JSONIntegerError as err:
        raise RequestError(str(err)) from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise RequestError("the body is not valid JSON") from None


class Workers:
    """Daemon threads for the blocking work of requests, ``limit`` at once; a request waits for its work at most
    ``seconds`` (then 503 without a thread, 504 with one: the work goes on, and what it did is kept), and not at
    all once ``stop()`` is called (503), so that stopping the server never waits on an agent."""

    #: Seconds between looks at the clock and at ``stop()`` while a request waits.
    POLL_SECONDS = 0.05

    def __init__(self, seconds: float, limit: int = MAX_WORKERS):
        self.seconds = seconds
        self._slots = threading.BoundedSemaphore(limit)
        self._stopping = threading.Event()

    def stop(self) -> None:
        """Answer every waiting request now (503) and every later one at once: the server is shutting down."""
        self._stopping.set()

    def _check(self, deadline: float, late: RequestError) -> None:
        if self._stopping.is_set():
            raise RequestError("the server is stopping", 503)
        if asyncio.get_running_loop().time() > deadline:
            raise late

    async def run(self, table_id: str | None, work: Callable[..., Any], *args: Any) -> Any:
        """``work(*args)`` in a daemon thread, its result or its exception (``table_id`` names the table a 504 is about)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds + GRACE_SECONDS
        while not self._slots.acquire(blocking=False):
            self._check(deadline, RequestError("the server is busy with other requests: ask again in a moment", 503))
            await asyncio.sleep(self.POLL_SECONDS)
        future = loop.create_future()
        waiting = True

        def settle(result: Any, error: BaseException | None) -> None:
            if waiting and not future.done():
                future.set_exception(error) if error is not None else future.set_result(result)

        def thread() -> None:
            result, error = None, None
            try:
                result = work(*args)
            except BaseException as err:  # handed to the request, which answers it
                error = err
            finally:
                self._slots.release()
            try:
                loop.call_soon_threadsafe(settle, result, error)
            except RuntimeError:  # the loop is closed: the server stopped while this worked
                pass

        threading.Thread(target=thread, name="wizard-web-work", daemon=True).start()
        late = too_slow(table_id) if table_id else RequestError(f"the request took more than {self.seconds:g} s", 504)
        try:
            while not future.done():
                self._check(deadline, late)
                await asyncio.wait({future}, timeout=self.POLL_SECONDS)
            return future.result()
        finally:
            waiting = False


def _game(request: Request) -> int:
    text = request.query_params.get("game", "1")
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise RequestError(f"game must be a number from 1, not {text[:20]!r}")
    return int(text)


def create_app(replay_dir: str | os.PathLike, defaults: dict | None = None, hosts: list[str] | None = None,
               max_tables: int | None = None, offered: Sequence[str] = DEFAULT_OPPONENTS,
               move_seconds: float = MOVE_SECONDS) -> Starlette:
    """The app serving the pages and the API over ``replay_dir``; ``defaults`` pre-fill the play page's settings;
    ``hosts`` are the Host names answered (None: any); ``offered`` the agent specs clients choose from;
    ``move_seconds`` the time a request may spend on the agents' moves (ValueError for a bad offered spec)."""
    folder = ReplayFolder(replay_dir)
    tables = Tables(replay_dir, offered=offered, move_seconds=move_seconds,
                    **({} if max_tables is None else {"max_tables": max_tables}))
    workers = Workers(tables.move_seconds)
    settings = dict(defaults or {})

    def page(name: str) -> Handler:
        async def serve(request: Request) -> Response:
            return FileResponse(STATIC / name, media_type=MEDIA_TYPES[Path(name).suffix],
                                headers={**SECURITY_HEADERS, "Cache-Control": "no-cache"})

        return serve

    async def static(request: Request) -> Response:
        name = request.path_params["file"]
        if name not in STATIC_FILES:
            return _error(f"no file {name[:100]!r} among the pages' static files", 404)
        return await page(name)(request)

    schema = openapi_schema()

    async def openapi(request: Request) -> Response:
        return JSONResponse(schema, headers=SECURITY_HEADERS)

    @_api
    async def config(request: Request) -> Any:
        return {"agents": list(tables.offered), "defaults": settings, "max_upload_bytes": MAX_UPLOAD_BYTES,
                "move_seconds": tables.move_seconds}

    @_api
    async def replays(request: Request) -> Any:
        return {"files": await workers.run(None, folder.listing)}

    @_api
    async def replay_file(request: Request) -> Any:
        return await workers.run(None, folder.read, request.path_params["name"], _game(request))

    @_api
    async def upload(request: Request) -> Any:
        game = _game(request)
        data = await _body(request, MAX_UPLOAD_BYTES)
        return await workers.run(None, read_upload, data, game, request.query_params.get("name", "upload"))

    @_api
    async def new_table(request: Request) -> Any:
        table_id = await workers.run(None, tables.open, await _json(request))
        return await workers.run(table_id, tables.resume, table_id)

    @_api
    async def table_view(request: Request) -> Any:
        table_id = request.path_params["table"]
        return await workers.run(table_id, tables.view, table_id)

    @_api
    async def move(request: Request) -> Any:
        body = await _json(request)
        table_id = request.path_params["table"]
        return await workers.run(table_id, tables.move, table_id, body)

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        answer = _error(f"{request.method} {request.url.path[:100]}: {getattr(exc, 'detail', 'not found')}", status)
        answer.headers.update(getattr(exc, "headers", None) or {})  # a 405's Allow: the methods the route has
        return answer

    handlers = {"play_page": page("play.html"), "viewer_page": page("viewer.html"), "static": static, "openapi": openapi,
                "config": config, "replays": replays, "replay_file": replay_file, "upload": upload,
                "new_table": new_table, "table_view": table_view, "move": move}
    routes = [Route(op.route, handlers[op.name], methods=[op.method]) for op in OPERATIONS]
    middleware = [] if hosts is None else [Middleware(TrustedHostMiddleware, allowed_hosts=hosts)]
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={404: not_found, 405: not_found})
    app.state.tables = tables
    app.state.stop = workers.stop
    return app
