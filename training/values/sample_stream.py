"""Decisions past the memory budget: left in their chunk files and read a window at a time, in a fit's order.

``load_samples`` holds the decisions of chunk files in memory (``samples.ValueSamples``), or, when they would take
more than its budget, leaves them on disk (``ChunkSamples``). ``epoch_order`` puts a fit's rows in an order that
depends on the seed and the window only, never on the budget, and ``minibatches`` cuts it into the same minibatches
from either, so a fit gives the same weights whether its data are held or streamed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import numpy as np

from wizard_env.util.checks import available_memory

from .samples import ValueSamples, read_chunk

#: Decisions a fit holds at once when it streams, and into how many blocks of consecutive rows a window falls.
WINDOW = 2**20
BLOCKS_PER_WINDOW = 16
_NONE = np.zeros(0, dtype=np.int64)


class ChunkSamples:
    """The decisions of chunk files left on disk (``load_samples``' answer past its memory budget): ``take`` reads the
    chunks that hold the rows asked for, keeping the last one read; ``advice`` is held, one byte a decision."""

    def __init__(self, paths: list, sizes: list[int], advice: np.ndarray):
        self.paths = [Path(p) for p in paths]
        self.offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        self.advice = advice
        self._last: tuple[int, ValueSamples | None] = (-1, None)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def _chunk(self, i: int) -> ValueSamples:
        """Chunk ``i``, read (or the one kept)."""
        if self._last[0] != i:
            self._last = (-1, None)  # dropped before the next is read
            part = read_chunk(self.paths[i])
            if len(part) != self.offsets[i + 1] - self.offsets[i]:
                raise ValueError(f"data chunk {self.paths[i]}: it changed while it was read")
            self._last = (i, part)
        kept = self._last[1]
        assert kept is not None
        return kept

    def take(self, rows: np.ndarray) -> ValueSamples:
        """The decisions ``rows`` (indices over all chunks, in their order), read from their chunks."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= len(self)):
            raise IndexError(f"rows out of range for {len(self):,} decisions")
        chunk = np.searchsorted(self.offsets, rows, side="right") - 1
        order = np.argsort(chunk, kind="stable")
        groups = np.split(order, np.flatnonzero(np.diff(chunk[order])) + 1) if rows.size else []
        parts = (self._chunk(int(chunk[g[0]])).take(rows[g] - self.offsets[chunk[g[0]]]) for g in groups)
        held = ValueSamples.assemble(len(rows), parts)
        return held if (order == np.arange(len(rows))).all() else held.take(np.argsort(order))


def memory_budget() -> int:
    """The default memory for decisions held for a fit: half of what the system can give now."""
    have = available_memory()
    return sys.maxsize if have is None else have[0] // 2


def load_samples(paths: list, budget: int | None = None) -> tuple[ValueSamples | ChunkSamples, np.ndarray]:
    """The decisions of chunk files, concatenated, and the chunk index of each decision. Every chunk is read whole and
    checked; past ``budget`` bytes (default ``memory_budget()``) they stay on disk: a ``ChunkSamples``, which a fit
    reads a window at a time."""
    sizes, advice, nbytes = [], [], 0
    for path in paths:  # one chunk held at a time
        part = read_chunk(path)
        sizes.append(len(part))
        advice.append(part.advice)
        nbytes += part.nbytes
    chunk = np.repeat(np.arange(len(paths)), sizes)
    if nbytes > (memory_budget() if budget is None else budget):
        return ChunkSamples(paths, sizes, np.concatenate(advice or [_NONE.astype(np.uint8)])), chunk

    def parts() -> Iterator[ValueSamples]:
        for path, size in zip(paths, sizes):
            part = read_chunk(path)
            if len(part) != size:
                raise ValueError(f"data chunk {path}: it changed while it was read")
            yield part
    return ValueSamples.assemble(sum(sizes), parts()), chunk


def epoch_order(rng: np.random.Generator, train: np.ndarray, rows: int, window: int = WINDOW) -> list[np.ndarray]:
    """The rows ``train`` (of ``rows`` decisions) in the order of one epoch, as windows of at most ``window``.

    Up to ``window`` training rows: one window, a permutation of them all. Past it, the rows fall into blocks of
    ``window // BLOCKS_PER_WINDOW`` consecutive rows (a few chunks each), the blocks are shuffled and each run of
    ``BLOCKS_PER_WINDOW`` blocks is a window whose rows are shuffled: a fit that streams holds one window at a time.
    """
    if len(train) <= window:
        return [rng.permutation(train)]
    block = max(1, window // BLOCKS_PER_WINDOW)
    blocks = -(-rows // block)
    group = np.empty(blocks, dtype=np.int64)
    group[rng.permutation(blocks)] = np.arange(blocks) // (window // block)
    of_row = group[np.asarray(train) // block]
    order = np.argsort(of_row, kind="stable")
    split = np.split(np.asarray(train)[order], np.flatnonzero(np.diff(of_row[order])) + 1)
    return [rng.permutation(rows_of) for rows_of in split]


def minibatches(samples: ValueSamples | ChunkSamples, windows: list[np.ndarray], batch_size: int) -> Iterator[ValueSamples]:
    """The minibatches of an epoch in order (``batch_size`` rows each; a last shorter one is left out, unless it is
    the only one): taken from ``samples`` in memory, or read from its chunks a window at a time."""
    order_size = sum(len(w) for w in windows)
    batches = [(s, min(s + batch_size, order_size)) for s in range(0, max(1, order_size - batch_size + 1), batch_size)]
    if isinstance(samples, ValueSamples):
        order = np.concatenate(windows) if windows else _NONE
        for start, stop in batches:
            yield samples.take(order[start:stop])
        return
    # streaming: the rows of epoch positions carry_from.. that a minibatch still to come needs are kept across windows
    carry, carry_from, begin, b = ValueSamples.empty(), 0, 0, 0
    for rows in windows or [_NONE]:
        end = begin + len(rows)
        held = np.sort(rows)
        window = _Window(carry, carry_from, samples.take(held), np.searchsorted(held, rows), begin)
        while b < len(batches) and batches[b][1] <= end:
            yield window.between(*batches[b])
            b += 1
        if b < len(batches) and batches[b][0] < end:
            carry, carry_from = window.between(batches[b][0], end), batches[b][0]
        else:
            carry, carry_from = ValueSamples.empty(), end
        del window  # before the next window is read
        begin = end


class _Window:
    """The rows of one window of an epoch read from disk (``data``, at ``local`` in epoch order from position
    ``begin``) and the rows before it a minibatch still needs (``carry``, from position ``carry_from``)."""

    def __init__(self, carry: ValueSamples, carry_from: int, data: ValueSamples, local: np.ndarray, begin: int):
        self.carry, self.carry_from, self.data, self.local, self.begin = carry, carry_from, data, local, begin

    def between(self, start: int, stop: int) -> ValueSamples:
        """The rows of epoch positions ``start`` to ``stop`` (from ``carry_from``, to the window's end at most)."""
        parts = []
        if start < self.begin:
            parts.append(self.carry.take(np.arange(start - self.carry_from, min(stop, self.begin) - self.carry_from)))
        if stop > self.begin:
            parts.append(self.data.take(self.local[max(start, self.begin) - self.begin:stop - self.begin]))
        return ValueSamples.concatenate(parts)
