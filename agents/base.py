"""The one interface every player implements: a batch of observations and masks in, one action per row out."""

from __future__ import annotations

from abc import ABC

import numpy as np

from wizard_env.engine.actions import IllegalActionError
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE


def check_masks(action_masks: np.ndarray) -> np.ndarray:
    """The masks as a [k, NUM_ACTIONS] array; ValueError for another shape or a row with no legal action."""
    masks = np.asarray(action_masks)
    if masks.ndim != 2 or masks.shape[1] != NUM_ACTIONS:
        raise ValueError(f"action masks must have shape (k, {NUM_ACTIONS}), not {masks.shape}")
    empty = ~masks.any(axis=1)
    if empty.any():
        rows = np.flatnonzero(empty)
        more = f" (and {len(rows) - 1} more rows)" if len(rows) > 1 else ""
        raise ValueError(f"action mask row {rows[0]} has no legal action{more}")
    return masks


def check_batch(observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Observations [k, OBS_SIZE] and masks [k, NUM_ACTIONS] with the same k; ValueError naming any problem."""
    if observations is None:
        raise ValueError("observations are required: an array of shape (k, OBS_SIZE)")
    observations = np.asarray(observations)
    if observations.ndim != 2 or observations.shape[1] != OBS_SIZE:
        raise ValueError(f"observations must have shape (k, {OBS_SIZE}), not {observations.shape}")
    masks = check_masks(action_masks)
    if len(masks) != len(observations):
        raise ValueError(f"{len(observations)} observations but {len(masks)} action masks")
    return observations, masks


def as_actions(actions: object, count: int, who: str) -> np.ndarray:
    """What an agent returned as ``count`` int64 action ids; IllegalActionError naming ``who`` for a wrong
    number or a non-integer type (a float would otherwise be truncated to some action silently)."""
    ids = np.asarray(actions)
    if ids.shape != (count,) or (ids.dtype.kind not in "iu" and ids.size):
        raise IllegalActionError(f"{who} returned {ids.dtype} actions of shape {ids.shape}, not {count} integer action ids")
    return ids.astype(np.int64, copy=False)


class Agent(ABC):
    """A player that chooses actions from what its observations hold, and nothing else.

    An agent implements ``act_batch``, vectorised over the rows (``check_batch`` validates its input);
    ``act`` is a batch of one. An agent written for one observation at a time may implement ``act``
    instead, and gets a row-by-row ``act_batch``.
    """

    #: Short name used on the command line and in tables (``rule``, ``random``).
    name: str = "agent"
    #: Whether the agent reads the true deal, every hidden card (``oracle``, for measurement only): the evaluator alone
    #: hands it the games, through ``act_hidden``; every other agent plays from what its seat sees.
    sees_hidden: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.act_batch is Agent.act_batch and cls.act is Agent.act:
            raise TypeError(f"agent class {cls.__name__} must implement act_batch (or act)")

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Legal actions [k] int64 for observations [k, OBS_SIZE] float32 and int8 masks [k, NUM_ACTIONS]."""
        observations, masks = check_batch(observations, action_masks)
        return as_actions([self.act(o, m) for o, m in zip(observations, masks)], len(masks), f"agent {self.name!r}")

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A legal action id given one observation vector and its int8 action mask."""
        batch = None if observation is None else np.asarray(observation)[None]
        return int(as_actions(self.act_batch(batch, np.asarray(action_mask)[None]), 1, f"agent {self.name!r}")[0])

    def act_games(self, batch, games: np.ndarray) -> np.ndarray:
        """Actions for games ``games`` of a ``WizardBatch``, each for its acting seat: ``act_batch`` on their
        observations and masks. A search agent (``pimc``) overrides it to read the games themselves, through
        ``wizard_env.engine.determinize``; whoever plays agents on a batch calls this, so both kinds fit."""
        return self.act_batch(batch.observe(games), batch.legal_masks(games))

    def act_hidden(self, batch, games: np.ndarray) -> np.ndarray:
        """Actions for games ``games`` of a ``WizardBatch``, reading their hidden cards: only for an agent that declares
        ``sees_hidden``, and only the evaluator (``training.evaluation.evaluate.play_games``) calls it."""
        raise ValueError(f"agent {self.name!r} does not see hidden cards: it plays through act_games")

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Same as ``act``."""
        return self.act(observation, action_mask)
