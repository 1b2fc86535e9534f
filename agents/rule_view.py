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
    NUM_CARD_TYPES,
    NUM_RANKS,
    NUM_SUITED,
    NUM_SUITS,
    WIZARD,
)
from wizard_env.observation import FIELDS, SLICES
from wizard_env.rules import MAX_HAND_SIZE, MIN_PLAYERS

_SCALE = {f.name: f.scale for f in FIELDS}
_SHAPE = {f.name: f.shape for f in FIELDS}
_INNER = {f.name: int(np.prod(f.shape[1:], dtype=np.int64)) for f in FIELDS}  # floats per entry of the first axis


def field(observations: np.ndarray, name: str, slots: int | None = None) -> np.ndarray:
    """One observation field, [k, *field shape] (the first ``slots`` only of a by-slot field), as exact
    float32 counts, as ``observation.decode`` gives them."""
    start, shape = SLICES[name].start, _SHAPE[name]
    if slots is not None:
        shape = (slots,) + shape[1:]
    values = observations[:, start : start + _INNER[name] * shape[0]].reshape(len(observations), *shape)
    return values if _SCALE[name] == 1 else np.rint(values / np.float32(_SCALE[name]))


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
    higher: np.ndarray  # [k, 52] unseen cards of each suited card's suit that outrank it
    dealer: np.ndarray  # [k] slot of the dealer
    visible: np.ndarray  # [k, n] the others' cards in a foresight round by slot, NO_CARD where none

    def rows(self, index: np.ndarray) -> "Views":
        """The views of the rows ``index`` (ascending row numbers) only."""
        if len(index) == len(self.phase):
            return self
        return Views(self.num_players, *(getattr(self, f.name)[index] for f in fields(self)[1:]))


def read_views(observations: np.ndarray, rows: np.ndarray | None = None) -> list[tuple[np.ndarray, Views]]:
    """Decode observations[rows] (default all) into (positions in ``rows``, Views), one pair per player count."""
    if rows is not None:
        observations = observations[rows]
    counts = MIN_PLAYERS + field(observations, "num_players").argmax(axis=1)
    if (counts == counts[0]).all():
        return [(np.arange(len(counts)), _read(observations, int(counts[0])))]
    return [(at, _read(observations[at], int(counts[at[0]]))) for at in _groups(counts)]


def _groups(values: np.ndarray) -> list[np.ndarray]:
    """Row numbers of each distinct value, in the order of the values."""
    return [np.flatnonzero(values == value) for value in np.unique(values)]


def _int(values: np.ndarray) -> np.ndarray:
    """Exact float counts as int64."""
    return values.astype(np.int64)


def _read(observations: np.ndarray, n: int) -> Views:
    """Views of observations that all come from ``n``-player games."""

    def read(name: str, slots: int | None = None) -> np.ndarray:
        return field(observations, name, slots)

    hand = read("hand")
    k = len(hand)
    trump_hot = read("trump")[:, :NUM_SUITS]
    trump = np.where(trump_hot.any(axis=1), trump_hot.argmax(axis=1), NO_SUIT)
    hand_size = _int(read("hand_size")[:, 0])
    played = read("played", n)
    seen = hand + read("trump_card")
    for slot in range(n):
        seen += played[:, slot]
    visible = np.full((k, n), NO_CARD)
    blind = np.flatnonzero(~hand.any(axis=1))  # foresight rounds: the others' cards instead of mine
    if blind.size:
        foresight = field(observations[blind], "foresight", n)
        seen[blind] += foresight.sum(axis=1)
        visible[blind] = np.where(foresight.any(axis=2), foresight.argmax(axis=2), NO_CARD)
        visible[:, 0] = NO_CARD
    unseen = np.maximum(DECK_COUNTS - _int(seen), 0)
    by_suit = np.zeros((k, NUM_SUITS + 1), dtype=np.int64)
    by_suit[:, :NUM_SUITS] = unseen[:, :NUM_SUITED].reshape(k, NUM_SUITS, NUM_RANKS).sum(axis=2)

    # The trick runs from the leader's slot onwards, up to the first slot that has not played.
    trick_hot = read("trick", n)
    down, card = trick_hot.any(axis=2), trick_hot.argmax(axis=2)
    order = (read("leader", n).argmax(axis=1)[:, None] + np.arange(n)) % n
    by_row = np.arange(k)[:, None]
    on = np.cumprod(down[by_row, order], axis=1).astype(bool)
    trick = np.where(on, card[by_row, order], NO_CARD)
    return Views(
        num_players=n,
        phase=read("phase").argmax(axis=1),
        hand_size=hand_size,
        hand=_int(hand),
        trump=trump,
        bids=np.where(read("bid_known", n) == 1, _int(read("bids", n)), -1),
        tricks_won=_int(read("tricks_won", n)),
        trick=trick,
        trick_len=on.sum(axis=1),
        held=np.minimum(np.maximum(hand_size[:, None] - _int(played.sum(axis=2)), 0), MAX_HAND_SIZE),
        unseen=unseen,
        pool=unseen.sum(axis=1),
        suit_unseen=by_suit,
        higher=above_in_suit(unseen),
        dealer=read("dealer", n).argmax(axis=1),
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


def _key_table() -> np.ndarray:
    """[card, led suit, trump]: ranking key of a card in a trick (the highest wins, ties to the earlier card).

    A Wizard beats trumps, which beat the suit led, which beats other suits; a Jester ranks lowest
    and NO_CARD below it. The last index of every axis stands for NO_CARD / NO_SUIT (index -1).
    """
    card, led, trump = np.ogrid[: NUM_CARD_TYPES + 1, : NUM_SUITS + 1, : NUM_SUITS + 1]
    led, trump = np.where(led == NUM_SUITS, NO_SUIT, led), np.where(trump == NUM_SUITS, NO_SUIT, trump)
    suit, rank = SUIT_OF[card], RANK_OF[card]
    key = np.where(suit == trump, 2 * NUM_RANKS + rank, np.where(suit == led, NUM_RANKS + rank, 0))
    key = np.where(card == WIZARD, 3 * NUM_RANKS, np.where(card == JESTER, -1, key))
    return np.where(card == NUM_CARD_TYPES, -2, key)


_KEYS = _key_table()


def led_suits(tricks: np.ndarray) -> np.ndarray:
    """Suit to follow in tricks [..., m] (NO_CARD-padded): the first non-Jester card's, NO_SUIT if a Wizard or none."""
    led = np.full(tricks.shape[:-1], NO_SUIT)
    found = np.zeros(tricks.shape[:-1], dtype=bool)
    for position in range(tricks.shape[-1]):
        card = tricks[..., position]
        sets = ~found & (card != JESTER) & (card != NO_CARD)
        led = np.where(sets, SUIT_OF[card], led)
        found |= sets
    return led


def card_keys(cards: np.ndarray, led: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """Ranking keys of cards in a trick led in ``led`` with trump ``trump`` (all broadcast together)."""
    return _KEYS[cards, led, trump]


def trick_winners(tricks: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """Index in play order of the winning card of complete tricks [..., m]; ``trump`` broadcasts over [...]."""
    led = led_suits(tricks)
    top, winner = card_keys(tricks[..., 0], led, trump), np.zeros(tricks.shape[:-1], dtype=np.int64)
    for position in range(1, tricks.shape[-1]):
        key = card_keys(tricks[..., position], led, trump)
        ahead = key > top  # ties go to the earlier card
        top, winner = np.where(ahead, key, top), np.where(ahead, position, winner)
    return winner


def play_order(dealer: np.ndarray, n: int) -> np.ndarray:
    """[k, n]: slots in the order they play the first trick, starting left of the dealer."""
    return (dealer[:, None] + 1 + np.arange(n)) % n

