"""The RLlib tests: run by ``make test`` in its second venv, .venv-rllib (ray[rllib] with the gymnasium RLlib
pins). A venv without ray does not collect them; the main venv keeps the newest gymnasium."""

from __future__ import annotations

import os
from importlib.util import find_spec

import pytest

collect_ignore_glob = [] if find_spec("ray") is not None else ["test_*.py"]


@pytest.fixture(scope="session")
def ray_local():
    """A small local Ray instance (two CPUs, a 128 MiB object store), shut down after the session."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import ray

    from wizard_env.training.rllib_cluster import start_ray
    from wizard_env.training.rllib_train import RLlibConfig

    start_ray("", RLlibConfig())
    yield ray
    ray.shutdown()
