"""RuleAgent's card play, for a batch of decisions at once.

While short of its bid it wins tricks with the cheapest card likely to hold; once the bid is met
it ducks, shedding the most dangerous card that still loses. Each legal card is judged by two
numbers: its chance of holding the current trick, and its strength (its chance of winning a trick
it leads, with rank breaking ties).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wizard_env.cards import JESTER, NO_CARD, NUM_CARD_TYPES, NUM_RANKS, NUM_SUITED, WIZARD

from .rule_view import RANK_OF, SUIT_OF, Views, card_keys, led_suits, none_chance

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


@dataclass
class Options:
    """Each row's legal cards, left-aligned in ascending card type and padded, with how each is judged."""

    cards: np.ndarray  # [k, w] card types, NO_CARD after the last legal card
    legal: np.ndarray  # [k, w] a legal card, not padding
    holds: np.ndarray  # [k, w] chance to hold the current trick
    power: np.ndarray  # [k, w] strength: how dangerous the card is to keep

    @classmethod
    def of(cls, v: Views, legal: np.ndarray) -> "Options":
        """The options of every row of ``legal`` [k, 54] (each row has one at least)."""
        row, card = np.nonzero(legal)
        count = legal.sum(axis=1)
        col = np.arange(len(row)) - (np.cumsum(count) - count)[row]
        shape = (len(legal), int(count.max(initial=0)))
        cards, valid, holds, power = np.full(shape, NO_CARD), np.zeros(shape, dtype=bool), np.zeros(shape), np.zeros(shape)
        cards[row, col], valid[row, col] = card, True
        holds[row, col], power[row, col] = hold_chances(v, row, card)
        return cls(cards, valid, holds, power)

    def best(self, values: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """[k]: the allowed card with the highest value, the lowest card type among equals."""
        column = np.where(allowed, values, -np.inf).argmax(axis=1)
        return self.cards[np.arange(len(column)), column]


def choose_cards(v: Views, legal: np.ndarray) -> np.ndarray:
    """The card to play from ``legal`` [k, 54]: win cheaply while short of the bid, duck once it is met."""
    o = Options.of(v, legal)
    need = v.bids[:, 0] - v.tricks_won[:, 0]
    wizards = v.hand[:, WIZARD]
    winning = (need > 0) & ((need > wizards) | ~legal[:, WIZARD])
    wizard_down = (v.trick == WIZARD).any(axis=1)
    # The Wizards alone can make the bid: take tricks with them and lose with the rest.
    alone = (need > 0) & ~winning
    ducking = (need <= 0) | (alone & (v.trick_len > 0) & wizard_down)
    chosen = np.full(len(need), WIZARD)
    if ducking.any():
        chosen = np.where(ducking, duck(o), chosen)
    if winning.any():
        chosen = np.where(winning, win(v, o, need - wizards), chosen)
    losing = alone & (v.trick_len > 0) & ~wizard_down
    if losing.any():
        losers = o.legal & (o.holds == 0)
        chosen = np.where(losing & losers.any(axis=1), o.best(o.power, losers), chosen)
    return chosen


def duck(o: Options) -> np.ndarray:
    """Lose the trick, shedding the most dangerous card that surely loses; keep Jesters for later."""
    jester = o.cards == JESTER
    losers = o.legal & (o.holds == 0) & ~jester
    others = o.legal & ~jester
    lowest = np.where(others, o.holds, np.inf).min(axis=1, keepdims=True)
    safest = np.where(others & (o.holds == lowest), o.power, -np.inf).argmax(axis=1)  # column
    rows = np.arange(len(safest))
    risky = others.any(axis=1) & (o.holds[rows, safest] > DUCK_RISK)
    safest = np.where(others.any(axis=1), o.cards[rows, safest], JESTER)
    sure = (~o.legal | (o.holds == 1)).all(axis=1)
    fallback = np.where(jester.any(axis=1) & risky, JESTER, np.where(sure, o.best(o.power, o.legal), safest))
    return np.where(losers.any(axis=1), o.best(o.power, losers), fallback)


def win(v: Views, o: Options, need: np.ndarray) -> np.ndarray:
    """Take the trick with the cheapest card likely to hold, or throw the least useful card."""
    wizard, jester = o.cards == WIZARD, o.cards == JESTER
    others = o.legal & ~wizard
    urgency = need / np.maximum(1, v.hand.sum(axis=1) - v.hand[:, WIZARD])
    threshold = HOLD_THRESHOLD * (1 - urgency)
    winners = others & (o.holds > 0) & (o.holds >= threshold[:, None])
    take = np.where(v.trick_len > 0, o.best(-o.power, winners), o.best(o.holds, winners))
    throw = others & ~jester
    throw = np.where(throw.any(axis=1, keepdims=True), throw, others)
    keep = throw & (SUIT_OF[o.cards] != v.trump[:, None])  # keep trumps for ruffing
    keep = np.where(keep.any(axis=1, keepdims=True), keep, throw)
    thrown = np.where(
        wizard.any(axis=1) & (~others.any(axis=1) | (urgency >= 1)),
        WIZARD,
        np.where(jester.any(axis=1) & (urgency >= JESTER_THROW_URGENCY), JESTER, o.best(-o.power, keep)),
    )
    return np.where(winners.any(axis=1), take, thrown)


def hold_chances(v: Views, row: np.ndarray, card: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each (row, card): the chance the card holds the row's current trick, and its strength.

    Strength is how dangerous a card is to hold: its chance to win when led, with every later
    player overtaking when able, plus rank / 1000; -1 for a Jester.
    """
    n = v.num_players
    led = led_suits(v.trick)
    led_yet = ((v.trick != JESTER) & (v.trick != NO_CARD)).any(axis=1)  # a card other than a Jester is down
    top = card_keys(v.trick, led[:, None], v.trump[:, None]).max(axis=1)
    open_trick = ~(v.trick == WIZARD).any(axis=1)
    length = v.trick_len[row]
    # Does the card take the trick as it stands? A trick of Jesters only goes to its first Jester.
    beats = np.where(led_yet[row], card_keys(card, led[row], v.trump[row]) > top[row], (length == 0) | (card != JESTER))
    takes = open_trick[row] & ((card == WIZARD) | beats)
    last = length == n - 1
    holds = np.where(takes & ((card == WIZARD) | last), 1.0, 0.0)
    strength = np.where(card == WIZARD, 1.0, 0.0)
    contest = np.flatnonzero(takes & ~last & (card < NUM_SUITED))
    plain = np.flatnonzero(card < NUM_SUITED)
    if contest.size or plain.size:
        # Both judged in one go: in the trick as it stands, and led into an empty trick.
        at = np.concatenate([contest, plain])
        sated = (v.bids >= 0) & (v.bids <= v.tricks_won)
        chance = survive_chance(
            v, row[at], card[at],
            np.concatenate([np.where(led_yet[row[contest]], led[row[contest]], SUIT_OF[card[contest]]), SUIT_OF[card[plain]]]),
            np.concatenate([n - length[contest], np.full(plain.size, n)]),
            np.concatenate([sated[row[contest]], np.zeros((plain.size, n), dtype=bool)]),
        )
        holds[contest], strength[plain] = chance[: contest.size], chance[contest.size :]
    return holds, np.where(card == JESTER, -1.0, strength + _TIE_RANK[card] / 1000)


def survive_chance(v: Views, row: np.ndarray, card: np.ndarray, led: np.ndarray, stop: np.ndarray,
                   sated: np.ndarray) -> np.ndarray:
    """Chance that suited ``card``, now winning a trick led in ``led``, is overtaken by none of slots 1 .. stop - 1.

    ``sated`` [m, n]: slots that have met their bid, and overtake only SATED_BEAT_FACTOR as often.
    """
    pool, trump = v.pool[row, None], v.trump[row]
    higher = v.higher[row, card]
    follows = SUIT_OF[card] == led
    direct = (v.unseen[row, WIZARD] + np.where(follows, higher, 0))[:, None]
    trumps = np.where(trump != led, v.suit_unseen[row, trump], 0)
    ruffers = np.where(follows, trumps, higher)[:, None]  # a card that does not follow has trumped: higher trumps overtake
    in_led = v.suit_unseen[row, led][:, None]
    held = v.held[row, 1:]
    void = none_chance(pool, in_led, held)
    can_ruff = void * (1 - none_chance(pool - in_led, ruffers, held))
    beat = 1 - none_chance(pool, direct, held) * (1 - can_ruff)
    beat = np.where(sated[:, 1:], beat * SATED_BEAT_FACTOR, beat)
    keep = np.where(np.arange(1, v.num_players) < stop[:, None], 1 - beat, 1.0)
    chance = keep[:, 0]
    for slot in range(1, v.num_players - 1):  # in slot order: the same product to the bit
        chance = chance * keep[:, slot]
    return chance
