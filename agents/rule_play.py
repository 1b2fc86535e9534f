"""RuleAgent's card play, for a batch of decisions at once.

While short of its bid it wins tricks with the cheapest card likely to hold; once the bid is met
it ducks, shedding the most dangerous card that still loses. Each legal card is judged by two
numbers: its chance of holding the current trick, and its strength (its chance of winning a trick
it leads, with rank breaking ties).
"""

from __future__ import annotations

import numpy as np

from wizard_env.cards import JESTER, NUM_CARD_TYPES, NUM_RANKS, NUM_SUITED, WIZARD

from .rule_view import RANK_OF, SUIT_OF, Views, above_in_suit, card_keys, led_suits, none_chance

#: Urgency (tricks needed per card left) from which a Jester is thrown away rather than a low card.
JESTER_THROW_URGENCY = 0.4
#: Largest chance of winning the trick a ducking card may carry before a Jester is spent instead.
DUCK_RISK = 0.2
#: How much an opponent who has already met their bid still overtakes a trick when able.
SATED_BEAT_FACTOR = 0.2
#: Smallest chance of holding the trick worth spending a card on when the bid needs tricks.
HOLD_THRESHOLD = 0.5

_CARDS = np.arange(NUM_CARD_TYPES)
_IS_WIZARD, _IS_JESTER = _CARDS == WIZARD, _CARDS == JESTER
#: Rank of each card type for breaking ties in strength: a Wizard above an ace.
_TIE_RANK = np.where(_IS_WIZARD, NUM_RANKS, RANK_OF[:NUM_CARD_TYPES])


def choose_cards(v: Views, legal: np.ndarray) -> np.ndarray:
    """The card to play from ``legal`` [k, 54]: win cheaply while short of the bid, duck once it is met."""
    holds, power = hold_chances(v, legal)
    need = v.bids[:, 0] - v.tricks_won[:, 0]
    wizards = v.hand[:, WIZARD]
    ducked = duck(legal, holds, power)
    won = win(v, legal, holds, power, need - wizards)
    # The Wizards alone can make the bid: take tricks with them and lose with the rest.
    losers = legal & (holds == 0)
    lost = np.where(losers.any(axis=1), best(power, losers), WIZARD)
    alone = np.where(v.trick_len == 0, WIZARD, np.where((v.trick == WIZARD).any(axis=1), ducked, lost))
    return np.where(need <= 0, ducked, np.where((need > wizards) | ~legal[:, WIZARD], won, alone))


def duck(legal: np.ndarray, holds: np.ndarray, power: np.ndarray) -> np.ndarray:
    """Lose the trick, shedding the most dangerous card that surely loses; keep Jesters for later."""
    losers = legal & (holds == 0) & ~_IS_JESTER
    others = legal & ~_IS_JESTER
    lowest = np.where(others, holds, np.inf).min(axis=1, keepdims=True)
    safest = np.where(others.any(axis=1), best(power, others & (holds == lowest)), JESTER)
    risky = np.take_along_axis(holds, safest[:, None], axis=1)[:, 0] > DUCK_RISK
    sure = (~legal | (holds == 1)).all(axis=1)
    fallback = np.where(legal[:, JESTER] & risky, JESTER, np.where(sure, best(power, legal), safest))
    return np.where(losers.any(axis=1), best(power, losers), fallback)


def win(v: Views, legal: np.ndarray, holds: np.ndarray, power: np.ndarray, need: np.ndarray) -> np.ndarray:
    """Take the trick with the cheapest card likely to hold, or throw the least useful card."""
    others = legal & ~_IS_WIZARD
    urgency = need / np.maximum(1, v.hand.sum(axis=1) - v.hand[:, WIZARD])
    threshold = HOLD_THRESHOLD * (1 - urgency)
    winners = others & (holds > 0) & (holds >= threshold[:, None])
    take = np.where(v.trick_len > 0, best(-power, winners), best(holds, winners))
    throw = others & ~_IS_JESTER
    throw = np.where(throw.any(axis=1, keepdims=True), throw, others)
    keep = throw & (SUIT_OF[:NUM_CARD_TYPES] != v.trump[:, None])  # keep trumps for ruffing
    keep = np.where(keep.any(axis=1, keepdims=True), keep, throw)
    thrown = np.where(
        legal[:, WIZARD] & (~others.any(axis=1) | (urgency >= 1)),
        WIZARD,
        np.where(legal[:, JESTER] & (urgency >= JESTER_THROW_URGENCY), JESTER, best(-power, keep)),
    )
    return np.where(winners.any(axis=1), take, thrown)


def best(values: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """[k]: the allowed card with the highest value, the lowest card type among equals."""
    return np.where(allowed, values, -np.inf).argmax(axis=1)


def hold_chances(v: Views, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[k, 54] for the legal cards: the chance each holds the current trick, and its strength.

    Strength is how dangerous a card is to hold: its chance to win when led, with every later
    player overtaking when able, plus rank / 1000; -1 for a Jester.
    """
    row, card = np.nonzero(legal)
    trick, trump = v.trick[row], v.trump[row]
    length, n = v.trick_len[row], v.num_players
    led = led_suits(v.trick)[row]
    keys = card_keys(trick, led[:, None], trump[:, None])
    led_yet = ((trick != JESTER) & (trick >= 0)).any(axis=1)  # a card other than a Jester is down
    # Does the card take the trick as it stands? A trick of Jesters only goes to its first Jester.
    beats = np.where(led_yet, card_keys(card, led, trump) > keys.max(axis=1), (length == 0) | (card != JESTER))
    takes = ~(trick == WIZARD).any(axis=1) & ((card == WIZARD) | beats)
    led = np.where(led_yet, led, SUIT_OF[card])
    sated = (v.bids[row] >= 0) & (v.bids[row] <= v.tricks_won[row])
    holds = np.where(takes & (card == WIZARD), 1.0, 0.0)
    contest = np.flatnonzero(takes & (card < NUM_SUITED))
    holds[contest] = survive_chance(v, row[contest], card[contest], led[contest], n - length[contest], sated[contest])
    holds[takes & (length == n - 1)] = 1.0

    strength = np.where(card == WIZARD, 1.0, 0.0)
    plain = np.flatnonzero(card < NUM_SUITED)
    strength[plain] = survive_chance(v, row[plain], card[plain], SUIT_OF[card[plain]], np.full(plain.size, n), None)
    strength = np.where(card == JESTER, -1.0, strength + _TIE_RANK[card] / 1000)

    out_holds, out_power = np.zeros(legal.shape), np.zeros(legal.shape)
    out_holds[row, card], out_power[row, card] = holds, strength
    return out_holds, out_power


def survive_chance(v: Views, row: np.ndarray, card: np.ndarray, led: np.ndarray, stop: np.ndarray,
                   sated: np.ndarray | None) -> np.ndarray:
    """Chance that suited ``card``, now winning a trick led in ``led``, is overtaken by none of slots 1 .. stop - 1.

    ``sated`` [m, n]: slots that have met their bid, and overtake only SATED_BEAT_FACTOR as often;
    None when every later player overtakes whenever able.
    """
    pool, trump = v.pool[row], v.trump[row]
    higher = above_in_suit(v.unseen)[row, card]
    follows = SUIT_OF[card] == led
    direct = v.unseen[row, WIZARD] + np.where(follows, higher, 0)
    trumps = np.where(trump != led, v.suit_unseen[row, trump], 0)
    ruffers = np.where(follows, trumps, higher)  # a card that does not follow has trumped: higher trumps overtake
    in_led = v.suit_unseen[row, led]
    chance = np.ones(len(row))
    for slot in range(1, v.num_players):
        held = v.held[row, slot]
        void = none_chance(pool, in_led, held)
        can_ruff = void * (1 - none_chance(pool - in_led, ruffers, held))
        beat = 1 - none_chance(pool, direct, held) * (1 - can_ruff)
        if sated is not None:
            beat = np.where(sated[:, slot], beat * SATED_BEAT_FACTOR, beat)
        chance = np.where(slot < stop, chance * (1 - beat), chance)
    return chance
