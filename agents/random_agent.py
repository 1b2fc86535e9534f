"""RandomAgent: a uniformly random legal action from a seeded generator."""

from __future__ import annotations

import numpy as np

from .base import Agent


class RandomAgent(Agent):
    """Plays a uniformly random legal action; its generator is seeded, never global."""

    name = "random"

    def __init__(self, seed: int | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A uniformly random legal action."""
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("RandomAgent: the action mask has no legal action")
        return int(self.rng.choice(legal))
