"""The progress of a trainer's long phases: a bar on a terminal, a line now and then in a log, nothing with ``--quiet``.

A phase says what it does when it starts (``Progress.start``'s line), then shows how far it is: a tqdm bar on
stderr when stderr is a terminal, otherwise a line every ``LINE_EVERY`` seconds (a log file gets no ``\\r`` frames).
A phase with a time budget besides its count (``budget``: a run's ``--minutes``) is as far as the larger of the two
shares: the share of its count done, or of its time spent; ``finish`` says it reached its end (100%) once either
budget ended it.
"""

from __future__ import annotations

import sys
import time
from typing import Callable

#: Seconds between the progress lines of a phase when stderr is not a terminal.
LINE_EVERY = 30.0
#: The steps of the bar of a phase with a time budget (its percent).
PERCENT = 100


def plural(unit: str) -> str:
    """``unit`` in the plural: rounds, batches, steps, decisions."""
    return unit + ("es" if unit.endswith(("ch", "sh", "s", "x")) else "s")


class Progress:
    """How far one phase (``desc``) is, out of ``total`` ``unit``s; ``log`` prints a line (above any bar).

    ``budget``: seconds the phase may take, as ``elapsed()`` counts them (default: since the phase began); the phase
    then shows the larger share of count and time."""

    def __init__(self, desc: str, total: int, unit: str, quiet: bool, log: Callable[[str], object], initial: int = 0,
                 leave: bool = False, bar: bool = True, budget: float | None = None,
                 elapsed: Callable[[], float] | None = None):
        from tqdm import tqdm

        self.desc, self.total, self.unit, self.n = desc, max(int(total), 1), unit, int(initial)
        self.budget = budget
        self.started = self.said = time.monotonic()
        self.elapsed = elapsed or (lambda: time.monotonic() - self.started)
        self.log = None if quiet else log
        self.bar = None
        if not quiet and bar and sys.stderr.isatty():  # ``bar`` False: lines even on a terminal (several processes)
            if budget is None:
                self.bar = tqdm(total=self.total, initial=self.n, desc=desc, unit=unit, file=sys.stderr, leave=leave,
                                mininterval=1, dynamic_ncols=True)
            else:  # the bar counts percent of the phase, the count shown beside it
                self.bar = tqdm(total=PERCENT, initial=self._percent(), desc=desc, unit="%", file=sys.stderr, leave=leave,
                                mininterval=1, dynamic_ncols=True, bar_format="{l_bar}{bar}| {postfix}")
                self.bar.set_postfix_str(self._count(), refresh=False)

    def fraction(self) -> float:
        """How far the phase is, 0 to 1: its count's share, or with a time budget the larger of that and its time's."""
        done = self.n / self.total
        if self.budget is not None:
            done = max(done, self.elapsed() / self.budget if self.budget > 0 else 1.0)
        return min(done, 1.0)

    def _percent(self) -> int:
        return int(self.fraction() * PERCENT)

    def _count(self) -> str:
        return f"{self.n:,} of {self.total:,} {plural(self.unit)}"

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
            if self.budget is None:
                self.bar.update(step)
            else:
                self.bar.set_postfix_str(self._count(), refresh=False)
                self.bar.update(self._percent() - self.bar.n)
        elif self.log is not None and time.monotonic() - self.said >= LINE_EVERY:
            self.said = time.monotonic()
            self.log(self.line())

    def line(self, share: float | None = None) -> str:
        """The progress line: the share done (``share``, default ``fraction()``), the count and the seconds."""
        share = self.fraction() if share is None else share
        return f"{self.desc}: {share:.0%} ({self._count()}, {time.monotonic() - self.started:.0f} s)"

    def finish(self, by: str) -> None:
        """The phase ended by its budget (``by`` names it, as the option that set it): 100%, said in a last line."""
        if self.bar is not None:
            if self.budget is None:
                self.bar.update(self.total - self.bar.n)
            else:
                self.bar.set_postfix_str(self._count(), refresh=False)
                self.bar.update(PERCENT - self.bar.n)
        elif self.log is not None:
            self.log(f"{self.line(1.0)}: ended by {by}")

    def close(self) -> None:
        """The phase is over: remove the bar."""
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
