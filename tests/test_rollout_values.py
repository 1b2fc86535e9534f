"""Rollout values: each legal action's round score, with the round played out on a copy of the deal."""

from __future__ import annotations

import numpy as np
import pytest

from wizard_env.agents import Agent, RuleAgent
from wizard_env.engine.actions import IllegalActionError, Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.rules import Rules
from wizard_env.training.values.rollout_values import collect_values, rollout_values


def mid_round(seed: int) -> WizardBatch:
    """Three games in the card play of round 4 (every decision left in the round is a card)."""
    batch = WizardBatch(Rules.make(4), 3, seed=seed, autoreset=False)
    rule = RuleAgent(seed=0)
    while not ((batch.round_index == 3) & (batch.phase == Phase.PLAY) & (batch.played.sum(axis=(1, 2)) == 5)).all():
        live = np.flatnonzero(~((batch.round_index == 3) & (batch.phase == Phase.PLAY) & (batch.played.sum(axis=(1, 2)) == 5)))
        batch.step(rule.act_batch(batch.observe(live), batch.legal_masks(live)), live)
    return batch


def test_each_legal_action_gets_the_round_score_of_playing_it_then_the_rollout_policy():
    batch = mid_round(seed=4)
    games = np.array([0, 2])
    masks = batch.legal_masks(games).copy()
    seats = batch.current[games].copy()
    values = rollout_values(batch, games, RuleAgent(seed=1))
    assert (np.isnan(values) == (masks == 0)).all()
    for row, game in enumerate(games):
        for action in np.flatnonzero(masks[row]):
            # the same action and the same play-out, step by step on a copy of that game alone
            sim = batch.copy_games(np.array([game]))
            sim.step(np.array([action]))
            rule = RuleAgent(seed=2)
            while not sim.round_over[0]:
                sim.step(rule.act_batch(sim.observe(), sim.legal_masks()))
            assert values[row, action] == sim.round_scores[0, seats[row]]


class FirstAction(Agent):
    """Always action 0 (bid 0), which is never legal in card play."""

    name = "first"

    def act_batch(self, observations, action_masks):
        """Zero for every row."""
        return np.zeros(len(action_masks), dtype=np.int64)


def test_a_rollout_agent_playing_an_illegal_action_is_named_and_the_games_are_unchanged():
    batch = mid_round(seed=6)
    before = {name: getattr(batch, name).copy() for name in ("hands", "played", "trick", "tricks_won", "current", "phase")}
    with pytest.raises(IllegalActionError, match=r"rollout agent 'first': game \d+, seat \d+: action 0 \(bid 0\) is not legal"):
        rollout_values(batch, np.arange(3), FirstAction())
    assert all((getattr(batch, name) == value).all() for name, value in before.items())


def test_rollouts_leave_the_games_unchanged():
    batch = mid_round(seed=5)
    before = {name: getattr(batch, name).copy() for name in ("hands", "played", "trick", "tricks_won", "current", "phase")}
    rollout_values(batch, np.arange(3), RuleAgent(seed=1))
    assert all((getattr(batch, name) == value).all() for name, value in before.items())


def test_collected_decisions_keep_their_observation_mask_and_advice():
    samples = collect_values(Rules.make(3, rounds=3), 4, seed=0, phases=(int(Phase.PLAY),))
    assert len(samples.advice) > 0
    legal = samples.masks
    assert (np.isnan(samples.values) == ~legal).all()
    assert (legal.sum(axis=1) > 1).all()  # forced moves carry nothing to learn
    assert legal[np.arange(len(legal)), samples.advice].all()
    assert samples.observations.dtype == np.float32  # decoded from the compact form, as the encoder made them
    # scores of a round of at most 3 cards: -30 .. +50
    assert np.nanmin(samples.values) >= -30 and np.nanmax(samples.values) <= 50
