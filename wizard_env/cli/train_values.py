"""``wizard train-values``: learn bids and card play from rollout values, one policy-improvement step per iteration.

    wizard train-values --out runs/values --seed 0       # the default run: 3-6 players, about 15 minutes
    wizard train-values --out runs/values --minutes 30   # stop at the last iteration finished within 30 minutes
    wizard train-values --out runs/values --resume --iterations 4   # continue with the run's settings (finished chunks and iterations are kept), up to 4 iterations
    wizard train-values --out runs/values --backend ray --address auto --workers 32   # collect on a Ray cluster
    wizard train-values --out runs/search --targets search --search-samples 8        # values from search (expert iteration)
    wizard train-values --out runs/search --targets search --search-samples 8 --search-top 4 --start ...   # the network prunes
    wizard train-values --out runs/vs-rule --rule-tables 0.5 ...    # half the games: the network against three RuleAgents
    wizard train-values --out runs/pop --rule-tables 0.25 --pool-tables 0.25 --pool previous,ppo-v3 ...
                                                     # a quarter against an earlier network: the run's own or ppo-v3
    wizard train-values --out runs/exit --targets search --start zoo/wizard-v1.npz --hidden 512,256 --features
                                                     # expert iteration from the shipped network
    wizard train-values --out runs/next --data-from runs/exit,runs/exit2 --data all ...
                                                     # every fit also reads the data of two earlier runs
    wizard train-values --out runs/climb --gate 1000 --data all ...   # keep an iteration only if it beats the one
                                                     # before head to head and does not lose in self-play
    wizard train-values --out runs/climb --gate 4000 --gate-rule climbs ...   # only if the head-to-head interval lies
                                                     # above 0 (eval-iterations' "climbs") and self-play does not lose
    wizard train-values --out runs/climb --gate 4000 --gate-rule climbs --patience 2 --iterations 8 ...
                                                     # stop once two iterations in a row were rejected
    wizard train-values --out runs/small --setting wizard-3p-5r   # the setting's game; evaluated against its RuleAgents
    wizard train-values --out runs/scratch --no-advice --setting wizard-3p-5r --rule-tables 1 --iterations 5
                                                     # from scratch: the observation alone, random play first

Each iteration plays games, tries every legal action of a share of the decisions on copies of the deal, fits a
network to those values (``--targets search``: each action's mean over deals redrawn from what the player sees, as
``pimc`` searches) and evaluates the new agent against RuleAgent (``wizard_env.training.values.train_values``
describes the run and what ``--out`` holds). The last agent is ``--out/checkpoints/latest.npz``, which
``wizard eval --agents ppo:PATH`` plays (or ``ppo:OUT``, the run folder). Needs the train extras; ``--backend ray``
(``wizard_env.training.values.ray_collect``: the same data as the local worker processes) needs the rllib extra too.

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
from pathlib import Path

from wizard_env.agents.ppo_agent import LEARNED_PHASES
from wizard_env.engine.rules import Rules, parse_rounds
from wizard_env.envs.settings import Setting, get_setting, refuse_beside
from wizard_env.training.common import rule_opponents
from wizard_env.training.values.train_values import run_training
from wizard_env.training.evaluation.gate import GATE_RULES
from wizard_env.training.values.values_config import (ABOVE_ZERO, BACKENDS, DATA, RANGES, RESUME_MAY_CHANGE, TARGETS, ValuesConfig,
                                                      resumed_config, saved_rules, saved_settings)
from wizard_env.util import options
from wizard_env.util.checks import short_repr

from .common import Given, add_number_options, add_setting_option, command_rules, field_docs, parse_mix, require_packages

#: The settings of ``ValuesConfig`` given as options of their own name (None where not given).
FIELDS = {f.name for f in dataclasses.fields(ValuesConfig)} - {"hidden", "mix", "start", "pool"}
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
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --out (finished chunks and iterations are kept) with the settings it was "
                             "started with, but for those given again (only " + ", ".join(
                                 f"--{k.replace('_', '-')}" for k in RESUME_MAY_CHANGE) + " may change)")
    parser.add_argument("--learn", choices=tuple(LEARNED_PHASES),
                        help=f"{docs['learn']}; RuleAgent makes the others (default {d.learn})")
    add_number_options(parser, d, docs, ("iterations", "samples", "games", "workers", "epochs", "batch_size", "seed",
                                         "eval_deals", "torch_threads", "search_samples", "search_top", "gate", "patience",
                                         "confirm"),
                       ("share", "learning_rate", "rule_tables", "pool_tables"), RANGES, ABOVE_ZERO, unset=True)
    parser.add_argument("--margin", type=options.Number(float, *RANGES["margin"]), default=None,
                        help=f"{docs['margin']} (default {d.margin:g}; 0 with --no-advice)")
    parser.add_argument("--no-advice", dest="advice", action="store_const", const=False,
                        help="learn from scratch: the network reads the observation alone, starts from random weights and "
                             "plays the plain argmax; iteration 0 is played and rolled out by random legal actions")
    parser.add_argument("--zero", action="store_const", const=True, help=docs["zero"])
    parser.add_argument("--pool", type=options.text_type, metavar="SPEC,SPEC,...", help=docs["pool"])
    parser.add_argument("--targets", choices=TARGETS, help=f"{docs['targets']} (default {d.targets})")
    parser.add_argument("--play-margin", type=options.Number(float, *RANGES["margin"]), default=None, metavar="PLAY_MARGIN",
                        help=f"{docs['play_margin']}")
    parser.add_argument("--hidden", type=options.text_type, help=f"{docs['hidden']} (default {','.join(map(str, d.hidden))})")
    parser.add_argument("--features", action="store_const", const=True, help=docs["features"])
    parser.add_argument("--search-infer", action="store_const", const=True, help=docs["search_infer"])
    parser.add_argument("--data", choices=DATA, help=f"{docs['data']} (default {d.data})")
    parser.add_argument("--gate-rule", choices=GATE_RULES, help=f"{docs['gate_rule']} (default {d.gate_rule})")
    parser.add_argument("--soup", action="store_const", const=True, help=docs["soup"])
    parser.add_argument("--data-from", type=options.text_type, metavar="DIR,DIR,...", help=docs["data_from"])
    parser.add_argument("--mix", action=Given, type=options.text_type,
                        help=f"{docs['mix']} (default {','.join(map(str, d.mix))}); --players sets the count of the evaluations")
    add_setting_option(parser, "its rules and player count, and its opponents (RuleAgents) in the evaluations and the "
                       "--rule-tables games; no --mix beside it")
    parser.add_argument("--start", type=options.path_type, default=None, metavar="CHECKPOINT",
                        help="a wizard train-values checkpoint (zoo/wizard-v1.npz, say) that collects "
                             "iteration 0's data and whose weights its fit starts from; its --hidden and --features must "
                             "be passed (default: RuleAgent collects, the fit starts fresh)")
    parser.add_argument("--minutes", type=options.Number(float, 0, options.MAX_COUNT, above=True), metavar="M",
                        help="wall-time budget of the run, its earlier sessions included (as wizard baseline's --minutes): "
                             "once M minutes have passed no new chunk is collected and the run stops at the last finished "
                             "iteration (the first always finishes; --resume with more minutes continues); default: none")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--backend", choices=BACKENDS,
                        help="where the data chunks are collected: local (--workers processes on this machine) or ray "
                             "(--workers Ray tasks at a time; the rllib extra); the same data either way (default local)")
    parser.add_argument("--address", type=options.text_type, metavar="HOST:PORT",
                        help="--backend ray: join the Ray cluster at this address (or auto); default: start a local Ray instance")


def run(args: argparse.Namespace) -> int:
    """``wizard train-values``."""
    # the fit, then the rated evaluations and the curve's plot
    require_packages(("torch", "openskill", "matplotlib"), "wizard train-values")
    out = Path(args.out)
    before = resumed_config(out) if args.resume else None  # another command's run, or a damaged one, refused
    rules, rounds, setting = run_rules(args, before)
    if setting is not None:
        rule_opponents(setting, "wizard train-values")
    settings = {**dataclasses.asdict(ValuesConfig()), **(saved_settings(before) if before else {}), **given_settings(args)}
    if setting is not None:
        settings["mix"] = [setting.num_players]
    if args.margin is None and before is None:  # from scratch the network plays the plain argmax
        settings["margin"] = ValuesConfig.margin if settings["advice"] else 0.0
    cfg = ValuesConfig(**settings)
    header = {"setting": setting.name} if setting is not None else None
    trainer = run_training(cfg, rules, out, args.resume, args.quiet, rounds=rounds, minutes=args.minutes, header=header)
    path = f"{trainer.out}/checkpoints/latest.npz"
    if setting is None:
        agents = f"--agents ppo:{path},{','.join(['rule'] * (trainer.rules.num_players - 1))}"
    else:
        agents = f"--setting {setting.name} --agents ppo:{path}"
    print(f"wrote {path}; evaluate it with: wizard eval {agents} --games 2000")
    return 0


def given_settings(args: argparse.Namespace) -> dict:
    """The settings of ``ValuesConfig`` given on the command line (each option is None where it is not given)."""
    given = {k: v for k, v in vars(args).items() if k in FIELDS and v is not None}
    if args.hidden is not None:
        try:
            given["hidden"] = [options.int_type(h) for h in args.hidden.split(",")]
        except argparse.ArgumentTypeError:
            raise ValueError(f"--hidden {short_repr(args.hidden)}: expected layer sizes such as 256,256") from None
    if args.mix is not None:
        given["mix"] = parse_mix(args.mix)
    for key in ("pool", "data_from"):  # lists of strings, by comma
        if getattr(args, key) is not None:
            given[key] = getattr(args, key).split(",") if getattr(args, key) else []
    if args.start is not None:
        given["start"] = args.start
    return given


def run_rules(args: argparse.Namespace, before: dict | None) -> tuple[Rules, str | int | list[int], Setting | None]:
    """The rules, the mix's ``--rounds`` and the setting of the run: those of the command line, or of the run
    ``--resume`` continues (its config.json, ``before``) where no variant option or ``--setting`` is given."""
    if before is None or args.setting is not None or set(args.given_variant) - {"--mix"}:
        rules, setting = command_rules(args)
        return rules, parse_rounds(args.rounds) if setting is None else list(rules.hand_sizes), setting
    rules, rounds, name = saved_rules(before, Path(args.out) / "config.json")
    setting = get_setting(name) if name is not None else None
    if setting is not None:
        refuse_beside(setting, args.given_variant)  # --mix: the run's setting fixes it
    return rules, rounds, setting
