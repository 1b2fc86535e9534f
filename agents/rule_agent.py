"""RuleAgent: a hand-written heuristic that bids its expected tricks and plays to hit the bid exactly.

It uses only what its observation vector holds, and decides a whole batch of observations at
once with numpy (``act`` is a batch of one). The parts live beside this file: ``rule_view``
decodes the observations and holds the card-counting odds, ``rule_bid`` the trump choice and
the bids (expected tricks, one-card rounds from sampled deals, foresight rounds exactly),
``rule_play`` the card play (win cheaply while short of the bid, duck once it is met).
"""

from __future__ import annotations

import numpy as np

from wizard_env.game import BID_OFFSET, CARD_OFFSET, TRUMP_OFFSET, Phase
from wizard_env.rules import MAX_PLAYERS

from .base import Agent, check_batch
from .rule_bid import ONE_CARD_SAMPLES, choose_bids, choose_trumps, one_card_rows
from .rule_play import choose_cards
from .rule_view import read_views

_TRUMP, _BID = int(Phase.TRUMP), int(Phase.BID)


class RuleAgent(Agent):
    """Heuristic player: bids its expected tricks and plays to take exactly that many."""

    name = "rule"

    def __init__(self, seed: int | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """A legal action per row, chosen by the heuristic for the phase the observation shows."""
        observations, masks = check_batch(observations, action_masks)
        legal = masks != 0
        actions = legal.argmax(axis=1)  # the first legal action: the only one, or the fallback
        choice = legal.sum(axis=1) > 1
        if choice.all() and choice.size:
            chosen = self._choose(observations, None, legal)
            return np.where(legal[np.arange(len(legal)), chosen], chosen, actions)
        rows = np.flatnonzero(choice)
        if rows.size:
            chosen = self._choose(observations, rows, legal[rows])
            actions[rows] = np.where(legal[rows, chosen], chosen, actions[rows])
        return actions

    def _choose(self, observations: np.ndarray, rows: np.ndarray | None, legal: np.ndarray) -> np.ndarray:
        """The heuristic's action for observations[rows] (default all; each has a choice of actions ``legal``)."""
        chosen = np.zeros(len(legal), dtype=np.int64)
        groups = []
        sampled = np.zeros(len(legal), dtype=bool)  # bids estimated from sampled deals
        for at, v in read_views(observations, rows):  # at: positions in this batch
            trump, bid = np.flatnonzero(v.phase == _TRUMP), np.flatnonzero(v.phase == _BID)
            play = np.flatnonzero((v.phase != _TRUMP) & (v.phase != _BID))
            bidding = v.rows(bid) if bid.size else None
            one_card = np.flatnonzero(one_card_rows(bidding)) if bid.size else bid
            sampled[at[bid[one_card]]] = True
            groups.append((at, v, trump, bid, play, bidding, one_card))
        # Draws in row order, so that a batch draws what its rows would one by one.
        draws = int(sampled.sum())
        uniforms = self.rng.random((draws, ONE_CARD_SAMPLES, MAX_PLAYERS - 1)) if draws else None
        draw_of = np.cumsum(sampled) - 1

        for at, v, trump, bid, play, bidding, one_card in groups:
            if trump.size:
                chosen[at[trump]] = TRUMP_OFFSET + choose_trumps(v.rows(trump))
            if bid.size:
                draws = uniforms[draw_of[at[bid[one_card]]]] if one_card.size else None
                chosen[at[bid]] = BID_OFFSET + choose_bids(bidding, legal[at[bid], BID_OFFSET:CARD_OFFSET], draws)
            if play.size:
                chosen[at[play]] = CARD_OFFSET + choose_cards(v.rows(play), legal[at[play], CARD_OFFSET:TRUMP_OFFSET])
        return chosen
