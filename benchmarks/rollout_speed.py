"""Rollouts with the network, old code against new in one run: train-values data and pimc's search.

Usage::

    python benchmarks/rollout_speed.py                       # against the code before issue 25
    python benchmarks/rollout_speed.py --reference HEAD~3 --turns 3 --games 96

Two measurements, each taken in turn by the reference code (``--reference``: a commit, exported with
``reference_tree``) and by this checkout, ``--turns`` times, each in a fresh process (numba compiled and
loaded before the clock starts), numpy's BLAS on one thread as ``wizard`` runs it, both with the network of
``--checkpoint`` (default: this checkout's shipped ``ppo``):

- **values**: what a ``wizard train-values`` worker does when the network is the rollout policy:
  ``collect_values`` with the shipped ``ppo`` at every seat and in the rollouts (``--games`` games of
  ``--players``, a quarter of the decisions valued). Decisions valued per CPU second of the process.
- **pimc**: ``pimc:samples=16`` in seat 0 against RuleAgents, ``--pimc-games`` games played at once as
  ``wizard eval`` plays them, with RuleAgent rollouts and with ``ppo`` rollouts: CPU seconds per searched
  decision of each, and their ratio (what the network costs over RuleAgent, within one version of the code).

Prints each turn and the medians; the ratios are the figures (the machine's load moves both sides).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

try:
    from benchmarks.reference_tree import BEFORE_THROUGHPUT, network, median, reference_tree, run_fresh
except ImportError:  # run as a script from benchmarks/
    from reference_tree import BEFORE_THROUGHPUT, network, median, reference_tree, run_fresh


def measure(kind: str, players: int, games: int, seed: int, checkpoint: str) -> dict:
    """One measurement in this process, with the code ``wizard_env`` resolves to."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    import wizard_env
    from wizard_env.engine.rules import Rules

    threadpool_limits(1, user_api="blas")
    rules = Rules.make(players)
    out: dict = {"code": str(Path(wizard_env.__file__).parent.parent)}
    if kind == "values":
        from wizard_env.agents.ppo_agent import PPOAgent
        from wizard_env.training.rollout_values import collect_values

        agent = PPOAgent.load(checkpoint, seed=np.random.default_rng([seed, 1]))
        collect_values(rules, 2, seed + 1, (0, 1, 2), 0.25, behaviour=agent, rollout=agent)  # compile and load
        cpu = time.process_time()
        samples = collect_values(rules, games, seed, (0, 1, 2), 0.25, behaviour=agent, rollout=agent)
        out.update(decisions=len(samples.advice), cpu_s=time.process_time() - cpu)
        out["per_s"] = out["decisions"] / out["cpu_s"]
        return out
    from wizard_env.agents import pimc_agent
    from wizard_env.agents.pimc_agent import PIMCAgent
    from wizard_env.agents.rule_agent import RuleAgent
    from wizard_env.training.evaluate import play_games

    pimc_agent.PRETRAINED = Path(checkpoint)  # the network of ``rollout=ppo``
    for rollout in ("rule", "ppo"):
        for count, timed in ((1, False), (games, True)):  # a first game compiles and loads
            agent = PIMCAgent(samples=16, rollout=rollout, seed=seed)
            spent = [0.0]
            search = agent.act_games

            def clocked(batch, rows, search=search, spent=spent):
                start = time.process_time()
                actions = search(batch, rows)
                spent[0] += time.process_time() - start
                return actions

            agent.act_games = clocked  # type: ignore[method-assign]
            others = [RuleAgent(seed=seed + s) for s in range(1, players)]
            play_games(rules, [[agent, *others]] * count, list(range(seed, seed + count)))
        out[f"{rollout}_s"] = spent[0] / agent.searched
        out[f"{rollout}_decisions"] = agent.searched
    out["ratio"] = out["ppo_s"] / out["rule_s"]
    return out


def run(kind: str, tree: Path | None, args: argparse.Namespace) -> dict:
    """One measurement in a fresh process: the reference code (``tree``) or this checkout's (None)."""
    games = args.games if kind == "values" else args.pimc_games
    return run_fresh(__file__, ["--measure", kind, "--players", str(args.players), "--games", str(games),
                                "--seed", str(args.seed), "--checkpoint", args.checkpoint], tree, kind)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=BEFORE_THROUGHPUT, help="git revision of the code to compare with")
    parser.add_argument("--turns", type=int, default=3, help="measurements of each side, taken in turn")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=96, help="games of the values measurement")
    parser.add_argument("--pimc-games", type=int, default=4, help="games of the pimc measurement (played at once)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=("values", "pimc"), help="one of the two measurements")
    parser.add_argument("--checkpoint", help="the network of both versions (default: this checkout's shipped ppo)")
    parser.add_argument("--measure", choices=("values", "pimc"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.players, args.games, args.seed, args.checkpoint)))
        return
    args.checkpoint = network(args.checkpoint)
    tree = reference_tree(args.reference)
    print(f"reference {args.reference} exported to {tree}; {args.players} players, seed {args.seed}, network {args.checkpoint}")
    for kind in ("values", "pimc") if args.only is None else (args.only,):
        rows: dict[str, list[dict]] = {"old": [], "new": []}
        for turn in range(args.turns):
            for side, where in (("old", tree), ("new", None)):
                rows[side].append(run(kind, where, args))
                r = rows[side][-1]
                if kind == "values":
                    print(f"values turn {turn} {side}: {r['decisions']:,} decisions in {r['cpu_s']:.1f} CPU s, {r['per_s']:.0f}/s")
                else:
                    print(f"pimc turn {turn} {side}: rule rollouts {r['rule_s'] * 1000:.1f} ms, ppo rollouts "
                          f"{r['ppo_s'] * 1000:.1f} ms a decision ({r['ppo_decisions']} decisions): ppo/rule {r['ratio']:.2f}")
        if kind == "values":
            old, new = (median([r["per_s"] for r in rows[s]]) for s in ("old", "new"))
            speedups = [n["per_s"] / o["per_s"] for o, n in zip(rows["old"], rows["new"])]
            print(f"values: median {old:.0f} -> {new:.0f} decisions per CPU second; new/old by turn "
                  f"{', '.join(f'{s:.2f}' for s in speedups)} (median {median(speedups):.2f}x)")
        else:
            for side in ("old", "new"):
                rule, ppo, ratio = (median([r[k] for r in rows[side]]) for k in ("rule_s", "ppo_s", "ratio"))
                print(f"pimc {side}: median {rule * 1000:.1f} ms (rule rollouts), {ppo * 1000:.1f} ms (ppo rollouts) "
                      f"a decision: ppo/rule {ratio:.2f}")
            speedups = [o["ppo_s"] / n["ppo_s"] for o, n in zip(rows["old"], rows["new"])]
            print(f"pimc with ppo rollouts, new/old speed by turn {', '.join(f'{s:.2f}' for s in speedups)}")


if __name__ == "__main__":
    main()
