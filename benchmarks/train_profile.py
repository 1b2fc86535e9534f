"""Where the time of a ``wizard train`` step goes: the learner's moves, the opponents', advice, the policy, PPO.

Usage::

    python benchmarks/train_profile.py --timesteps 60000          # the default run's settings
    python benchmarks/train_profile.py --mix 4 --no-advice
    python benchmarks/train_profile.py --learn bid --timesteps 30000

It builds the default run's trainer (warm start skipped: it does not change the cost of a step),
runs PPO for ``--timesteps`` learner decisions under cProfile, and prints learner steps per second
and the share of the wall time in each part. The parts are cumulative times of the functions that
do them, so they are measured in the same run and their shares do not depend on the machine's speed.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile

#: Part of a training step -> (file suffix, function) whose cumulative time measures it.
PARTS = {
    "rollout (all of collecting experience)": ("ppo_mask.py", "collect_rollouts"),
    "  opponents' and delegated moves": ("vec_env.py", "_play_opponents"),
    "  RuleAgent deciding (all its act_batch calls)": ("rule_agent.py", "act_batch"),
    "  RuleAgent's advice for the learner": ("advice.py", "_advise"),
    "  learner's moves in the engine": ("batch.py", "step"),
    "  policy forward pass (torch)": ("policies.py", "forward"),
    "PPO update (gradient steps)": ("ppo_mask.py", "train"),
}


def main(argv: list[str] | None = None) -> None:
    """Profile a short run and print the table."""
    import torch

    from wizard_env.bench import Stopwatch
    from wizard_env.training.train import TrainConfig, Trainer, parse_mix
    from wizard_env.rules import Rules

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=60_000)
    parser.add_argument("--mix", default="3,4,5,6")
    parser.add_argument("--learn", default="both", choices=("both", "bid", "play"))
    parser.add_argument("--no-advice", dest="advice", action="store_false")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    cfg = TrainConfig(timesteps=args.timesteps, mix=parse_mix(args.mix), advice=args.advice, learn=args.learn,
                      eval_every=10**9, checkpoint_every=10**9, snapshot_every=10**9)
    with tempfile.TemporaryDirectory() as out:
        trainer = Trainer(cfg, Rules.make(4), out, quiet=True)
        trainer.snapshot()  # the pool as a run has it (one snapshot of the current policy)
        profiler = cProfile.Profile()
        with Stopwatch() as watch:
            profiler.enable()
            trainer.train()
            profiler.disable()
        wall = watch.seconds
        steps = trainer.model.num_timesteps
    stats = pstats.Stats(profiler).stats  # (file, line, name) -> (calls, ..., tottime, cumtime, callers)
    print(f"{steps} learner steps in {wall:.1f} s: {steps / wall:.0f} learner steps/s "
          f"(learn {args.learn}, mix {args.mix}, advice {'on' if args.advice else 'off'}, {cfg.num_envs} games)")
    print(f"{'part':<44} {'seconds':>8} {'share':>6}")
    for label, (suffix, name) in PARTS.items():
        seconds = sum(v[3] for (file, _, func), v in stats.items() if func == name and file.endswith(suffix))
        print(f"{label:<44} {seconds:8.1f} {seconds / wall:6.1%}")


if __name__ == "__main__":
    main()
