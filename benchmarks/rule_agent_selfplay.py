"""Measure RuleAgent: self-play score and bid accuracy, and its margin over RandomAgent.

Usage::

    python benchmarks/rule_agent_selfplay.py --players 3 --games 1000 --seed 0
    python benchmarks/rule_agent_selfplay.py --players 4 --games 300 --vs-random-games 300

Game seeds are ``seed .. seed + games - 1``, so every figure can be measured again exactly.
Self-play: every seat is a RuleAgent; the mean is over all seats, its 95% interval over games.
Against random: one RuleAgent with RandomAgents in the other seats, then one RandomAgent with
RuleAgents, the lone agent's seat rotating with the game; the margin is the lone agent's score minus
the mean of the others in the same game.
"""

from __future__ import annotations

import argparse
from typing import Callable, Sequence

import numpy as np

from wizard_env.util.stopwatch import Stopwatch
from wizard_env.agents import Agent, RandomAgent, RuleAgent
from wizard_env.engine.rules import Rules
from wizard_env.engine.simulate import GameResult, mean_ci, play_game, summarise


def interval(values: np.ndarray) -> str:
    """``mean +- half-width of the 95% interval`` of a sample."""
    mean, half = mean_ci(values)
    return f"{mean:7.1f} +- {half or 0.0:5.1f}"


def run(rules: Rules, seeds: Sequence[int], make: Callable[[int, int], Agent]) -> list[GameResult]:
    """Play one game per seed, ``make(seat, game_seed)`` sitting in every seat."""
    return [play_game(rules, [make(seat, seed) for seat in range(rules.num_players)], seed) for seed in seeds]


def self_play(rules: Rules, seeds: Sequence[int]) -> None:
    """Print the self-play score, bid accuracy and win rate of RuleAgent, pooled and by seat."""
    n = rules.num_players
    with Stopwatch() as watch:
        results = run(rules, seeds, lambda seat, seed: RuleAgent(seed * n + seat))
    seconds = watch.seconds
    totals = np.array([r.totals for r in results], dtype=np.float64)
    by_seat = summarise(results)
    accuracy = np.mean([s.bid_accuracy for s in by_seat])
    print(f"self-play: {n} RuleAgents, {len(seeds)} games, {seconds / len(seeds):.3f} s per game")
    print(f"  mean score per player per game {interval(totals.mean(axis=1))}   bid accuracy {accuracy:.3f}")
    for seat, s in enumerate(by_seat):
        print(f"  seat {seat}: {s.mean_score:7.1f} +- {s.ci95:5.1f}   win rate {s.win_rate:.3f}   "
              f"bid accuracy {s.bid_accuracy:.3f}")


def lone_agent(rules: Rules, seeds: Sequence[int], lone: type[Agent], rest: type[Agent]) -> None:
    """Print the score of one ``lone`` agent among ``rest`` agents, and its margin over them."""
    n = rules.num_players
    results = run(rules, seeds, lambda seat, seed: (lone if seat == seed % n else rest)(seed * n + seat))
    seats = np.array([seed % n for seed in seeds])
    totals = np.array([r.totals for r in results], dtype=np.float64)
    mine = totals[np.arange(len(seeds)), seats]
    others = (totals.sum(axis=1) - mine) / (n - 1)
    won = np.mean([(seat in r.winners) / len(r.winners) for seat, r in zip(seats, results)])
    met = np.mean([r.bids_met[seat] / r.rounds for seat, r in zip(seats, results)])
    print(f"1 {lone.name} vs {n - 1} {rest.name}: {len(seeds)} games")
    print(f"  {lone.name} {interval(mine)}   {rest.name} (mean of the others) {interval(others)}")
    print(f"  margin {interval(mine - others)}   {lone.name} win rate {won:.3f}, bid accuracy {met:.3f}")


def main() -> None:
    """Parse the options and print every figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=3, help="number of players, 3..6")
    parser.add_argument("--games", type=int, default=1000, help="self-play games")
    parser.add_argument("--vs-random-games", type=int, default=300, help="games of each lone-agent match")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game")
    args = parser.parse_args()
    rules = Rules.make(args.players)
    self_play(rules, range(args.seed, args.seed + args.games))
    matches = range(args.seed, args.seed + args.vs_random_games)
    lone_agent(rules, matches, RuleAgent, RandomAgent)
    lone_agent(rules, matches, RandomAgent, RuleAgent)


if __name__ == "__main__":
    main()
