"""Search targets against rollout targets: decisions valued per CPU second of ``wizard train-values``'s data.

Usage::

    python benchmarks/search_targets_speed.py                              # 4 players, 24 games, samples 4
    python benchmarks/search_targets_speed.py --players 3 --games 48 --search-samples 8 --turns 5
    python benchmarks/search_targets_speed.py --checkpoint zoo/wizard-v2.npz --search-top 4 --games 8
    python benchmarks/search_targets_speed.py --checkpoint agents/pretrained/wizard-v7.npz --search-top 3 --search-infer

What a train-values worker does in iteration 0 (RuleAgent at every seat and in the rollouts, a quarter of the
decisions valued, ``collect_values``): once with rollout targets (every legal action played out in the true deal,
today's default) and once with search targets (``--targets search``: in ``--search-samples`` deals redrawn from what
the acting seat sees), taken in turn ``--turns`` times in this process (numba compiled before the clock starts,
numpy's BLAS on one thread as ``wizard`` runs it). Prints each turn, the median decisions per CPU second of each and
their ratio: the ratio is the figure (the machine's load moves both sides alike).

``--checkpoint``: that network plays every seat and the rollouts instead (a later iteration of expert iteration).
``--search-top K``: a third side, search targets with the network as prior (``--search-top K``: only its K best-rated
actions and RuleAgent's choice played out); it needs ``--checkpoint``. ``--search-infer``: one more side, the last
search side again with its deals drawn by the bids seen (``--search-infer``: 8 drawn for each one kept).
"""

from __future__ import annotations

import argparse
import time


def median(values: list[float]) -> float:
    """The middle value (the upper of the two middle ones for an even count)."""
    return sorted(values)[len(values) // 2]


def measure(rules, games: int, seed: int, search_samples: int, top: int = 0, checkpoint: str | None = None,
            infer: bool = False) -> tuple[int, float]:
    """(decisions valued, CPU seconds) of one data chunk of ``games`` games (``search_samples`` 0: rollout targets;
    ``top``: the network prunes the search; ``checkpoint``: that network plays and rolls out, else RuleAgent;
    ``infer``: the deals drawn by the bids seen)."""
    import numpy as np

    from wizard_env.agents.ppo_agent import LEARNED_PHASES, PPOAgent
    from wizard_env.training.values.rollout_values import collect_values

    agent = PPOAgent.load(checkpoint, seed=np.random.default_rng([seed, 3])) if checkpoint else None
    cpu = time.process_time()
    samples = collect_values(rules, games, seed, LEARNED_PHASES["both"], 0.25, behaviour=agent, rollout=agent,
                             search_samples=search_samples, search_top=top, search_infer=infer)
    return len(samples), time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=24, help="games of each measurement (one chunk)")
    parser.add_argument("--search-samples", type=int, default=4, help="redrawn deals per decision of the search targets")
    parser.add_argument("--turns", type=int, default=3, help="measurements of each side, taken in turn")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", help="a network that plays and rolls out (default: RuleAgent, iteration 0)")
    parser.add_argument("--search-top", type=int, default=0, help="also time search pruned to the network's K best actions")
    parser.add_argument("--search-infer", action="store_true", help="also time the last search side with its deals drawn by the bids")
    args = parser.parse_args()
    if args.search_top and not args.checkpoint:
        parser.error("--search-top needs --checkpoint: the network is the prior")

    from threadpoolctl import threadpool_limits

    from wizard_env.engine.rules import Rules

    threadpool_limits(1, user_api="blas")
    rules = Rules.make(args.players)
    sides = {"rollout": (0, 0, False), "search": (args.search_samples, 0, False)}
    if args.search_top:
        sides["top"] = (args.search_samples, args.search_top, False)
    if args.search_infer:
        sides["infer"] = (args.search_samples, args.search_top, True)
    for samples, top, infer in sides.values():  # compile and warm every path
        measure(Rules.make(args.players, rounds=2), 2, args.seed + 1, samples, top, args.checkpoint, infer)
    rates: dict[str, list[float]] = {name: [] for name in sides}
    for turn in range(args.turns):
        for name, (samples, top, infer) in sides.items():
            decisions, cpu = measure(rules, args.games, args.seed + turn, samples, top, args.checkpoint, infer)
            rates[name].append(decisions / cpu)
            print(f"turn {turn}: {name:7s} targets {decisions:5,} decisions in {cpu:6.2f} CPU s: {decisions / cpu:7.1f}/s", flush=True)
    rollout, search = median(rates["rollout"]), median(rates["search"])
    who = f"the network {args.checkpoint}" if args.checkpoint else "RuleAgent (iteration 0)"
    print(f"\n{args.players} players, {args.games} games a turn, {who} playing and rolling out (medians of {args.turns} turns):")
    print(f"  rollout targets (the true deal):            {rollout:7.1f} decisions per CPU second")
    print(f"  search targets (--search-samples {args.search_samples}):        {search:7.1f} decisions per CPU second")
    print(f"  search targets cost {rollout / search:.2f}x the CPU time of rollout targets per decision")
    if args.search_top:
        top = median(rates["top"])
        print(f"  search targets, --search-top {args.search_top}:           {top:7.1f} decisions per CPU second: "
              f"{top / search:.2f}x those of the full search")
    if args.search_infer:
        infer, last = median(rates["infer"]), median(rates["top" if args.search_top else "search"])
        print(f"  the same with --search-infer:              {infer:7.1f} decisions per CPU second: "
              f"{last / infer:.2f}x the CPU time per decision")


if __name__ == "__main__":
    main()
