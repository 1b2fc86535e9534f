"""The compiled forward pass of PPOAgent's network: the logits of the layers written out in numpy, row by row."""

from __future__ import annotations

import numpy as np
import pytest

from wizard_env.agents.ppo_agent import FORMAT, PPOAgent
from wizard_env.agents.ppo_network import _nonzeros, best_legal, padded_layers
from wizard_env.agents.rule_features import FEATURES
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE, OBS_VERSION
from wizard_env.engine.rules import Rules


def network(hidden: list[int], inputs: int, seed: int) -> dict[str, np.ndarray]:
    """Actor weights in MaskablePPO's layout, drawn at random."""
    rng = np.random.default_rng(seed)
    sizes = [inputs, *hidden, NUM_ACTIONS]
    names = [f"mlp_extractor.policy_net.{2 * i}" for i in range(len(hidden))] + ["action_net"]
    weights = {}
    for name, (a, b) in zip(names, zip(sizes, sizes[1:])):
        weights[f"{name}.weight"] = (rng.normal(size=(b, a)) / np.sqrt(a)).astype(np.float32)
        weights[f"{name}.bias"] = rng.normal(size=b).astype(np.float32)
    return weights


def positions(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks along random four-player games (bids and cards)."""
    batch, rng = WizardBatch(Rules.make(4, [1, 3, 6]), 8, seed=seed), np.random.default_rng(seed)
    obs, masks = [], []
    for _ in range(12):
        o, m = batch.observe(), batch.legal_masks()
        obs.append(o), masks.append(m)
        batch.step(np.array([rng.choice(np.flatnonzero(row)) for row in m]))
    return np.concatenate(obs), np.concatenate(masks)


@pytest.mark.parametrize("hidden", [[20, 12], [40], [16, 24, 8]])
def test_the_logits_are_the_layers_written_out_with_advice_features_and_bonus(hidden):
    inputs = OBS_SIZE + NUM_ACTIONS * (1 + FEATURES)
    weights = network(hidden, inputs, seed=len(hidden))
    config = {"format": FORMAT, "hidden": hidden, "activation": "relu", "learn": "both", "obs_version": OBS_VERSION,
              "advice": True, "features": True, "advice_bonus": 0.5}
    agent = PPOAgent(config, weights, seed=1)
    obs, masks = positions()
    choice, numbers = PPOAgent(config, weights, seed=1).rule.act_with_numbers(obs, masks)
    x = np.concatenate([obs, np.eye(NUM_ACTIONS)[choice], numbers], axis=1).astype(np.float64)
    for i in range(len(hidden)):
        layer = f"mlp_extractor.policy_net.{2 * i}"
        x = np.maximum(x @ weights[f"{layer}.weight"].T.astype(np.float64) + weights[f"{layer}.bias"], 0)
    expected = x @ weights["action_net.weight"].T.astype(np.float64) + weights["action_net.bias"]
    expected[np.arange(len(x)), choice] += 0.5
    logits = agent.logits(obs, masks)
    assert logits.dtype == np.float32 and logits.shape == (len(obs), NUM_ACTIONS)
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4)
    actions = agent.act_batch(obs, masks)
    choices = (masks != 0).sum(axis=1) > 1
    assert np.array_equal(actions[choices], np.where(masks != 0, logits, -np.inf).argmax(axis=1)[choices])


def test_a_batch_gives_bit_for_bit_what_its_rows_give_one_by_one():
    weights = network([24, 16], OBS_SIZE + NUM_ACTIONS * (1 + FEATURES), seed=3)
    config = {"format": FORMAT, "hidden": [24, 16], "activation": "relu", "learn": "both", "obs_version": OBS_VERSION,
              "advice": True, "features": True}
    agent = PPOAgent(config, weights, seed=2)
    obs, masks = positions(seed=4)
    logits = agent.logits(obs, masks)
    assert all(np.array_equal(agent.logits(obs[i:i + 1], masks[i:i + 1])[0], logits[i]) for i in range(0, len(obs), 7))
    actions = agent.act_batch(obs, masks)
    assert [agent.act(o, m) for o, m in zip(obs[::5], masks[::5])] == actions[::5].tolist()


def test_nonzeros_lists_every_nonzero_entry_in_order():
    rng = np.random.default_rng(0)
    for length in (0, 1, 7, 8, 9, 61, 1544):
        x = np.where(rng.random(length) < 0.1, rng.normal(size=length), 0).astype(np.float32)
        x[rng.random(length) < 0.05] = -0.0  # a negative zero is a zero
        index, value = np.zeros(length + 3, dtype=np.int64), np.zeros(length + 3, dtype=np.float32)
        index[:2], value[:2] = (5, 6), (1.0, 2.0)
        count = _nonzeros(x, 100, index, value, 2)
        assert count == 2 + np.count_nonzero(x)
        assert np.array_equal(index[2:count], 100 + np.flatnonzero(x)) and np.array_equal(value[2:count], x[x != 0])
        assert index[:2].tolist() == [5, 6]


def test_padded_layers_keep_the_product_and_pad_with_zeros():
    rng = np.random.default_rng(1)
    w, b = rng.normal(size=(79, 21)).astype(np.float32), rng.normal(size=79).astype(np.float32)
    (weight,), (bias,) = padded_layers([(w, b)])
    assert weight.shape == (32, 80) and bias.shape == (80,) and weight.flags.c_contiguous
    assert np.array_equal(weight[:21, :79], w.T) and not weight[21:].any() and not weight[:, 79:].any() and bias[79] == 0


def test_best_legal_takes_the_highest_legal_logit_and_the_lowest_id_on_a_tie():
    logits = np.array([[3.0, 1.0, 1.0, 0.5], [2.0, 2.0, 2.0, -1.0]], dtype=np.float32)
    legal = np.array([[False, True, True, True], [True, False, True, True], [True, True, True, True]])
    assert best_legal(logits, legal, np.array([0, 2])).tolist() == [1, 0]
    assert best_legal(logits, legal, np.array([1, 0])).tolist() == [0, 1]
