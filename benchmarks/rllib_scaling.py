"""Learner steps per second of ``wizard train --backend rllib`` at 1 and 2 env runners, in one run.

Usage (in the venv with the rllib extra, .venv-rllib)::

    python benchmarks/rllib_scaling.py                       # 1 and 2 runners, standard 4-player games
    python benchmarks/rllib_scaling.py --runners 1 2 4 --address auto   # on a running Ray cluster

A learner step is one decision of one seat, sampled by the env runners and trained on by PPO; an
iteration samples ``--iteration-steps`` of them and runs the update (``--n-epochs`` over minibatches
of ``--batch-size``; the defaults are ``wizard train --backend rllib``'s), so steps/s is the rate of
the whole loop. Each configuration builds its algorithm, runs ``--warmup`` iterations unmeasured,
then ``--iterations`` measured ones; the configurations take turns ``--repeats`` times (1, 2, 1, 2,
...) so that a change in the machine's load falls on both. Printed: the median steps/s of each configuration over all its measured iterations,
the seconds of sampling and of the update per iteration (RLlib's timers), and each configuration's
ratio to the first one.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from wizard_env.util.stopwatch import Stopwatch  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.rllib.rllib_cluster import start_ray  # noqa: E402
from wizard_env.training.rllib.rllib_train import RLlibConfig, RLlibTrainer  # noqa: E402


def measure(runners: int, args: argparse.Namespace, rules: Rules) -> list[tuple[float, float, float]]:
    """(steps/s, sampling s, update s) of each measured iteration with ``runners`` env runners."""
    cfg = RLlibConfig(num_env_runners=runners, envs_per_runner=args.envs_per_runner, iteration_steps=args.iteration_steps,
                      batch_size=args.batch_size, n_epochs=args.n_epochs, seed=args.seed)
    trainer = RLlibTrainer(cfg, rules, out=Path("."), quiet=True)  # out: never written, save() is not called
    rows = []
    try:
        for i in range(args.warmup + args.iterations):
            with Stopwatch() as watch:
                result = trainer.algo.train()
            steps = result["env_runners"]["num_env_steps_sampled"]
            timers = result.get("timers", {})
            if i >= args.warmup:
                rows.append((steps / watch.seconds, timers.get("env_runner_sampling_timer", float("nan")),
                             timers.get("learner_update_timer", float("nan"))))
    finally:
        trainer.stop()
    return rows


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2], help="env runner counts to compare")
    parser.add_argument("--players", type=int, default=4, help="players, 3..6")
    parser.add_argument("--rounds", default="standard", help="standard, or a round count")
    parser.add_argument("--envs-per-runner", type=int, default=4, help="games each env runner steps together")
    parser.add_argument("--iteration-steps", type=int, default=8000, help="decisions per PPO iteration")
    parser.add_argument("--batch-size", type=int, default=2048, help="PPO minibatch")
    parser.add_argument("--n-epochs", type=int, default=6, help="PPO epochs per iteration")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured iterations per configuration")
    parser.add_argument("--iterations", type=int, default=3, help="measured iterations per configuration and repeat")
    parser.add_argument("--repeats", type=int, default=2, help="turns each configuration takes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--address", default="", help="a Ray cluster to join (default: a local instance)")
    args = parser.parse_args()
    rounds = args.rounds if args.rounds in ("standard", "amigo") else int(args.rounds)
    rules = Rules.make(args.players, rounds)
    start_ray(args.address, RLlibConfig(num_env_runners=max(args.runners)))
    print(f"{platform.node()}: {os.cpu_count()} CPUs; {args.players} players, rounds {args.rounds}; "
          f"{args.iteration_steps} decisions per iteration, {args.n_epochs} epochs of minibatch {args.batch_size}, "
          f"{args.envs_per_runner} games per runner; {args.warmup} warm-up + {args.iterations} measured iterations "
          f"x {args.repeats} turns", flush=True)
    rows: dict[int, list[tuple[float, float, float]]] = {n: [] for n in args.runners}
    for turn in range(args.repeats):
        for runners in args.runners:
            rows[runners] += measure(runners, args, rules)
            print(f"  turn {turn + 1}, {runners} runner(s): "
                  + ", ".join(f"{r[0]:.0f}" for r in rows[runners][-args.iterations:]) + " steps/s", flush=True)
    base = statistics.median(r[0] for r in rows[args.runners[0]])
    print(f"{'runners':>7} {'steps/s':>9} {'sample s':>9} {'update s':>9} {'ratio':>7}")
    for runners, measured in rows.items():
        rate = statistics.median(r[0] for r in measured)
        sample, update = (statistics.median(r[k] for r in measured) for k in (1, 2))
        print(f"{runners:>7} {rate:>9,.0f} {sample:>9.2f} {update:>9.2f} {rate / base:>6.2f}x")


if __name__ == "__main__":
    main()
