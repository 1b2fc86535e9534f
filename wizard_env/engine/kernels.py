"""The rules of play, compiled: one trick, hand, seat or mask row at a time (no RL imports).

Each rule is stated once here, as a small numba function, and every caller runs it: the batched
kernels of ``batch_kernels`` loop it over a ``WizardBatch``'s games (a batch of one costs
microseconds), and ``rules``' numpy-facing functions loop it over their arguments.

The engine's compiled code lives in this module and in ``batch_kernels``. numba's on-disk cache
(``cache=True``, written beside the module in ``__pycache__``) is recompiled when the module's file or
a project module it imports changes (``compile_cache``: numba alone would follow this file only, and
keep the constants of ``constants`` and ``cards`` as they were when it compiled).
"""

from __future__ import annotations

import numpy as np
from numba import config, njit

from .actions import Phase
from .cards import CARD_RANK, CARD_SUIT, DECK_SIZE, JESTER, NO_CARD, NO_SUIT, NUM_CARD_TYPES, NUM_RANKS, NUM_SUITED, WIZARD
from .constants import MADE_BID_BONUS, MAX_HAND_SIZE, PENALTY_PER_TRICK_OFF, POINTS_PER_TRICK

TRUMP, BID, PLAY, OVER = (int(p) for p in (Phase.TRUMP, Phase.BID, Phase.PLAY, Phase.OVER))
#: Bidding variants as the kernels number them (``Bidding`` values in this order).
OPEN, HIDDEN, SECRET = 0, 1, 2
# Ranking keys of a card in a complete trick: a Wizard beats trumps, which beat the suit led,
# which beats other suits; a Jester ranks lowest. Ties go to the card played first.
_KEY_WIZARD = 3 * NUM_RANKS
_KEY_TRUMP = 2 * NUM_RANKS
_KEY_LED = NUM_RANKS
_KEY_OTHER = 0
_KEY_JESTER = -1
_SUITED = np.uint64(NUM_SUITED)

# -- the rules of play, one trick, hand or seat at a time ------------------------------------------


@njit(cache=True)
def suit_to_follow(trick: np.ndarray) -> int:
    """Suit that must be followed in a trick (cards in play order, NO_CARD-padded); NO_SUIT if none.

    The first non-Jester card sets it; if that card is a Wizard (or only Jesters were played),
    there is no suit to follow.
    """
    for card in trick:
        if card == NO_CARD or card == JESTER:
            continue
        return NO_SUIT if card == WIZARD else CARD_SUIT[card]
    return NO_SUIT


@njit(cache=True)
def legal_cards_into(hand: np.ndarray, trick: np.ndarray, out: np.ndarray) -> None:
    """Write into ``out`` [card types] which cards a hand (counts) may play onto a trick.

    Follow suit if you can; a Wizard or a Jester may always be played instead.
    """
    legal_cards_following(hand, suit_to_follow(trick), out)


@njit(cache=True)
def legal_cards_following(hand: np.ndarray, suit: int, out: np.ndarray) -> None:
    """``legal_cards_into`` with the suit to follow (NO_SUIT if none) already known."""
    free = True  # no suit to follow, or none of it in hand: any card
    if suit != NO_SUIT:
        for card in range(NUM_SUITED):
            if hand[card] > 0 and CARD_SUIT[card] == suit:
                free = False
                break
    for card in range(NUM_CARD_TYPES):
        c = np.uint64(card)  # (an unsigned index, and no branches: the loop is vectorized; see batch_kernels._write_counts)
        out[c] = (hand[c] > 0) & (free | (c >= _SUITED) | (CARD_SUIT[c] == suit))


@njit(cache=True)
def trick_winner(trick: np.ndarray, trump: int) -> int:
    """Index (in play order) of the winning card of a complete trick.

    The first Wizard; else the highest trump; else the highest card of the suit led;
    if every card is a Jester, the first Jester.
    """
    led = suit_to_follow(trick)
    best, best_key = 0, _KEY_JESTER - 1
    for i, card in enumerate(trick):
        if card == WIZARD:
            key = _KEY_WIZARD
        elif card == JESTER:
            key = _KEY_JESTER
        elif CARD_SUIT[card] == trump:
            key = _KEY_TRUMP + CARD_RANK[card]
        elif CARD_SUIT[card] == led:
            key = _KEY_LED + CARD_RANK[card]
        else:
            key = _KEY_OTHER
        if key > best_key:
            best, best_key = i, key
    return best


@njit(cache=True)
def legal_bids_into(hand_size: int, bid_sum: int, is_last: bool, bid_total_rule: bool, out: np.ndarray) -> None:
    """Write into ``out`` [0..MAX_HAND_SIZE] which bids a bidder may make.

    Any bid from 0 to the hand size; with the plus/minus-1 rule the last bidder may not make
    the total of bids equal the number of tricks.
    """
    for bid in range(MAX_HAND_SIZE + 1):
        out[bid] = bid <= hand_size and not (bid_total_rule and is_last and bid == hand_size - bid_sum)


@njit(cache=True)
def round_score(bid: int, tricks: int) -> int:
    """Points for one round: 20 + 10 per trick when the bid is met, else -10 per trick off."""
    if bid == tricks:
        return MADE_BID_BONUS + POINTS_PER_TRICK * tricks
    return -PENALTY_PER_TRICK_OFF * abs(bid - tricks)


@njit(cache=True)
def trump_of_card(card: int) -> int:
    """Trump suit set by the turned card: its suit, or NO_SUIT for a Wizard (the dealer chooses), a Jester or none."""
    return CARD_SUIT[card] if 0 <= card < NUM_SUITED else NO_SUIT


@njit(cache=True)
def bid_visible(bidding: int, phase: int, observer: int, seat: int, bid: int) -> bool:
    """Whether ``observer`` may know ``seat``'s bid now: open bids as made, hidden ones once play starts,
    secret ones at the end of the round (which starts the next one), one's own always."""
    if bid < 0:
        return False
    if bidding == OPEN or seat == observer or phase == OVER:
        return True
    return bidding == HIDDEN and phase == PLAY


@njit(cache=True)
def deal_into(order: np.ndarray, size: int, hands: np.ndarray) -> int:
    """Deal ``size`` cards to each seat of ``hands`` [n, card types] from a deck order; return the turned card.

    Seat s gets cards s*size .. s*size + size - 1 of the order; the next card is turned up (NO_CARD if none is left).
    """
    n = hands.shape[0]
    hands[:] = 0
    for seat in range(n):
        for i in range(seat * size, (seat + 1) * size):
            hands[seat, order[i]] += 1
    return order[n * size] if n * size < DECK_SIZE else NO_CARD


# -- a random legal action of each mask row --------------------------------------------------------


@njit(cache=True)
def random_legal(masks, uniforms, out):
    """Into ``out[i]``: the legal action of row i of ``masks`` at fraction ``uniforms[i]`` (in [0, 1)) of its legal
    actions, so a uniformly random one for uniform draws (-1 where none is legal). Returns ``out``."""
    for i in range(masks.shape[0]):
        row = masks[i]
        count = 0
        for a in range(row.shape[0]):
            count += row[a] != 0
        skip = int(uniforms[i] * count)
        out[i] = -1
        for a in range(row.shape[0]):
            if row[a] != 0:
                if skip == 0:
                    out[i] = a
                    break
                skip -= 1
    return out


# -- the compiler, which the engine needs --------------------------------------------------------


class CompilerDisabledError(RuntimeError):
    """numba runs compiled functions as Python (``NUMBA_DISABLE_JIT=1``), and the engine cannot run that way."""


def require_compiler() -> None:
    """CompilerDisabledError if numba runs compiled functions as Python (``NUMBA_DISABLE_JIT=1``).

    The kernels rely on numba's integer arithmetic: an int8 seat times 54 is an int64 in numba, while
    numpy's int8 overflows. Run as Python, they would play other games than the rules say, with no error.
    """
    if getattr(config, "DISABLE_JIT", False):  # set from the environment when numba is imported
        raise CompilerDisabledError(
            "NUMBA_DISABLE_JIT is set, but wizard_env's engine runs only compiled: as Python its kernels would "
            "follow numpy's integer arithmetic, not numba's, and play wrong games. Unset NUMBA_DISABLE_JIT")

