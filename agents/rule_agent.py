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


class RuleAgent(Agent):
    """Heuristic player: bids its expected tricks and plays to take exactly that many."""

    name = "rule"

    def __init__(self, seed: int | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """A legal action per row, chosen by the heuristic for the phase the observation shows."""
        observations, masks = check_batch(observations, action_masks)
        legal = masks != 0
        actions = legal.argmax(axis=1).astype(np.int64)  # the first legal action: the only one, or the fallback
        open_rows = np.flatnonzero(legal.sum(axis=1) > 1)
        if open_rows.size:
            chosen = self._choose(observations[open_rows], legal[open_rows])
            actions[open_rows] = np.where(legal[open_rows, chosen], chosen, actions[open_rows])
        return actions

    def _choose(self, observations: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The heuristic's action for every row (each has a choice), legal or not."""
        chosen = np.zeros(len(observations), dtype=np.int64)
        groups = []
        sampled = np.zeros(len(observations), dtype=bool)  # bids estimated from sampled deals
        for rows, v in read_views(observations):
            phases = {phase: np.flatnonzero(v.phase == phase) for phase in (Phase.TRUMP, Phase.BID)}
            phases[Phase.PLAY] = np.flatnonzero((v.phase != Phase.TRUMP) & (v.phase != Phase.BID))
            bidding = v.rows(phases[Phase.BID])
            sampled[rows[phases[Phase.BID][one_card_rows(bidding)]]] = True
            groups.append((rows, v, phases, bidding))
        # Draws in row order, so that a batch draws what its rows would one by one.
        uniforms = self.rng.random((int(sampled.sum()), ONE_CARD_SAMPLES, MAX_PLAYERS - 1))
        draw_of = np.cumsum(sampled) - 1

        for rows, v, phases, bidding in groups:
            trump, bid, play = (rows[phases[p]] for p in (Phase.TRUMP, Phase.BID, Phase.PLAY))
            if trump.size:
                chosen[trump] = TRUMP_OFFSET + choose_trumps(v.rows(phases[Phase.TRUMP]))
            if bid.size:
                draws = uniforms[draw_of[bid[one_card_rows(bidding)]]]
                chosen[bid] = BID_OFFSET + choose_bids(bidding, legal[bid, BID_OFFSET:CARD_OFFSET], draws)
            if play.size:
                chosen[play] = CARD_OFFSET + choose_cards(v.rows(phases[Phase.PLAY]), legal[play, CARD_OFFSET:TRUMP_OFFSET])
        return chosen
