"""HighCards: bids its sure tricks, then plays high while it needs tricks and low once it has them."""

from __future__ import annotations

import numpy as np

from wizard_env.agents import Agent
from wizard_env.engine.actions import CARD_OFFSET, NUM_BID_ACTIONS, TRUMP_OFFSET
from wizard_env.engine.cards import JESTER, NUM_CARD_TYPES, NUM_RANKS, NUM_SUITS, WIZARD
from wizard_env.engine.observation import decode

TRUMPED = 50  # what a trump adds to its rank: any trump beats any other suited card


def strength(card: int, trump: int) -> int:
    """How likely a card type takes a trick: Wizard, then trumps, then other cards by rank, Jester last."""
    if card == WIZARD:
        return 100
    if card == JESTER:
        return -1
    suit, rank = divmod(card, NUM_RANKS)
    return rank + (TRUMPED if suit == trump else 0)


class HighCards(Agent):
    """Bids the Wizards and the trumps of rank ``high`` or better (0 is a 2, 12 an Ace; default 10, the Queen)."""

    name = "myagent"

    def __init__(self, high: int = 10):
        if not 0 <= high < NUM_RANKS:
            raise ValueError(f"high must be a rank from 0 (a 2) to 12 (an Ace), not {high}")
        self.high = high

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One legal action per row."""
        return np.array([self.choose(decode(o), np.flatnonzero(m)) for o, m in zip(observations, action_masks)], np.int64)

    def choose(self, seen: dict, legal: np.ndarray) -> int:
        """The action for one decoded observation (slot 0 is this player) among the legal ids."""
        trump = int(np.argmax(seen["trump"])) if seen["trump"].any() else NUM_SUITS
        hand = np.repeat(np.arange(NUM_CARD_TYPES), seen["hand"])
        if legal[0] < NUM_BID_ACTIONS:  # bidding: the legal bid nearest the sure tricks
            sure = sum(card == WIZARD or (card < WIZARD and strength(card, trump) >= TRUMPED + self.high) for card in hand)
            return int(legal[np.argmin(np.abs(legal - sure))])
        if legal[0] >= TRUMP_OFFSET:  # naming trump: the suit held most
            counts = [np.sum(hand // NUM_RANKS == suit) for suit in range(NUM_SUITS)]
            return TRUMP_OFFSET + int(np.argmax(counts))
        cards = legal - CARD_OFFSET
        power = [strength(int(card), trump) for card in cards]
        wants = seen["tricks_won"][0] < seen["bids"][0]
        return int(legal[np.argmax(power) if wants else np.argmin(power)])
