"""The progress of a trainer's long phases: a bar on a terminal, a line now and then in a log, nothing with ``--quiet``.

A phase says what it does when it starts (``Progress.start``'s line), then shows how far it is: a tqdm bar on
stderr when stderr is a terminal, otherwise a line every ``LINE_EVERY`` seconds (a log file gets no ``\\r`` frames).
"""

from __future__ import annotations

import sys
import time
from typing import Callable

#: Seconds between the progress lines of a phase when stderr is not a terminal.
LINE_EVERY = 30.0


class Progress:
    """How far one phase (``desc``) is, out of ``total`` ``unit``s; ``log`` prints a line (above any bar)."""

    def __init__(self, desc: str, total: int, unit: str, quiet: bool, log: Callable[[str], object], initial: int = 0,
                 leave: bool = False, bar: bool = True):
        from tqdm import tqdm

        self.desc, self.total, self.unit, self.n = desc, max(int(total), 1), unit, int(initial)
        self.log = None if quiet else log
        self.bar = None
        if not quiet and bar and sys.stderr.isatty():  # ``bar`` False: lines even on a terminal (several processes)
            self.bar = tqdm(total=self.total, initial=self.n, desc=desc, unit=unit, file=sys.stderr, leave=leave,
                            mininterval=1, dynamic_ncols=True)
        self.started = self.said = time.monotonic()

    def say(self, line: str) -> None:
        """A line about this phase (none with ``quiet``)."""
        if self.log is not None:
            self.log(line)

    def update(self, count: int) -> None:
        """``count`` more units done."""
        self.to(self.n + int(count))

    def to(self, done: int) -> None:
        """``done`` units done in all."""
        step, self.n = done - self.n, done
        if self.bar is not None:
            self.bar.update(step)
        elif self.log is not None and time.monotonic() - self.said >= LINE_EVERY:
            self.said = time.monotonic()
            self.log(f"{self.desc}: {min(self.n / self.total, 1):.0%} ({self.n:,} of {self.total:,} {self.unit}s, "
                     f"{self.said - self.started:.0f} s)")

    def close(self) -> None:
        """The phase is over: remove the bar."""
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
