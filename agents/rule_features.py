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

import numpy as np

from wizard_env.engine.actions import NUM_ACTIONS

from .base import check_batch
from .rule_agent import ESTIMATED, decide
from .rule_bid import FEATURES, SCORE_SCALE, hand_chances, judge_bids
from .rule_view import LAYOUT, TABLES

__all__ = ["FEATURES", "SCORE_SCALE", "action_features"]


def action_features(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """float32 [k, FEATURES * NUM_ACTIONS]: RuleAgent's numbers for each legal action of each row (zero elsewhere).

    The numbers RuleAgent decides from, in the pass that decides (``rule_agent.decide``; its actions are dropped, and
    no random draw is taken): ``RuleAgent.act_with_numbers`` gives both at once.
    """
    observations, masks = check_batch(observations, action_masks)
    observations, legal = np.ascontiguousarray(observations, dtype=np.float32), masks != 0
    out = np.zeros((len(observations), FEATURES, NUM_ACTIONS), dtype=np.float32)
    actions, _ = decide(observations, legal, LAYOUT, TABLES[0], out)
    bidding = np.flatnonzero(actions == ESTIMATED)
    if bidding.size:
        mine, counts = hand_chances(observations, bidding, LAYOUT, TABLES)
        judge_bids(observations, legal, bidding, mine, counts, LAYOUT, out)
    return out.reshape(len(observations), FEATURES * NUM_ACTIONS)
