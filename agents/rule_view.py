"""What RuleAgent reads from a batch of observations, and the card-counting odds it reasons with.

Everything here works on arrays with one row per decision. ``read_views`` decodes observations
(``wizard_env.observation`` layout) into ``Views``, one per player count in the batch. The odds
of drawing cards are looked up in tables built once from exact binomial coefficients, so they
equal, bit for bit, the ratio of the exact integer counts.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from math import comb

import numpy as np

from wizard_env.cards import (
    CARD_RANK,
    CARD_SUIT,
    DECK_COUNTS,
    DECK_SIZE,
    JESTER,
    NO_CARD,
    NO_SUIT,
    NUM_RANKS,
    NUM_SUITED,
    NUM_SUITS,
    WIZARD,
)
from wizard_env.observation import FIELDS, SLICES
from wizard_env.rules import MAX_HAND_SIZE, MIN_PLAYERS

_SCALE = {f.name: f.scale for f in FIELDS}
_SHAPE = {f.name: f.shape for f in FIELDS}


def field(observations: np.ndarray, name: str) -> np.ndarray:
    """Raw integer values of one observation field, [k, *field shape] (as ``observation.decode``)."""
    values = observations[:, SLICES[name]]
    if _SCALE[name] != 1:
        values = np.rint(values.astype(np.float64) / _SCALE[name])
    return values.astype(np.int64).reshape(len(observations), *_SHAPE[name])


@dataclass
class Views:
    """The facts of k decisions at tables of ``num_players`` (slot 0 is me, slot 1 my left neighbour)."""

    num_players: int
    phase: np.ndarray  # [k] Phase value
    hand_size: np.ndarray  # [k] cards dealt to each player this round
    hand: np.ndarray  # [k, 54] my card counts
    trump: np.ndarray  # [k] suit index, or NO_SUIT
    bids: np.ndarray  # [k, n] by slot, -1 where not known
    tricks_won: np.ndarray  # [k, n] by slot
    trick: np.ndarray  # [k, n] cards of the current trick in play order, NO_CARD after the last
    trick_len: np.ndarray  # [k] cards in the current trick
    held: np.ndarray  # [k, n] cards still in hand by slot (0 .. MAX_HAND_SIZE)
    unseen: np.ndarray  # [k, 54] counts of the cards I cannot place: other hands and the undealt stack
    pool: np.ndarray  # [k] number of cards I cannot place
    suit_unseen: np.ndarray  # [k, 5] unseen cards by suit; column NO_SUIT (the last) is 0
    dealer: np.ndarray  # [k] slot of the dealer
    visible: np.ndarray  # [k, n] the others' cards in a foresight round by slot, NO_CARD where none

    def rows(self, index: np.ndarray) -> "Views":
        """The views of the rows ``index`` only."""
        return Views(self.num_players, *(getattr(self, f.name)[index] for f in fields(self)[1:]))


def read_views(observations: np.ndarray) -> list[tuple[np.ndarray, Views]]:
    """Decode observations [k, OBS_SIZE] into (row indices, Views), one pair per player count present."""
    counts = MIN_PLAYERS + field(observations, "num_players").argmax(axis=1)
    groups = []
    for n in np.unique(counts):
        rows = np.arange(len(observations)) if counts[0] == n and (counts == n).all() else np.flatnonzero(counts == n)
        groups.append((rows, _read(observations if len(rows) == len(observations) else observations[rows], int(n))))
    return groups


def _read(observations: np.ndarray, n: int) -> Views:
    """Views of observations that all come from ``n``-player games."""
    k = len(observations)
    hand = field(observations, "hand")
    trump_hot = field(observations, "trump")
    trump = np.where(trump_hot[:, :NUM_SUITS].any(axis=1), trump_hot[:, :NUM_SUITS].argmax(axis=1), NO_SUIT)
    hand_size = field(observations, "hand_size")[:, 0]
    played = field(observations, "played")[:, :n]
    foresight = field(observations, "foresight")[:, :n]
    unseen = DECK_COUNTS - hand - played.sum(axis=1) - field(observations, "trump_card") - foresight.sum(axis=1)
    unseen = np.maximum(unseen, 0)
    by_suit = np.zeros((k, NUM_SUITS + 1), dtype=np.int64)
    by_suit[:, :NUM_SUITS] = unseen[:, :NUM_SUITED].reshape(k, NUM_SUITS, NUM_RANKS).sum(axis=2)

    # The trick runs from the leader's slot onwards, up to the first slot that has not played.
    trick_hot = field(observations, "trick")[:, :n]
    order = (field(observations, "leader")[:, :n].argmax(axis=1)[:, None] + np.arange(n)) % n
    in_order = np.take_along_axis(trick_hot, order[:, :, None], axis=1)
    on = np.cumprod(in_order.any(axis=2), axis=1).astype(bool)
    trick = np.where(on, in_order.argmax(axis=2), NO_CARD)

    visible = np.where(foresight.any(axis=2), foresight.argmax(axis=2), NO_CARD)
    visible[:, 0] = NO_CARD
    return Views(
        num_players=n,
        phase=field(observations, "phase").argmax(axis=1),
        hand_size=hand_size,
        hand=hand,
        trump=trump,
        bids=np.where(field(observations, "bid_known")[:, :n] == 1, field(observations, "bids")[:, :n], -1),
        tricks_won=field(observations, "tricks_won")[:, :n],
        trick=trick,
        trick_len=on.sum(axis=1),
        held=np.clip(hand_size[:, None] - played.sum(axis=2), 0, MAX_HAND_SIZE),
        unseen=unseen,
        pool=unseen.sum(axis=1),
        suit_unseen=by_suit,
        dealer=field(observations, "dealer")[:, :n].argmax(axis=1),
        visible=visible,
    )


# -- odds of drawing cards ------------------------------------------------------------------------

_MOST = DECK_SIZE  # the largest pool of cards
_SUIT_MOST = NUM_RANKS  # the most cards of one suit
_COMB = np.array([[comb(a, b) for b in range(_MOST + 1)] for a in range(_MOST + 1)], dtype=np.int64)


def _none_table() -> np.ndarray:
    """[pool, special, draws]: chance that ``draws`` cards from ``pool`` include none of ``special`` given cards."""
    pool, special, draws = np.ogrid[: _MOST + 1, : _MOST + 1, : MAX_HAND_SIZE + 1]
    rest = pool - special
    # Every count here is below 2**53, so the float quotient is that of the exact integers.
    ratio = _COMB[np.maximum(rest, 0), draws] / np.maximum(_COMB[pool, draws], 1)
    return np.where((special <= 0) | (draws <= 0), 1.0, np.where(draws > rest, 0.0, ratio))


def _at_most_table() -> np.ndarray:
    """[pool, special, draws, most]: chance that ``draws`` cards from ``pool`` hold at most ``most`` of ``special``."""
    pool, special, draws, most = np.ogrid[: _MOST + 1, : _SUIT_MOST + 1, : MAX_HAND_SIZE + 1, :_SUIT_MOST]
    rest = np.maximum(pool - special, 0)
    hits = np.zeros(np.broadcast_shapes(pool.shape, special.shape, draws.shape, most.shape), dtype=np.int64)
    for taken in range(_SUIT_MOST + 1):
        counted = (taken <= np.minimum(np.minimum(most, special), draws)) & (pool >= special)
        hits += np.where(counted, _COMB[special, taken] * _COMB[rest, np.maximum(draws - taken, 0)], 0)
    total = _COMB[pool, draws]
    return np.where(total > 0, hits / np.maximum(total, 1), 1.0)


_NONE = _none_table()
_AT_MOST = _at_most_table()


def none_chance(pool: np.ndarray, special: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Chance that ``draws`` cards taken from ``pool`` include none of ``special`` given cards (elementwise)."""
    return _NONE[pool, special, draws]


def at_most_chance(pool: np.ndarray, special: np.ndarray, draws: np.ndarray, most: np.ndarray) -> np.ndarray:
    """Chance that ``draws`` cards taken from ``pool`` include at most ``most`` of ``special`` given cards."""
    return _AT_MOST[pool, special, draws, most]


def above_in_suit(counts: np.ndarray) -> np.ndarray:
    """[k, 52]: for each suited card, the count of cards of its suit that outrank it."""
    by_suit = counts[:, :NUM_SUITED].reshape(len(counts), NUM_SUITS, NUM_RANKS)
    from_top = np.cumsum(by_suit[:, :, ::-1], axis=2)[:, :, ::-1]
    return (from_top - by_suit).reshape(len(counts), NUM_SUITED)


# -- tricks ---------------------------------------------------------------------------------------

#: Suit and rank of every card type, and of NO_CARD (the last entry, so that index -1 reads it).
SUIT_OF = np.append(CARD_SUIT, NO_SUIT).astype(np.int64)
RANK_OF = np.append(CARD_RANK, -1).astype(np.int64)
_KEY_WIZARD, _KEY_TRUMP, _KEY_LED, _KEY_OTHER, _KEY_JESTER, _KEY_NONE = 3 * NUM_RANKS, 2 * NUM_RANKS, NUM_RANKS, 0, -1, -2


def led_suits(tricks: np.ndarray) -> np.ndarray:
    """Suit to follow in tricks [..., m] (NO_CARD-padded): the first non-Jester card's, NO_SUIT if a Wizard or none."""
    sets_suit = (tricks != JESTER) & (tricks != NO_CARD)
    first = np.take_along_axis(tricks, sets_suit.argmax(axis=-1)[..., None], axis=-1)[..., 0]
    return np.where(sets_suit.any(axis=-1), SUIT_OF[first], NO_SUIT)


def card_keys(cards: np.ndarray, led: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """Ranking keys of cards in a trick led in ``led`` (broadcast): the highest key wins, ties to the earlier card."""
    suit, rank = SUIT_OF[cards], RANK_OF[cards]
    key = np.where(suit == trump, _KEY_TRUMP + rank, np.where(suit == led, _KEY_LED + rank, _KEY_OTHER))
    key = np.where(cards == WIZARD, _KEY_WIZARD, np.where(cards == JESTER, _KEY_JESTER, key))
    return np.where(cards == NO_CARD, _KEY_NONE, key)


def trick_winners(tricks: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """Index in play order of the winning card of complete tricks [..., m]; ``trump`` broadcasts over [...]."""
    trump = np.asarray(trump)[..., None]
    return card_keys(tricks, led_suits(tricks)[..., None], trump).argmax(axis=-1)


def play_order(dealer: np.ndarray, n: int) -> np.ndarray:
    """[k, n]: slots in the order they play the first trick, starting left of the dealer."""
    return (dealer[:, None] + 1 + np.arange(n)) % n

