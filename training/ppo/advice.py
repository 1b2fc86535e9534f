"""RuleAgent's advice as an input: the learner's observations with RuleAgent's choice appended.

A policy that sees what RuleAgent would do starts, after cloning, as RuleAgent itself (it learns to
copy its last 79 inputs in a few hundred steps, where imitating the heuristic from the observation
alone plateaued near 82% agreement and played 100 points a game worse), and PPO then learns where
to deviate. ``wizard_env.agents.ppo_agent.advice_features`` builds the same input when the agent plays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnvWrapper

from wizard_env.agents.ppo_agent import advice_features
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.actions import NUM_ACTIONS

if TYPE_CHECKING:
    from wizard_env.envs.mixed_vec_env import MixedVecEnv
    from wizard_env.envs.vec_env import WizardVecEnv


def with_advice(adviser: RuleAgent, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Observations [k, OBS_SIZE] with the adviser's one-hot choice appended: [k, OBS_SIZE + NUM_ACTIONS]."""
    return np.concatenate([observations, advice_features(adviser, observations, masks)], axis=1)


class AdviceVecEnv(VecEnvWrapper):
    """A learner VecEnv whose observations carry RuleAgent's choice for the learner's decision."""

    def __init__(self, venv: WizardVecEnv | MixedVecEnv, seed: int | np.random.Generator | None = None):
        low, high = venv.observation_space.low, venv.observation_space.high
        space = spaces.Box(np.concatenate([low, np.zeros(NUM_ACTIONS, np.float32)]),
                           np.concatenate([high, np.ones(NUM_ACTIONS, np.float32)]), dtype=np.float32)
        super().__init__(venv, observation_space=space)
        self.learner_env = venv  # self.venv, typed: it has action_masks()
        self.adviser = RuleAgent(seed=seed)

    def _advise(self, observations: np.ndarray) -> np.ndarray:
        return with_advice(self.adviser, observations, self.learner_env.action_masks())

    def reset(self) -> np.ndarray:
        """The learners' first views, with advice."""
        return self._advise(self.learner_env.reset())

    def step_wait(self):
        """A step of the wrapped VecEnv, with advice on the new views (terminal views get none: no decision follows)."""
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                info["terminal_observation"] = np.concatenate([info["terminal_observation"], np.zeros(NUM_ACTIONS, np.float32)])
        return self._advise(obs), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The wrapped VecEnv's masks."""
        return self.learner_env.action_masks()
