"""rllib_export: RLlib's masked PPO module as PPOAgent's checkpoint layout, the same logits, other networks refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from wizard_env.agents.ppo_agent import PPOAgent
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.game import WizardGame
from wizard_env.engine.observation import observe
from wizard_env.integrations.rllib import WizardMultiAgentEnv
from wizard_env.engine.rules import Rules
from wizard_env.training.rllib.rllib_export import module_weights
from wizard_env.training.rllib.rllib_train import RLlibConfig, export_config


def build_module(seed: int = 0, **model) -> ActionMaskingTorchRLModule:
    torch.manual_seed(seed)
    env = WizardMultiAgentEnv({"num_players": 4})
    config = DefaultModelConfig(**{"fcnet_hiddens": [32, 16], "fcnet_activation": "relu", "vf_share_layers": False, **model})
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, observation_space=env.get_observation_space("player_0"),
                        action_space=env.get_action_space("player_0"), model_config=config).build()


def positions(count: int = 40, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the acting player along games of RuleAgents (every phase)."""
    rules, rule = Rules.make(4, 4), RuleAgent(seed=seed)
    observations, masks = [], []
    game_seed = seed
    while len(observations) < count:
        game = WizardGame(rules, game_seed)
        while not game.is_over and len(observations) < count:
            obs, mask = observe(game, game.current), game.legal_mask()
            observations.append(obs)
            masks.append(mask)
            game.step(rule(obs, mask), actor=game.current)
        game_seed += 1
    return np.array(observations), np.array(masks)


def module_logits(module, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        out = module.forward_inference({Columns.OBS: {"observations": torch.as_tensor(observations),
                                                      "action_mask": torch.as_tensor(masks, dtype=torch.float32)}})
    return out[Columns.ACTION_DIST_INPUTS].numpy()


def exported_agent(module, activation: str, hidden: list[int]) -> PPOAgent:
    weights, found_hidden, found_activation = module_weights(module)
    assert (found_hidden, found_activation) == (hidden, activation)
    cfg = RLlibConfig(hidden=hidden, activation=activation)
    return PPOAgent(export_config(cfg, Rules.make(4), steps=0), weights)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_the_export_gives_the_modules_logits_and_actions(activation: str):
    module = build_module(fcnet_activation=activation)
    agent = exported_agent(module, activation, [32, 16])
    observations, masks = positions()
    full = module_logits(module, observations, np.ones_like(masks))  # a mask of ones adds log(1) = 0
    np.testing.assert_allclose(agent.logits(observations), full, rtol=1e-5, atol=1e-5)
    masked = module_logits(module, observations, masks)
    np.testing.assert_allclose(masked[masks == 1], full[masks == 1], rtol=1e-6, atol=1e-6)
    assert (agent.act_batch(observations, masks) == masked.argmax(axis=1)).all()


def test_the_value_net_is_exported_too():
    module = build_module()
    weights, _, _ = module_weights(module)
    observations, _ = positions(8)
    x = observations
    for i in (0, 2):
        x = np.maximum(x @ weights[f"mlp_extractor.value_net.{i}.weight"].T + weights[f"mlp_extractor.value_net.{i}.bias"], 0)
    values = x @ weights["value_net.weight"].T + weights["value_net.bias"]
    with torch.no_grad():
        expected = module.compute_values({Columns.OBS: {"observations": torch.as_tensor(observations),
                                                        "action_mask": torch.ones(8, 79)}}).numpy()
    np.testing.assert_allclose(values[:, 0], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("model, why", [
    ({"vf_share_layers": True}, "separate actor and critic"),
    ({"head_fcnet_hiddens": [8]}, "one Linear layer"),
    ({"fcnet_use_layernorm": True}, "LayerNorm"),
    ({"fcnet_activation": "silu"}, "SiLU"),
])
def test_a_network_the_checkpoint_cannot_hold_is_refused(model: dict, why: str):
    with pytest.raises(ValueError, match=why):
        module_weights(build_module(**model))
