"""The gate of ``wizard train-values --gate`` on the mean of the weights of several fits (``--soup``'s candidate).

Usage::

    python benchmarks/soup_gate.py --earlier agents/pretrained/wizard-v10.npz --run-seed 11 --iteration 0 \\
        --deals 4000 --out runs/soup.npz RUN/checkpoints/iter-0.npz RUN/checkpoints/iter-1.npz

The checkpoints (fits of one network, all from ``--earlier``'s weights, as a gated run's rejected iterations are) are
averaged into ``--out`` (``rollout_values.mean_weights``; the first one's config, with ``soup_fits``), which then
meets ``--earlier`` on the deals of the gate of iteration ``--iteration`` of a run seeded ``--run-seed``
(``gate.gate_seed``): one against three, and four copies against four, paired by deal (``gate.play_gate``). It prints
both figures and the verdicts of the two gate rules, so a mean and each of its parts are compared on the same deals.
The checkpoint is written atomically and only where nothing else is.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wizard_env.agents.ppo_agent import load_checkpoint, save_checkpoint
from wizard_env.training.common import json_rules
from wizard_env.training.gate import gate_seed, keeps, play_gate
from wizard_env.training.pairing import Figure, pm
from wizard_env.training.rollout_values import mean_weights


def main(argv: list[str] | None = None) -> int:
    """Average, gate and print; 2 on bad input (named)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", help="the fits to average")
    parser.add_argument("--earlier", required=True, help="the network they were fitted from")
    parser.add_argument("--run-seed", type=int, default=11, help="the run's --seed (default 11)")
    parser.add_argument("--iteration", type=int, default=0, help="whose gate deals are played (default 0)")
    parser.add_argument("--deals", type=int, default=4000, help="duplicate deals (default 4000)")
    parser.add_argument("--out", required=True, help="where the mean is written (a new file)")
    args = parser.parse_args(argv)
    try:
        if Path(args.out).exists():
            raise ValueError(f"--out {args.out} exists: name a new file")
        loaded = [load_checkpoint(path) for path in args.checkpoints]
        shapes = [{k: w.shape for k, w in weights.items()} for _, weights in loaded]
        if any(shape != shapes[0] for shape in shapes):
            raise ValueError("the checkpoints are networks of different shapes: only fits of one network average")
        save_checkpoint(args.out, {**loaded[0][0], "soup_fits": len(loaded)}, mean_weights([(weights, 1) for _, weights in loaded]))
        rules = json_rules(loaded[0][0]["rules"])  # the game the fits were trained at (load_checkpoint checked them)
        verdict = play_gate(args.out, args.earlier, rules, args.deals, gate_seed(args.run_seed, args.iteration))
    except ValueError as e:
        print(f"soup_gate: {e}", file=sys.stderr)
        return 2
    previous, change = Figure(**verdict["previous"]), Figure(**verdict["self_play_change"])
    print(f"mean of {len(loaded)} fits against {args.earlier} on {args.deals:,} deals: head to head {pm(previous)}, "
          f"self-play change {pm(change)}; means {'keeps' if keeps(previous, change, 'means') else 'rejects'}, "
          f"climbs {'keeps' if keeps(previous, change, 'climbs') else 'rejects'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
