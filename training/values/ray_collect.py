"""Tasks on Ray for ``wizard train-values --backend ray``: data chunks collected on a local Ray instance or a cluster.

``RayWorkers`` has the shape of ``wizard_env.util.workers.Workers``: ``submit(fn, *args)`` returns a
``concurrent.futures.Future``, and leaving its ``with`` block cancels the tasks still running. So the trainer's loop
is the same for both backends: it submits chunk tasks in index order, ``--workers`` at a time, and uses the first
chunks (by index) that hold enough decisions, whichever finished first. A chunk task is a pure function of the run's
seed, the iteration and the chunk's index, so the two backends collect the same data.

On Ray a task returns the chunk's decisions and the driver writes the file (``rollout_values.write_chunk``,
atomically): the machines of a cluster need not share a filesystem, and no worker ever holds a half-written file.
A task whose worker process or machine dies is run again by Ray (``RETRIES`` times) from its start, so a lost worker's
chunk is redone, never half-written. Ctrl-C (or SIGTERM) cancels the running tasks, killing their worker processes,
and the run stops within seconds. Without ``--address`` a local instance is started (as ``wizard train --backend
rllib`` starts one: ``rllib_cluster.init_ray``) and left running for the run's later iterations.

Every machine of a cluster needs this package and ``ray`` installed (the rllib extra; docs/scaling.md). Ray is
imported only inside the functions here: without it, ``require_ray`` names the extra to install.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Callable, Iterable

from wizard_env.engine.rules import Rules

from ..rllib.rllib_cluster import OBJECT_STORE_BYTES, init_ray, require_rllib

#: Times Ray runs a chunk task again after its worker process or machine died (an error the task raises is not retried).
RETRIES = 3


class RayTaskLost(OSError):
    """A task's worker died more often than ``RETRIES`` allow (the machine or the cluster failed, not the task)."""


def require_ray(user: str = "wizard train-values --backend ray") -> None:
    """MissingExtra naming the rllib extra (which brings ray) unless ray is installed; nothing is imported."""
    require_rllib(user)


def most_decisions(rules: Iterable[Rules]) -> int:
    """The most decisions a game of these rules can have (every seat bids and plays its hand in every round)."""
    return max(r.num_players * sum(1 + hand for hand in r.hand_sizes) for r in rules)


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """The body of every Ray task: ``fn(*args)`` on a worker (Ray passes an ObjectRef argument as its value)."""
    return fn(*args)


class RayWorkers:
    """Tasks on the Ray cluster at ``address`` (or a local instance with ``count`` CPUs) for ``submit``; as a context
    manager, the tasks still running are cancelled on leaving it.

    ``say`` receives the line a stop by an exception prints (``stopping: cancelling N Ray tasks ...``).
    """

    def __init__(self, count: int, address: str = "", say: Callable[[str], None] = print,
                 object_store_bytes: int = OBJECT_STORE_BYTES):
        require_ray()
        init_ray(address, count, max(OBJECT_STORE_BYTES, object_store_bytes))
        import ray

        self.say = say
        self.remote = ray.remote(num_cpus=1, max_retries=RETRIES)(_call)
        self.running: dict[Future, Any] = {}  # each unfinished task's future and its ObjectRef

    def put(self, value: Any) -> Any:
        """``value`` in Ray's object store, once, for many tasks (its ObjectRef, a ``submit`` argument)."""
        import ray

        return ray.put(value)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run ``fn(*args)`` as a Ray task (``fn`` must be importable on the workers); its future, whose exception is
        the one the task raised (or ``RayTaskLost``), not Ray's wrapper with the remote traceback."""
        ref = self.remote.remote(fn, *args)
        future: Future = Future()
        future.set_running_or_notify_cancel()
        self.running[future] = ref

        def done(finished: Future) -> None:
            self.running.pop(future, None)
            try:
                future.set_result(finished.result())
            except BaseException as e:  # noqa: B036 - the task's outcome, handed to whoever waits on the future
                future.set_exception(_plain(e))

        ref.future().add_done_callback(done)
        return future

    def stop(self, interrupted: bool = False) -> None:
        """Cancel the tasks not finished, killing their worker processes (Ray 2.60 interrupts a running task no other
        way), so nothing of them goes on and their CPUs are free; ``interrupted`` (Ctrl-C, an error): say how many. The
        local Ray instance stays up for the next ``RayWorkers`` (a new worker process imports the package again)."""
        import ray

        pending = [ref for future, ref in list(self.running.items()) if not future.done()]
        if interrupted and pending:
            self.say(f"stopping: cancelling {len(pending)} Ray task{'s' * (len(pending) != 1)} (their chunks are not written) ...")
        for ref in pending:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - finished meanwhile, or its worker already gone: nothing left to stop
                pass
        self.running.clear()

    def __enter__(self) -> "RayWorkers":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.stop(interrupted=exc_type is not None)


def _plain(error: BaseException) -> BaseException:
    """The exception a task raised, out of Ray's wrapper (whose message is the remote traceback); a lost worker, past
    its retries, as ``RayTaskLost`` in one line."""
    from ray import exceptions

    if isinstance(error, exceptions.RayTaskError) and isinstance(error.cause, Exception):
        return error.cause
    if isinstance(error, (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.ObjectLostError,
                          exceptions.OwnerDiedError, exceptions.OutOfMemoryError)):
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return RayTaskLost(f"a Ray worker died {RETRIES + 1} times collecting one chunk ({type(error).__name__}: "
                           f"{first[:200]}); nothing of it was written: run again with --resume")
    return error
