"""Today's batched engine against the engine of an earlier commit, timed in the same run.

Usage::

    python benchmarks/engine_reference.py --reference 9207a61^    # the last numpy engine
    python benchmarks/engine_reference.py --reference HEAD --sizes 1 --seconds 5 --rounds 5

``--reference`` writes that commit's ``wizard_env`` package into a temporary folder under another
name and imports its ``WizardBatch`` beside today's. Each figure is decisions per second of one loop
at batch size B (4 players, standard rules), the loops measured in turn for ``--rounds`` rounds so
that a change in the machine's load hits them alike; the table gives each loop's median round and
its ratio to the reference. Every loop draws random legal actions the same way (one uniform per
game, ``kernels.random_legal``), so only the engines differ:

- ``reference``: ``observe(out=...)``, ``legal_masks()`` and ``step(actions)``, the calls that commit had;
- ``three calls``: the same three calls on today's engine;
- ``step_observe``: today's one call for the same work, as ``wizard bench`` measures it.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

from wizard_env.engine import kernels
from wizard_env.engine.batch import WizardBatch
from wizard_env.tools.bench import batch_loop
from wizard_env.util.stopwatch import rates_in_turn
from wizard_env.engine.observation import OBS_SIZE
from wizard_env.engine.rules import Rules

try:
    from benchmarks.reference_tree import extract, short_sha
except ImportError:  # run as a script from benchmarks/
    from reference_tree import extract, short_sha



def reference_package(commit: str):
    """The ``wizard_env`` package of ``commit``, imported as ``_engine_reference_<sha>``."""
    sha = short_sha(commit)
    name = f"_engine_reference_{sha}"
    if name not in sys.modules:
        folder = Path(tempfile.mkdtemp(prefix="engine_reference_"))
        extract(sha, folder, "wizard_env")
        (folder / "wizard_env").rename(folder / name)
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)


def three_calls(batch, size: int, seed: int) -> Callable[[], int]:
    """observe, legal_masks and step on any engine with that API; returns the step of ``rate``."""
    rng, out, actions = np.random.default_rng(seed), np.empty((size, OBS_SIZE), dtype=np.float32), np.empty(size, np.int64)

    def step() -> int:
        batch.observe(out=out)
        masks = batch.legal_masks()
        batch.step(kernels.random_legal(masks, rng.random(size), actions))
        return size

    return step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", default="9207a61^", help="git revision of the engine to compare with (default: the last numpy engine)")
    parser.add_argument("--sizes", default="1,4096", help="batch sizes (default 1,4096)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per loop and round (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every loop (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    old = importlib.import_module(reference_package(args.reference).__name__ + ".batch")
    print(f"reference: {args.reference} ({old.__file__})", flush=True)
    print("| B | loop | decisions/s (median of rounds) | rounds | vs reference |\n| ---: | --- | ---: | --- | ---: |")
    for size in (int(s) for s in args.sizes.split(",")):
        rules, old_rules = Rules.make(4), old.Rules.make(4)
        loops = {
            "reference": three_calls(old.WizardBatch(old_rules, size, seed=args.seed), size, args.seed),
            "three calls": three_calls(WizardBatch(rules, size, seed=args.seed), size, args.seed),
            "step_observe": batch_loop(4, size, args.seed)[0],  # wizard bench's loop
        }
        rates = rates_in_turn(loops, args.seconds, args.rounds)
        base = statistics.median(rates["reference"])
        for name, values in rates.items():
            middle = statistics.median(values)
            print(f"| {size} | {name} | {middle:,.0f} | {', '.join(f'{v:,.0f}' for v in values)} | {middle / base:.1f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
