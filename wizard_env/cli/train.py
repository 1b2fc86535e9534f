"""``wizard train``: MaskablePPO against a pool of RuleAgent, self-play snapshots and RandomAgent, or self-play on RLlib.

    wizard train --out runs/ppo --seed 0            # the default run: bids and play, 3-6 players, 18 minutes
    wizard train --out runs/ppo --resume             # continue from runs/ppo/checkpoints/latest.npz
    wizard train --learn bid --mix 4                 # learn only trump and bids, 4-player games only
    wizard train --setting wizard-3p-5r --no-advice  # the setting's game against its opponents (RuleAgents) alone

    wizard train --backend rllib --out runs/rllib --players 4 --num-env-runners 2
    wizard train --backend rllib --out runs/rllib --resume                       # continue the run
    wizard train --backend rllib --address 10.0.0.1:6379 --num-env-runners 16  # on a running Ray cluster

``--backend sb3`` (the default) is ``wizard_env.training.ppo.train``: it clones RuleAgent, then improves on it
with PPO, and writes ``config.json``, TensorBoard logs, checkpoints and a learning curve into ``--out``
(needs the train extras); the first Ctrl-C stops it at the next step, saves the last whole rollout's policy and
exits (``--resume`` continues). ``--backend rllib`` is ``wizard_env.training.rllib.rllib_train``: one shared policy for
every seat on Ray RLlib (needs the rllib extra); each backend refuses the options only the other one reads.

``--setting NAME`` (a named benchmark setting, ``wizard_env.envs.settings``; sb3 only) fixes the game and the
opponents: its rules and player count, and its opponents (RuleAgents) as the whole opponent pool, so there is no
self-play and no RandomAgent; ``--pool``, ``--mix`` and the variant options beside it are an error. The warm start
still clones RuleAgent unless ``--bc-epochs 0`` (``wizard baseline maskable-ppo`` is that run with no advice).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from wizard_env.agents.ppo_agent import LEARNED_PHASES
from wizard_env.engine.rules import parse_rounds
from wizard_env.training import train_report
from wizard_env.training.ppo.train import ABOVE_ZERO, RANGES, TrainConfig, run_training
from wizard_env.training.common import rule_opponents
from wizard_env.training.ppo.train_resume import saved_config
from wizard_env.training.rllib.rllib_train import RANGES as RLLIB_RANGES
from wizard_env.util import options

from .common import (Given, add_number_options, add_setting_option, command_rules, field_docs, make_rules, parse_mix,
                     require_packages)

HELP = "train a MaskablePPO agent against RuleAgent, self-play snapshots and RandomAgent"
DESCRIPTION = (
    "Clone RuleAgent's decisions, then improve on them with MaskablePPO in batched games against an "
    "opponent pool. Writes config.json, TensorBoard logs, checkpoints, and a learning curve of duplicate "
    "evaluations against RuleAgent (curve.csv, curve.png) into --out. With --backend rllib: self-play "
    "PPO with one shared policy for every seat on Ray RLlib (wizard_env.training.rllib.rllib_train)."
)
#: The options only ``--backend rllib`` reads, with their defaults.
RLLIB_ONLY = (("address", ""), ("num_env_runners", 1), ("envs_per_runner", 4), ("iteration_steps", 8000))
#: The options only ``--backend sb3`` reads.
SB3_ONLY = ("learn", "mix", "pool", "advice", "episode", "init_from", "num_envs", "n_steps", "eval_every", "eval_deals",
            "snapshot_every", "snapshots", "bc_games", "bc_epochs", "bc_smoothing", "target_kl")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard train`` (the variant options are already there)."""
    d, docs = TrainConfig(), {k: v.replace("%", "%%") for k, v in field_docs(TrainConfig).items()}
    parser.add_argument("--out", type=options.path_type, default="runs/train", help="output folder (default runs/train)")
    parser.add_argument("--resume", action="store_true", help="continue from --out/checkpoints/latest.npz")
    parser.add_argument("--init-from", type=options.text_type, default="", metavar="CHECKPOINT",
                        help="a new run that starts from this checkpoint's weights (same --hidden and advice) instead of "
                        "the warm start, e.g. --learn both after a --learn bid run")
    parser.add_argument("--learn", choices=tuple(LEARNED_PHASES), default=d.learn,
                        help=f"{docs['learn']}; RuleAgent makes the others (default {d.learn})")
    add_number_options(parser, d, docs, ("timesteps", "seed", "num_envs", "n_steps", "batch_size", "n_epochs", "eval_every",
                                         "eval_deals", "checkpoint_every", "snapshot_every", "snapshots", "bc_games",
                                         "bc_epochs", "torch_threads"),
                       ("max_minutes", "learning_rate", "ent_coef", "reward_scale", "bc_smoothing", "target_kl",
                        "gae_lambda", "clip_range"), RANGES, ABOVE_ZERO)
    parser.add_argument("--episode", choices=("round", "game"), default=d.episode,
                        help=f"{docs['episode']} (default {d.episode})")
    parser.add_argument("--no-advice", dest="advice", action="store_false",
                        help="the policy reads only the observation, not RuleAgent's choice as well")
    parser.add_argument("--mix", action=Given, type=options.text_type, default=",".join(map(str, d.mix)),
                        help=f"{docs['mix']} (default %(default)s); --players sets the count of the learning-curve evaluations")
    parser.add_argument("--pool", action=Given, type=options.text_type, default=",".join(f"{k}={v}" for k, v in d.pool.items()),
                        help=f"{docs['pool']} (default %(default)s)")
    add_setting_option(parser, "its rules and player count, and its opponents (RuleAgents) as the whole opponent pool: "
                       "no self-play, no RandomAgent, and the learning curve against them; sb3 only, no --pool or --mix "
                       "beside it")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")
    rllib = parser.add_argument_group("backend", "--backend rllib: multi-agent self-play PPO on Ray RLlib (the rllib extra; "
                                      "it reads --timesteps, --max-minutes, --seed, --learning-rate, --ent-coef, --clip-range, "
                                      "--gae-lambda, --reward-scale, --batch-size, --n-epochs, --checkpoint-every, "
                                      "--torch-threads and the options below)")
    rllib.add_argument("--backend", choices=("sb3", "rllib"), default="sb3",
                       help="sb3: MaskablePPO against the opponent pool (default); rllib: self-play on Ray RLlib")
    rllib.add_argument("--address", type=options.text_type, default="", metavar="HOST:PORT",
                       help="rllib: join the Ray cluster at this address (or auto); default: start a local Ray instance")
    rllib.add_argument("--num-env-runners", type=options.Number(int, *RLLIB_RANGES["num_env_runners"]), default=1, metavar="N",
                       help="rllib: Ray actors playing games, one CPU each (0: the driver plays them; default 1)")
    rllib.add_argument("--envs-per-runner", type=options.Number(int, *RLLIB_RANGES["envs_per_runner"]), default=4, metavar="N",
                       help="rllib: games each env runner steps together (default 4)")
    rllib.add_argument("--iteration-steps", type=options.Number(int, *RLLIB_RANGES["iteration_steps"]), default=8000, metavar="N",
                       help="rllib: decisions sampled per PPO iteration (default 8,000)")


def parse_pool(text: str) -> dict[str, float]:
    """``rule=0.7,self=0.2,random=0.1`` as a dict; ValueError if malformed."""
    pool = {}
    for part in text.split(","):
        name, sep, weight = part.partition("=")
        try:
            value = options.float_type(weight)
        except argparse.ArgumentTypeError:
            raise ValueError(f"--pool {text!r}: expected name=weight pairs of finite numbers such as rule=0.7,self=0.2,random=0.1") from None
        if not sep:
            raise ValueError(f"--pool {text!r}: expected name=weight pairs such as rule=0.7,self=0.2,random=0.1")
        if name.strip() in pool:
            raise ValueError(f"--pool {text!r}: {name.strip()!r} is given twice")
        pool[name.strip()] = value
    return pool


def run(args: argparse.Namespace) -> int:
    """``wizard train``."""
    if args.backend == "rllib":
        if args.setting is not None:
            raise ValueError("--setting applies to --backend sb3 only: rllib trains one policy in self-play, with no "
                             "opponents for a setting to fix")
        parser = argparse.ArgumentParser()
        add_arguments(parser)
        return run_rllib(args, vars(parser.parse_args([])))
    for name, default in RLLIB_ONLY:
        if getattr(args, name, default) != default:
            raise ValueError(f"--{name.replace('_', '-')} applies to --backend rllib only")

    # the train extra includes the eval extra: the evaluations during training are rated and plotted
    require_packages(("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "openskill", "matplotlib"), "wizard train")
    rules, setting = command_rules(args)
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    values = {k: v for k, v in vars(args).items() if k in fields and k not in ("pool", "hidden", "activation", "mix")}
    if setting is None:
        cfg = TrainConfig(**values, pool=parse_pool(args.pool), mix=parse_mix(args.mix))
        rounds = parse_rounds(args.rounds)
    else:
        cfg = TrainConfig(**values, pool={rule_opponents(setting, "wizard train"): 1.0}, mix=[setting.num_players])
        rounds = list(rules.hand_sizes)
    out = Path(args.out)
    saved = saved_config(out) if args.resume else None
    if saved is not None:  # a resumed run keeps its network (check_config checks what config.json says)
        train = saved["train"]
        cfg.hidden, cfg.activation, cfg.advice = train.get("hidden"), train.get("activation"), train.get("advice", False)
        if not cfg.init_from and isinstance(train.get("init_from"), str):  # stopped before its first checkpoint: start alike
            cfg.init_from = train["init_from"]
    trainer = run_training(cfg, rules, out, args.resume, args.quiet, rounds=rounds)
    print(train_report.summary(trainer))
    return 0


def run_rllib(args: argparse.Namespace, defaults: dict[str, Any]) -> int:
    """``wizard train --backend rllib`` (``defaults``: the parser's defaults, to spot sb3-only options given)."""
    from wizard_env.training.rllib.rllib_cluster import require_rllib
    from wizard_env.training.rllib.rllib_train import RLlibConfig, run_rllib as train_rllib, train_report_config

    require_rllib()
    for name in SB3_ONLY:
        if name in defaults and getattr(args, name, defaults[name]) != defaults[name]:
            raise ValueError(f"--{name.replace('_', '-')} applies to --backend sb3 only")
    rules = make_rules(args)
    fields = {f.name for f in dataclasses.fields(RLlibConfig)} - {"hidden", "activation"}
    cfg = RLlibConfig(**{k: v for k, v in vars(args).items() if k in fields})
    out = Path(args.out)
    if args.resume and (out / "config.json").is_file():  # a resumed run keeps its network
        train = train_report_config(out)["train"]
        cfg.hidden, cfg.activation = train.get("hidden"), train.get("activation")
    trainer = train_rllib(cfg, rules, out, args.resume, args.quiet, address=args.address or "")
    done = trainer.iterations
    rate = sum(i["steps"] for i in done) / max(sum(i["wall_s"] for i in done), 1e-9)
    print(f"trained {trainer.steps:,} steps in {len(done)} iteration{'s' if len(done) != 1 else ''} ({rate:,.0f} steps/s); "
          f"illegal actions: {trainer.illegal_actions}; policy: {out / 'checkpoints' / 'latest.npz'}")
    sys.stdout.flush()
    return 0
