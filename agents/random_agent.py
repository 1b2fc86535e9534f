"""RandomAgent: a uniformly random legal action from a seeded generator."""

from __future__ import annotations

import numpy as np

from .base import Agent, check_batch, check_masks


class RandomAgent(Agent):
    """Plays a uniformly random legal action; its generator is seeded, never global."""

    name = "random"

    def __init__(self, seed: int | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray | None, action_masks: np.ndarray) -> np.ndarray:
        """A uniformly random legal action per row (the observations, which may be None, are not read)."""
        masks = check_masks(action_masks) if observations is None else check_batch(observations, action_masks)[1]
        legal = masks != 0
        picks = self.rng.integers(0, legal.sum(axis=1))  # the pick-th legal action of each row, from 0
        return (np.cumsum(legal, axis=1) <= picks[:, None]).sum(axis=1).astype(np.int64)
