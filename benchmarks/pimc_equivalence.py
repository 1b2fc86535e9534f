"""Check that ``pimc`` with ``ppo`` rollouts searches and decides as an earlier commit's code did, for a seed.

Usage::

    python benchmarks/pimc_equivalence.py --reference HEAD                 # against the last commit
    python benchmarks/pimc_equivalence.py --reference HEAD~2 --games 2 --samples 8 --rounds 1,3,5

Plays ``--games`` four-player games at once (as ``wizard eval`` plays them), ``pimc:samples=N:rollout=ppo``
with seed ``--seed`` in seat 0 against three RuleAgents (the rollouts' network: ``--checkpoint``, by default this
checkout's shipped ``ppo``, for both versions), once with the reference code (``--reference``, a
commit exported with ``reference_tree``) and once with this checkout, each in a fresh process. Records every
move stepped on the engine, the games' and the rollouts' (``WizardBatch.step``), the mean round score of every
legal action of every search (``search_values``) and the final scores. Prints how many of each differ and the
largest difference of a mean; exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

try:
    from benchmarks.reference_tree import network, reference_tree
except ImportError:  # run as a script from benchmarks/
    from reference_tree import network, reference_tree


def play(path: str, games: int, samples: int, rounds: str, seed: int, checkpoint: str) -> None:
    """In a process of either code: play the games, save every action and every search's means at ``path``."""
    from threadpoolctl import threadpool_limits

    from wizard_env.agents import pimc_agent
    from wizard_env.agents.pimc_agent import PIMCAgent
    from wizard_env.agents.rule_agent import RuleAgent
    from wizard_env.engine.batch import WizardBatch
    from wizard_env.engine.rules import Rules
    from wizard_env.training.evaluate import play_games

    threadpool_limits(1, user_api="blas")
    means, actions = [], []
    search = pimc_agent.search_values

    def recorded(*args, **kwargs):
        out = search(*args, **kwargs)
        means.append(np.nan_to_num(out, nan=-np.inf))
        return out

    pimc_agent.search_values = recorded
    pimc_agent.PRETRAINED = Path(checkpoint)  # the network ``rollout=ppo`` loads: the same file for both versions
    step = WizardBatch.step

    def stepped(self, chosen, games=None):
        actions.append(np.asarray(chosen).copy())
        return step(self, chosen, games)

    agent = PIMCAgent(samples=samples, rollout="ppo", seed=seed)
    others = [RuleAgent(seed=seed + s) for s in range(1, 4)]
    rules = Rules.make(4, [int(r) for r in rounds.split(",")] if rounds else "standard")
    WizardBatch.step = stepped  # type: ignore[method-assign]
    try:
        records = play_games(rules, [[agent, *others]] * games, list(range(seed, seed + games)))
    finally:
        WizardBatch.step = step  # type: ignore[method-assign]
    np.savez(path, means=np.concatenate(means), totals=records.totals, searched=agent.searched,
             moves=np.concatenate(actions))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default="HEAD", help="git revision of the code to compare with (default: the last commit)")
    parser.add_argument("--games", type=int, default=4, help="four-player games, played at once")
    parser.add_argument("--samples", type=int, default=16, help="pimc's determinizations per decision")
    parser.add_argument("--rounds", default="", help="rounds of each game, e.g. 1,3,5 (default: the standard game)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", help="the rollout network of both versions (default: this checkout's shipped ppo)")
    parser.add_argument("--play", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.play:
        play(args.play, args.games, args.samples, args.rounds, args.seed, args.checkpoint)
        return
    args.checkpoint = network(args.checkpoint)
    tree = reference_tree(args.reference)
    print(f"reference {args.reference} ({tree}); {args.games} games of pimc:samples={args.samples}:rollout=ppo, seed {args.seed}, "
          f"rollouts by {args.checkpoint}")
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for where in (tree, None):
            env = dict(os.environ)
            if where is not None:
                env["PYTHONPATH"] = os.pathsep.join([str(where), *filter(None, [env.get("PYTHONPATH")])])
            path = str(Path(folder) / f"{'old' if where else 'new'}.npz")
            command = [sys.executable, __file__, "--play", path, "--games", str(args.games), "--samples", str(args.samples),
                       "--rounds", args.rounds, "--seed", str(args.seed), "--checkpoint", args.checkpoint]
            subprocess.run(command, env=env, check=True, cwd=Path(__file__).parent)
            with np.load(path) as out:
                results.append({name: out[name] for name in out.files})
    old, new = results
    same_shape = old["means"].shape == new["means"].shape and old["moves"].shape == new["moves"].shape
    if not same_shape:
        print(f"the games went apart: {len(old['means'])} searches and {len(old['moves'])} actions before, "
              f"{len(new['means'])} and {len(new['moves'])} now")
        sys.exit(1)
    searches = np.flatnonzero((old["means"] != new["means"]).any(axis=1))
    both = np.isfinite(old["means"]) & np.isfinite(new["means"])
    gap = float(np.abs(np.subtract(old["means"], new["means"], where=both, out=np.zeros(both.shape))).max(initial=0.0))
    moves = int((old["moves"] != new["moves"]).sum())
    totals = int((old["totals"] != new["totals"]).sum())
    print(f"searches {len(old['means']):,} ({int(new['searched'])} decisions with a choice): {len(searches)} with a different "
          f"mean (largest difference {gap:g}); moves of the games and rollouts {len(old['moves']):,}: {moves} differ; "
          f"final scores: {totals} differ")
    sys.exit(1 if len(searches) or moves or totals else 0)


if __name__ == "__main__":
    main()
