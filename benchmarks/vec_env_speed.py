"""Learner steps per second: the batched WizardVecEnv against a DummyVecEnv of WizardSingleAgentEnv.

Usage::

    python benchmarks/vec_env_speed.py --players 4 --sizes 64 256 1024 --seconds 5
    python benchmarks/vec_env_speed.py --sizes 256 --profile 20     # cProfile of the batched path

Both paths play the same game against the same opponents (RuleAgent by default); the learner picks
a uniformly random legal action from the masks (``get_action_masks``, as MaskablePPO reads them).
Each entry runs whole VecEnv steps for at least ``--seconds`` after a reset and one warm-up step;
a learner step is one decision in one game, so a VecEnv step counts ``num_envs`` of them.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

import numpy as np
from sb3_contrib.common.maskable.utils import get_action_masks

from wizard_env.bench import batched, dummy, random_legal, steps_per_second  # the figures `wizard bench` prints


def profile(num_envs: int, steps: int, args: argparse.Namespace, top: int) -> None:
    """Print the top entries (by own time) of ``steps`` batched steps under cProfile."""
    env = batched(num_envs, args)
    rng = np.random.default_rng(args.seed)
    env.reset()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        env.step(random_legal(get_action_masks(env), rng))
    profiler.disable()
    print(f"\ncProfile: {steps} steps of WizardVecEnv({num_envs}), top {top} by own time")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main() -> None:
    """Print the speed table (and a profile with --profile)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4, help="number of players, 3..6")
    parser.add_argument("--opponents", default="rule", help="opponent agent spec for both paths")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024], help="num_envs values")
    parser.add_argument("--seconds", type=float, default=5.0, help="least time measured per entry")
    parser.add_argument("--seed", type=int, default=0, help="seed of both VecEnvs and the learner's choices")
    parser.add_argument("--profile", type=int, default=0, metavar="STEPS", help="also profile this many batched steps")
    parser.add_argument("--top", type=int, default=25, help="profile entries to print")
    args = parser.parse_args()
    print(f"learner steps/s, {args.players} players, opponents {args.opponents!r}, >= {args.seconds} s per entry")
    print(f"{'num_envs':>9}{'WizardVecEnv':>15}{'DummyVecEnv':>14}{'ratio':>9}")
    for num_envs in args.sizes:
        fast = steps_per_second(batched(num_envs, args), args.seconds, args.seed)
        slow = steps_per_second(dummy(num_envs, args), args.seconds, args.seed)
        print(f"{num_envs:>9}{fast:>15,.0f}{slow:>14,.0f}{fast / slow:>8.1f}x", flush=True)
    if args.profile:
        profile(args.sizes[0], args.profile, args, args.top)


if __name__ == "__main__":
    main()
