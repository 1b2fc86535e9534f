"""``wizard train-values``: learn bids and card play from rollout values, one policy-improvement step per iteration.

    wizard train-values --out runs/values --seed 0       # the default run: 3-6 players, about 15 minutes
    wizard train-values --out runs/values --resume       # continue (with the run's options): finished chunks and iterations are kept
    wizard train-values --out runs/values --backend ray --address auto --workers 32   # collect on a Ray cluster
    wizard train-values --out runs/search --targets search --search-samples 8        # values from search (expert iteration)
    wizard train-values --out runs/search --targets search --search-samples 8 --search-top 4 --start ...   # the network prunes
    wizard train-values --out runs/vs-rule --rule-tables 0.5 ...    # half the games: the network against three RuleAgents
    wizard train-values --out runs/pop --rule-tables 0.25 --pool-tables 0.25 --pool previous,ppo-v3 ...
                                                     # a quarter against an earlier network: the run's own or ppo-v3
    wizard train-values --out runs/exit --targets search --start agents/pretrained/wizard-v1.npz --hidden 512,256 --features
                                                     # expert iteration from the shipped network
    wizard train-values --out runs/small --setting wizard-3p-5r   # the setting's game; evaluated against its RuleAgents
    wizard train-values --out runs/scratch --no-advice --setting wizard-3p-5r --rule-tables 1 --iterations 5
                                                     # from scratch: the observation alone, random play first

Each iteration plays games, tries every legal action of a share of the decisions on copies of the deal, fits a
network to those values (``--targets search``: each action's mean over deals redrawn from what the player sees, as
``pimc`` searches) and evaluates the new agent against RuleAgent (``wizard_env.training.train_values``
describes the run and what ``--out`` holds). The last agent is ``--out/checkpoints/latest.npz``, which
``wizard eval --agents ppo:PATH`` plays (or ``ppo:OUT``, the run folder). Needs the train extras; ``--backend ray``
(``wizard_env.training.ray_collect``: the same data as the local worker processes) needs the rllib extra too.

``--setting NAME`` (a named benchmark setting, ``wizard_env.envs.settings``) fixes the game: its rules and player
count (``--mix`` and the variant options beside it are an error). Its opponents, RuleAgents, are those of the
evaluations and of the ``--rule-tables`` games; the other games are the network against itself, as without a setting.

``--no-advice`` learns from scratch: a network of the observation alone, random weights, plain argmax (no margin),
iteration 0 played and rolled out by random legal actions; the options that need RuleAgent (``--features``,
``--margin`` other than 0, ``--play-margin``, ``--learn bid`` or ``play``, a ``--start`` network with advice) are
refused. ``wizard baseline values`` runs it against a setting's opponents.
"""

from __future__ import annotations

import argparse
import dataclasses

from wizard_env.agents.ppo_agent import LEARNED_PHASES
from wizard_env.engine.rules import parse_rounds
from wizard_env.training.common import rule_opponents
from wizard_env.training.train_values import run_training
from wizard_env.training.values_config import BACKENDS, DATA, TARGETS, ValuesConfig, check_config
from wizard_env.util import options
from wizard_env.util.checks import short_repr

from .common import Given, add_number_options, add_setting_option, command_rules, field_docs, parse_mix, require_packages

HELP = "learn bids and card play from rollout values (every legal action tried on copies of the deal, or of deals redrawn: search)"
DESCRIPTION = (
    "Iterations of: play games, try every legal action of sampled decisions on copies of the deal with the round "
    "played out (--targets search: on --search-samples deals redrawn from what the player sees, the values averaged), "
    "fit a network to those values, evaluate against RuleAgent. Writes data chunks, checkpoints, "
    "config.json and a learning curve (curve.csv, curve.png) into --out."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard train-values`` (the variant options are already there)."""
    d, docs = ValuesConfig(), {k: v.replace("%", "%%") for k, v in field_docs(ValuesConfig).items()}
    parser.add_argument("--out", type=options.path_type, default="runs/values", help="output folder (default runs/values)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out (finished chunks and iterations are kept)")
    parser.add_argument("--learn", choices=tuple(LEARNED_PHASES), default=d.learn,
                        help=f"{docs['learn']}; RuleAgent makes the others (default {d.learn})")
    add_number_options(parser, d, docs, ("iterations", "samples", "games", "workers", "epochs", "batch_size", "seed",
                                         "eval_deals", "torch_threads", "search_samples", "search_top"),
                       ("share", "learning_rate", "rule_tables", "pool_tables"))
    parser.add_argument("--margin", type=options.float_type, default=None,
                        help=f"{docs['margin']} (default {d.margin:g}; 0 with --no-advice)")
    parser.add_argument("--no-advice", dest="advice", action="store_false",
                        help="learn from scratch: the network reads the observation alone, starts from random weights and "
                             "plays the plain argmax; iteration 0 is played and rolled out by random legal actions")
    parser.add_argument("--pool", default="", metavar="SPEC,SPEC,...", help=docs["pool"])
    parser.add_argument("--targets", choices=TARGETS, default=d.targets, help=f"{docs['targets']} (default {d.targets})")
    parser.add_argument("--play-margin", type=options.float_type, default=None, metavar="PLAY_MARGIN",
                        help=f"{docs['play_margin']}")
    parser.add_argument("--hidden", default=",".join(map(str, d.hidden)), help=f"{docs['hidden']} (default %(default)s)")
    parser.add_argument("--features", action="store_true", help=docs["features"])
    parser.add_argument("--data", choices=DATA, default=d.data, help=f"{docs['data']} (default {d.data})")
    parser.add_argument("--mix", action=Given, default=",".join(map(str, d.mix)),
                        help=f"{docs['mix']} (default %(default)s); --players sets the count of the evaluations")
    add_setting_option(parser, "its rules and player count, and its opponents (RuleAgents) in the evaluations and the "
                       "--rule-tables games; no --mix beside it")
    parser.add_argument("--start", type=options.path_type, default=None, metavar="CHECKPOINT",
                        help="a wizard train-values checkpoint (agents/pretrained/wizard-v1.npz, say) that collects "
                             "iteration 0's data and whose weights its fit starts from; its --hidden and --features must "
                             "be passed (default: RuleAgent collects, the fit starts fresh)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--backend", choices=BACKENDS, default=d.backend,
                        help="where the data chunks are collected: local (--workers processes on this machine) or ray "
                             "(--workers Ray tasks at a time; the rllib extra); the same data either way (default local)")
    parser.add_argument("--address", default=d.address, metavar="HOST:PORT",
                        help="--backend ray: join the Ray cluster at this address (or auto); default: start a local Ray instance")


def run(args: argparse.Namespace) -> int:
    """``wizard train-values``."""
    # the fit, then the rated evaluations and the curve's plot
    require_packages(("torch", "openskill", "matplotlib"), "wizard train-values")
    import torch
    try:
        hidden = [options.int_type(h) for h in args.hidden.split(",")]
    except argparse.ArgumentTypeError:
        raise ValueError(f"--hidden {short_repr(args.hidden)}: expected layer sizes such as 256,256") from None
    rules, setting = command_rules(args)
    if setting is not None:
        rule_opponents(setting, "wizard train-values")
    mix = parse_mix(args.mix) if setting is None else [setting.num_players]
    fields = {f.name for f in dataclasses.fields(ValuesConfig)} - {"hidden", "mix", "start", "pool", "margin"}
    margin = args.margin if args.margin is not None else ValuesConfig.margin if args.advice else 0.0
    cfg = ValuesConfig(**{k: v for k, v in vars(args).items() if k in fields}, hidden=hidden, mix=mix, margin=margin,
                       start=args.start or "", pool=args.pool.split(",") if args.pool else [])
    check_config(cfg)  # before torch is given --torch-threads
    torch.set_num_threads(cfg.torch_threads)
    rounds = parse_rounds(args.rounds) if setting is None else list(rules.hand_sizes)
    trainer = run_training(cfg, rules, args.out, args.resume, args.quiet, rounds=rounds)
    path = f"{trainer.out}/checkpoints/latest.npz"
    if setting is None:
        agents = f"--agents ppo:{path},{','.join(['rule'] * (trainer.rules.num_players - 1))}"
    else:
        agents = f"--setting {setting.name} --agents ppo:{path}"
    print(f"wrote {path}; evaluate it with: wizard eval {agents} --games 2000")
    return 0
