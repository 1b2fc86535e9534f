"""Learner steps per second: the batched WizardVecEnv against a DummyVecEnv of WizardSingleAgentEnv.

Usage::

    python benchmarks/vec_env_speed.py --players 4 --sizes 64 256 1024 --seconds 5
    python benchmarks/vec_env_speed.py --sizes 256 --profile 20     # cProfile of the batched path

Both paths play the same game against the same opponents (RuleAgent by default); the learner picks
a uniformly random legal action from the masks (``get_action_masks``, as MaskablePPO reads them).
Each entry runs whole VecEnv steps for at least ``--seconds`` after a reset and one warm-up step;
a learner step is one decision in one game, so a VecEnv step counts ``num_envs`` of them.

The last columns split the batched path's time: the opponents' own ``act_batch`` calls, timed
around each call, per learner step, and the ratio the batched VecEnv would reach if everything
else (the engine, the observations, the VecEnv's bookkeeping) cost nothing: its ceiling while the
opponents decide as they do.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np
from sb3_contrib.common.maskable.utils import get_action_masks

from wizard_env.tools.bench import batched, dummy, random_legal, steps_per_second  # the figures `wizard bench` prints

from wizard_env.util.stopwatch import Stopwatch


def opponents_share(num_envs: int, args: argparse.Namespace) -> tuple[float, float]:
    """(seconds a learner step, of them in the opponents' act_batch) of the batched VecEnv over ``args.seconds``."""
    env = batched(num_envs, args)
    inside = [0.0]
    for agent in env.opponent_pool:  # time each call of the pool's agents (instance attributes shadow the method)
        def timed(observations, masks, decide=agent.act_batch):
            start = time.perf_counter()
            actions = decide(observations, masks)
            inside[0] += time.perf_counter() - start
            return actions
        agent.act_batch = timed
    rng = np.random.default_rng(args.seed)
    env.reset()
    env.step(random_legal(get_action_masks(env), rng))  # warm up
    inside[0], steps, watch = 0.0, 0, Stopwatch()
    while watch.seconds < args.seconds:
        env.step(random_legal(get_action_masks(env), rng))
        steps += num_envs
    return watch.stop().seconds / steps, inside[0] / steps


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
    print(f"{'num_envs':>9}{'WizardVecEnv':>15}{'DummyVecEnv':>14}{'ratio':>9}{'µs/step':>9}{'in opp.':>9}{'ceiling':>9}")
    for num_envs in args.sizes:
        fast = steps_per_second(batched(num_envs, args), args.seconds, args.seed)
        slow = steps_per_second(dummy(num_envs, args), args.seconds, args.seed)
        step, opponents = opponents_share(num_envs, args)
        print(f"{num_envs:>9}{fast:>15,.0f}{slow:>14,.0f}{fast / slow:>8.1f}x{step * 1e6:>9.2f}{opponents * 1e6:>9.2f}"
              f"{1 / opponents / slow:>8.1f}x", flush=True)
    print("µs/step: the batched VecEnv's time per learner step (a run of its own); in opp.: of it, inside the "
          "opponents' act_batch; ceiling: the ratio if all else cost nothing")
    if args.profile:
        profile(args.sizes[0], args.profile, args, args.top)


if __name__ == "__main__":
    main()
