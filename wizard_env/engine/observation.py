"""The observation vector: one layout spec drives the encoder, the decoder and the documentation.

Every field is seat-relative (slot 0 = the observer, slot 1 = their left neighbour, ...) and padded
to six seats, so the vector has the same length for every player count and variant. A field is
stored as ``raw value * scale`` in float32; ``decode`` divides the scale back out and rounds, so
decoding is exact. Run ``python -m wizard_env.engine.layout`` to print the layout table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import batch_kernels
from .actions import Phase
from .cards import DECK_COUNTS, NUM_CARD_TYPES, NUM_SUITS
from .constants import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS

ROUND_SCALE = 1 / MAX_HAND_SIZE
SCORE_SCALE = 1 / 100
#: Upper bound of a count per card type: 4 Wizards, 4 Jesters, 1 of each suited card.
PER_CARD_TYPE = tuple(int(c) for c in DECK_COUNTS)
#: Upper bound of the fields whose range the rules set (``observation_bounds``): rounds and scores.
BY_RULES = np.inf


@dataclass(frozen=True)
class Field:
    """One named piece of the observation vector."""

    name: str
    shape: tuple[int, ...]
    scale: float
    doc: str
    high: float | tuple[int, ...] = 1  #: largest raw value: a number, or one per card type (last axis)

    @property
    def size(self) -> int:
        """Number of floats the field takes."""
        return int(np.prod(self.shape))


FIELDS: tuple[Field, ...] = (
    Field("num_players", (MAX_PLAYERS - MIN_PLAYERS + 1,), 1, "one-hot number of players: 3, 4, 5, 6"),
    Field("phase", (len(Phase),), 1, "one-hot phase: trump choice, bid, play, game over"),
    Field("round", (1,), ROUND_SCALE, "round number, from 1", BY_RULES),
    Field("num_rounds", (1,), ROUND_SCALE, "rounds in this game", BY_RULES),
    Field("hand_size", (1,), ROUND_SCALE, "cards dealt to each player this round", MAX_HAND_SIZE),
    Field("dealer", (MAX_PLAYERS,), 1, "one-hot slot of the dealer"),
    Field("hand", (NUM_CARD_TYPES,), 1, "own cards, count per card type (zeros in a foresight round)", PER_CARD_TYPE),
    Field("trump_card", (NUM_CARD_TYPES,), 1, "one-hot turned-up card (zeros when none)"),
    Field("trump", (NUM_SUITS + 1,), 1, "one-hot trump: c, d, h, s, no trump (zeros while the dealer chooses)"),
    Field("bid_known", (MAX_PLAYERS,), 1, "1 where the slot's bid is made and visible under the bidding variant"),
    Field("bids", (MAX_PLAYERS,), ROUND_SCALE, "bid by slot (0 where not known)", MAX_HAND_SIZE),
    Field("tricks_won", (MAX_PLAYERS,), ROUND_SCALE, "tricks taken this round by slot", MAX_HAND_SIZE),
    Field("leader", (MAX_PLAYERS,), 1, "one-hot slot that leads (led) the current trick"),
    Field("trick", (MAX_PLAYERS, NUM_CARD_TYPES), 1, "card played to the current trick, one-hot by slot"),
    Field("played", (MAX_PLAYERS, NUM_CARD_TYPES), 1, "cards played earlier this round and now, counts by slot", PER_CARD_TYPE),
    Field("foresight", (MAX_PLAYERS, NUM_CARD_TYPES), 1, "foresight rounds: other players' cards by slot", PER_CARD_TYPE),
    Field("scores", (MAX_PLAYERS,), SCORE_SCALE, "total score of the rounds completed, by slot", BY_RULES),
    # v1
    Field("voids", (MAX_PLAYERS, NUM_SUITS), 1, "1 where the slot showed out of the suit this round (followed it with another suit)"),
    Field("last_trick", (MAX_PLAYERS, NUM_CARD_TYPES), 1, "last completed trick of this round: card by slot, one-hot"),
    Field("last_winner", (MAX_PLAYERS,), 1, "one-hot slot that won the last completed trick (zeros before the first)"),
    Field("lead_suit", (NUM_SUITS,), 1, "one-hot suit to follow in the current trick (zeros if none, as after a Wizard lead)"),
    Field("unseen", (NUM_CARD_TYPES,), 1, "unseen cards by type: in no hand the observer sees, not played, not turned up", PER_CARD_TYPE),
)

#: Version of the layout, and the fields of each version (a version only appends fields).
OBS_VERSION = 1
VERSION_FIELDS: dict[int, tuple[str, ...]] = {
    0: tuple(f.name for f in FIELDS[: [f.name for f in FIELDS].index("scores") + 1]),
    1: tuple(f.name for f in FIELDS),
}

#: Slice of each field in the flat vector.
SLICES: dict[str, slice] = {}
_start = 0
for _field in FIELDS:
    SLICES[_field.name] = slice(_start, _start + _field.size)
    _start += _field.size
OBS_SIZE = _start
del _start, _field

#: The layout arguments of ``batch_kernels.encode``: the offset of each field it writes (in its order), and the
#: scales of the round and score fields.
ENCODER_LAYOUT = (np.array([SLICES[name].start for name in batch_kernels.ENCODED_FIELDS], dtype=np.int64), ROUND_SCALE, SCORE_SCALE)
assert set(batch_kernels.ENCODED_FIELDS) == set(SLICES), "the encoder writes every field of the layout"

#: Scale of every element of the flat vector.
SCALE = np.concatenate([np.full(f.size, f.scale, dtype=np.float32) for f in FIELDS])


def version_columns(version: int) -> np.ndarray:
    """Indices of this layout's vector that make up the vector of an earlier layout ``version``.

    ``observation[..., version_columns(0)]`` is the v0 observation of the same state, so a policy
    trained on v0 can play in a v1 env. ValueError for a version this layout does not know.
    """
    if version not in VERSION_FIELDS:
        raise ValueError(f"unknown observation version {version!r}: this code reads versions {sorted(VERSION_FIELDS)}")
    return np.concatenate([np.arange(SLICES[name].start, SLICES[name].stop) for name in VERSION_FIELDS[version]])


def observation_bounds(rules) -> tuple[np.ndarray, np.ndarray]:
    """Box bounds of the vector in games of ``rules``: each field from 0 to its ``high`` (one-hots 0..1),
    the round fields up to the number of rounds, the scores between all bids missed by every trick and all met."""
    high = np.concatenate([np.broadcast_to(np.asarray(f.high, dtype=np.float64), f.shape).ravel() for f in FIELDS])
    low = np.zeros(OBS_SIZE)
    high[SLICES["round"]] = high[SLICES["num_rounds"]] = rules.num_rounds
    low[SLICES["scores"]], high[SLICES["scores"]] = rules.total_range
    scale = np.concatenate([np.full(f.size, f.scale) for f in FIELDS])  # in float64, as the encoder scales
    return (low * scale).astype(np.float32), (high * scale).astype(np.float32)


def pack(values: dict[str, np.ndarray]) -> np.ndarray:
    """Flat float32 observation from raw field values (missing fields are zero)."""
    raw = np.zeros(OBS_SIZE, dtype=np.float32)
    for field in FIELDS:
        if field.name in values:
            raw[SLICES[field.name]] = np.asarray(values[field.name]).ravel()
    return raw * SCALE


def decode(observation: np.ndarray) -> dict[str, np.ndarray]:
    """Raw integer field values of an observation vector, by field name (inverse of ``pack``)."""
    observation = np.asarray(observation)
    if observation.shape != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},), not {observation.shape}")
    return {
        f.name: np.rint(observation[SLICES[f.name]].astype(np.float64) / f.scale).astype(np.int64).reshape(f.shape)
        for f in FIELDS
    }


def is_foresight_round(game) -> bool:
    """Whether players see the others' cards instead of their own this round (a WizardGame)."""
    return game.rules.foresight and game.hand_size == 1


def observe(game, observer: int) -> np.ndarray:
    """Observation vector of a ``WizardGame`` for seat ``observer``: what that player legally knows."""
    return encode(game.batch, game.batch.all_games, np.array([observer], dtype=np.int8))[0]


def encode(batch, games: np.ndarray, observers: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Observations [k, OBS_SIZE] of games ``games`` of a ``WizardBatch``, for seats ``observers``.

    ``out``, if given, is a float32 [k, OBS_SIZE] array to overwrite (saves allocating it).
    The work is ``batch_kernels.encode``, one pass over each row.
    """
    if out is None:
        out = np.empty((len(games), OBS_SIZE), dtype=np.float32)
    batch_kernels.encode(out, games, observers, batch.kernel_state)
    return out


def layout_table() -> str:
    """The observation layout as a reStructuredText table (the env docstring quotes it)."""
    rows = [(f"{SLICES[f.name].start}:{SLICES[f.name].stop}", f.name, "x".join(map(str, f.shape)), f"{f.scale:g}", f.doc) for f in FIELDS]
    header = ("index", "field", "shape", "scale", "meaning")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, line(header), rule, *map(line, rows), rule])

