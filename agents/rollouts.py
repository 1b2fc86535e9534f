"""Rollouts: the value of every legal action of a decision, on copies of the games (no RL imports).

Each legal action is applied on its own copy of the game (``WizardBatch.copy_games``, every copy of
every game stepped in lockstep) and the rest of the round is played out by a rollout agent at every
seat; the acting seat's round score is that action's value in that deal. ``search_values`` averages
these values over determinized deals (what ``pimc`` chooses by), and ``wizard train-values`` fits a
network to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from wizard_env.engine.actions import NUM_ACTIONS, IllegalActionError
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.determinize import determinize

from .base import Agent

if TYPE_CHECKING:
    from .inference import BidInference


def rollout_values(batch: WizardBatch, games: np.ndarray, rollout: Agent) -> np.ndarray:
    """float32 [k, NUM_ACTIONS]: the acting seat's round score after each legal action of each game
    (the round played out by ``rollout`` at every seat); NaN for illegal actions."""
    masks = batch.legal_masks(games)
    rows, actions = np.nonzero(masks)
    seats = batch.current[games][rows]
    sim = batch.copy_games(games, masks.sum(axis=1))
    scores = np.full(len(rows), np.nan, dtype=np.float32)
    live = sim.all_games
    sim.apply(live, actions.astype(np.int64))
    while True:
        ended = live[sim.round_over[live]]
        scores[ended] = sim.round_scores[ended, seats[ended]]
        live = live[~sim.round_over[live]]
        if not live.size:
            break
        try:  # checked: an agent's illegal action would otherwise corrupt the copies' state
            sim.step(rollout.act_batch(sim.observe(live), sim.legal_masks(live)), live)
        except IllegalActionError as error:
            raise IllegalActionError(f"rollout agent {rollout.name!r}: {error}") from None
    values = np.full((len(games), NUM_ACTIONS), np.nan, dtype=np.float32)
    values[rows, actions] = scores
    return values


def search_values(batch: WizardBatch, games: np.ndarray, rollout: Agent, rng: np.random.Generator, samples: int,
                  inference: BidInference | None = None) -> np.ndarray:
    """float64 [k, NUM_ACTIONS]: each legal action's mean round score for the acting seat of each of ``games`` over
    ``samples`` determinizations of what that seat sees (``determinize``: never the hidden cards themselves), each
    played out by ``rollout``; NaN for illegal actions.

    ``inference``: draw ``samples * inference.oversample`` worlds and keep ``samples`` of them, drawn by the
    likelihood of the bids seen (``agents.inference``); a world kept twice counts twice in the mean.
    """
    seats = batch.current[games].astype(np.int64)
    if inference is None:
        worlds = determinize(batch, games, seats, rng, samples)  # game i's samples: rows i*s .. i*s + s - 1
        values = rollout_values(worlds, worlds.all_games, rollout).reshape(len(games), samples, NUM_ACTIONS)
        return values.astype(np.float64).mean(axis=1)  # a sample's legal actions are the game's: NaN elsewhere
    group = samples * inference.oversample
    worlds = determinize(batch, games, seats, rng, group)
    rows, weights = inference.select(worlds, seats, samples, rng)
    values = rollout_values(worlds, rows, rollout).astype(np.float64) * weights[:, None]
    mean = np.zeros((len(games), NUM_ACTIONS))
    np.add.at(mean, rows // group, values)  # NaN for the illegal actions, as every world of a game has them
    return mean
