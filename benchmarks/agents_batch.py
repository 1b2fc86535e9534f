"""Measure how many decisions per second the agents make, one batch of k observations at a time.

Usage::

    python benchmarks/agents_batch.py --players 4 --games 40 --seed 0

The observations come from whole games of RuleAgents on the single-game engine (every decision of
every seat, game seeds ``seed ..``). Each agent then decides batches of k of them, cycling through
the pool, for at least ``--seconds`` per size, and the rate is k over the median time of a call;
``act`` is the per-observation call (timed as batches of 64 calls), the peer of every batch size: the last row
of each agent is its batches' speed-up over ``act``, measured in the same run.
"""

from __future__ import annotations

import argparse

import numpy as np

from wizard_env.util.stopwatch import Stopwatch
from wizard_env.agents import Agent, RandomAgent, RuleAgent
from wizard_env.engine.game import WizardGame
from wizard_env.engine.observation import observe
from wizard_env.engine.rules import Rules

SIZES = (1, 16, 256, 4096)


def decision_pool(rules: Rules, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations [m, OBS_SIZE] and masks [m, NUM_ACTIONS] of every decision in ``games`` RuleAgent games."""
    observations, masks = [], []
    for game_seed in range(seed, seed + games):
        game = WizardGame(rules, game_seed)
        agents = [RuleAgent([game_seed, seat]) for seat in range(rules.num_players)]
        while not game.is_over:
            seat = game.current
            observations.append(observe(game, seat))
            masks.append(game.legal_mask())
            game.step(agents[seat].act(observations[-1], masks[-1]))
    return np.array(observations), np.array(masks)


def rate(decide, observations: np.ndarray, masks: np.ndarray, k: int, seconds: float) -> float:
    """Decisions per second of ``decide(observations[i:i+k], masks[i:i+k])``, cycling over the pool:
    k over the median time of one call (the median, so that other work on a shared machine counts little)."""
    if len(observations) < k:  # a small pool is repeated to fill one batch
        observations, masks = np.resize(observations, (k, observations.shape[1])), np.resize(masks, (k, masks.shape[1]))
    starts = range(0, len(observations) - k + 1, k)
    decide(observations[:k], masks[:k])  # warm up
    times: list[float] = []
    whole = Stopwatch()
    while whole.seconds < seconds:
        for start in starts:
            with Stopwatch() as call:
                decide(observations[start : start + k], masks[start : start + k])
            times.append(call.seconds)
    return k / float(np.median(times))


def per_observation(agent: Agent):
    """A batch decider that calls ``agent.act`` row by row (the per-observation speed)."""
    return lambda observations, masks: [agent.act(o, m) for o, m in zip(observations, masks)]


def main() -> None:
    """Build the pool of decisions and print the speed table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4, help="number of players, 3..6")
    parser.add_argument("--games", type=int, default=30, help="games that supply the observations")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game")
    parser.add_argument("--seconds", type=float, default=1.0, help="least time measured per entry")
    args = parser.parse_args()
    rules = Rules.make(args.players)
    with Stopwatch() as gathering:
        observations, masks = decision_pool(rules, args.games, args.seed)
    choices = (masks.sum(axis=1) > 1).mean()
    print(f"{len(observations)} decisions from {args.games} {args.players}-player games "
          f"({choices:.0%} with a choice), gathered in {gathering.seconds:.1f} s")
    print(f"{'decisions/s':<24}" + "".join(f"{'k=' + str(k):>12}" for k in SIZES) + f"{'act':>12}")
    contenders: list[tuple[str, Agent]] = [("RuleAgent", RuleAgent(0)), ("RandomAgent", RandomAgent(0))]
    for label, agent in contenders:
        rates = [rate(agent.act_batch, observations, masks, k, args.seconds) for k in SIZES]
        rates.append(rate(per_observation(agent), observations, masks, 64, args.seconds))
        print(f"{label:<24}" + "".join(f"{r:12,.0f}" for r in rates))
        print(f"{'  over act':<24}" + "".join(f"{r / rates[-1]:11.1f}x" for r in rates[:-1]))


if __name__ == "__main__":
    main()
