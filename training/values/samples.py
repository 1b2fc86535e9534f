"""Decisions with rollout values, held compactly: in memory, in chunk files, and read back a chunk at a time.

An observation (``engine.observation``) is 1,544 float32 columns, nearly all of them 0 or 1. A decision is kept as

- ``obs_bits``: the columns that are always 0 or 1 (one-hots, and counts that cannot pass 1), bit-packed;
- ``obs_small``: the numerators of the columns the layout bounds (Wizards and Jesters in the counts, the hand
  size, bids, tricks), uint8;
- ``obs_wide``: the numerators of the columns only the rules bound (round, number of rounds, scores), int32;
- ``legal``: the action mask, bit-packed;
- ``legal_values``: the values of the legal actions only, row after row: int16 where every value is a whole
  number (round scores are), float32 otherwise, NaN for an action that a search with a prior did not play out
  (``collect_values(..., search_top=K)``);
- ``advice``: RuleAgent's action, uint8.

A column's float32 is its numerator times its field's scale, computed as the encoder computes it (in float64,
then rounded to float32), so the decoded observation is the encoder's, bit for bit; ``ValueSamples.of`` checks
that it is. That is about 280 bytes a decision on disk (290 in memory, with each row's offset into its values),
where the first chunk format took 3,491 (float16 observations, masks, float32 values of every action, int64
advice). Chunks of the first format are read and converted as they are read.

A fit (``rollout_values.fit``) expands each minibatch to float32; data past a memory budget stay in their chunk
files and are read a window at a time (``sample_stream``).
"""

from __future__ import annotations

import contextlib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from wizard_env.agents.checkpoint import read_member
from wizard_env.engine.actions import NUM_ACTIONS
from wizard_env.engine.constants import MAX_HAND_SIZE
from wizard_env.engine.observation import FIELDS, OBS_SIZE, OBS_VERSION
from wizard_env.util.files import DAMAGED_ARCHIVE, damaged, write_atomic


def _columns() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The observation's 0/1 columns, its layout-bounded and its rules-bounded columns, and every column's scale."""
    high = np.concatenate([np.broadcast_to(np.asarray(f.high, dtype=np.float64), f.shape).ravel() for f in FIELDS])
    scale = np.concatenate([np.full(f.size, f.scale, dtype=np.float64) for f in FIELDS])  # float64, as the encoder scales
    binary = (scale == 1) & (high == 1)
    small = ~binary & np.isfinite(high)
    assert (high[small] <= np.iinfo(np.uint8).max).all() and NUM_ACTIONS <= np.iinfo(np.uint8).max + 1
    return np.flatnonzero(binary), np.flatnonzero(small), np.flatnonzero(~binary & ~small), scale


BITS, SMALL, WIDE, _SCALE = _columns()
BIT_BYTES, MASK_BYTES = -(-len(BITS) // 8), -(-NUM_ACTIONS // 8)
#: The chunk format this code writes (the first format held float16 observations), and its arrays' dtypes.
CHUNK_FORMAT = 2
CHUNK_DTYPES: dict[str, tuple[type, ...]] = {
    "format": (np.int64,), "obs_bits": (np.uint8,), "obs_small": (np.uint8,), "obs_wide": (np.int32,),
    "legal": (np.uint8,), "legal_values": (np.int16, np.float32), "advice": (np.uint8,)}
#: The arrays of a chunk of the first format (``np.savez`` of float16 observations, masks, values, advice).
FIRST_CHUNK_DTYPES: dict[str, tuple[type, ...]] = {
    "observations": (np.float16, np.float32), "masks": (np.bool_,), "values": (np.float32, np.float64),
    "advice": (np.int64, np.int32)}
#: Bytes of a decision's fixed-width arrays held in memory (with its offset into ``legal_values``).
ROW_BYTES = BIT_BYTES + len(SMALL) + 4 * len(WIDE) + MASK_BYTES + 1 + 8
#: The most a decision takes in memory: its fixed-width arrays and a float32 value for each bid of the largest hand.
DECISION_BYTES = ROW_BYTES + 4 * (MAX_HAND_SIZE + 1)
_PIECE = 4096  # rows decoded at once where a whole array would be large
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
_NONE = np.zeros(0, dtype=np.int64)


#: The 0/1 columns as runs of consecutive columns (a few slices copy them faster than an index array gathers them).
_RUNS = [(int(r[0]), int(r[-1]) + 1) for r in np.split(BITS, np.flatnonzero(np.diff(BITS) != 1) + 1)]


def _decode(bits: np.ndarray, small: np.ndarray, wide: np.ndarray) -> np.ndarray:
    """float32 observations [k, OBS_SIZE] of the compact columns."""
    out = np.empty((len(bits), OBS_SIZE), dtype=np.float32)
    unpacked, at = np.unpackbits(bits, axis=1, count=len(BITS)), 0
    for first, stop in _RUNS:
        out[:, first:stop] = unpacked[:, at:at + stop - first]
        at += stop - first
    out[:, SMALL] = _scaled(small, SMALL)
    out[:, WIDE] = _scaled(wide, WIDE)
    return out


def _scaled(numerators: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """float32 values of ``columns`` from their numerators: the float64 product rounded to float32, as the encoder does."""
    return (numerators * _SCALE[columns]).astype(np.float32)


def _numerators(x: np.ndarray, columns: np.ndarray, dtype: type) -> np.ndarray:
    """The nearest numerators of ``columns`` of observations ``x``, clipped to ``dtype`` (checked by the caller)."""
    q = np.rint(x[:, columns].astype(np.float64) / _SCALE[columns])
    q[~np.isfinite(q)] = 0
    info = np.iinfo(dtype)
    return np.clip(q, info.min, info.max).astype(dtype)


def _encode(observations: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The compact columns of observations (float32, or the float16 of the first chunk format); ValueError naming
    the first value they cannot hold (decoded and rounded to the input's dtype, each must come back bit for bit)."""
    bits, small, wide = [], [], []
    for start in range(0, len(observations), _PIECE):
        x = observations[start:start + _PIECE]
        as_bits = f"u{x.itemsize}"
        binary = np.concatenate([x[:, first:stop] for first, stop in _RUNS], axis=1).view(as_bits)
        s, w = _numerators(x, SMALL, np.uint8), _numerators(x, WIDE, np.int32)
        one = np.ones(1, x.dtype).view(as_bits)[0]
        wrong = [((binary != 0) & (binary != one), BITS)]
        wrong += [(_scaled(n, columns).astype(x.dtype).view(as_bits) != x[:, columns].view(as_bits), columns)
                  for n, columns in ((s, SMALL), (w, WIDE))]
        if any(mask.any() for mask, _ in wrong):
            row, column = min((r, columns[c]) for mask, columns in wrong for r, c in np.argwhere(mask)[:1])
            name = next(f.name for f in FIELDS if column < _field_stop(f.name))
            raise ValueError(f"observation {start + row} holds {float(x[row, column])!r} in column {column} (field {name!r}): "
                             "not a value of the observation layout")
        bits.append(np.packbits(binary != 0, axis=1))
        small.append(s)
        wide.append(w)
    if not bits:
        return np.zeros((0, BIT_BYTES), np.uint8), np.zeros((0, len(SMALL)), np.uint8), np.zeros((0, len(WIDE)), np.int32)
    return np.concatenate(bits), np.concatenate(small), np.concatenate(wide)


def _field_stop(name: str) -> int:
    """The column after the last of field ``name``."""
    return sum(f.size for f in FIELDS[:[f.name for f in FIELDS].index(name) + 1])


def _legal_counts(legal: np.ndarray) -> np.ndarray:
    """Legal actions of each row of bit-packed masks."""
    return _POPCOUNT[legal].sum(axis=1, dtype=np.int64)


@dataclass(eq=False)
class ValueSamples:
    """Decisions with rollout values, compactly (the module docstring): ``observations``, ``masks``, ``values`` and
    ``advice`` give them back as the rollout loop made them; ``take(rows)`` first where only some rows are wanted."""

    obs_bits: np.ndarray  #: uint8 [N, BIT_BYTES]
    obs_small: np.ndarray  #: uint8 [N, len(SMALL)]
    obs_wide: np.ndarray  #: int32 [N, len(WIDE)]
    legal: np.ndarray  #: uint8 [N, MASK_BYTES]: the bit-packed action masks
    legal_values: np.ndarray  #: int16 or float32 [legal actions of all rows]
    advice: np.ndarray  #: uint8 [N]
    starts: np.ndarray = field(init=False, repr=False)  #: int64 [N + 1]: where each row's values start

    def __post_init__(self) -> None:
        self.starts = np.zeros(len(self.advice) + 1, dtype=np.int64)
        np.cumsum(_legal_counts(self.legal), out=self.starts[1:])

    @classmethod
    def of(cls, observations: np.ndarray, masks: np.ndarray, values: np.ndarray, advice: np.ndarray) -> "ValueSamples":
        """Samples of decisions from their float32 observations [k, OBS_SIZE], action masks [k, NUM_ACTIONS] (any
        dtype), values [k, NUM_ACTIONS] (those of illegal actions are dropped) and advice [k]; ValueError for arrays
        of other shapes or an observation the compact form cannot hold exactly."""
        k = len(advice)
        for name, array, shape in (("observations", observations, (k, OBS_SIZE)), ("masks", masks, (k, NUM_ACTIONS)),
                                   ("values", values, (k, NUM_ACTIONS)), ("advice", advice, (k,))):
            if np.shape(array) != shape:
                raise ValueError(f"ValueSamples.of: {name} of shape {np.shape(array)}, expected {shape}")
        if not ((np.asarray(advice) >= 0) & (np.asarray(advice) < NUM_ACTIONS)).all():
            raise ValueError("ValueSamples.of: advice holds actions out of range")
        return cls._packed(np.asarray(observations, dtype=np.float32), masks, values, advice)

    @classmethod
    def _packed(cls, observations: np.ndarray, masks: np.ndarray, values: np.ndarray, advice: np.ndarray) -> "ValueSamples":
        """``of``'s work on checked arrays; observations float32, or float16 (the first chunk format) to come back as."""
        masks = np.asarray(masks) != 0
        bits, small, wide = _encode(observations)
        return cls(bits, small, wide, np.packbits(masks, axis=1), _compact_values(np.asarray(values)[masks]),
                   np.asarray(advice).astype(np.uint8))

    @classmethod
    def empty(cls) -> "ValueSamples":
        """No decisions."""
        return cls.of(np.zeros((0, OBS_SIZE), np.float32), np.zeros((0, NUM_ACTIONS), bool),
                      np.zeros((0, NUM_ACTIONS), np.float32), _NONE)

    @classmethod
    def concatenate(cls, parts: list["ValueSamples"]) -> "ValueSamples":
        """The decisions of ``parts``, one after the other."""
        return cls.assemble(sum(len(p) for p in parts), parts)

    @classmethod
    def assemble(cls, n: int, parts: Iterable["ValueSamples"]) -> "ValueSamples":
        """The ``n`` decisions of ``parts``, one after the other, copied into arrays made once (a part may be dropped
        as soon as it is copied: the peak is the result and one part). ValueError if they hold another number."""
        arrays: dict[str, np.ndarray] = {"obs_bits": np.empty((n, BIT_BYTES), np.uint8), "obs_small": np.empty((n, len(SMALL)), np.uint8),
                  "obs_wide": np.empty((n, len(WIDE)), np.int32), "legal": np.empty((n, MASK_BYTES), np.uint8),
                  "advice": np.empty(n, np.uint8)}
        values: list[np.ndarray] = []
        at = 0
        for part in parts:
            if at + len(part) > n:
                raise ValueError(f"more than the {n:,} decisions expected")
            for name, array in arrays.items():
                array[at:at + len(part)] = getattr(part, name)
            values.append(part.legal_values)
            at += len(part)
        if at != n:
            raise ValueError(f"{at:,} decisions where {n:,} were expected")
        dtype = np.int16 if all(v.dtype == np.int16 for v in values) else np.float32
        legal_values = np.concatenate([v.astype(dtype, copy=False) for v in values] or [np.zeros(0, dtype)])
        return cls(arrays["obs_bits"], arrays["obs_small"], arrays["obs_wide"], arrays["legal"], legal_values, arrays["advice"])

    def __len__(self) -> int:
        return len(self.advice)

    @property
    def nbytes(self) -> int:
        """Bytes the decisions take in memory."""
        return sum(a.nbytes for a in (self.obs_bits, self.obs_small, self.obs_wide, self.legal, self.legal_values,
                                      self.advice, self.starts))

    def take(self, rows: np.ndarray) -> "ValueSamples":
        """The decisions ``rows`` (indices, in their order)."""
        rows = np.asarray(rows, dtype=np.int64)
        first, lengths = self.starts[rows], self.starts[rows + 1] - self.starts[rows]
        ends = np.cumsum(lengths)
        at = np.repeat(first - ends + lengths, lengths) + np.arange(ends[-1] if len(ends) else 0)
        return ValueSamples(self.obs_bits[rows], self.obs_small[rows], self.obs_wide[rows], self.legal[rows],
                            self.legal_values[at], self.advice[rows])

    @property
    def observations(self) -> np.ndarray:
        """float32 [N, OBS_SIZE], as the encoder made them (4 bytes a column: ``take`` the rows wanted first)."""
        return _decode(self.obs_bits, self.obs_small, self.obs_wide)

    @property
    def masks(self) -> np.ndarray:
        """bool [N, NUM_ACTIONS]: the legal actions."""
        return np.unpackbits(self.legal, axis=1, count=NUM_ACTIONS).view(bool)

    @property
    def values(self) -> np.ndarray:
        """float32 [N, NUM_ACTIONS]: each legal action's value, NaN elsewhere (and for a legal action not searched)."""
        out = np.full((len(self), NUM_ACTIONS), np.nan, dtype=np.float32)
        out[self.masks] = self.legal_values
        return out

    def value_of(self, actions: np.ndarray) -> np.ndarray:
        """float32 [N]: the value of ``actions[i]`` in row i (NaN where it is not legal)."""
        masks, at = self.masks, np.arange(len(self))
        rank = np.cumsum(masks, axis=1)[at, actions] - 1
        found = masks[at, actions]
        return np.where(found, self.legal_values[np.where(found, self.starts[:-1] + rank, 0)] if found.any() else 0,
                        np.nan).astype(np.float32)


def _compact_values(values: np.ndarray) -> np.ndarray:
    """Values of legal actions as int16 where that is exact (whole numbers in range), else float32."""
    info = np.iinfo(np.int16)
    whole = np.isfinite(values).all() and (values == np.rint(values)).all() and ((values >= info.min) & (values <= info.max)).all()
    return values.astype(np.int16 if whole else np.float32)


# -- chunk files ---------------------------------------------------------------------------------------------------


def write_chunk(path, samples: ValueSamples) -> None:
    """Write ``samples`` to the chunk file ``path`` atomically (a temporary file renamed: never half-written)."""
    arrays = {name: getattr(samples, name) for name in CHUNK_DTYPES if name != "format"}
    write_atomic(Path(path), lambda f: np.savez(f, format=np.array([CHUNK_FORMAT, OBS_VERSION], np.int64), **arrays),
                 binary=True)


@contextlib.contextmanager
def _named(path) -> Iterator[None]:
    """Errors of reading chunk ``path`` as one ValueError naming it and what is wrong with it."""
    try:
        yield
    except ValueError as e:
        raise ValueError(f"data chunk {path}: {e}") from None
    except DAMAGED_ARCHIVE as e:
        raise damaged(f"data chunk {path}", e) from None


def _members(archive: zipfile.ZipFile, dtypes: dict[str, tuple[type, ...]]) -> dict[str, np.ndarray]:
    """The arrays ``dtypes`` names of an open chunk, checked (never unpickled)."""
    members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
    missing = [name for name in dtypes if name not in members]
    if missing:
        raise ValueError(f"it has no {missing[0]!r} array")
    return {name: read_member(archive, members[name], types) for name, types in dtypes.items()}


def _first_format(archive: zipfile.ZipFile) -> bool:
    """Whether an open chunk is of the first format (float16 observations)."""
    names = {info.filename for info in archive.infolist()}
    return "observations.npy" in names and "format.npy" not in names


def read_chunk(path) -> ValueSamples:
    """The decisions of one chunk file (either format), checked; ValueError naming the file and what is wrong with it."""
    with _named(path), zipfile.ZipFile(path) as archive:
        if _first_format(archive):
            arrays = _members(archive, FIRST_CHUNK_DTYPES)
            problem = _first_format_problem(arrays)
            if problem:
                raise ValueError(problem)
            return ValueSamples._packed(arrays["observations"], arrays["masks"], arrays["values"], arrays["advice"])
        arrays = _members(archive, CHUNK_DTYPES)
        problem = _chunk_problem(arrays)
        if problem:
            raise ValueError(problem)
        del arrays["format"]
        return ValueSamples(**arrays)


def _chunk_problem(arrays: dict[str, np.ndarray]) -> str | None:
    """What makes these arrays not a chunk's decisions (format, shapes, the advice, the values), or None."""
    found = arrays["format"]
    if found.shape != (2,) or tuple(found) != (CHUNK_FORMAT, OBS_VERSION):
        return (f"it is of chunk format {_short(found)}: this code reads chunks of format {CHUNK_FORMAT} with observations "
                f"of version {OBS_VERSION}, and those of the first format")
    n = len(arrays["advice"])
    shapes = {"obs_bits": (n, BIT_BYTES), "obs_small": (n, len(SMALL)), "obs_wide": (n, len(WIDE)),
              "legal": (n, MASK_BYTES), "advice": (n,)}
    for name, shape in shapes.items():
        if arrays[name].shape != shape:
            return f"its {name!r} array has shape {arrays[name].shape}, expected {shape}"
    masks = np.unpackbits(arrays["legal"], axis=1, count=NUM_ACTIONS).view(bool) if n else np.zeros((0, NUM_ACTIONS), bool)
    if _legal_counts(arrays["legal"]).sum() != masks.sum():
        return "its 'legal' array has bits set past the last action"
    if arrays["legal_values"].shape != (masks.sum(),):
        return f"its 'legal_values' array has shape {arrays['legal_values'].shape}, expected ({masks.sum()},) (one per legal action)"
    if not (arrays["advice"] < NUM_ACTIONS).all() or not masks[np.arange(n), np.minimum(arrays["advice"], NUM_ACTIONS - 1)].all():
        return "its 'advice' holds actions that are not legal in their decision"
    values = arrays["legal_values"]
    if np.isinf(values).any():
        return "it holds values of legal actions that are infinite"
    decisions = ValueSamples(**{name: array for name, array in arrays.items() if name != "format"})
    if np.isnan(decisions.value_of(decisions.advice)).any():  # NaN: an action a search with a prior did not play out
        return "it holds a decision where RuleAgent's choice has no value (NaN)"
    return None


def _short(array: np.ndarray) -> str:
    """A few numbers of a small array, for a message."""
    return ", ".join(map(str, array.ravel()[:4].tolist())) or "(none)"


def _first_format_problem(arrays: dict[str, np.ndarray]) -> str | None:
    """What makes these arrays not the decisions of a chunk of the first format, or None."""
    n = len(arrays["advice"])
    shapes = {"observations": (n, OBS_SIZE), "masks": (n, NUM_ACTIONS), "values": (n, NUM_ACTIONS), "advice": (n,)}
    for name, shape in shapes.items():
        if arrays[name].shape != shape:
            return f"its {name!r} array has shape {arrays[name].shape}, expected {shape}"
    advice, masks = arrays["advice"], arrays["masks"]
    if not ((advice >= 0) & (advice < NUM_ACTIONS)).all() or not masks[np.arange(n), advice].all():
        return "its 'advice' holds actions that are not legal in their decision"
    if not np.isfinite(arrays["observations"]).all() or not np.isfinite(arrays["values"][masks]).all():
        return "it holds observations or values of legal actions that are not finite"
    return None
