"""The RLlib tests: run by ``make test`` in its second venv, .venv-rllib (ray[rllib] with the gymnasium RLlib
pins); the main venv keeps the newest gymnasium. In a venv without ray each module is reported as skipped, naming
ray and the venv that runs it, and nothing of it is imported."""

from __future__ import annotations

import os
from importlib.util import find_spec

import pytest

RAY_MISSING = "ray is not installed (the rllib extra): make test runs tests/rllib in .venv-rllib (make install-rllib)"

if find_spec("ray") is None:

    class _RayMissing(pytest.Module):
        """A test module of this folder where ray is missing: collected as one skip, never imported."""

        def collect(self):
            pytest.skip(RAY_MISSING)

    def pytest_pycollect_makemodule(module_path, parent):
        """Each test module of tests/rllib, skipped as a whole (ray is missing)."""
        return _RayMissing.from_parent(parent, path=module_path)


@pytest.fixture(scope="session")
def ray_local():
    """A small local Ray instance (two CPUs, a 128 MiB object store), shut down after the session."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import ray

    from wizard_env.training.rllib.rllib_cluster import start_ray
    from wizard_env.training.rllib.rllib_train import RLlibConfig

    start_ray("", RLlibConfig())
    yield ray
    ray.shutdown()
