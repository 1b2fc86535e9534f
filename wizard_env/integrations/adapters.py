"""Each seat's rewards credited to its own turns, for libraries that record every agent's reward at every step.

In the AEC env a round's scores are paid on the step of whoever plays the round's last card, to every
agent; ``last()`` hands each agent its reward since its last turn at its next turn. Libraries that step a
PettingZoo AEC env as one stream of transitions (TorchRL's ``PettingZooWrapper``, Tianshou's
``PettingZooEnv``) record instead, at every step, every agent's reward of that step (``env.rewards``), and
the transition belongs to the agent that acted. A learner that reads only its own transitions' rewards then
misses every round score that another seat's card paid. ``turn_transitions`` regroups a recorded stream into
each seat's own turns: the reward of a turn is what that seat received from its action until its next
turn (or the episode's end), the same sums ``last()`` pays, moved back to the turn that earned them; and
the index of the seat's next turn, so a one-step learner bootstraps from the seat's own next observation,
not from the next player's. ``turn_returns`` adds them up into each turn's return.

Usage (every agent's reward of each step as recorded, whole episodes)::

    rewards, next_turn = turn_transitions(actors, step_rewards, episode_ends)
    returns = turn_returns(rewards, next_turn, gamma=1.0)

``examples/torchrl_ppo.py`` and ``wizard_env.integrations.tianshou_marl`` use it; ``docs/adapters.md`` has the details.
This module imports no RL library.
"""

from __future__ import annotations

import numpy as np

#: ``next_turn`` of a seat's last turn in its episode.
NO_NEXT_TURN = -1


def _check_stream(actors: np.ndarray, rewards: np.ndarray, episode_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three arrays as int, float and bool, or ValueError naming what does not fit."""
    actors = np.asarray(actors)
    rewards = np.asarray(rewards, dtype=np.float64)
    ends = np.asarray(episode_ends)
    if actors.ndim != 1 or not (np.issubdtype(actors.dtype, np.integer) or actors.size == 0):
        raise ValueError(f"actors must be a 1-d array of seat numbers, not {actors.dtype} of shape {actors.shape}")
    steps = actors.shape[0]
    if rewards.ndim != 2 or rewards.shape[0] != steps:
        raise ValueError(f"rewards must be [steps, seats] = [{steps}, n], not shape {rewards.shape}")
    if ends.shape != (steps,) or ends.dtype != np.bool_:
        raise ValueError(f"episode_ends must be a bool array of shape ({steps},), not {ends.dtype} of shape {ends.shape}")
    if steps and not (0 <= actors.min() and actors.max() < rewards.shape[1]):
        raise ValueError(f"actors must be seats 0..{rewards.shape[1] - 1}, got {actors.min()}..{actors.max()}")
    if steps and not ends[-1]:
        raise ValueError("the record must end with an episode end: record whole episodes "
                         "(a seat's reward after its last recorded turn is not known yet)")
    return actors.astype(np.int64), rewards, ends


def turn_transitions(actors: np.ndarray, rewards: np.ndarray, episode_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each step's reward for its actor, from its action to its next turn, and the index of that turn (-1: none).

    ``actors[t]`` is the seat that acted at step t, ``rewards[t, s]`` seat s's reward of step t (the AEC
    env's ``rewards`` after the step), ``episode_ends[t]`` is True where step t ended its episode.
    The record holds whole episodes in order. Over an episode, each seat's turn rewards add up to its
    step rewards, so no round score is lost.
    """
    actors, rewards, ends = _check_stream(actors, rewards, episode_ends)
    steps, seats = rewards.shape
    turn_reward = np.zeros(steps)
    next_turn = np.full(steps, NO_NEXT_TURN, dtype=np.int64)
    since = np.zeros(seats)  # each seat's rewards from the step after its next turn back to here
    upcoming = np.full(seats, NO_NEXT_TURN, dtype=np.int64)  # each seat's next turn after here
    for t in range(steps - 1, -1, -1):
        if ends[t]:  # step t is the last of its episode: nothing later belongs to it
            since[:] = 0.0
            upcoming[:] = NO_NEXT_TURN
        since += rewards[t]
        seat = actors[t]
        turn_reward[t] = since[seat]
        next_turn[t] = upcoming[seat]
        since[seat] = 0.0
        upcoming[seat] = t
    return turn_reward, next_turn


def turn_returns(turn_reward: np.ndarray, next_turn: np.ndarray, gamma: float = 1.0) -> np.ndarray:
    """Each turn's discounted return over its seat's own later turns (``turn_transitions``' output)."""
    turn_reward = np.asarray(turn_reward, dtype=np.float64)
    next_turn = np.asarray(next_turn)
    if turn_reward.ndim != 1 or next_turn.shape != turn_reward.shape:
        raise ValueError(f"turn_reward and next_turn must be 1-d of one length, not {turn_reward.shape} and {next_turn.shape}")
    later = next_turn[next_turn != NO_NEXT_TURN]
    if (later <= np.flatnonzero(next_turn != NO_NEXT_TURN)).any() or (later >= len(next_turn)).any():
        raise ValueError("next_turn must point to later steps of the record (or be -1)")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], not {gamma!r}")
    returns = turn_reward.copy()
    for t in range(len(returns) - 1, -1, -1):
        if next_turn[t] != NO_NEXT_TURN:
            returns[t] += gamma * returns[next_turn[t]]
    return returns
