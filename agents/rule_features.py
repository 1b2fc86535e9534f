"""RuleAgent's judgement of every legal action, as inputs for a learned policy (compiled with numba).

RuleAgent decides from numbers it computes for each option. ``action_features`` returns those
numbers by action, so a network that reads them (a checkpoint with ``"features": true``) starts from
what RuleAgent knows about each action, not only from which one it chose:

- a card: its chance of holding the current trick, and its strength (its chance of winning a trick it
  leads, -1 for a Jester), as ``rule_play.hold_chance`` computes them;
- a bid: the chance of taking exactly that many tricks, and the bid's expected round score (in
  hundreds of points), from the chances of the cards in hand (``rule_bid.trick_distribution``).
  A one-card round's bid, which RuleAgent estimates from random deals, and the trump choice get zeros.

Every number is a function of the observation alone: a batch gives what its rows give one by one.
"""

from __future__ import annotations

import numba
import numpy as np

from wizard_env.engine.cards import NUM_CARD_TYPES, WIZARD
from wizard_env.engine.game import BID_OFFSET, CARD_OFFSET, NUM_ACTIONS, Phase
from wizard_env.engine.rules import MAX_HAND_SIZE

from .base import check_batch
from .rule_bid import expected_score, foresight_chance, hand_chances, hand_trick_chances, one_card_row, trick_distribution
from .rule_play import hold_chance
from .rule_view import LAYOUT, TABLES, read_view

#: Numbers per action; the features of a batch are [k, FEATURES * NUM_ACTIONS], the first number of every action, then the second.
FEATURES = 2
#: Scale of a bid's expected score among the features (scores run to a few hundred points).
SCORE_SCALE = 0.01
_BID_PHASE, _PLAY_PHASE = int(Phase.BID), int(Phase.PLAY)


def action_features(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """float32 [k, FEATURES * NUM_ACTIONS]: RuleAgent's numbers for each legal action of each row (zero elsewhere)."""
    observations, masks = check_batch(observations, action_masks)
    observations = np.ascontiguousarray(observations, dtype=np.float32)
    out = np.zeros((len(observations), FEATURES, NUM_ACTIONS), dtype=np.float32)
    bidding = judge(observations, masks != 0, LAYOUT, TABLES[0], out)
    if bidding.size:
        mine, counts = hand_chances(observations, bidding, LAYOUT, TABLES)
        judge_bids(observations, masks != 0, bidding, mine, counts, LAYOUT, out)
    return out.reshape(len(observations), FEATURES * NUM_ACTIONS)


@numba.njit(cache=True)
def judge(observations: np.ndarray, legal: np.ndarray, layout: tuple, none: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill ``out`` [k, FEATURES, NUM_ACTIONS] for card plays and foresight bids; the rows whose bids need the
    chances of the cards in hand (``judge_bids``)."""
    bidding = np.zeros(len(observations), dtype=np.bool_)
    for row in range(len(observations)):
        if legal[row].sum() <= 1:
            continue
        v = read_view(observations, row, layout)
        if v.phase == _PLAY_PHASE:
            for card in range(NUM_CARD_TYPES):
                if legal[row, CARD_OFFSET + card]:
                    out[row, 0, CARD_OFFSET + card], out[row, 1, CARD_OFFSET + card] = hold_chance(v, card, none)
        elif v.phase == _BID_PHASE:
            if v.hand.sum() == 0:  # a foresight round: my one card unseen, the others' in view
                bid_features(np.full(1, foresight_chance(v, v.trump)), legal[row], out[row])
            elif not one_card_row(v):
                bidding[row] = True
    return np.flatnonzero(bidding)


@numba.njit(cache=True)
def judge_bids(observations: np.ndarray, legal: np.ndarray, rows: np.ndarray, mine: np.ndarray, counts: np.ndarray,
               layout: tuple, out: np.ndarray) -> None:
    """Fill ``out`` for the bids of ``rows`` from the chances of their cards in hand (``hand_chances``: ``mine``, ``counts``),
    the Wizards first, as RuleAgent bids."""
    for i in range(len(rows)):
        wizards = read_view(observations, rows[i], layout).hand[WIZARD]
        bid_features(hand_trick_chances(wizards, mine[i], counts[i]), legal[rows[i]], out[rows[i]])


@numba.njit(cache=True)
def bid_features(chances: np.ndarray, legal: np.ndarray, out: np.ndarray) -> None:
    """Each legal bid's chance of being met exactly and its expected score, into ``out`` [FEATURES, NUM_ACTIONS]."""
    dist = trick_distribution(chances)
    for bid in range(MAX_HAND_SIZE + 1):
        if legal[BID_OFFSET + bid]:
            out[0, BID_OFFSET + bid] = dist[bid] if bid < len(dist) else 0.0
            out[1, BID_OFFSET + bid] = expected_score(dist, bid) * SCORE_SCALE
