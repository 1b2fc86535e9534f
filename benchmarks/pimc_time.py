"""Seconds per decision of the PIMC agent, deciding for one game at a time (as a player at a table would).

Usage::

    python benchmarks/pimc_time.py --samples 8 32 --games 4 --rounds standard --seed 0
    python benchmarks/pimc_time.py --agents pimc:samples=16 pimc:samples=16:rollout=ppo:top=3:infer=bids --games 2

Plays ``--games`` games of 4 players, ``pimc`` in seat 0 against three RuleAgents, one game at a time
(``play_games`` with a batch of one), and times every ``act_games`` call that had more than one legal
action to search. The agents are ``pimc:samples=N:rollout=R`` for each ``--samples`` N, or the ``pimc`` specs
of ``--agents`` (any option: ``top=``, ``infer=``). Prints, per agent, the mean, median, 90th percentile and largest wall time of a
decision, the mean CPU time (the process's, which other jobs on a shared machine do not inflate), and that CPU
time as a multiple of the first agent's, measured in the same run.
"""

from __future__ import annotations

import argparse

import numpy as np

from wizard_env.util.stopwatch import Stopwatch
from wizard_env.agents.pimc_agent import PIMCAgent
from wizard_env.agents.registry import make_agent
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.rules import Rules, parse_rounds
from wizard_env.training.evaluation.evaluate import play_games


def decision_times(spec: str, rules: Rules, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Wall and CPU seconds of each searched decision of the ``pimc`` spec in seat 0 over ``games`` games."""
    agent = make_agent(spec, seed)
    if not isinstance(agent, PIMCAgent):
        raise SystemExit(f"pimc_time.py: {spec!r} is not a pimc agent spec")
    times, cpu = [], []
    search = agent.act_games

    def timed(batch, games_):
        before = agent.searched
        with Stopwatch() as watch:
            actions = search(batch, games_)
        if agent.searched > before:
            times.append(watch.seconds)
            cpu.append(watch.cpu_seconds)
        return actions

    agent.act_games = timed
    others = [RuleAgent(seed=seed + s) for s in range(1, rules.num_players)]
    play_games(rules, [[agent, *others]] * games, list(range(seed, seed + games)), batch_size=1)
    return np.array(times), np.array(cpu)


def main() -> None:
    """Print the time per decision of each budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--rollout", default="rule")
    parser.add_argument("--agents", nargs="+", metavar="SPEC", help="pimc specs to time instead of --samples and --rollout")
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--rounds", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rules = Rules.make(args.players, parse_rounds(args.rounds))
    specs = args.agents or [f"pimc:samples={samples}:rollout={args.rollout}" for samples in args.samples]
    for spec in specs:  # compile and load before timing: one game of one round
        decision_times(spec, Rules.make(args.players, 1), 1, args.seed)
    print(f"{args.players} players, {rules.num_rounds} rounds, {args.games} games, one game at a time")
    print(f"| agent | decisions | mean s | median s | p90 s | max s | mean CPU s | CPU x `{specs[0]}` |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    first = None
    for spec in specs:
        t, cpu = decision_times(spec, rules, args.games, args.seed)
        first = cpu.mean() if first is None else first
        print(f"| `{spec}` | {len(t)} | {t.mean():.3f} | {np.median(t):.3f} | {np.quantile(t, 0.9):.3f} | {t.max():.3f} "
              f"| {cpu.mean():.3f} | {cpu.mean() / first:.2f} |")


if __name__ == "__main__":
    main()
