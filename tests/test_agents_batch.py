"""Agents on batches: act_batch decides each row as that row alone, legally, reproducibly, and rejects bad input."""

from __future__ import annotations

import numpy as np
import pytest

from wizard_env.agents import Agent, RandomAgent, RuleAgent
from wizard_env.engine.actions import IllegalActionError
from wizard_env.agents.base import as_actions, check_batch
from wizard_env.agents.rule_agent import NO_NUMBERS, SAMPLED, decide
from wizard_env.agents.rule_bid import ONE_CARD_SAMPLES, one_card_chance
from wizard_env.agents.rule_view import LAYOUT, TABLES, players, read_view
from wizard_env.engine.cards import parse_card
from wizard_env.engine.game import NUM_ACTIONS, Phase, WizardGame
from wizard_env.engine.observation import OBS_SIZE, observe
from wizard_env.engine.rules import Rules, trick_winner

VARIANTS = [
    (3, {"rounds": 4}),
    (4, {"rounds": 3, "bidding": "hidden"}),
    (5, {"rounds": 3, "bidding": "secret"}),
    (6, {"rounds": 3, "bid_total_rule": True}),
    (3, {"rounds": [1, 2, 1], "foresight": True}),
    (4, {"rounds": "amigo"}),
]


def random_game_decisions(players: int, variant: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of every decision of one game of random legal moves."""
    rng = np.random.default_rng(seed)
    game = WizardGame(Rules.make(players, **variant), seed)
    observations, masks = [], []
    while not game.is_over:
        observations.append(observe(game, game.current))
        masks.append(game.legal_mask())
        game.step(int(rng.choice(np.flatnonzero(masks[-1]))))
    return np.array(observations), np.array(masks)


@pytest.fixture(scope="module")
def decisions() -> tuple[np.ndarray, np.ndarray]:
    """Decisions of 3- to 6-player games in every variant, mixed in one batch."""
    games = [random_game_decisions(n, variant, seed) for seed, (n, variant) in enumerate(VARIANTS)]
    return np.concatenate([g[0] for g in games]), np.concatenate([g[1] for g in games])


def test_the_pool_covers_every_phase_player_count_and_sampled_bid(decisions):
    observations, masks = decisions
    phases = {read_view(observations, row, LAYOUT).phase for row in range(len(observations))}
    counts = {players(observations, row, LAYOUT) for row in range(len(observations))}
    assert {Phase.BID, Phase.PLAY} <= phases and counts == {3, 4, 5, 6} and sampled_rows(observations, masks).any()


@pytest.mark.parametrize("make", [RuleAgent, RandomAgent], ids=["rule", "random"])
def test_every_action_is_legal(decisions, make):
    observations, masks = decisions
    actions = make(1).act_batch(observations, masks)
    assert actions.dtype == np.int64 and actions.shape == (len(masks),)
    assert masks[np.arange(len(masks)), actions].all()


def test_rule_batch_decides_each_row_as_that_row_alone(decisions):
    observations, masks = decisions
    batched = RuleAgent(7).act_batch(observations, masks)
    alone = RuleAgent(7)  # one agent, rows in the same order: the same draws for sampled one-card bids
    assert batched.tolist() == [alone.act(o, m) for o, m in zip(observations, masks)]


def test_rule_batch_in_another_order_gives_each_row_its_action(decisions):
    observations, masks = decisions
    # Rows whose bid is estimated from sampled deals take their draws in row order, so leave them out.
    order = np.random.default_rng(0).permutation(np.flatnonzero(~sampled_rows(observations, masks)))
    shuffled = RuleAgent(0).act_batch(observations[order], masks[order])
    assert (shuffled == RuleAgent(0).act_batch(observations, masks)[order]).all()


def sampled_rows(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Rows whose Rule bid is estimated from sampled deals (a choice of bids, one card in view)."""
    return decide(observations, masks != 0, LAYOUT, TABLES[0], NO_NUMBERS)[0] == SAMPLED


@pytest.mark.parametrize("make", [RuleAgent, RandomAgent], ids=["rule", "random"])
def test_same_seed_same_actions(decisions, make):
    observations, masks = decisions
    assert (make(3).act_batch(observations, masks) == make(3).act_batch(observations, masks)).all()


def test_random_agent_seeds_differ_and_it_draws_uniformly():
    mask = np.zeros((4000, NUM_ACTIONS), dtype=np.int8)
    mask[:, [2, 30, 40, 77]] = 1
    first, second = RandomAgent(1).act_batch(None, mask), RandomAgent(2).act_batch(None, mask)
    assert (first != second).any()
    shares = np.array([(first == a).mean() for a in (2, 30, 40, 77)])
    assert np.all(np.abs(shares - 0.25) < 0.03), shares


def test_sampled_one_card_chance_is_unbiased():
    # 3 players, the 9 of hearts in hand: the exact chance is the share of the ordered pairs of
    # unseen cards, dealt to the two others, against which it wins the trick.
    game = WizardGame(Rules.make(3, rounds=[1]), 0)
    game.hands[:] = 0
    game.hands[game.current, parse_card("9h")] = 1
    v = read_view(observe(game, game.current)[None], 0, LAYOUT)
    pool = np.repeat(np.arange(len(v.unseen)), v.unseen)
    order = [(v.dealer + 1 + k) % 3 for k in range(3)]
    wins = total = 0
    for i in range(len(pool)):
        for j in range(len(pool)):
            if i != j:
                cards = [parse_card("9h"), int(pool[i]), int(pool[j])]
                wins += order[trick_winner([cards[s] for s in order], v.trump)] == 0
                total += 1
    exact = wins / total
    samples = 50 * ONE_CARD_SAMPLES
    estimate = one_card_chance(v, np.random.default_rng(0).random((samples, 5)))
    assert abs(estimate - exact) < 4 * np.sqrt(exact * (1 - exact) / samples)


@pytest.mark.parametrize("make", [RuleAgent, RandomAgent], ids=["rule", "random"])
def test_bad_shapes_and_empty_masks_are_value_errors(decisions, make):
    observations, masks = decisions[0][:3], decisions[1][:3]
    agent = make(0)
    with pytest.raises(ValueError, match=f"observations must have shape \\(k, {OBS_SIZE}\\)"):
        agent.act_batch(observations[:, :-1], masks)
    with pytest.raises(ValueError, match="observations must have shape"):
        agent.act_batch(observations[0], masks)
    with pytest.raises(ValueError, match=f"action masks must have shape \\(k, {NUM_ACTIONS}\\)"):
        agent.act_batch(observations, masks[:, :-1])
    with pytest.raises(ValueError, match="3 observations but 2 action masks"):
        agent.act_batch(observations, masks[:2])
    empty = masks.copy()
    empty[1] = 0
    with pytest.raises(ValueError, match="action mask row 1 has no legal action"):
        agent.act_batch(observations, empty)
    with pytest.raises(ValueError, match="action mask row 0 has no legal action"):
        agent.act(observations[0], empty[1])


@pytest.mark.parametrize("make", [RuleAgent, RandomAgent], ids=["rule", "random"])
def test_an_empty_batch_gives_no_actions(make):
    actions = make(0).act_batch(np.zeros((0, OBS_SIZE), dtype=np.float32), np.zeros((0, NUM_ACTIONS), dtype=np.int8))
    assert actions.shape == (0,) and actions.dtype == np.int64


def test_check_batch_needs_observations():
    with pytest.raises(ValueError, match="observations are required"):
        check_batch(None, np.ones((1, NUM_ACTIONS), dtype=np.int8))


def test_an_agent_written_for_one_observation_gets_a_row_by_row_batch(decisions):
    class LastLegal(Agent):
        def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
            return int(np.flatnonzero(action_mask)[-1])

    observations, masks = decisions
    expected = [int(np.flatnonzero(m)[-1]) for m in masks]
    assert LastLegal().act_batch(observations, masks).tolist() == expected


def test_an_agent_class_without_act_batch_or_act_is_rejected():
    with pytest.raises(TypeError, match="must implement act_batch"):
        type("Nothing", (Agent,), {})



class FloatRows(Agent):
    """Answers each observation with a float; the base class's ``act_batch`` gathers them."""

    name = "floats"

    def act(self, observation, action_mask):
        """The first legal action, plus a half."""
        return float(np.argmax(action_mask)) + 0.5


class FloatBatch(Agent):
    """Answers a batch with floats; the base class's ``act`` takes the first."""

    name = "floats"

    def act_batch(self, observations, action_masks):
        """The first legal action of each row, plus a half."""
        return np.argmax(action_masks, axis=1) + 0.5


@pytest.mark.parametrize("agent", [FloatRows(), FloatBatch()], ids=["act", "act_batch"])
def test_an_agent_returning_non_integer_actions_is_named_not_truncated(agent):
    masks = np.zeros((2, NUM_ACTIONS), dtype=np.int8)
    masks[:, 3] = 1
    with pytest.raises(IllegalActionError, match="agent 'floats' returned float64 actions"):
        if isinstance(agent, FloatRows):
            agent.act_batch(np.zeros((2, OBS_SIZE), dtype=np.float32), masks)
        else:
            agent.act(np.zeros(OBS_SIZE, dtype=np.float32), masks[0])
    assert as_actions([3, 4], 2, "x").dtype == np.int64 and as_actions(np.zeros(0, np.int8), 0, "x").shape == (0,)
    with pytest.raises(IllegalActionError, match=r"x returned int64 actions of shape \(1,\), not 2 integer"):
        as_actions([3], 2, "x")
