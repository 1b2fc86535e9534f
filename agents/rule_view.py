"""What RuleAgent reads from one observation, and the card-counting odds it reasons with.

Everything here is compiled with numba and works on one decision (one row) at a time; the
kernels that loop over rows live beside this file. ``read_view`` decodes an observation
(``wizard_env.engine.observation`` layout) into a ``View``. The odds of drawing cards are looked up in
tables built once from exact binomial coefficients, so they equal, bit for bit, the ratio of the
exact integer counts; the tables travel as arguments (``TABLES``), not as compiled constants.
"""

from __future__ import annotations

from collections import namedtuple
from math import comb

import numba
import numpy as np

from wizard_env.engine.cards import (
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
from wizard_env.engine.observation import FIELDS, SLICES
from wizard_env.engine.rules import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS

#: The fields RuleAgent reads, in the order of LAYOUT; each index below names one.
_READ = ("num_players", "phase", "hand_size", "dealer", "hand", "trump_card", "trump", "bid_known",
         "bids", "tricks_won", "leader", "trick", "played", "foresight")
(_NUM_PLAYERS, _PHASE, _HAND_SIZE, _DEALER, _HAND, _TRUMP_CARD, _TRUMP, _BID_KNOWN,
 _BIDS, _TRICKS_WON, _LEADER, _TRICK, _PLAYED, _FORESIGHT) = range(len(_READ))
_SCALE = {f.name: f.scale for f in FIELDS}
_PHASES = {f.name: f.shape[0] for f in FIELDS}["phase"]
#: Where each read field starts in the observation vector, and its scale (a float32, as stored).
#: Arguments of the kernels rather than compiled constants, so that a cached kernel reads the layout of today.
LAYOUT = (np.array([SLICES[name].start for name in _READ], dtype=np.int64),
          np.array([_SCALE[name] for name in _READ], dtype=np.float32))

#: The facts of one decision at a table of ``n`` players (slot 0 is me, slot 1 my left neighbour).
#: Arrays by slot have n entries; bids are -1 where not known, cards NO_CARD where none.
View = namedtuple("View", [
    "n",            # number of players
    "phase",        # Phase value
    "hand_size",    # cards dealt to each player this round
    "hand",         # [54] my card counts
    "trump",        # suit index, or NO_SUIT
    "bids",         # [n] by slot
    "tricks_won",   # [n] by slot
    "trick",        # [n] cards of the current trick in play order, NO_CARD after the last
    "trick_len",    # cards in the current trick
    "held",         # [n] cards still in hand by slot (0 .. MAX_HAND_SIZE)
    "unseen",       # [54] counts of the cards I cannot place: other hands and the undealt stack
    "pool",         # number of cards I cannot place
    "suit_unseen",  # [5] unseen cards by suit; the last entry (NO_SUIT) is 0
    "higher",       # [52] unseen cards of each suited card's suit that outrank it
    "dealer",       # slot of the dealer
    "visible",      # [n] the others' cards in a foresight round by slot, NO_CARD where none
])

#: Suit and rank of every card type, and of NO_CARD (the last entry, so that index -1 reads it).
SUIT_OF = np.append(CARD_SUIT, NO_SUIT).astype(np.int64)
RANK_OF = np.append(CARD_RANK, -1).astype(np.int64)
_DECK = DECK_COUNTS.astype(np.int64)


@numba.njit(cache=True)
def _argmax(obs: np.ndarray, row: int, start: int, size: int) -> int:
    """Index of the first largest of obs[row, start : start + size] (0 when all are equal)."""
    best = 0
    for i in range(1, size):
        if obs[row, start + i] > obs[row, start + best]:
            best = i
    return best


@numba.njit(cache=True)
def _count(obs: np.ndarray, row: int, start: int, scale: np.float32) -> int:
    """A scaled count, rounded back to an integer as ``observation.decode`` does."""
    return int(np.rint(obs[row, start] / scale))


@numba.njit(cache=True)
def players(obs: np.ndarray, row: int, layout: tuple) -> int:
    """Number of players at the table of observation ``row``."""
    return MIN_PLAYERS + _argmax(obs, row, layout[0][_NUM_PLAYERS], MAX_PLAYERS - MIN_PLAYERS + 1)


@numba.njit(cache=True)
def read_view(obs: np.ndarray, row: int, layout: tuple) -> View:
    """Decode observation ``row`` of ``obs`` (observations [k, OBS_SIZE]) into a View."""
    start, scale = layout
    n = players(obs, row, layout)
    o = obs[row]
    hand = np.zeros(NUM_CARD_TYPES, dtype=np.int64)
    seen = np.zeros(NUM_CARD_TYPES, dtype=np.int64)
    at_hand, at_turned = np.uint64(start[_HAND]), np.uint64(start[_TRUMP_CARD])
    for card in range(NUM_CARD_TYPES):
        c = np.uint64(card)  # unsigned indices: numba skips the wraparound of negative ones and LLVM vectorizes
        hand[c] = int(o[at_hand + c])
        seen[c] = hand[c] + int(o[at_turned + c])
    held = np.zeros(n, dtype=np.int64)
    hand_size = _count(obs, row, start[_HAND_SIZE], scale[_HAND_SIZE])
    for slot in range(n):
        played = 0
        at = np.uint64(start[_PLAYED] + slot * NUM_CARD_TYPES)
        for card in range(NUM_CARD_TYPES):
            c = np.uint64(card)
            count = int(o[at + c])
            seen[c] += count
            played += count
        held[slot] = min(max(hand_size - played, 0), MAX_HAND_SIZE)
    visible = np.full(n, NO_CARD, dtype=np.int64)
    if hand.sum() == 0:  # a foresight round: the others' cards instead of mine
        for slot in range(n):
            base, down = start[_FORESIGHT] + slot * NUM_CARD_TYPES, False
            for card in range(NUM_CARD_TYPES):
                c = np.uint64(card)
                count = int(o[np.uint64(base) + c])
                seen[c] += count
                down |= count > 0
            if down and slot > 0:
                visible[slot] = _argmax(obs, row, base, NUM_CARD_TYPES)
    unseen = np.maximum(_DECK - seen, 0)
    by_suit = np.zeros(NUM_SUITS + 1, dtype=np.int64)
    for c in range(NUM_SUITED):
        by_suit[c // NUM_RANKS] += unseen[c]

    trump = NO_SUIT
    for suit in range(NUM_SUITS):
        if obs[row, start[_TRUMP] + suit] != 0:
            trump = _argmax(obs, row, start[_TRUMP], NUM_SUITS)
            break
    bids = np.full(n, -1, dtype=np.int64)
    tricks_won = np.zeros(n, dtype=np.int64)
    for slot in range(n):
        if obs[row, start[_BID_KNOWN] + slot] == 1:
            bids[slot] = _count(obs, row, start[_BIDS] + slot, scale[_BIDS])
        tricks_won[slot] = _count(obs, row, start[_TRICKS_WON] + slot, scale[_TRICKS_WON])

    # The trick runs from the leader's slot onwards, up to the first slot that has not played.
    trick = np.full(n, NO_CARD, dtype=np.int64)
    leader, trick_len = _argmax(obs, row, start[_LEADER], n), 0
    for j in range(n):
        base = start[_TRICK] + ((leader + j) % n) * NUM_CARD_TYPES
        down = False
        for c in range(NUM_CARD_TYPES):
            down |= o[np.uint64(base) + np.uint64(c)] != 0
        if not down:
            break
        trick[j] = _argmax(obs, row, base, NUM_CARD_TYPES)
        trick_len += 1
    return View(n, _argmax(obs, row, start[_PHASE], _PHASES), hand_size, hand, trump, bids, tricks_won,
                trick, trick_len, held, unseen, unseen.sum(), by_suit, above_in_suit(unseen),
                _argmax(obs, row, start[_DEALER], n), visible)


@numba.njit(cache=True)
def above_in_suit(counts: np.ndarray) -> np.ndarray:
    """[52]: for each suited card, the count of cards of its suit in ``counts`` [54] that outrank it."""
    above = np.zeros(NUM_SUITED, dtype=np.int64)
    for suit in range(NUM_SUITS):
        total = 0
        for rank in range(NUM_RANKS - 1, -1, -1):
            above[suit * NUM_RANKS + rank] = total
            total += counts[suit * NUM_RANKS + rank]
    return above


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


#: (none, at_most): the chance that ``draws`` cards taken from ``pool`` include none of ``special``
#: given cards, none[pool, special, draws], and at most ``most`` of them, at_most[pool, special, draws, most].
TABLES = (_none_table(), _at_most_table())


# -- tricks ---------------------------------------------------------------------------------------

@numba.njit(cache=True)
def card_key(card: int, led: int, trump: int) -> int:
    """Ranking key of a card in a trick led in ``led`` with trump ``trump`` (the highest wins, ties to
    the earlier card): a Wizard beats trumps, which beat the suit led, which beats other suits; a
    Jester ranks lowest and NO_CARD below it."""
    if card == NO_CARD:
        return -2
    if card == WIZARD:
        return 3 * NUM_RANKS
    if card == JESTER:
        return -1
    suit, rank = SUIT_OF[card], RANK_OF[card]
    if suit == trump:
        return 2 * NUM_RANKS + rank
    return NUM_RANKS + rank if suit == led else 0


@numba.njit(cache=True)
def led_suit(trick: np.ndarray) -> int:
    """Suit to follow in a NO_CARD-padded trick: the first non-Jester card's, NO_SUIT if a Wizard or none."""
    for card in trick:
        if card != JESTER and card != NO_CARD:
            return SUIT_OF[card]
    return NO_SUIT


@numba.njit(cache=True)
def trick_winner(trick: np.ndarray, trump: int) -> int:
    """Index in play order of the winning card of a complete trick."""
    led = led_suit(trick)
    top, winner = card_key(trick[0], led, trump), 0
    for position in range(1, len(trick)):
        key = card_key(trick[position], led, trump)
        if key > top:  # ties go to the earlier card
            top, winner = key, position
    return winner


@numba.njit(cache=True)
def pairwise_sum(values: np.ndarray, count: int) -> float:
    """Sum of values[:count] (count <= 128) added in the order numpy sums a row: one running sum below
    8 values, else 8 running sums, paired, then the rest; so equal to numpy's sum to the bit."""
    if count < 8:
        total = -0.0
        for i in range(count):
            total += values[i]
        return total
    r0, r1, r2, r3, r4, r5, r6, r7 = values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7]
    blocks = count - count % 8
    for i in range(8, blocks, 8):
        r0, r1, r2, r3 = r0 + values[i], r1 + values[i + 1], r2 + values[i + 2], r3 + values[i + 3]
        r4, r5, r6, r7 = r4 + values[i + 4], r5 + values[i + 5], r6 + values[i + 6], r7 + values[i + 7]
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(blocks, count):
        total += values[i]
    return total
