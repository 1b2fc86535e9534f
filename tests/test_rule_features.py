"""RuleAgent's numbers by action (agents/rule_features.py): where they are, what they mean, and that they agree with its choices."""

from __future__ import annotations

import numpy as np
import pytest

from wizard_env.agents import RuleAgent
from wizard_env.agents.rule_features import FEATURES, action_features
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.cards import JESTER, WIZARD
from wizard_env.engine.game import BID_OFFSET, CARD_OFFSET, NUM_ACTIONS, TRUMP_OFFSET, Phase
from wizard_env.engine.observation import observe
from wizard_env.engine.rules import Rules

from test_rule_agent import spot


def positions(players: int, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of every decision of ``games`` games played by RuleAgents."""
    batch, agent = WizardBatch(Rules.make(players), games, seed=seed, autoreset=False), RuleAgent(seed=seed)
    seen, masks = [], []
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        o, m = batch.observe(live), batch.legal_masks(live)
        seen.append(o)
        masks.append(m)
        batch.step(agent.act_batch(o, m), live)
    return np.concatenate(seen), np.concatenate(masks)


@pytest.fixture(scope="module")
def played() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    observations, masks = positions(4, 6, seed=3)
    return observations, masks, action_features(observations, masks).reshape(len(masks), FEATURES, NUM_ACTIONS)


def test_numbers_only_for_legal_actions_of_real_choices(played):
    observations, masks, features = played
    assert features.dtype == np.float32
    assert not features[np.broadcast_to((masks == 0)[:, None, :], features.shape)].any()
    forced = masks.sum(axis=1) == 1
    assert forced.any() and not features[forced].any()
    plays = (masks[:, CARD_OFFSET:TRUMP_OFFSET].sum(axis=1) > 1)
    assert (features[plays][:, :, CARD_OFFSET:TRUMP_OFFSET] != 0).any(axis=(1, 2)).all()


def test_a_batch_gives_what_its_rows_give_one_by_one(played):
    observations, masks, features = played
    rows = np.random.default_rng(0).choice(len(masks), 40, replace=False)
    for row in rows:
        alone = action_features(observations[row:row + 1], masks[row:row + 1]).reshape(FEATURES, NUM_ACTIONS)
        np.testing.assert_array_equal(alone, features[row])


def test_bid_numbers_are_a_distribution_and_rule_agent_bids_their_best_expected_score(played):
    observations, masks, features = played
    bids = np.flatnonzero((masks[:, BID_OFFSET:CARD_OFFSET].sum(axis=1) > 1) & features[:, 0, BID_OFFSET:CARD_OFFSET].any(axis=1))
    assert bids.size > 20
    exact = features[bids, 0, BID_OFFSET:CARD_OFFSET]
    assert ((exact >= 0) & (exact <= 1)).all()
    np.testing.assert_allclose(exact.sum(axis=1), 1, atol=1e-5)  # open bidding, no total rule: every bid is legal
    expected = np.where(masks[bids, BID_OFFSET:CARD_OFFSET] != 0, features[bids, 1, BID_OFFSET:CARD_OFFSET], -np.inf)
    chosen = RuleAgent(seed=0).act_batch(observations[bids], masks[bids]) - BID_OFFSET
    top = expected.max(axis=1)
    assert np.allclose(expected[np.arange(len(bids)), chosen], top, atol=1e-6)


def test_card_numbers_follow_the_trick():
    # A Wizard into an open trick holds it for sure; a Jester behind a suited card never does.
    game = spot(["Wiz", "Jes", "2c", "Kd"], "5h", trick=("9s",), players=3)
    features = action_features(observe(game, game.current)[None], game.legal_mask()[None]).reshape(FEATURES, NUM_ACTIONS)
    assert features[0, CARD_OFFSET + WIZARD] == 1.0
    assert features[0, CARD_OFFSET + JESTER] == 0.0
    assert features[1, CARD_OFFSET + JESTER] == -1.0  # a Jester's strength
    # Last to play: the trump-less 2c and Kd cannot beat the spade led, so neither holds.
    last = spot(["2c", "Kd", "Wiz"], "5h", trick=("9s", "3s"), players=3)
    f = action_features(observe(last, last.current)[None], last.legal_mask()[None]).reshape(FEATURES, NUM_ACTIONS)
    assert f[0, CARD_OFFSET + WIZARD] == 1.0
    held = [c for c in np.flatnonzero(last.legal_mask()[CARD_OFFSET:TRUMP_OFFSET]) if c != WIZARD]
    assert held and all(f[0, CARD_OFFSET + c] == 0.0 for c in held)


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="observations must have shape"):
        action_features(np.zeros((2, 10), dtype=np.float32), np.zeros((2, NUM_ACTIONS), dtype=np.int8))
    observations, masks = positions(3, 1, seed=0)
    with pytest.raises(ValueError, match="2 observations but 3 action masks"):
        action_features(observations[:2], masks[:3])
