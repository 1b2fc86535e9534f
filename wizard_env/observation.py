"""The observation vector: one layout spec drives the encoder, the decoder and the documentation.

Every field is seat-relative (slot 0 = the observer, slot 1 = their left neighbour, ...) and padded
to six seats, so the vector has the same length for every player count and variant. A field is
stored as ``raw value * scale`` in float32; ``decode`` divides the scale back out and rounds, so
decoding is exact. Run ``python -m wizard_env.observation`` to print the layout table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cards import NO_CARD, NO_SUIT, NUM_CARD_TYPES, NUM_SUITS
from .game import Phase, WizardGame
from .rules import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS

ROUND_SCALE = 1 / MAX_HAND_SIZE
SCORE_SCALE = 1 / 100
NO_TRUMP_INDEX = NUM_SUITS


@dataclass(frozen=True)
class Field:
    """One named piece of the observation vector."""

    name: str
    shape: tuple[int, ...]
    scale: float
    doc: str

    @property
    def size(self) -> int:
        """Number of floats the field takes."""
        return int(np.prod(self.shape))


FIELDS: tuple[Field, ...] = (
    Field("num_players", (MAX_PLAYERS - MIN_PLAYERS + 1,), 1, "one-hot number of players: 3, 4, 5, 6"),
    Field("phase", (len(Phase),), 1, "one-hot phase: trump choice, bid, play, game over"),
    Field("round", (1,), ROUND_SCALE, "round number, from 1"),
    Field("num_rounds", (1,), ROUND_SCALE, "rounds in this game"),
    Field("hand_size", (1,), ROUND_SCALE, "cards dealt to each player this round"),
    Field("dealer", (MAX_PLAYERS,), 1, "one-hot slot of the dealer"),
    Field("hand", (NUM_CARD_TYPES,), 1, "own cards, count per card type (zeros in a foresight round)"),
    Field("trump_card", (NUM_CARD_TYPES,), 1, "one-hot turned-up card (zeros when none)"),
    Field("trump", (NUM_SUITS + 1,), 1, "one-hot trump: c, d, h, s, no trump (zeros while the dealer chooses)"),
    Field("bid_known", (MAX_PLAYERS,), 1, "1 where the slot's bid is made and visible under the bidding variant"),
    Field("bids", (MAX_PLAYERS,), ROUND_SCALE, "bid by slot (0 where not known)"),
    Field("tricks_won", (MAX_PLAYERS,), ROUND_SCALE, "tricks taken this round by slot"),
    Field("leader", (MAX_PLAYERS,), 1, "one-hot slot that leads (led) the current trick"),
    Field("trick", (MAX_PLAYERS, NUM_CARD_TYPES), 1, "card played to the current trick, one-hot by slot"),
    Field("played", (MAX_PLAYERS, NUM_CARD_TYPES), 1, "cards played earlier this round and now, counts by slot"),
    Field("foresight", (MAX_PLAYERS, NUM_CARD_TYPES), 1, "foresight rounds: other players' cards by slot"),
    Field("scores", (MAX_PLAYERS,), SCORE_SCALE, "total score of the rounds completed, by slot"),
)

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


def is_foresight_round(game: WizardGame) -> bool:
    """Whether players see the others' cards instead of their own this round."""
    return game.rules.foresight and game.hand_size == 1


def observe(game: WizardGame, observer: int) -> np.ndarray:
    """Observation vector of ``game`` for seat ``observer``: what that player legally knows."""
    n = game.num_players
    raw = np.zeros(OBS_SIZE, dtype=np.float32)
    view = {f.name: raw[SLICES[f.name]].reshape(f.shape) for f in FIELDS}
    slots = (observer + np.arange(n)) % n  # slot k holds seat slots[k]
    view["num_players"][n - MIN_PLAYERS] = 1
    view["phase"][game.phase] = 1
    view["round"][0] = game.round_index + 1
    view["num_rounds"][0] = game.rules.num_rounds
    view["hand_size"][0] = game.hand_size
    view["dealer"][(game.dealer - observer) % n] = 1
    if game.trump_card != NO_CARD:
        view["trump_card"][game.trump_card] = 1
    if game.phase != Phase.TRUMP:
        view["trump"][NO_TRUMP_INDEX if game.trump == NO_SUIT else game.trump] = 1
    for k, seat in enumerate(slots):
        if game.bid_visible(observer, seat):
            view["bid_known"][k], view["bids"][k] = 1, game.bids[seat]
    view["tricks_won"][:n] = game.tricks_won[slots]
    view["leader"][(game.leader - observer) % n] = 1
    for seat, card in zip(game.trick_seats, game.trick_cards):
        view["trick"][(seat - observer) % n, card] = 1
    view["played"][:n] = game.played[slots]
    if is_foresight_round(game):
        view["foresight"][1:n] = game.hands[slots[1:]]
    else:
        view["hand"][:] = game.hands[observer]
    view["scores"][:n] = game.totals[slots]
    return raw * SCALE


def layout_table() -> str:
    """The observation layout as a reStructuredText table (the env docstring quotes it)."""
    rows = [(f"{SLICES[f.name].start}:{SLICES[f.name].stop}", f.name, "x".join(map(str, f.shape)), f"{f.scale:g}", f.doc) for f in FIELDS]
    header = ("index", "field", "shape", "scale", "meaning")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, line(header), rule, *map(line, rows), rule])


if __name__ == "__main__":
    print(f"OBS_SIZE = {OBS_SIZE}\n")
    print(layout_table())
