"""RuleAgent's card play, one decision at a time (compiled with numba).

While short of its bid it wins tricks with the cheapest card likely to hold; once the bid is met
it ducks, shedding the most dangerous card that still loses. Each legal card is judged by two
numbers: its chance of holding the current trick, and its strength (its chance of winning a trick
it leads, with rank breaking ties).
"""

from __future__ import annotations

import numba
import numpy as np

from wizard_env.engine.cards import JESTER, NO_CARD, NUM_CARD_TYPES, NUM_RANKS, NUM_SUITED, WIZARD

from .rule_view import RANK_OF, SUIT_OF, View, card_key, led_suit

#: Urgency (tricks needed per card left) from which a Jester is thrown away rather than a low card.
JESTER_THROW_URGENCY = 0.4
#: Largest chance of winning the trick a ducking card may carry before a Jester is spent instead.
DUCK_RISK = 0.2
#: How much an opponent who has already met their bid still overtakes a trick when able.
SATED_BEAT_FACTOR = 0.2
#: Smallest chance of holding the trick worth spending a card on when the bid needs tricks.
HOLD_THRESHOLD = 0.5

#: Rank of each card type for breaking ties in strength: a Wizard above an ace.
_TIE_RANK = np.where(np.arange(NUM_CARD_TYPES) == WIZARD, NUM_RANKS, RANK_OF[:NUM_CARD_TYPES])


@numba.njit(cache=True)
def best(cards: np.ndarray, values: np.ndarray, allowed: np.ndarray) -> int:
    """The allowed card with the highest value, the first among equals (the first card if none is allowed)."""
    column, top = 0, -np.inf
    for j in range(len(cards)):
        if allowed[j] and values[j] > top:
            column, top = j, values[j]
    return cards[column]


@numba.njit(cache=True)
def card_numbers(v: View, cards: np.ndarray, none: np.ndarray) -> tuple:
    """Each of ``cards``' chance of holding the current trick and its strength (``hold_chance``), as two arrays.

    ``none``: the table of ``rule_view.TABLES`` that ``survive_chance`` reads.
    """
    holds, power = np.empty(len(cards)), np.empty(len(cards))
    for j in range(len(cards)):
        holds[j], power[j] = hold_chance(v, cards[j], none)
    return holds, power


@numba.njit(cache=True)
def choose_card(v: View, legal: np.ndarray, cards: np.ndarray, holds: np.ndarray, power: np.ndarray) -> int:
    """The card to play from ``legal`` [54]: win cheaply while short of the bid, duck once it is met.

    ``cards``: the legal cards in ascending card type, with their ``card_numbers`` ``holds`` and ``power``.
    """
    need = v.bids[0] - v.tricks_won[0]
    wizards = v.hand[WIZARD]
    winning = need > 0 and (need > wizards or not legal[WIZARD])
    wizard_down = (v.trick == WIZARD).any()
    # The Wizards alone can make the bid: take tricks with them and lose with the rest.
    alone = need > 0 and not winning
    if winning:
        return win(v, cards, holds, power, need - wizards)
    if need <= 0 or (alone and v.trick_len > 0 and wizard_down):
        return duck(cards, holds, power)
    losers = holds == 0
    if alone and v.trick_len > 0 and losers.any():
        return best(cards, power, losers)
    return WIZARD


@numba.njit(cache=True)
def duck(cards: np.ndarray, holds: np.ndarray, power: np.ndarray) -> int:
    """Lose the trick, shedding the most dangerous card that surely loses; keep Jesters for later."""
    jester = cards == JESTER
    others = ~jester
    losers = others & (holds == 0)
    if losers.any():
        return best(cards, power, losers)
    if not others.any():
        return best(cards, power, cards == cards) if (holds == 1).all() else JESTER
    lowest = np.min(np.where(others, holds, np.inf))
    safest = 0  # column of the strongest of the others least likely to hold
    top = -np.inf
    for j in range(len(cards)):
        if others[j] and holds[j] == lowest and power[j] > top:
            safest, top = j, power[j]
    if jester.any() and holds[safest] > DUCK_RISK:
        return JESTER
    return best(cards, power, cards == cards) if (holds == 1).all() else cards[safest]


@numba.njit(cache=True)
def win(v: View, cards: np.ndarray, holds: np.ndarray, power: np.ndarray, need: int) -> int:
    """Take the trick with the cheapest card likely to hold, or throw the least useful card."""
    wizard, jester = cards == WIZARD, cards == JESTER
    others = ~wizard
    urgency = need / max(1, v.hand.sum() - v.hand[WIZARD])
    threshold = HOLD_THRESHOLD * (1 - urgency)
    winners = others & (holds > 0) & (holds >= threshold)
    if winners.any():
        return best(cards, -power, winners) if v.trick_len > 0 else best(cards, holds, winners)
    if wizard.any() and (not others.any() or urgency >= 1):
        return WIZARD
    if jester.any() and urgency >= JESTER_THROW_URGENCY:
        return JESTER
    throw = others & ~jester
    if not throw.any():
        throw = others
    keep = throw.copy()  # keep trumps for ruffing
    for j in range(len(cards)):
        keep[j] = throw[j] and SUIT_OF[cards[j]] != v.trump
    if not keep.any():
        keep = throw
    return best(cards, -power, keep)


@numba.njit(cache=True)
def hold_chance(v: View, card: int, none: np.ndarray) -> tuple:
    """The chance that ``card`` holds the current trick, and its strength.

    Strength is how dangerous a card is to hold: its chance to win when led, with every later
    player overtaking when able, plus rank / 1000; -1 for a Jester.
    """
    n, length = v.n, v.trick_len
    led = led_suit(v.trick)
    led_yet, top, open_trick = False, -2, True
    for position in range(n):
        down = v.trick[position]
        led_yet = led_yet or (down != JESTER and down != NO_CARD)  # a card other than a Jester is down
        top = max(top, card_key(down, led, v.trump))
        open_trick = open_trick and down != WIZARD
    # Does the card take the trick as it stands? A trick of Jesters only goes to its first Jester.
    beats = card_key(card, led, v.trump) > top if led_yet else (length == 0 or card != JESTER)
    takes = open_trick and (card == WIZARD or beats)
    last = length == n - 1
    holds = 1.0 if takes and (card == WIZARD or last) else 0.0
    strength = 1.0 if card == WIZARD else 0.0
    if card < NUM_SUITED:
        if takes and not last:
            sated = (v.bids >= 0) & (v.bids <= v.tricks_won)
            holds = survive_chance(v, card, led if led_yet else SUIT_OF[card], n - length, sated, none)
        strength = survive_chance(v, card, SUIT_OF[card], n, np.zeros(n, dtype=np.bool_), none)
    return holds, -1.0 if card == JESTER else strength + _TIE_RANK[card] / 1000


@numba.njit(cache=True)
def survive_chance(v: View, card: int, led: int, stop: int, sated: np.ndarray, none: np.ndarray) -> float:
    """Chance that suited ``card``, now winning a trick led in ``led``, is overtaken by none of slots 1 .. stop - 1.

    ``sated`` [n]: slots that have met their bid, and overtake only SATED_BEAT_FACTOR as often.
    """
    higher = v.higher[card]
    follows = SUIT_OF[card] == led
    direct = v.unseen[WIZARD] + (higher if follows else 0)
    trumps = v.suit_unseen[v.trump] if v.trump != led else 0
    ruffers = trumps if follows else higher  # a card that does not follow has trumped: higher trumps overtake
    in_led = v.suit_unseen[led]
    chance = 1.0
    for slot in range(1, v.n):  # in slot order: the same product to the bit
        keep = 1.0
        if slot < stop:
            held = v.held[slot]
            can_ruff = none[v.pool, in_led, held] * (1 - none[v.pool - in_led, ruffers, held])
            beat = 1 - none[v.pool, direct, held] * (1 - can_ruff)
            keep = 1 - (beat * SATED_BEAT_FACTOR if sated[slot] else beat)
        chance = keep if slot == 1 else chance * keep
    return chance
