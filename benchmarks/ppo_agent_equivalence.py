"""Check that PPOAgent (the shipped ``ppo``) decides every position as the code before issue 25 did.

Usage::

    python benchmarks/ppo_agent_equivalence.py                  # against the code before issue 25
    python benchmarks/ppo_agent_equivalence.py --reference HEAD --games 30

Positions come from ``--games`` games per player count (3 to 6) played by the new agent at every seat,
and as many of random legal moves (positions the agent rarely reaches), all on the batched engine.
The new agent decides them all as one batch per player count; the reference code (``--reference``,
exported with ``reference_tree``) decides the same positions, as one batch, in a fresh process, with the
same seed, and reports its masked logits. The first layer now adds up each row's nonzero inputs instead of
a dense matrix product, so the sums may differ in the last bits: a differing action counts as a mismatch
unless the reference's logits of the two actions are within ``--tie`` of each other. Prints positions and
mismatches per player count; exits 1 on any mismatch.
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
    from benchmarks.reference_tree import BEFORE_THROUGHPUT, network, reference_tree
except ImportError:  # run as a script from benchmarks/
    from reference_tree import BEFORE_THROUGHPUT, network, reference_tree

SEED = 5


def positions(players: int, games: int, seed: int, checkpoint: str) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of every decision of ``games`` games played by the agent and ``games`` of random moves."""
    from wizard_env.agents.ppo_agent import PPOAgent
    from wizard_env.engine.actions import Phase
    from wizard_env.engine.batch import WizardBatch
    from wizard_env.engine.rules import Rules

    agent, rng = PPOAgent.load(checkpoint, seed=np.random.default_rng([seed, 1])), np.random.default_rng([seed, 2])
    observations, masks = [], []
    for random in (False, True):
        batch = WizardBatch(Rules.make(players), games, seed=seed + random, autoreset=False)
        while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
            o, m = batch.observe(live), batch.legal_masks(live)
            observations.append(o)
            masks.append(m)
            if random:
                actions = np.array([rng.choice(np.flatnonzero(row)) for row in m])
            else:
                actions = agent.act_batch(o, m)
            batch.step(actions, live)
    return np.concatenate(observations), np.concatenate(masks)


def decide(path: str, checkpoint: str) -> None:
    """In a process of either code: the actions and masked logits of the agent of ``checkpoint`` on the positions
    saved at ``path``."""
    from threadpoolctl import threadpool_limits

    from wizard_env.agents.ppo_agent import PPOAgent
    from wizard_env.engine.observation import SLICES

    threadpool_limits(1, user_api="blas")
    saved = np.load(path)
    o, m = saved["observations"], saved["masks"]
    agent = PPOAgent.load(checkpoint, seed=SEED)
    actions = agent.act_batch(o, m)
    logits = np.full(m.shape, -np.inf, dtype=np.float32)
    rows = np.flatnonzero(agent.learned[o[:, SLICES["phase"]].argmax(axis=1)] & ((m != 0).sum(axis=1) > 1))
    logits[rows] = np.where(m[rows] != 0, PPOAgent.load(checkpoint, seed=SEED).logits(o[rows], m[rows]), -np.inf)
    np.savez(path + ".out.npz", actions=actions, logits=logits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=BEFORE_THROUGHPUT, help="git revision of the code to compare with")
    parser.add_argument("--games", type=int, default=16, help="games per player count (and as many of random moves)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tie", type=float, default=1e-4, help="logit gap under which two actions count as tied")
    parser.add_argument("--checkpoint", help="the network both versions play (default: this checkout's shipped ppo, "
                                               "so a checkout whose ppo is another file than the reference's compares like with like)")
    parser.add_argument("--decide", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.checkpoint = network(args.checkpoint)
    if args.decide:
        decide(args.decide, args.checkpoint)
        return
    tree = reference_tree(args.reference)
    total = wrong = 0
    print(f"reference {args.reference} ({tree}); {args.games} agent games and {args.games} random ones per player count; "
          f"network {args.checkpoint}")
    print(f"{'players':>8}{'positions':>11}{'with a choice':>15}{'differ':>8}{'ties':>6}{'mismatches':>12}")
    with tempfile.TemporaryDirectory() as folder:
        for players in range(3, 7):
            o, m = positions(players, args.games, args.seed + players, args.checkpoint)
            path = str(Path(folder) / f"positions-{players}.npz")
            np.savez(path, observations=o, masks=m)
            results = []
            for where in (tree, None):
                env = dict(os.environ)
                if where is not None:
                    env["PYTHONPATH"] = str(where)
                subprocess.run([sys.executable, __file__, "--decide", path, "--checkpoint", args.checkpoint], env=env, check=True,
                               cwd=Path(__file__).parent)
                with np.load(path + ".out.npz") as out:
                    results.append({name: out[name] for name in out.files})
            old, new = results
            differ = np.flatnonzero(old["actions"] != new["actions"])
            gaps = np.abs(old["logits"][differ, old["actions"][differ]] - old["logits"][differ, new["actions"][differ]])
            ties = int((gaps <= args.tie).sum())
            choice = int(((m != 0).sum(axis=1) > 1).sum())
            print(f"{players:>8}{len(m):>11,}{choice:>15,}{len(differ):>8}{ties:>6}{len(differ) - ties:>12}")
            total, wrong = total + len(m), wrong + len(differ) - ties
    print(f"{'all':>8}{total:>11,}   mismatches: {wrong}")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
