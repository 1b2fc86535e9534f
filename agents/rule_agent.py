"""RuleAgent: a hand-written heuristic that bids its expected tricks and plays to hit the bid exactly.

It uses only what its observation vector holds. The heuristic is compiled with numba and decides
a batch of observations row by row, so one implementation serves every batch size (``act`` is a
batch of one). The parts live beside this file: ``rule_view`` decodes an observation and holds the
card-counting odds, ``rule_bid`` the trump choice and the bids (expected tricks, one-card rounds
from sampled deals, foresight rounds exactly), ``rule_play`` the card play (win cheaply while short
of the bid, duck once it is met). The random draws of the sampled deals come from the agent's
seeded generator, and the bids from expected tricks use numpy's exp and power, in Python between
the compiled steps (``rule_bid.hand_chances``).

The kernels are cached on disk (``cache=True``); ``wizard_env.engine.compile_cache`` recompiles ``decide``
when ``rule_view``, ``rule_bid``, ``rule_play`` or another project module it reads has changed.
"""

from __future__ import annotations

import numba
import numpy as np

from wizard_env.engine.cards import WIZARD
from wizard_env.engine.game import BID_OFFSET, CARD_OFFSET, NUM_ACTIONS, TRUMP_OFFSET, Phase
from wizard_env.engine.rules import MAX_PLAYERS

from .base import Agent, check_batch
from .rule_bid import (FEATURES, ONE_CARD_SAMPLES, best_bid, bid_features, choose_trump, foresight_chance, hand_chances,
                       hand_trick_chances, judge_bids, one_card_chance, one_card_row)
from .rule_play import card_numbers, choose_card
from .rule_view import LAYOUT, TABLES, read_view

#: Placeholder actions of the bids ``decide`` leaves to ``decide_bids``: from sampled deals, from the chances of the hand.
SAMPLED, ESTIMATED = -1, -2
_TRUMP_PHASE, _BID_PHASE = int(Phase.TRUMP), int(Phase.BID)
_NO_CHANCES = (np.zeros((0, 1)), np.zeros(0, dtype=np.int64))
#: ``decide``'s ``out`` when no numbers are wanted.
NO_NUMBERS = np.zeros((0, FEATURES, NUM_ACTIONS), dtype=np.float32)


class RuleAgent(Agent):
    """Heuristic player: bids its expected tricks and plays to take exactly that many."""

    name = "rule"

    def __init__(self, seed: int | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """A legal action per row, chosen by the heuristic for the phase the observation shows."""
        return self.act_with_numbers(observations, action_masks, numbers=False)[0]

    def act_with_numbers(self, observations: np.ndarray, action_masks: np.ndarray,
                         numbers: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``act_batch``'s actions and, computed in the same pass, RuleAgent's numbers for every action
        (``rule_features.action_features``, float32 [k, FEATURES * NUM_ACTIONS]; [k, 0] without ``numbers``)."""
        observations, masks = check_batch(observations, action_masks)
        observations, legal = np.ascontiguousarray(observations, dtype=np.float32), masks != 0
        out = np.zeros((len(observations), FEATURES, NUM_ACTIONS), dtype=np.float32) if numbers else NO_NUMBERS
        actions, waiting = decide(observations, legal, LAYOUT, TABLES[0], out)
        if waiting:
            sampled, bidding = np.flatnonzero(actions == SAMPLED), np.flatnonzero(actions == ESTIMATED)
            # Draws in row order, so that a batch draws what its rows would one by one.
            uniforms = np.zeros((0, 1, 1))
            if sampled.size:
                uniforms = self.rng.random((sampled.size, ONE_CARD_SAMPLES, MAX_PLAYERS - 1))
            mine, counts = hand_chances(observations, bidding, LAYOUT, TABLES) if bidding.size else _NO_CHANCES
            decide_bids(observations, legal, actions, sampled, uniforms, bidding, mine, counts, LAYOUT)
            if numbers and bidding.size:
                judge_bids(observations, legal, bidding, mine, counts, LAYOUT, out)
        return actions, out.reshape(len(observations), FEATURES * NUM_ACTIONS if numbers else 0)


@numba.njit(cache=True)
def decide(observations: np.ndarray, legal: np.ndarray, layout: tuple, none: np.ndarray, out: np.ndarray) -> tuple:
    """[k] actions for observations [k, OBS_SIZE] with legal actions ``legal`` [k, 79], and how many are
    bids left to ``decide_bids`` (marked SAMPLED or ESTIMATED). ``none``: ``rule_view.TABLES[0]``.

    ``out``: [k, FEATURES, NUM_ACTIONS] to fill with the numbers of the cards and foresight bids judged on the way
    (``rule_features``; the estimated bids' come from ``judge_bids``), or [0, ...] for none.
    """
    actions, waiting = np.zeros(len(observations), dtype=np.int64), 0
    numbers = len(out) > 0
    for row in range(len(observations)):
        if legal[row].sum() <= 1:
            actions[row] = np.argmax(legal[row])
            continue
        v = read_view(observations, row, layout)
        if v.phase == _BID_PHASE and v.hand.sum() > 0:
            actions[row] = SAMPLED if one_card_row(v) else ESTIMATED
            waiting += 1
            continue
        if v.phase == _TRUMP_PHASE:
            chosen = TRUMP_OFFSET + choose_trump(v)
        elif v.phase == _BID_PHASE:  # a foresight round: the others' cards in view, mine not
            chances = np.full(1, foresight_chance(v, v.trump))
            if numbers:
                bid_features(chances, legal[row], out[row])
            chosen = BID_OFFSET + best_bid(chances, legal[row, BID_OFFSET:CARD_OFFSET])
        else:
            playable = legal[row, CARD_OFFSET:TRUMP_OFFSET]
            cards = np.flatnonzero(playable)  # the options, in ascending card type
            holds, power = card_numbers(v, cards, none)
            if numbers:
                for j in range(len(cards)):
                    out[row, 0, CARD_OFFSET + cards[j]], out[row, 1, CARD_OFFSET + cards[j]] = holds[j], power[j]
            chosen = CARD_OFFSET + choose_card(v, playable, cards, holds, power)
        actions[row] = chosen if legal[row, chosen] else np.argmax(legal[row])  # else the first legal action
    return actions, waiting


@numba.njit(cache=True)
def decide_bids(observations: np.ndarray, legal: np.ndarray, actions: np.ndarray, sampled: np.ndarray, uniforms: np.ndarray,
                bidding: np.ndarray, mine: np.ndarray, counts: np.ndarray, layout: tuple) -> None:
    """Fill in the bids ``decide`` left, in place: rows ``sampled`` from the draws ``uniforms`` [rows, samples, 5],
    rows ``bidding`` from the chances of their cards in hand (``hand_chances``: ``mine`` and ``counts``)."""
    for i in range(len(sampled)):
        v = read_view(observations, sampled[i], layout)
        chances = np.full(1, one_card_chance(v, uniforms[i]))
        actions[sampled[i]] = _bid_action(chances, legal[sampled[i]])
    for i in range(len(bidding)):
        wizards = read_view(observations, bidding[i], layout).hand[WIZARD]
        actions[bidding[i]] = _bid_action(hand_trick_chances(wizards, mine[i], counts[i]), legal[bidding[i]])


@numba.njit(cache=True)
def _bid_action(chances: np.ndarray, legal: np.ndarray) -> int:
    """The action of ``best_bid``, or the first legal action if that bid is not legal."""
    chosen = BID_OFFSET + best_bid(chances, legal[BID_OFFSET:CARD_OFFSET])
    return chosen if legal[chosen] else int(np.argmax(legal))
