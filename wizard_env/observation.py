"""The observation vector: one layout spec drives the encoder, the decoder and the documentation.

Every field is seat-relative (slot 0 = the observer, slot 1 = their left neighbour, ...) and padded
to six seats, so the vector has the same length for every player count and variant. A field is
stored as ``raw value * scale`` in float32; ``decode`` divides the scale back out and rounds, so
decoding is exact. Run ``python -m wizard_env.layout`` to print the layout table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cards import DECK_COUNTS, NO_CARD, NO_SUIT, NUM_CARD_TYPES, NUM_SUITS
from .actions import Phase
from .rules import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, MADE_BID_BONUS, PENALTY_PER_TRICK_OFF, POINTS_PER_TRICK, suits_to_follow

ROUND_SCALE = 1 / MAX_HAND_SIZE
SCORE_SCALE = 1 / 100
NO_TRUMP_INDEX = NUM_SUITS
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
    sizes = np.asarray(rules.hand_sizes, dtype=np.float64)
    low[SLICES["scores"]] = -PENALTY_PER_TRICK_OFF * sizes.sum()
    high[SLICES["scores"]] = (MADE_BID_BONUS + POINTS_PER_TRICK * sizes).sum()
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
    return encode(game.batch, np.zeros(1, dtype=np.intp), np.array([observer]))[0]


_START = {name: s.start for name, s in SLICES.items()}
_TRUMP = int(Phase.TRUMP)


def encode(batch, games: np.ndarray, observers: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Observations [k, OBS_SIZE] of games ``games`` of a ``WizardBatch``, for seats ``observers``.

    ``out``, if given, is a float32 [k, OBS_SIZE] array to overwrite (saves allocating it).
    """
    n, k, start = batch.num_players, len(games), _START
    if out is None:
        out = np.zeros((k, OBS_SIZE), dtype=np.float32)
    else:
        out.fill(0)
    observers = observers.astype(np.intp)
    slots = (observers[:, None] + np.arange(n)) % n  # slot j of row i holds seat slots[i, j]
    seat_rows = games[:, None] * n + slots  # rows of the [B * n, ...] views, in slot order
    rounds = batch.round_index[games].astype(np.intp)
    size = batch.hand_sizes[rounds]

    # every one-hot entry of a row as a flat index into `out`, written in one scatter
    base = np.arange(k)[:, None] * OBS_SIZE
    phase = batch.phase[games].astype(np.intp)
    card = batch.trump_card[games].astype(np.intp)
    trump = batch.trump[games].astype(np.intp)
    leader = batch.leader[games].astype(np.intp)
    hot = [
        np.full(k, start["num_players"] + n - MIN_PLAYERS),
        start["phase"] + phase,
        start["dealer"] + (batch.dealer[games] - observers) % n,
        start["leader"] + (leader - observers) % n,
    ]
    turned, chosen = card != NO_CARD, phase != _TRUMP
    hot = [base[:, 0] + h for h in hot]
    hot.append((base[:, 0] + start["trump_card"] + card)[turned])
    hot.append((base[:, 0] + start["trump"] + np.where(trump == NO_SUIT, NO_TRUMP_INDEX, trump))[chosen])
    position = np.arange(n - 1)  # a full trick is cleared as soon as it is won
    in_trick = position < batch.trick_len[games][:, None].astype(np.intp)
    slot = (leader[:, None] + position - observers[:, None]) % n
    trick = batch.trick[games, : n - 1].astype(np.intp)
    hot.append((base + start["trick"] + slot * NUM_CARD_TYPES + trick)[in_trick])
    out.reshape(-1)[np.concatenate(hot)] = 1

    out[:, start["round"]] = (rounds + 1) * ROUND_SCALE
    out[:, start["num_rounds"]] = batch.rules.num_rounds * ROUND_SCALE
    out[:, start["hand_size"]] = size * ROUND_SCALE
    known = batch.bids_visible(games, observers).reshape(-1)[np.arange(k)[:, None] * n + slots]
    out[:, start["bid_known"] : start["bid_known"] + n] = known
    out[:, start["bids"] : start["bids"] + n] = np.where(known, batch.bids.reshape(-1)[seat_rows], 0) * ROUND_SCALE
    out[:, start["tricks_won"] : start["tricks_won"] + n] = batch.tricks_won.reshape(-1)[seat_rows] * ROUND_SCALE
    out[:, start["scores"] : start["scores"] + n] = batch.totals.reshape(-1)[seat_rows] * SCORE_SCALE
    hands = batch.hands.reshape(-1, NUM_CARD_TYPES)
    out[:, start["played"] : start["played"] + n * NUM_CARD_TYPES] = batch.played.reshape(-1, NUM_CARD_TYPES)[seat_rows].reshape(k, -1)
    v = start["voids"]
    out[:, v : v + n * NUM_SUITS] = batch.voids.reshape(-1, NUM_SUITS)[seat_rows].reshape(k, -1)
    won = batch.last_winner[games].astype(np.intp)
    done = won >= 0  # a trick of this round was completed
    last = batch.last_trick.reshape(-1)[seat_rows[done]].astype(np.intp)  # [d, n] by slot
    rows = np.flatnonzero(done)
    out[rows[:, None], start["last_trick"] + np.arange(n) * NUM_CARD_TYPES + last] = 1
    out[rows, start["last_winner"] + (won[done] - observers[done]) % n] = 1
    follow = suits_to_follow(batch.trick[games]).astype(np.intp)
    leads = np.flatnonzero(follow != NO_SUIT)
    out[leads, start["lead_suit"] + follow[leads]] = 1
    # cards the observer sees elsewhere than in a hand: played this round and the turned-up card
    seen = batch.played[games].sum(axis=1, dtype=np.int64)
    seen[np.flatnonzero(turned), card[turned]] += 1
    foresight = (size == 1) if batch.rules.foresight else None
    if foresight is not None and foresight.any():
        f = np.flatnonzero(foresight)
        others = slice(start["foresight"] + NUM_CARD_TYPES, start["foresight"] + n * NUM_CARD_TYPES)
        out[f, others] = hands[seat_rows[f, 1:]].reshape(len(f), -1)
        own = np.flatnonzero(~foresight)
        out[own, start["hand"] : start["hand"] + NUM_CARD_TYPES] = hands[seat_rows[own, 0]]
        seen[f] += hands[seat_rows[f, 1:]].sum(axis=1)
        seen[own] += hands[seat_rows[own, 0]]
    else:
        out[:, start["hand"] : start["hand"] + NUM_CARD_TYPES] = hands[seat_rows[:, 0]]
        seen += hands[seat_rows[:, 0]]
    out[:, start["unseen"] : start["unseen"] + NUM_CARD_TYPES] = DECK_COUNTS - seen
    return out


def layout_table() -> str:
    """The observation layout as a reStructuredText table (the env docstring quotes it)."""
    rows = [(f"{SLICES[f.name].start}:{SLICES[f.name].stop}", f.name, "x".join(map(str, f.shape)), f"{f.scale:g}", f.doc) for f in FIELDS]
    header = ("index", "field", "shape", "scale", "meaning")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, line(header), rule, *map(line, rows), rule])

