"""Your own stable-baselines3 model as a ``wizard-ppo/1`` checkpoint, for ``PPOAgent`` and the command line.

    from wizard_env.training.ppo.export import export_model
    export_model(model, "my-agent.npz", env.rules)     # a MaskablePPO, or the path of its model.save() zip
    # then: wizard eval --players 4 --agents ppo:my-agent.npz,rule,rule,rule

The model must be sb3-contrib's ``MaskablePPO`` with the ``MlpPolicy`` (ReLU or Tanh layers) trained on
``WizardVecEnv`` or ``WizardSingleAgentEnv`` (the observation vector), or on ``wizard_env.training.ppo.advice.AdviceVecEnv``
(the observation and RuleAgent's choice). The checkpoint is written by the code that writes
``wizard train``'s checkpoints; the agent plays the argmax of the masked logits, as
``model.predict(..., deterministic=True)`` does.
"""

from __future__ import annotations

import os
from pathlib import Path

from wizard_env.agents.ppo_agent import LEARNED_PHASES, PPOAgent, save_checkpoint
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE
from wizard_env.engine.rules import Rules

from .train import TrainConfig, checkpoint_config, policy_weights

_POLICY = "mlp_extractor.policy_net"


def export_model(model, path: str | os.PathLike, rules: Rules, learn: str = "both") -> Path:
    """Write ``model``'s policy as a checkpoint at ``path``; return the path.

    ``rules``: the game it was trained on (``env.rules``); ``learn``: the phases it decides, as the env's
    ``learn`` option (RuleAgent plays the others). ValueError for a model this format cannot hold.
    """
    import torch
    from sb3_contrib import MaskablePPO

    if learn not in LEARNED_PHASES:
        raise ValueError(f"learn must be one of {', '.join(LEARNED_PHASES)}, not {learn!r}")
    if isinstance(model, (str, os.PathLike)):
        model = MaskablePPO.load(os.fspath(model), device="cpu")
    if not isinstance(model, MaskablePPO):
        raise ValueError(f"expected a MaskablePPO model or the path of one, not {type(model).__name__}")
    names: dict[object, str] = {torch.nn.ReLU: "relu", torch.nn.Tanh: "tanh"}
    activation = names.get(getattr(model.policy, "activation_fn", None))
    if activation is None:
        raise ValueError("the model's policy must be MlpPolicy with ReLU or Tanh layers")
    weights = policy_weights(model)
    hidden, layer = [], 0
    while f"{_POLICY}.{layer}.bias" in weights:  # Linear layers at even indices, activations between them
        hidden.append(int(weights[f"{_POLICY}.{layer}.bias"].shape[0]))
        layer += 2
    inputs = weights[f"{_POLICY}.0.weight" if hidden else "action_net.weight"].shape[1]
    if inputs not in (OBS_SIZE, OBS_SIZE + NUM_ACTIONS):
        raise ValueError(f"the model reads {inputs} inputs; a wizard observation has {OBS_SIZE} "
                         f"({OBS_SIZE + NUM_ACTIONS} with RuleAgent's advice)")
    cfg = TrainConfig(learn=learn, mix=[rules.num_players], hidden=hidden, activation=activation,
                      advice=inputs == OBS_SIZE + NUM_ACTIONS)
    config = checkpoint_config(cfg, rules, model.num_timesteps)
    config["train"] = {"mix": cfg.mix, "exported_from": type(model).__name__}  # its training was not wizard train's
    PPOAgent(config, weights, source=str(path))  # refuses what it could not play, before anything is written
    return save_checkpoint(path, config, weights)
