"""Determinization, old code against new in one run: copies redrawn per CPU second, and whether they are the same.

Usage::

    python benchmarks/determinize_speed.py                        # 64 copies a game, as --search-infer
    python benchmarks/determinize_speed.py --samples 16           # as pimc:samples=16
    python benchmarks/determinize_speed.py --reference HEAD~1     # against another commit

``determinize`` of ``--games`` positions of a full ``--players``-player game (each a random number of random legal
moves in, from ``--seed``), ``--samples`` copies of each, seen by the seat to move: 64 is what ``wizard train-values
--search-infer`` redraws for each valued decision at ``--search-samples 8``, 16 what ``pimc:samples=16`` redraws.
Timed in turn by the reference code (``--reference``: a commit, exported with ``reference_tree``; by default the
code before determinize wrote a game's copies in one pass) and by this checkout, ``--turns`` times, each in a fresh
process, after a first call that compiles and warms. Prints copies per CPU second of each, their ratio, and whether
the two versions made the same copies (a digest of every array of the new batch): the speed-up counts only if they
did.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

try:
    from benchmarks.reference_tree import median, reference_tree, run_fresh
except ImportError:  # run as a script from benchmarks/
    from reference_tree import median, reference_tree, run_fresh

#: The last commit before determinize wrote a game's copies in one pass: the default reference.
BEFORE_ONE_PASS = "ddbbe84"


def measure(players: int, games: int, samples: int, seed: int) -> dict:
    """One measurement in this process, with the code ``wizard_env`` resolves to."""
    import numpy as np

    import wizard_env
    from wizard_env.engine.batch import OVER, WizardBatch
    from wizard_env.engine.determinize import determinize
    from wizard_env.engine.rules import Rules

    rules = Rules.make(players)
    rng = np.random.default_rng(seed)
    batch = WizardBatch(rules, games, seed=seed, autoreset=False)
    moves = rng.integers(sum(rules.hand_sizes) * (players + 1) // 2, size=games)  # how far into the game each goes
    for move in range(int(moves.max())):
        rows = np.flatnonzero((moves > move) & (batch.phase != OVER))
        if not rows.size:
            break
        legal = batch.legal_masks(rows)
        batch.step(np.array([rng.choice(np.flatnonzero(mask)) for mask in legal]), rows)
    live = np.flatnonzero(batch.phase != OVER)
    determinize(batch, live[:2], batch.current[live[:2]], np.random.default_rng(seed + 1), samples)  # warm
    draws = np.random.default_rng([seed, 2])
    cpu = time.process_time()
    copies = determinize(batch, live, batch.current[live], draws, samples)
    spent = time.process_time() - cpu
    digest = hashlib.sha256()
    for name in sorted(copies._state):
        digest.update(np.ascontiguousarray(getattr(copies, name)).tobytes())
    return {"code": str(Path(wizard_env.__file__).parent.parent), "copies": int(copies.batch_size), "cpu_s": spent,
            "per_s": copies.batch_size / spent, "digest": digest.hexdigest()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=BEFORE_ONE_PASS, help="git revision of the code to compare with")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=400, help="positions determinized in each measurement")
    parser.add_argument("--samples", type=int, default=64, help="copies of each position")
    parser.add_argument("--turns", type=int, default=3, help="measurements of each side, taken in turn")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.players, args.games, args.samples, args.seed)))
        return
    tree = reference_tree(args.reference)
    print(f"reference {args.reference} exported to {tree}; {args.players} players, {args.games} positions, "
          f"{args.samples} copies each, seed {args.seed}")
    command = ["--measure", "--players", str(args.players), "--games", str(args.games), "--samples",
               str(args.samples), "--seed", str(args.seed)]
    rows: dict[str, list[dict]] = {"old": [], "new": []}
    for turn in range(args.turns):
        for side, where in (("old", tree), ("new", None)):
            rows[side].append(run_fresh(__file__, command, where, "determinize"))
            r = rows[side][-1]
            print(f"turn {turn} {side}: {r['copies']:,} copies in {r['cpu_s']:.2f} CPU s, {r['per_s']:,.0f}/s", flush=True)
    old, new = (median([r["per_s"] for r in rows[side]]) for side in ("old", "new"))
    speedups = [n["per_s"] / o["per_s"] for o, n in zip(rows["old"], rows["new"])]
    same = len({r["digest"] for r in rows["old"] + rows["new"]}) == 1
    print(f"median {old:,.0f} -> {new:,.0f} copies per CPU second; new/old by turn "
          f"{', '.join(f'{s:.2f}' for s in speedups)} (median {median(speedups):.2f}x); "
          f"the copies {'are the same' if same else 'DIFFER'} in both versions")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
