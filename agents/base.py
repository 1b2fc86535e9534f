"""The one interface every player implements: observation and mask in, action out."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Agent(ABC):
    """A player that chooses an action from what its observation holds, and nothing else."""

    #: Short name used on the command line and in tables (``rule``, ``random``).
    name: str = "agent"

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Return a legal action id given the observation vector and the int8 action mask."""

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Same as ``act``."""
        return self.act(observation, action_mask)
