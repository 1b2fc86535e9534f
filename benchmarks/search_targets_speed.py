"""Search targets against rollout targets: decisions valued per CPU second of ``wizard train-values``'s data.

Usage::

    python benchmarks/search_targets_speed.py                              # 4 players, 24 games, samples 4
    python benchmarks/search_targets_speed.py --players 3 --games 48 --search-samples 8 --turns 5

What a train-values worker does in iteration 0 (RuleAgent at every seat and in the rollouts, a quarter of the
decisions valued, ``collect_values``): once with rollout targets (every legal action played out in the true deal,
today's default) and once with search targets (``--targets search``: in ``--search-samples`` deals redrawn from what
the acting seat sees), taken in turn ``--turns`` times in this process (numba compiled before the clock starts,
numpy's BLAS on one thread as ``wizard`` runs it). Prints each turn, the median decisions per CPU second of each and
their ratio: the ratio is the figure (the machine's load moves both sides alike).
"""

from __future__ import annotations

import argparse
import time


def measure(rules, games: int, seed: int, search_samples: int) -> tuple[int, float]:
    """(decisions valued, CPU seconds) of one data chunk of ``games`` games (``search_samples`` 0: rollout targets)."""
    from wizard_env.agents.ppo_agent import LEARNED_PHASES
    from wizard_env.training.rollout_values import collect_values

    cpu = time.process_time()
    samples = collect_values(rules, games, seed, LEARNED_PHASES["both"], 0.25, search_samples=search_samples)
    return len(samples), time.process_time() - cpu


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=24, help="games of each measurement (one chunk)")
    parser.add_argument("--search-samples", type=int, default=4, help="redrawn deals per decision of the search targets")
    parser.add_argument("--turns", type=int, default=3, help="measurements of each side, taken in turn")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from threadpoolctl import threadpool_limits

    from wizard_env.engine.rules import Rules

    threadpool_limits(1, user_api="blas")
    rules = Rules.make(args.players)
    for samples in (0, args.search_samples):  # compile and warm both paths
        measure(Rules.make(args.players, rounds=2), 2, args.seed + 1, samples)
    rates: dict[str, list[float]] = {"rollout": [], "search": []}
    for turn in range(args.turns):
        for name, samples in (("rollout", 0), ("search", args.search_samples)):
            decisions, cpu = measure(rules, args.games, args.seed + turn, samples)
            rates[name].append(decisions / cpu)
            print(f"turn {turn}: {name:7s} targets {decisions:5,} decisions in {cpu:6.2f} CPU s: {decisions / cpu:7.1f}/s", flush=True)
    rollout, search = median(rates["rollout"]), median(rates["search"])
    print(f"\n{args.players} players, {args.games} games a turn, RuleAgent rollouts, iteration 0 (medians of {args.turns} turns):")
    print(f"  rollout targets (the true deal):            {rollout:7.1f} decisions per CPU second")
    print(f"  search targets (--search-samples {args.search_samples}):        {search:7.1f} decisions per CPU second")
    print(f"  search targets cost {rollout / search:.2f}x the CPU time of rollout targets per decision")


if __name__ == "__main__":
    main()
