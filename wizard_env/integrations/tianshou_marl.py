"""Tianshou's multi-agent on-policy learning made turn-based: each seat learns from its own turns.

Usage (a shared PPO for every seat; needs ``pip install wizard-env[adapters]``)::

    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from wizard_env import wizard_v1
    from .tianshou_marl import TurnBasedOnPolicyAlgorithm

    env = PettingZooEnv(wizard_v1.env())
    algorithm = TurnBasedOnPolicyAlgorithm(algorithms=[ppo] * len(env.agents), env=env)
    # collect whole episodes (collector.collect(n_episode=...)), then algorithm.update(buffer, ...)

Why: Tianshou's ``PettingZooEnv`` records one transition per step, for the agent that acted, with
every agent's reward of that step (``env.rewards``) and the next player's observation as
``obs_next``. ``MultiAgentOnPolicyAlgorithm`` then hands each agent its own transitions, with its
column of the reward, and computes returns as if they followed each other. In Wizard a round's scores
are paid on the step of whoever plays the round's last card, so a seat would see only the round scores
that its own cards paid; its returns would run on into its next game; and its values would bootstrap
from another seat's view. Before Tianshou computes returns, ``TurnBasedOnPolicyAlgorithm`` rewrites the
collected transitions so that each seat's form an episode of its own
(``wizard_env.integrations.adapters.turn_transitions``): a turn's reward is the seat's reward from its action to its
next turn, ``obs_next`` is the seat's own next observation, and a seat's last turn of a game is
terminal. Nothing else of Tianshou changes: the wrapped algorithms (PPO, A2C, Reinforce, ...) and the
collector run as usual.

When every seat has the same algorithm object (a shared policy, ``[ppo] * n``), one update runs on all
seats' turns together; Tianshou would run it once per seat, each after the others had changed the
weights that its old log-probabilities were computed with.

The buffer must hold whole episodes in the order they were played: collect with ``n_episode`` from one
env at a time (one ``DummyVectorEnv`` slot) and reset the buffer after each update, as on-policy
training does. The rewrite is in place, so the buffer's rewards, ends and next observations are the
turn-based ones after an update.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .adapters import NO_NEXT_TURN, turn_transitions
from wizard_env.util.extras import MissingExtra, install_command

try:
    from tianshou.algorithm.algorithm_base import TrainingStats
    from tianshou.algorithm.multiagent.marl import MapTrainingStats, MultiAgentOnPolicyAlgorithm
    from tianshou.data import Batch, ReplayBuffer
except ImportError as error:
    raise MissingExtra(f"wizard_env.integrations.tianshou_marl needs tianshou, from the adapters extra: {install_command('adapters')}") from error


class TurnBasedOnPolicyAlgorithm(MultiAgentOnPolicyAlgorithm):
    """``MultiAgentOnPolicyAlgorithm`` on each seat's own turns (see the module docstring)."""

    def _preprocess_batch(self, batch: Any, buffer: ReplayBuffer, indices: np.ndarray) -> Any:
        seat_of = self._dispatcher.agent_idx
        actors = np.array([seat_of[agent] for agent in batch.obs.agent_id], dtype=np.int64)
        rewards = np.asarray(batch.rew, dtype=np.float64)
        ends = np.logical_or(batch.terminated, batch.truncated)
        if len(indices) and len(buffer.unfinished_index()):
            raise ValueError("the buffer holds an unfinished episode: collect whole episodes (n_episode) from one env")
        turn_reward, next_turn = turn_transitions(actors, rewards, ends)
        own = np.zeros_like(rewards)
        own[np.arange(len(actors)), actors] = turn_reward  # the dispatcher gives each seat its column
        last_turn = next_turn == NO_NEXT_TURN
        has_next = np.flatnonzero(~last_turn)
        buffer.rew[indices] = own.astype(buffer.rew.dtype)
        buffer.terminated[indices] = last_turn
        buffer.truncated[indices] = False
        buffer.done[indices] = last_turn
        buffer.obs_next[indices[has_next]] = buffer.obs[indices[next_turn[has_next]]]
        return super()._preprocess_batch(buffer[indices], buffer, indices)

    def _update_with_batch(self, batch: Any, batch_size: int | None, repeat: int) -> MapTrainingStats:
        algorithms = list(self._dispatcher.algorithms.values())
        if any(a is not algorithms[0] for a in algorithms):
            return super()._update_with_batch(batch, batch_size, repeat)
        turns = [batch[agent] for agent in self._dispatcher.algorithms if len(batch[agent].get_keys())]
        stats: TrainingStats = algorithms[0]._update_with_batch(Batch.cat(turns), batch_size, repeat)
        return MapTrainingStats({"shared": stats})
