"""How the loops' random picks move the batched engine's ratio to OpenSpiel with no observation.

Usage::

    python benchmarks/bench_picks.py                  # B = 4096, 4 players, 5 s per loop, 3 rounds
    python benchmarks/bench_picks.py --size 1024 --seconds 3 --rounds 5

``wizard bench`` compares the batched engine (observations, masks and a step for all B games) with
OpenSpiel's ``oh_hell`` played one decision at a time with no observation. Picking the random legal
actions is not part of either engine, but it is part of both loops, and a slow pick makes its side
look slow. This script times each side with two ways of picking, in turn for ``--rounds`` rounds
(so that a change in the machine's load hits them alike), and prints each median and the ratio of
every pairing:

- OpenSpiel, ``integers``: a call of numpy's Generator for every pick, chance nodes included (the
  bench until 2026-12-01);
- OpenSpiel, ``Picker``: uniforms drawn from the Generator in blocks (``wizard bench`` now);
- batch, ``argmax``: ``observe``, ``legal_masks`` and ``step`` with the argmax of uniforms times the
  mask (the bench when the compiled-engine issue set its targets);
- batch, ``compiled``: ``step_observe`` with ``kernels.random_legal`` (``wizard bench`` now).
"""

from __future__ import annotations

import argparse
import statistics
from typing import Callable

import numpy as np

from wizard_env.engine.batch import WizardBatch
from wizard_env.tools.bench import batch_loop, openspiel_loop
from wizard_env.util.stopwatch import rates_in_turn
from wizard_env.engine.observation import OBS_SIZE
from wizard_env.engine.rules import Rules


def argmax_loop(num_players: int, size: int, seed: int) -> Callable[[], int]:
    """The batched loop as it was when the targets were set: three calls, numpy picks."""
    batch = WizardBatch(Rules.make(num_players), size, seed=seed)
    rng = np.random.default_rng(seed)
    out = np.empty((size, OBS_SIZE), dtype=np.float32)

    def step() -> int:
        batch.observe(out=out)
        masks = batch.legal_masks()
        batch.step((rng.random(masks.shape, dtype=np.float32) * masks).argmax(axis=1))
        return size

    return step


def main(argv: list[str] | None = None) -> int:
    """Time the four loops and print the table of ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4, help="number of players, 3..6")
    parser.add_argument("--size", type=int, default=4096, help="games in the batch")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per loop and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of all four loops")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the picks")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    integers = openspiel_loop(args.players, args.seed, tensor=False, pick=lambda count: int(rng.integers(count)))
    picker = openspiel_loop(args.players, args.seed, tensor=False)
    if integers is None or picker is None:
        print("OpenSpiel is not installed: pip install -c constraints.txt -e '.[bench]'")
        return 1
    openspiel = {"integers": integers, "Picker": picker}
    batched = {"argmax": argmax_loop(args.players, args.size, args.seed),
               "compiled": batch_loop(args.players, args.size, args.seed)[0]}
    loops = {**{f"OpenSpiel, {k}": v for k, v in openspiel.items()}, **{f"batch B={args.size}, {k}": v for k, v in batched.items()}}
    rounds = rates_in_turn(loops, args.seconds, args.rounds)
    median = {name: statistics.median(rates) for name, rates in rounds.items()}
    print(f"decisions/s, {args.players} players, median of {args.rounds} rounds of {args.seconds} s")
    for name, value in median.items():
        print(f"  {name:<28}{value:>12,.0f}")
    print("\n| batch picks | OpenSpiel picks | ratio |\n| --- | --- | ---: |")
    for b in batched:
        for o in openspiel:
            print(f"| {b} | {o} | {median[f'batch B={args.size}, {b}'] / median[f'OpenSpiel, {o}']:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
