"""wizard_env.training.ppo.export: a user's own MaskablePPO model becomes a checkpoint that plays the same actions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from wizard_env.agents.ppo_agent import PPOAgent, load_checkpoint  # noqa: E402
from wizard_env.training.ppo.export import export_model  # noqa: E402
from wizard_env import WizardBatch, WizardVecEnv  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402

from helpers import random_legal  # noqa: E402


def decisions(rules, count: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of every phase, from random games."""
    batch, rng = WizardBatch(rules, batch_size=16, seed=3), np.random.default_rng(3)
    observations, masks = [], []
    while sum(len(m) for m in masks) < count:
        observations.append(batch.observe())
        masks.append(batch.legal_masks())
        batch.step(random_legal(masks[-1], rng))
    return np.concatenate(observations), np.concatenate(masks)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_an_exported_model_plays_the_actions_of_the_model(tmp_path: Path, activation: str):
    import torch

    env = WizardVecEnv(8, seed=0, num_players=4, rounds=3, reward_scale=0.01)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=32, seed=0, policy_kwargs={
        "net_arch": [32, 16], "activation_fn": {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[activation]})
    model.learn(64)
    model.save(tmp_path / "mine.zip")
    path = export_model(tmp_path / "mine.zip", tmp_path / "mine.npz", env.rules)
    config, _ = load_checkpoint(path)
    assert config["hidden"] == [32, 16] and config["activation"] == activation and not config["advice"]
    observations, masks = decisions(env.rules)
    want, _ = model.predict(observations, action_masks=masks.astype(bool), deterministic=True)
    got = PPOAgent.load(path).act_batch(observations, masks)
    assert len(set(want.tolist())) > 3  # bids, cards and trump: not one action everywhere
    np.testing.assert_array_equal(got, want)


def test_an_exported_model_plays_on_the_command_line(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = WizardVecEnv(4, seed=1, num_players=3, rounds=5)
    model = MaskablePPO("MlpPolicy", env, n_steps=4, batch_size=16, seed=1)
    export_model(model, "mine.npz", env.rules)
    assert main(["eval", "--players", "3", "--rounds", "5", "--agents", "ppo:mine.npz,rule,rule", "--games", "3",
                 "--out", "eval", "--quiet"]) == 0
    assert "ppo:mine.npz" in capsys.readouterr().out


def test_a_model_of_another_observation_is_refused_and_nothing_written(tmp_path: Path):
    import gymnasium as gym
    from sb3_contrib.common.wrappers import ActionMasker

    other = ActionMasker(gym.make("CartPole-v1"), lambda env: np.ones(2, dtype=bool))
    with pytest.raises(ValueError, match="reads 4 inputs"):
        export_model(MaskablePPO("MlpPolicy", other, n_steps=8, batch_size=8), tmp_path / "x.npz", WizardVecEnv(1).rules)
    assert not list(tmp_path.iterdir())
