"""The web target: request bodies through the app's own JSON reading into the handlers' work, each answer rendered as
Starlette renders it (an answer that cannot be is a 500, so a bug).

A raw input is a body: read by the app's ``_json`` (through a Request with that body), then a new table's settings
(``POST /api/tables``) and a move (``POST /api/tables/ID/move``), and the same bytes as an uploaded replay file
(``POST /api/upload``). A structured input opens a table from mutated settings and plays moves, some of them mutated.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Callable, Coroutine

from starlette.requests import Request
from starlette.responses import JSONResponse

from wizard_env.web.app import _json
from wizard_env.web.library import read_upload
from wizard_env.web.limits import RequestError
from wizard_env.web.tables import Tables

from . import seeds
from .draw import Draw, mutate

#: The agents the fuzzed server offers: quick ones, so the fuzzer spends its time on the bodies.
OFFERED = ("rule", "random")


def _sync(coroutine: Coroutine) -> Any:
    """The result of a coroutine that never waits (a request whose body is all there)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("the coroutine waited")


def _body(data: bytes) -> Any:
    """``data`` as the app reads a JSON body (RequestError as the app answers it)."""
    async def receive() -> dict:
        return {"type": "http.request", "body": data, "more_body": False}

    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    return _sync(_json(Request({"type": "http", "method": "POST", "path": "/api/tables", "headers": headers,
                                "query_string": b""}, receive)))


@functools.cache
def _tables() -> Tables:
    return Tables(seeds.workdir() / "replays", offered=OFFERED)


def _answer(call: Callable[..., Any], *args: Any) -> Any:
    """What the server answers a call: its result, or None for a RequestError; either rendered as JSON."""
    try:
        result = call(*args)
    except RequestError as err:
        JSONResponse({"error": str(err)})
        return None
    JSONResponse(result)
    return result


def _play(tables: Tables, opened: Any, draw: Draw | None) -> None:
    """Up to seven moves at an opened table: the view's legal actions, each mutated one time in four."""
    view = opened["table"] if opened else None
    for _ in range(draw.byte() % 8 if draw is not None else 0):
        if not view or view["over"]:
            break
        legal = view["legal"]
        body = {"seat": view["seat"], "move": view["move"], "action": draw.choice(legal)["action"] if legal else 0}
        answer = _answer(tables.move, view["id"], mutate(body, draw) if draw.byte() % 4 == 0 else body)
        view = answer["table"] if answer else view
    if view and view["replay"]:
        (tables.replay_dir / view["replay"]).unlink()


def web(data: bytes) -> None:
    """A request body at the handlers (see the module's docstring)."""
    tables = _tables()
    tables._tables.clear()  # a fresh server's tables at every input
    if data[:1] == b"\x01":
        draw = Draw(data[1:])
        body = mutate(json.loads(json.dumps(draw.choice(seeds.TABLE_BODIES))), draw) if draw.byte() % 4 else draw.choice(seeds.TABLE_BODIES)
        _play(tables, _answer(tables.create, body), draw)
        return
    _answer(read_upload, data, 1, "fuzz.jsonl")
    try:
        body = _body(data)
    except RequestError:
        body = None
    _answer(tables.create, body)
    opened = _answer(tables.create, dict(seeds.TABLE_BODIES[0]))
    _answer(tables.move, opened["table"]["id"], body)
