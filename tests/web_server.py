"""A `wizard serve` app on a free loopback port in a background thread, for the web table's tests."""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="the web extra is not installed")

from wizard_env.web.app import LOOPBACK_HOSTS, create_app  # noqa: E402
from wizard_env.cli.serve import bind  # noqa: E402


@contextlib.contextmanager
def running_server(replay_dir: Path, **app_options: Any) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT``) of the app serving ``replay_dir`` while inside."""
    sock = bind("127.0.0.1", 0)
    app = create_app(replay_dir, hosts=LOOPBACK_HOSTS, **app_options)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(500):  # it starts within a few ms; the bound is against a hang, not a timing check
            if server.started:
                break
            threading.Event().wait(0.01)
        assert server.started, "the server did not start"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def request(base: str, method: str, path: str, body: Any = None, raw: bytes | None = None,
            headers: dict[str, str] | None = None, timeout: float = 120) -> tuple[int, Any]:
    """(status, parsed JSON body) of one request; ``body`` is sent as JSON, ``raw`` as bytes."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    sent_headers = dict(headers or {})
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        sent_headers.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=data, headers=sent_headers)
        response = conn.getresponse()
        payload = response.read()
    finally:
        conn.close()
    try:
        return response.status, json.loads(payload)
    except json.JSONDecodeError:
        return response.status, payload.decode(errors="replace")
