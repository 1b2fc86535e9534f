"""Worker processes that stop when they are told and die with the process that started them.

``Workers`` runs tasks in a ``ProcessPoolExecutor`` whose processes

- ignore Ctrl-C: the terminal sends SIGINT to every process of the group, and the parent decides what stops;
- stop on SIGTERM within moments: a busy worker unwinds its task (so an ``AtomicWriter`` it has open removes
  its temporary file and the file it was writing is not touched) and exits, an idle one exits at once;
- die with their parent, even one killed by SIGKILL: the kernel sends them SIGTERM when it dies
  (``prctl(PR_SET_PDEATHSIG)`` on Linux), and a watchdog thread in each worker does the same wherever the
  parent's death shows as a new parent process id or a parent that no longer exists.

Leaving the ``with`` block stops the workers still running (their tasks' results are no longer wanted) and
waits for them, saying what it waits for when an exception (Ctrl-C) is leaving it. A Ctrl-C that comes while
``submit`` forks the workers waits until the fork is over: raised in an at-fork callback (``logging``'s), the
KeyboardInterrupt was swallowed there and the run went on. A SIGTERM waits too, in the parent and in the new worker
until its own handler is set: the parent's handler, run in a half-started worker, printed a traceback.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterator

#: Seconds the parent waits for a stopped worker before killing it, and a worker's watchdog checks its parent.
STOP_GRACE, WATCH_EVERY = 10.0, 0.5
#: How workers start: forked on Linux, so a worker begins with the parent's modules and compiled functions as they
#: are, whatever a library imported meanwhile made the global start method (importing torchrl sets "spawn", after
#: which every worker imported the package again); the platform's default elsewhere (macOS: fork is unsafe there).
_START = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
#: Linux's ``prctl`` option that asks for a signal when the parent dies.
_PR_SET_PDEATHSIG = 1

_busy = False  # in a worker: a task is running
_stopping = False  # in a worker: SIGTERM came


class _Stopped(BaseException):
    """Raised in a busy worker by SIGTERM, so the task's ``with`` blocks unwind before the worker exits."""


def _on_sigterm(signum: int, frame: object) -> None:
    global _stopping
    if _stopping:
        return
    _stopping = True
    if not _busy:
        os._exit(0)
    raise _Stopped


def _die_with_parent() -> None:
    """Ask the kernel for SIGTERM when the parent dies (Linux; elsewhere the watchdog alone sees it)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError, TypeError):
        pass


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (one we may not signal exists too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _watch(parent: int, ppid: int) -> None:
    """Stop this worker once its parent is gone (a new parent pid: it was adopted), then make sure it exits."""
    while os.getppid() == ppid and pid_alive(parent):
        time.sleep(WATCH_EVERY)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(STOP_GRACE)
    os._exit(1)


def _start_worker(parent: int) -> None:
    """The initializer of every worker process: its own signal handlers, then the signals ``_signals_held`` blocked
    for the fork let through (one that came meanwhile is handled now, by these handlers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)
    _die_with_parent()
    if not pid_alive(parent):  # died before the kernel was asked to tell us
        os._exit(0)
    threading.Thread(target=_watch, args=(parent, os.getppid()), name="parent-watchdog", daemon=True).start()


def _call(fn: Callable[..., Any], args: tuple) -> Any:
    """Run one task in a worker; a SIGTERM during it ends the process once the task has unwound."""
    global _busy
    try:
        _busy = True
        return fn(*args)
    except BaseException:
        if _stopping:  # _Stopped, or what became of it (numba turns an exception raised in a call into SystemError)
            os._exit(0)
        raise
    finally:
        _busy = False


#: The signals held while the workers fork.
_HELD = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def _signals_held() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM wait (blocked in the main thread), and come as usual on leaving: none is lost
    to an at-fork callback, which would swallow the KeyboardInterrupt. A worker forked inside starts with them
    blocked until its initializer has set its own handlers, so one that comes during the fork is not handled in the
    worker by the parent's (which raised there, with a traceback). Threads started inside keep them blocked, and so
    the main thread is the one they come to."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


class Workers:
    """``count`` worker processes for ``submit``; as a context manager, they are stopped on leaving it.

    ``say`` receives the line a stop by an exception prints (``stopping: waiting for N workers ...``).
    """

    def __init__(self, count: int, say: Callable[[str], object] = print):
        self.say = say
        self.executor = ProcessPoolExecutor(count, mp_context=_START, initializer=_start_worker,
                                            initargs=(os.getpid(),))
        self.running: set[Future] = set()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run ``fn(*args)`` in a worker (``fn`` and ``args`` must pickle); its future."""
        with _signals_held():  # the executor forks its workers here
            future = self.executor.submit(_call, fn, args)
        self.running.add(future)
        future.add_done_callback(self.running.discard)
        return future

    def stop(self, say: bool = False) -> None:
        """Cancel what has not started, stop the workers and wait for them (``say``: print what it waits for)."""
        # the executor's own processes: ProcessPoolExecutor offers no public way to stop them before Python 3.14
        processes = [p for p in (getattr(self.executor, "_processes", None) or {}).values() if p.is_alive()]
        busy = min(len(processes), sum(f.running() for f in list(self.running)))
        self.executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        if say and busy:
            self.say(f"stopping: waiting for {busy} worker{'s' * (busy != 1)} to drop {'their' if busy != 1 else 'its'} "
                     "unfinished task and exit ...")
        deadline = time.monotonic() + STOP_GRACE
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        self.executor.shutdown(wait=True)

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.stop(say=exc_type is not None)
