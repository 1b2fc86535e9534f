"""``wizard train-values --backend ray``: Ray tasks collect the chunks the local workers collect, a lost worker's chunk
is redone and never half-written, and leaving the pool (Ctrl-C) cancels the running tasks."""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from wizard_env.agents.ppo_agent import load_checkpoint
from wizard_env.engine.rules import Rules
from wizard_env.training.values import rollout_values as rv
from wizard_env.training.values import train_values
from wizard_env.training.values.ray_collect import RETRIES, RayTaskLost, RayWorkers, _plain
from wizard_env.training.values.train_values import ValuesConfig, ValuesTrainer, run_training

RULES = Rules.make(3, rounds=3)
TINY = ValuesConfig(mix=[3], samples=150, games=4, workers=2, epochs=1, eval_deals=2, hidden=[16], margin=2.0)


@pytest.fixture(scope="module", autouse=True)
def ray_up(ray_local):
    """The session's local Ray instance (two CPUs), which every RayWorkers here joins."""
    return ray_local


def same_chunks(first: list[Path], second: list[Path]) -> None:
    """Assert the chunk files hold the same arrays (not the same bytes: zip members carry timestamps)."""
    assert [p.name for p in first] == [p.name for p in second] and first
    for a, b in zip(map(rv.read_chunk, first), map(rv.read_chunk, second)):
        for name in ("observations", "masks", "values", "advice"):
            assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name


def used_chunks(out: Path, iteration: int) -> list[Path]:
    """The chunks an iteration fitted: the first ones holding ``samples`` decisions (an extra one may lie beside them)."""
    paths, total = [], 0
    for path in sorted((out / "data" / f"iter-{iteration}").glob("chunk-*.npz")):
        if total >= TINY.samples:
            break
        paths.append(path)
        total += len(rv.read_chunk(path).advice)
    return paths


def test_ray_collects_the_local_workers_chunks_and_a_resume_may_switch_backend(tmp_path: Path):
    local, mixed = tmp_path / "local", tmp_path / "mixed"
    run_training(dataclasses.replace(TINY, iterations=2), RULES, local, log=lambda line: None, rounds=3)
    run_training(TINY, RULES, mixed, log=lambda line: None, rounds=3)
    lines: list[str] = []  # iteration 1 on Ray: collected by iteration 0's agent, shipped to the tasks
    run_training(dataclasses.replace(TINY, iterations=2, backend="ray"), RULES, mixed, resume=True, log=lines.append, rounds=3)
    same_chunks(used_chunks(local, 1), used_chunks(mixed, 1))
    _, a = load_checkpoint(local / "checkpoints" / "latest.npz")
    _, b = load_checkpoint(mixed / "checkpoints" / "latest.npz")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    progress = [line for line in lines if re.match(r"iteration 1: chunk \d+ done: [\d,]+ decisions collected, 150 needed"
                                                     r"(; [\d,]+ more in chunks finished ahead of their turn)? \([\d,]+/s, [\d.]+ min\)$", line)]
    assert len(progress) >= len(used_chunks(mixed, 1))  # a line per chunk, as the local workers print
    assert not [p for p in mixed.rglob("*") if p.is_file() and ".tmp" in p.name]


def test_a_worker_killed_in_a_chunk_leaves_no_file_and_the_chunk_is_redone(tmp_path: Path, monkeypatch):
    cfg = dataclasses.replace(TINY, samples=400)
    local = ValuesTrainer(cfg, RULES, tmp_path / "local", quiet=True, rounds=3)
    expected, decisions = local.collect(0)
    attempts = tmp_path / "attempts"
    attempts.mkdir()
    original = train_values._chunk_samples

    def dies_once_in_chunk_1(task: tuple, agent=None, read=None):
        """Collect the chunk, then on the first try at chunk 1 kill this worker before it returns anything."""
        samples = original(task, agent, read)
        if task[0].endswith("chunk-00001.npz"):
            (attempts / str(len(list(attempts.iterdir())))).touch()
            if len(list(attempts.iterdir())) == 1:
                os.kill(os.getpid(), signal.SIGKILL)
        return samples

    monkeypatch.setattr(train_values, "_chunk_samples", dies_once_in_chunk_1)
    ray = ValuesTrainer(dataclasses.replace(cfg, backend="ray"), RULES, tmp_path / "ray", quiet=True, rounds=3)
    paths, total = ray.collect(0)
    assert len(list(attempts.iterdir())) == 2  # killed once, redone once
    assert total == decisions and len(expected) > 2
    same_chunks(expected, paths)
    written = sorted(p.name for p in (tmp_path / "ray" / "data" / "iter-0").iterdir())
    assert written[:len(paths)] == [p.name for p in paths] and all(re.fullmatch(r"chunk-\d{5}\.npz", n) for n in written)


def test_leaving_the_pool_by_ctrl_c_kills_the_running_task_and_ray_goes_on(tmp_path: Path):
    pid_file, said = tmp_path / "pid", []

    def sleeps() -> None:
        (tmp_path / "pid").write_text(str(os.getpid()))
        time.sleep(600)

    with pytest.raises(KeyboardInterrupt):
        with RayWorkers(1, say=said.append) as pool:
            future = pool.submit(sleeps)
            deadline = time.monotonic() + 60
            while not pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            raise KeyboardInterrupt
    assert said == ["stopping: cancelling 1 Ray task (their chunks are not written) ..."]
    pid, deadline = int(pid_file.read_text()), time.monotonic() + 60
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_alive(pid)  # the worker was killed, not left sleeping
    assert future.exception(timeout=60) is not None
    with RayWorkers(1) as pool:  # the instance still runs tasks
        assert pool.submit(sum, [1, 2, 3]).result(timeout=120) == 6


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed and not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][:1] != "Z"
    except FileNotFoundError:
        return False


def test_a_task_error_is_the_tasks_own_and_a_lost_worker_is_one_line():
    from ray import exceptions

    error = exceptions.RayTaskError("_call", "Traceback ...\nValueError: data chunk x: damaged", ValueError("data chunk x: damaged"))
    assert type(_plain(error)) is ValueError and str(_plain(error)) == "data chunk x: damaged"
    lost = _plain(exceptions.WorkerCrashedError())
    assert isinstance(lost, RayTaskLost) and f"died {RETRIES + 1} times" in str(lost) and "\n" not in str(lost)


def test_a_zero_run_on_ray_collects_the_local_workers_chunks(tmp_path: Path):
    """Zero's collection (the random network of init.npz at iteration 0, search targets under its bid model, tables
    against the run's earlier networks) sends its checkpoints to the tasks and gives the local workers' data."""
    rules = Rules.make(4, rounds=5)
    zero = ValuesConfig(mix=[4], samples=120, games=4, workers=2, epochs=1, eval_deals=2, hidden=[16], margin=0.0,
                        advice=False, zero=True, targets="search", search_samples=2, search_infer=True, pool_tables=0.3,
                        pool=["previous"], iterations=2)
    local, ray_run = tmp_path / "local", tmp_path / "ray"
    run_training(zero, rules, local, log=lambda line: None, rounds=5)
    run_training(dataclasses.replace(zero, backend="ray"), rules, ray_run, log=lambda line: None, rounds=5)
    for iteration in range(2):
        paths = [sorted((out / "data" / f"iter-{iteration}").glob("chunk-*.npz")) for out in (local, ray_run)]
        used = min(map(len, paths))  # either may hold one spare chunk beyond those used
        same_chunks(paths[0][:used], paths[1][:used])
    _, a = load_checkpoint(local / "checkpoints" / "latest.npz")
    _, b = load_checkpoint(ray_run / "checkpoints" / "latest.npz")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
