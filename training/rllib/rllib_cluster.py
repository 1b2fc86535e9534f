"""Where an RLlib run runs: the check that the rllib extra is installed, and joining or starting Ray.

``start_ray("", cfg)`` starts a small local instance (CPUs: the larger of 2 and the env runners; an
object store of 128 MiB, or of two iterations' samples if larger); ``start_ray("HOST:PORT" or "auto", cfg)`` joins a running cluster, after
checking within ``CONNECT_TIMEOUT_S`` that the address answers at all, so a wrong address is one error
line instead of Ray's long retries (docs/scaling.md: clusters and their token authentication).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import tempfile
from typing import Any, Iterator

from wizard_env.util.extras import MissingExtra, install_command, require_extra
from .rllib_config import RLlibConfig


#: Seconds ``--address`` may take to answer before the run gives up.
CONNECT_TIMEOUT_S = 10.0
#: The local Ray instance's object store: at least this (the smallest Ray accepts is 75 MiB) ...
OBJECT_STORE_BYTES = 128 * 2**20
#: ... or room for two iterations' samples on their way from the runners (a decision's observation and mask: 6.3 kB).
SAMPLE_BYTES_PER_STEP = 8 * 1024


def require_rllib(user: str = "wizard train --backend rllib") -> None:
    """MissingExtra naming the first package of the ``rllib`` extra that is not installed (nothing is imported)."""
    from importlib.util import find_spec

    require_extra("rllib", {"ray": "ray[rllib]", "torch": "torch"}, user)
    try:
        found = find_spec("ray.rllib") is not None  # imports ray itself (not RLlib)
    except ImportError:
        found = False
    if not found:
        raise MissingExtra(f"{user} needs ray[rllib] (ray is installed without RLlib), from the rllib extra: "
                           f"{install_command('rllib')}")


def check_address(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """ValueError unless ``host:port`` (a Ray cluster's GCS) accepts a connection within ``timeout`` seconds."""
    if address in ("auto", "local") or address.startswith("ray://"):
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--address {address!r}: expected HOST:PORT of a Ray cluster's head (such as 10.0.0.1:6379), or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as connection:
            if os.environ.get("RAY_USE_TLS", "0") in ("", "0"):  # a TLS server waits for a TLS greeting instead
                speaks_grpc(connection)
    except OSError as e:
        raise ValueError(f"--address {address}: no Ray cluster answered within {timeout:g} s ({e.strerror or e}); "
                         "start one with 'ray start --head' on that machine") from None


#: An HTTP/2 client's opening (gRPC runs on HTTP/2): the preface, then an empty SETTINGS frame.
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_SETTINGS_FRAME = 4


def speaks_grpc(connection: socket.socket) -> None:
    """OSError unless the server on ``connection`` answers an HTTP/2 opening with its SETTINGS frame, as a Ray head's
    gRPC server does at once: something else on that port (or a silent one, on which ``ray.init`` waits without end)
    is refused within the connection's timeout."""
    connection.sendall(_HTTP2_HELLO)
    header = b""
    while len(header) < 9:
        part = connection.recv(9 - len(header))
        if not part:
            break
        header += part
    if len(header) < 9 or header[3] != _SETTINGS_FRAME:
        raise OSError("the address accepts connections but does not answer as a Ray cluster's gRPC server")


@contextlib.contextmanager
def held_stderr() -> Iterator[None]:
    """Send what is written to file descriptor 2 (also by C and C++ code) to a temporary file while the block runs.
    If the block succeeds, that output is written to stderr after it; if it raises, the output is dropped (the
    exception says what went wrong in one line)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as held:
            os.dup2(held.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
            held.seek(0)
            sys.stderr.write(held.read().decode(errors="replace"))
    finally:
        os.close(saved)


def start_ray(address: str, cfg: RLlibConfig) -> None:
    """Join the Ray cluster at ``address``, or start a small local instance ('' or None) for an RLlib run."""
    store = max(OBJECT_STORE_BYTES, 2 * cfg.iteration_steps * SAMPLE_BYTES_PER_STEP)
    init_ray(address, max(2, cfg.num_env_runners), store)


def init_ray(address: str, num_cpus: int, object_store_bytes: int = OBJECT_STORE_BYTES) -> None:
    """Join the Ray cluster at ``address`` (checked first: one error line for a wrong one), or start a local instance
    ('' or None) with ``num_cpus`` CPUs and an object store of ``object_store_bytes``; nothing if Ray is running."""
    import logging

    # Ray's C++ core logs every retry and notice to stderr; its failures reach us as exceptions anyway
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    import ray

    if ray.is_initialized():
        return
    common: dict[str, Any] = dict(logging_level=logging.ERROR, log_to_driver=False, include_dashboard=False)
    if address:
        check_address(address)
        try:
            with held_stderr():  # Ray's C++ core logs each retry to file descriptor 2, past Python and its log level
                ray.init(address=address, **common)
        except ConnectionError as e:
            raise ValueError(f"--address {address}: could not join the Ray cluster ({' '.join(str(e).split())[:200]}); "
                             "a cluster with token authentication needs RAY_AUTH_MODE=token and its token here "
                             "(~/.ray/auth_token or RAY_AUTH_TOKEN): see docs/scaling.md") from None
    else:
        ray.init(num_cpus=num_cpus, object_store_memory=object_store_bytes, **common)
