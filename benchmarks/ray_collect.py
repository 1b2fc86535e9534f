"""Decisions per second of ``wizard train-values``'s data collection on local worker processes and on Ray, at 1 and 2
workers in one run, and a check that both backends collect the same chunks.

Usage (in the venv with the rllib extra, .venv-rllib)::

    python benchmarks/ray_collect.py                          # 1 and 2 workers, a local Ray instance
    python benchmarks/ray_collect.py --workers 1 2 4 8 --address auto    # on a running Ray cluster
    python benchmarks/ray_collect.py --recipe training/recipes/zero-4p5r.toml --samples 4000   # a recipe's collection

Each measurement is ``ValuesTrainer.collect`` of iteration 0 into a fresh folder. By default RuleAgent plays every
seat and the rollouts; with ``--recipe`` it is the collection of the recipe's first train-values step (its players,
rounds, targets and search; for a zero recipe the random network of ``init.npz``, drawn from its seed), with
``--samples``, ``--workers`` and the backend of the measurement in place of its own.

Every measurement collects ``--samples`` decisions in chunks of ``--games`` games, timed from the start of the pool (local: its
processes start; Ray: the instance is already up, its start-up is printed apart) to the last chunk written. Every
(workers, backend) pair is measured once unmeasured (Ray starts its worker processes then), then ``--repeats`` times,
the pairs taking turns so that a change in the machine's load falls on all of them. Printed: the median decisions/s
of each pair, Ray's ratio to the local workers at the same count, and each backend's ratio to its first worker count.
The chunks of every measurement are compared with the first one's (the arrays, read by ``rollout_values.read_chunk``);
the script fails if any differ.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.recipes import recipe as recipes  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402
from wizard_env.training.rllib.rllib_cluster import init_ray  # noqa: E402
from wizard_env.training.values.train_values import ValuesConfig, ValuesTrainer  # noqa: E402
from wizard_env.training.values.values_config import checkpoint_config  # noqa: E402
from wizard_env.training.values.zero import write_initial  # noqa: E402
from wizard_env.util.stopwatch import Stopwatch  # noqa: E402

BACKENDS = ("local", "ray")


def collect(cfg: ValuesConfig, rules: Rules, folder: Path) -> tuple[float, list[rv.ValueSamples]]:
    """Decisions/s of iteration 0's collection with ``cfg`` into ``folder``, and the chunks it used."""
    trainer = ValuesTrainer(cfg, rules, folder, quiet=True)
    if cfg.zero:  # the random network that collects iteration 0, as the run writes it first (not timed)
        write_initial(Path(trainer.start), checkpoint_config(cfg, rules, -1, 0), cfg.seed)
    with Stopwatch() as watch:
        paths, decisions = trainer.collect(0)
    return decisions / watch.seconds, [rv.read_chunk(p) for p in paths]


def same(first: list[rv.ValueSamples], second: list[rv.ValueSamples]) -> bool:
    """Whether two collections hold the same chunks, array for array."""
    return len(first) == len(second) and all(
        np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True)
        for a, b in zip(first, second) for name in ("observations", "masks", "values", "advice"))


def main() -> None:
    """Print the table; exit 1 if the backends' chunks differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to compare")
    parser.add_argument("--players", type=int, default=4, help="players, 3..6")
    parser.add_argument("--games", type=int, default=8, help="games per chunk")
    parser.add_argument("--samples", type=int, default=7000, help="decisions collected per measurement")
    parser.add_argument("--share", type=float, default=0.25, help="share of the decisions valued")
    parser.add_argument("--repeats", type=int, default=2, help="measured turns of each (workers, backend) pair")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--address", default="", help="a Ray cluster to join (default: a local instance)")
    parser.add_argument("--recipe", type=Path, help="collect as this recipe's first train-values step does "
                        "(its settings but --samples, --workers and the backend); --players, --games, --share and --seed are then its own")
    args = parser.parse_args()
    step = None
    if args.recipe:
        step = next((s for s in recipes.load(args.recipe).steps if s.kind == "train-values"), None)
        if step is None:
            parser.error(f"{args.recipe} has no train-values step")
        rules, base = step.rules(), step.values_stages()[0]
        args.players, args.games, args.share, args.seed = step.keys["players"], base.games, base.share, base.seed
    else:
        rules = Rules.make(args.players)
        base = ValuesConfig(mix=[args.players], games=args.games, share=args.share, seed=args.seed)
    with Stopwatch() as start:
        init_ray(args.address, max(args.workers), 256 * 2**20)
    print(f"{platform.node()}: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; {args.players} players, "
          f"{args.games} games a chunk, {args.samples:,} decisions a measurement, share {args.share}"
          f"{f', recipe {args.recipe} step {step.name!r}' if step else ''}; "
          f"Ray started in {start.seconds:.1f} s (not measured)", flush=True)
    pairs = [(workers, backend) for workers in args.workers for backend in BACKENDS]
    rates: dict[tuple[int, str], list[float]] = {pair: [] for pair in pairs}
    reference: list[rv.ValueSamples] | None = None
    differ = []
    with tempfile.TemporaryDirectory(prefix="ray-collect-") as tmp:
        for turn in range(args.repeats + 1):
            for workers, backend in pairs:
                cfg = dataclasses.replace(base, samples=args.samples, workers=workers, backend=backend,
                                          address=args.address if backend == "ray" else "")
                rate, chunks = collect(cfg, rules, Path(tmp) / f"{turn}-{workers}-{backend}")
                reference = chunks if reference is None else reference
                if not same(reference, chunks):
                    differ.append(f"turn {turn}, {workers} workers, {backend}")
                if turn:
                    rates[workers, backend].append(rate)
                print(f"  {'warm-up' if not turn else f'turn {turn}'}: {workers} worker(s), {backend:>5}: {rate:,.0f} decisions/s, "
                      f"{len(chunks)} chunks", flush=True)
    median = {pair: statistics.median(r) for pair, r in rates.items()}
    first = args.workers[0]
    print(f"{'workers':>7} {'local/s':>9} {'ray/s':>9} {'ray/local':>9} {'local vs ' + str(first):>11} {'ray vs ' + str(first):>9}")
    for workers in args.workers:
        local, ray = median[workers, "local"], median[workers, "ray"]
        print(f"{workers:>7} {local:>9,.0f} {ray:>9,.0f} {ray / local:>8.2f}x {local / median[first, 'local']:>10.2f}x "
              f"{ray / median[first, 'ray']:>8.2f}x")
    print(f"chunks: {'identical in every measurement' if not differ else 'DIFFERENT in ' + '; '.join(differ)} "
          f"({len(reference or [])} chunks, compared array for array)")
    if differ:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
