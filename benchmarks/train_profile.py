"""Where the time of a training step goes: ``wizard train``'s PPO step, or ``wizard train-values``' data chunk.

Usage::

    python benchmarks/train_profile.py --timesteps 60000          # the default run's settings
    python benchmarks/train_profile.py --mix 4 --no-advice
    python benchmarks/train_profile.py --learn bid --timesteps 30000
    python benchmarks/train_profile.py --values --games 64        # a train-values data chunk
    python benchmarks/train_profile.py --values --agent ppo       # the same with the network as agent and rollout policy

It builds the default run's trainer (warm start skipped: it does not change the cost of a step),
runs PPO for ``--timesteps`` learner decisions under cProfile, and prints learner steps per second
and the share of the wall time in each part. The parts are cumulative times of the functions that
do them, so they are measured in the same run and their shares do not depend on the machine's speed.

With ``--values`` it profiles instead what a ``wizard train-values`` data chunk does in iteration 0:
``--games`` four-player games played by RuleAgent at every seat, a ``--share`` of the decisions with a
choice (of the ``--learn`` phases) valued by RuleAgent's rollouts; it prints decisions valued per second.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile

#: Part of a training step -> (file suffix, function) whose cumulative time measures it.
PARTS = {
    "rollout (all of collecting experience)": ("ppo_mask.py", "collect_rollouts"),
    "  opponents' and delegated moves": ("opponent_pool.py", "_play_opponents"),
    "  RuleAgent deciding (all its act_batch calls)": ("rule_agent.py", "act_batch"),
    "  RuleAgent's advice for the learner": ("advice.py", "_advise"),
    "  learner's moves in the engine": ("batch.py", "step"),
    "  policy forward pass (torch)": ("policies.py", "forward"),
    "PPO update (gradient steps)": ("ppo_mask.py", "train"),
}

#: The same for a train-values data chunk (``collect_values``).
VALUE_PARTS = {
    "rollouts (every legal action played out)": ("rollouts.py", "rollout_values"),
    "  copying the games for them": ("batch.py", "copy_games"),
    "RuleAgent deciding (all its act_batch calls)": ("rule_agent.py", "act_batch"),
    "observations (observe)": ("batch.py", "observe"),
    "legal masks": ("batch.py", "legal_masks"),
    "applying actions in rollouts (apply)": ("batch.py", "apply"),
    "the games' own moves (step)": ("batch.py", "step"),
}
#: With ``--agent ppo``: the network's parts, besides those above.
NETWORK_PARTS = {
    "the network (PPOAgent.act_batch)": ("ppo_agent.py", "act_batch"),
    "  its layers (ppo_network.forward)": ("ppo_network.py", "forward"),
    "  RuleAgent's choice and numbers (act_with_numbers)": ("rule_agent.py", "act_with_numbers"),
}


def print_parts(profiler: cProfile.Profile, parts: dict[str, tuple[str, str]], wall: float) -> None:
    """The seconds and share of ``wall`` of each part (cumulative time of its function in ``profiler``)."""
    stats = pstats.Stats(profiler).stats  # (file, line, name) -> (calls, ..., tottime, cumtime, callers)
    print(f"{'part':<44} {'seconds':>8} {'share':>6}")
    for label, (suffix, name) in parts.items():
        seconds = sum(v[3] for (file, _, func), v in stats.items() if func == name and file.endswith(suffix))
        print(f"{label:<44} {seconds:8.1f} {seconds / wall:6.1%}")


def profiled(run) -> tuple[cProfile.Profile, float]:
    """``run()`` under cProfile: the profile and its wall time in seconds."""
    from wizard_env.util.stopwatch import Stopwatch

    profiler = cProfile.Profile()
    with Stopwatch() as watch:
        profiler.enable()
        run()
        profiler.disable()
    return profiler, watch.seconds


def profile_values(args: argparse.Namespace) -> None:
    """Profile one data chunk of ``wizard train-values`` (RuleAgent, or with ``--agent ppo`` the shipped network,
    playing and rolling out)."""
    from threadpoolctl import threadpool_limits

    from wizard_env.agents.ppo_agent import LEARNED_PHASES, PPOAgent
    from wizard_env.engine.rules import Rules
    from wizard_env.training.values.rollout_values import collect_values

    threadpool_limits(1, user_api="blas")  # as wizard and its workers run
    rules, phases = Rules.make(4), LEARNED_PHASES[args.learn]
    agent = PPOAgent.load(seed=1) if args.agent == "ppo" else None
    collect_values(rules, 2, 1, phases, args.share, behaviour=agent, rollout=agent)  # compiled and warm before the profile
    samples = []
    profiler, wall = profiled(lambda: samples.append(collect_values(rules, args.games, 0, phases, args.share, behaviour=agent,
                                                                    rollout=agent)))
    count = len(samples[0].advice)
    print(f"{count} decisions valued in {wall:.1f} s: {count / wall:.0f} decisions/s under cProfile "
          f"(agent {args.agent}, learn {args.learn}, {args.games} four-player games, share {args.share})")
    print_parts(profiler, VALUE_PARTS | (NETWORK_PARTS if agent else {}), wall)


def main(argv: list[str] | None = None) -> None:
    """Profile a short run and print the table."""
    import torch

    from wizard_env.cli.common import parse_mix
    from wizard_env.training.ppo.train import TrainConfig, Trainer
    from wizard_env.engine.rules import Rules

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=60_000)
    parser.add_argument("--mix", default="3,4,5,6")
    parser.add_argument("--learn", default="both", choices=("both", "bid", "play"))
    parser.add_argument("--no-advice", dest="advice", action="store_false")
    parser.add_argument("--values", action="store_true", help="profile a train-values data chunk instead")
    parser.add_argument("--games", type=int, default=64, help="games of the data chunk (--values)")
    parser.add_argument("--share", type=float, default=0.25, help="share of decisions valued (--values)")
    parser.add_argument("--agent", default="rule", choices=("rule", "ppo"),
                        help="who plays and rolls out (--values): RuleAgent, or the shipped network as in later iterations")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.values:
        profile_values(args)
        return
    cfg = TrainConfig(timesteps=args.timesteps, mix=parse_mix(args.mix), advice=args.advice, learn=args.learn,
                      eval_every=10**9, checkpoint_every=10**9, snapshot_every=10**9)
    with tempfile.TemporaryDirectory() as out:
        trainer = Trainer(cfg, Rules.make(4), out, quiet=True)
        trainer.snapshot()  # the pool as a run has it (one snapshot of the current policy)
        profiler, wall = profiled(trainer.train)
        steps = trainer.model.num_timesteps
    print(f"{steps} learner steps in {wall:.1f} s: {steps / wall:.0f} learner steps/s "
          f"(learn {args.learn}, mix {args.mix}, advice {'on' if args.advice else 'off'}, {cfg.num_envs} games)")
    print_parts(profiler, PARTS, wall)


if __name__ == "__main__":
    main()
