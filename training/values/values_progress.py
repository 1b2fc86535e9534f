"""What a train-values run reports as it goes (``train_values.ValuesTrainer``): an iteration's chunks as they come in
(``ChunkTally``: which of them it uses, whatever order they finish in, and a line per chunk), what a fit did
(``fit_line``) and where a resumed run goes on (``resumed_line``)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Callable

from .chunk_worker import chunk_samples


class ChunkTally:
    """The decisions of an iteration's finished chunks, by index, and the first chunks that hold ``samples``."""

    def __init__(self, samples: int):
        self.samples = samples  #: the decisions the iteration needs (``--samples``)
        self.sizes: dict[int, int] = {}  #: decisions of each finished chunk, by index

    def enough(self) -> int | None:
        """The number of first chunks, in index order, that hold ``samples`` decisions (None: not yet finished).
        The iteration uses exactly those, whatever order the workers finished in, so a seed gives one data set."""
        total = 0
        for i in itertools.count():
            if i not in self.sizes:
                break
            total += self.sizes[i]
            if total >= self.samples:
                return i + 1
        return None

    def read_finished(self, path: Callable[[int], Path]) -> bool:
        """Count the chunks ``path(0)``, ``path(1)``, ... already on disk (finished by an earlier, interrupted run), in
        index order until they are enough; whether some were there but not enough."""
        while path(len(self.sizes)).is_file() and self.enough() is None:
            self.sizes[len(self.sizes)] = chunk_samples(path(len(self.sizes)))
        return bool(self.sizes) and self.enough() is None

    def used(self, path: Callable[[int], Path]) -> tuple[list[Path], int]:
        """The files of the chunks the iteration uses (chunk ``i``: ``path(i)``) and the decisions they hold."""
        used = self.enough()
        assert used is not None  # called once enough chunks are in
        return [path(i) for i in range(used)], sum(self.sizes[i] for i in range(used))

    def in_hand(self) -> tuple[int, int]:
        """The decisions of the chunks finished from chunk 0 on without a gap (the iteration's, as they come in),
        and those of chunks finished ahead of a chunk before them (counted once that one is in); once the
        iteration has enough, the decisions of the chunks it uses."""
        used = self.enough()
        if used is not None:
            return sum(self.sizes[i] for i in range(used)), 0
        first = next(i for i in itertools.count() if i not in self.sizes)
        return sum(self.sizes[i] for i in range(first)), sum(v for i, v in self.sizes.items() if i > first)

    def chunk_line(self, iteration: int, i: int, before: int, start: float, started: float) -> str:
        """The line of chunk ``i`` just finished: the decisions in hand, the rate since ``start`` (when ``before``
        were in hand) and the run's minutes since ``started``."""
        (counted, ahead), now = self.in_hand(), time.monotonic()
        rate, minutes = (counted + ahead - before) / (now - start), (now - started) / 60
        waiting = f"; {ahead:,} more in chunks finished ahead of their turn" if ahead else ""
        return (f"iteration {iteration}: chunk {i} done: {counted:,} decisions collected, "
                f"{self.samples:,} needed{waiting} ({rate:,.0f}/s, {minutes:.1f} min)")

    def uses_line(self, iteration: int, games: int) -> str:
        """The line of an iteration that has enough: the chunks it uses, and those collected alongside that it does not."""
        used = self.enough()
        assert used is not None  # called once enough chunks are in
        spare = sorted(i for i in self.sizes if i >= used)
        unused = (f"; {len(spare)} more chunk(s) collected alongside them ({sum(self.sizes[i] for i in spare):,} "
                  "decisions) are not used" if spare else "")
        return (f"iteration {iteration}: uses chunks 0-{used - 1}, {sum(self.sizes[i] for i in range(used)):,} "
                f"decisions (whole chunks of --games {games}, until --samples {self.samples:,}){unused}")


def fit_line(stats: dict, own: int, played: str, seconds: float) -> str:
    """What a fit did in ``seconds`` (``stats``: ``ValuesTrainer.fit``'s; ``own``: the iteration's own decisions;
    ``played``: whose choices the held-out figures compare with): the decisions it fitted, where they came from, what
    it held out."""
    total = stats["decisions"] + stats["held_out"]
    source = f"all {own:,} of this iteration's" if total == own else f"{own:,} of this iteration and {total - own:,} earlier"
    line = f"fitted {stats['decisions']:,} decisions in {seconds:.0f} s ({source}"
    if not stats["held_out"]:
        return f"{line}; none held out: every 12th chunk is held out, 12 or more are needed), loss {stats['loss']:.3f}"
    gained = ", ".join(f"{k} {v:+.2f}" for k, v in stats.items() if k in ("trump", "bid", "play"))
    return (f"{line}, less {stats['held_out']:,} held out), loss {stats['loss']:.3f}; on held-out games it departs from "
            f"{played} at {stats['differs']:.1%} of decisions, gain per decision by phase: {gained}")


def resumed_line(out: Path, last: Path, iteration: int, iterations: int, samples: int, seconds: float) -> str:
    """The line of the run in ``out`` resumed at ``iteration`` (the iterations before it are finished, the last one's
    checkpoint ``last``, with ``samples`` decisions in ``seconds`` of the run's wall time) of ``iterations``."""
    if not iteration:
        return f"resumed {out}: no iteration finished yet; iteration 0 goes on (its finished chunks are kept)"
    went_on = (f"iteration {iteration} goes on" if iteration < iterations
               else f"every iteration of --iterations {iterations} is finished")
    return (f"resumed {out} from {last.relative_to(out)} (iteration {iteration - 1}: {samples:,} "
            f"decisions, {seconds / 60:.1f} min): {went_on}")
