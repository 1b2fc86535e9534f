"""``wizard_env.util.workers``: how its worker processes start."""

from __future__ import annotations

import multiprocessing
import sys

import pytest

from wizard_env.util import workers


def _marker() -> object:
    return getattr(workers, "_marker_of_the_parent", None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork on Linux only")
def test_workers_fork_whatever_global_start_method_a_library_set(monkeypatch):
    """Importing torchrl sets the global start method to "spawn"; the workers still fork, and so begin with the
    parent's modules as they are now (a spawned worker imports them again and sees none of this)."""
    before = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method("spawn", force=True)
    monkeypatch.setattr(workers, "_marker_of_the_parent", "set in the parent", raising=False)
    try:
        with workers.Workers(1) as pool:
            assert pool.submit(_marker).result(timeout=60) == "set in the parent"
    finally:
        multiprocessing.set_start_method(before, force=True)
