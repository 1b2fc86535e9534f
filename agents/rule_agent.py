"""RuleAgent: a hand-written heuristic (placeholder: first legal action, being written now)."""

from __future__ import annotations

import numpy as np

from .base import Agent


class RuleAgent(Agent):
    """Heuristic player (placeholder)."""

    name = "rule"

    def __init__(self, seed: int | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """First legal action (placeholder)."""
        return int(np.flatnonzero(action_mask)[0])
