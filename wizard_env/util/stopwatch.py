"""The one timer of the project (wall-clock and CPU seconds of a piece of work) and the rates measured with it."""

from __future__ import annotations

import time
from typing import Callable


class Stopwatch:
    """Wall-clock and CPU seconds (of this process) since it was made, frozen by ``stop`` or the end of a ``with``.

    The one timer of the benchmarks::

        with Stopwatch() as watch:
            work()
        print(f"{watch.seconds:.1f} s wall, {watch.cpu_seconds:.1f} s CPU")
    """

    def __init__(self) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        self._stopped: tuple[float, float] | None = None

    @property
    def seconds(self) -> float:
        """Wall-clock seconds, up to now or to ``stop``."""
        return self._stopped[0] if self._stopped else time.perf_counter() - self._wall

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of this process, up to now or to ``stop``."""
        return self._stopped[1] if self._stopped else time.process_time() - self._cpu

    def stop(self) -> "Stopwatch":
        """Freeze both readings (a second call keeps the first ones)."""
        if self._stopped is None:
            self._stopped = (self.seconds, self.cpu_seconds)
        return self

    def __enter__(self) -> "Stopwatch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def rate(step: Callable[[], int], seconds: float, warmup: float = 0.3) -> float:
    """Units per second of ``step`` (which returns the units it did) over ``seconds`` of wall time."""
    warm = Stopwatch()
    while warm.seconds < warmup:
        step()
    done, watch = 0, Stopwatch()
    while True:  # at least one step, so a tiny --seconds still measures something
        done += step()
        if (elapsed := watch.seconds) >= seconds:
            return done / elapsed


def rates_in_turn(loops: dict[str, Callable[[], int]], seconds: float, rounds: int) -> dict[str, list[float]]:
    """The ``rate`` of each loop in every one of ``rounds`` rounds, the loops taken in turn within a round, so that
    a change in the machine's load hits them alike."""
    rates: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(rounds):
        for name, loop in loops.items():
            rates[name].append(rate(loop, seconds))
    return rates
