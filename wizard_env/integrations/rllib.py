"""Wizard for Ray RLlib's new API stack: the AEC env as a turn-based ``MultiAgentEnv`` with action masks.

    from ray.tune.registry import register_env
    from .rllib import WizardMultiAgentEnv
    register_env("wizard", lambda config: WizardMultiAgentEnv(config))
    # PPOConfig().environment("wizard", env_config={"num_players": 4, "rounds": 3}) ...

Needs the ``rllib`` extra (``pip install -c constraints.txt -e '.[rllib]'``); ``import wizard_env``
never imports Ray. ``wizard train --backend rllib`` (``wizard_env.training.rllib.rllib_train``) uses this env.

What RLlib sees
---------------
* Agents ``player_0 .. player_{n-1}``; each ``step`` takes the action of the one agent to act, and
  returns the observation of the next one (one agent at a time, as the AEC env).
* Observations: ``{"observations": <the AEC env's "observation" vector>, "action_mask": <int8 mask>}``:
  the keys RLlib's action-masking RLModule (``ActionMaskingTorchRLModule``) reads.
* Rewards: each agent's reward since its last turn, returned with its next observation (what the AEC
  env's ``last()`` gives), times ``reward_scale``; a round's scores thus reach every seat at its next
  turn, and the last round's at the end of the game, when every agent gets its final observation with
  ``terminated`` True. Nothing is ever truncated.
* ``env_config`` holds the AEC env's keyword arguments (``num_players``, ``rounds``, ``bidding``, ...,
  ``reward``) and ``reward_scale`` (default 1). ``illegal_action`` defaults to ``"terminate"``, so that
  RLlib's env pre-check, which steps ``action_space.sample()``, gets a game ended with the documented
  penalty instead of an exception; with masking no illegal action is taken in training, and each
  agent's info says ``illegal_action`` if one was.
* Seeds: ``reset(seed=s)`` plays game seed ``s``; a ``reset()`` without one draws the next game seed
  from the last seed given (as the AEC env does), so an env runner seeded once plays a fixed sequence.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from gymnasium import spaces

from wizard_env.envs.aec import raw_env
from wizard_env.util.extras import MissingExtra, install_command

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError:
    raise MissingExtra(f"wizard_env.integrations.rllib needs ray[rllib], from the rllib extra: {install_command('rllib')}") from None

#: The observation keys RLlib's action-masking RLModule reads.
OBS_KEY, MASK_KEY = "observations", "action_mask"


class WizardMultiAgentEnv(MultiAgentEnv):
    """The Wizard AEC env as an RLlib ``MultiAgentEnv`` (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | None = None):
        super().__init__()
        kwargs = dict(config or {})  # RLlib passes an EnvContext, a dict with the runner's index besides
        self.reward_scale = float(kwargs.pop("reward_scale", 1.0))
        if not np.isfinite(self.reward_scale) or self.reward_scale <= 0:
            raise ValueError(f"reward_scale must be a finite number above 0, not {self.reward_scale!r}")
        kwargs.setdefault("illegal_action", "terminate")
        self.env = raw_env(**kwargs)
        self.possible_agents = list(self.env.possible_agents)
        self.agents: list[str] = []
        inner = self.env.observation_spaces[self.possible_agents[0]]
        space: spaces.Space = spaces.Dict({OBS_KEY: inner["observation"], MASK_KEY: inner["action_mask"]})
        self.observation_spaces = {agent: space for agent in self.possible_agents}
        self.action_spaces = {agent: self.env.action_space(agent) for agent in self.possible_agents}
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)

    @property
    def rules(self):
        """The game's ``Rules``."""
        return self.env.rules

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """A new game: the first agent to act, its observation and info."""
        self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        agent = self.env.agent_selection
        return {agent: self._observe(agent)}, {agent: self.env.infos[agent]}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Play the acting agent's action; the next agent's (or, at the end, every agent's) observation and reward."""
        if self.env.game is None or not self.env.agents:
            raise RuntimeError("no game in progress: call reset() to start one")
        agent = self.env.agent_selection
        if agent not in action_dict:
            raise ValueError(f"it is {agent}'s turn, but the actions are for {sorted(action_dict)}")
        self.env.step(int(action_dict[agent]))
        obs, rewards, terminateds, truncateds, infos = {}, {}, {}, {}, {}
        while self.env.agents:  # one agent to act, or, once the game is over, every agent in turn
            agent = self.env.agent_selection
            _, reward, terminated, truncated, info = self.env.last(observe=False)
            obs[agent] = self._observe(agent)
            rewards[agent] = float(reward) * self.reward_scale
            terminateds[agent], truncateds[agent], infos[agent] = terminated, truncated, info
            if not (terminated or truncated):
                break
            self.env.step(None)
        terminateds["__all__"], truncateds["__all__"] = not self.env.agents, False
        return obs, rewards, terminateds, truncateds, infos

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        inner = self.env.observe(agent)
        return {OBS_KEY: inner["observation"], MASK_KEY: inner["action_mask"]}

    def render(self) -> str | np.ndarray | None:
        """The AEC env's rendering (its ``render_mode``)."""
        return self.env.render()

    def close(self) -> None:
        """Nothing to release."""
