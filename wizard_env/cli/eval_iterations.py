"""``wizard eval-iterations``: whether the iterations of a ``wizard train-values`` run climb, as a table and a curve.

    wizard eval-iterations runs/exit --games 1000                    # the start and every iter-K of a run
    wizard eval-iterations runs/exit --games 1000 --pimc-games 200   # also each against three pimc:samples=16 (slow)
    wizard eval-iterations runs/zero --games 200 --expert-games 20   # also each one's expert against it (slow)
    wizard eval-iterations --checkpoints a.npz,b.npz,c.npz --out runs/climb-abc
    wizard eval-iterations --checkpoints ppo-v7,ppo-v8,ppo-v9 --out runs/climb-shipped  # shipped networks by name

Give either a run folder (RUN: its ``checkpoints/iter-K.npz`` by K, after the network ``--start`` named, if any)
or ``--checkpoints`` (files, or shipped networks by name, in the order given). Every checkpoint is measured on
duplicate deals against three ``rule`` (seed S), as four copies against four ``rule`` paired by deal per player
(S + 1) with the change from the row above paired by deal, head to head against three copies of the row above
(S + 2), with ``--pimc-games`` against three ``--pimc`` (S + 3) and, with ``--expert-games``, its expert (the search
that made its targets, ``iteration_curve.expert_spec``) against three of it (S + 4); each row gets a verdict (climbs, level, falls
back). Prints the Markdown table and writes ``climb.md``, ``climb.json`` and ``climb.png`` into ``--out``. The
method, and the rule of the verdict, are ``wizard_env.training.evaluation.iteration_curve``'s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wizard_env.training.evaluation import iteration_curve
from wizard_env.util import options

from .common import make_rules
from .main import installed_version

HELP = "whether the iterations of a train-values run climb: each against rule, in self-play, against the one before"
DESCRIPTION = (
    "Measure every checkpoint of a wizard train-values run (RUN), or the --checkpoints given, on duplicate deals: "
    "against three rule agents, as four copies against four rule agents paired by deal (and the change from the "
    "checkpoint before), head to head against three copies of the checkpoint before, and with --pimc-games against "
    "three pimc agents, with --expert-games its expert (the search that made its targets) against three of it, every figure with its 95% interval over deals and a verdict per checkpoint. Prints the table "
    "and writes climb.md, climb.json and climb.png into --out."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard eval-iterations`` (the variant options are already there: 4 players, standard rounds)."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument("run_folder", type=options.text_type, nargs="?", metavar="RUN",
                       help="a wizard train-values run folder: its checkpoints/iter-K.npz by K, after the checkpoint "
                       "its config.json names as train.start (latest.npz is left out)")
    which.add_argument("--checkpoints", type=options.text_type, metavar="A,B,...",
                       help="instead of RUN (give one or the other): checkpoint files, run folders (their latest) or shipped "
                       "networks by name (ppo-v1,ppo-v2: the shipped line), in this order, separated by ',' (so a path "
                       "here may not contain one)")
    parser.add_argument("--games", type=options.Number(int, 2, options.MAX_COUNT), default=iteration_curve.DEFAULT_DEALS, metavar="G",
                        help=f"deals per table, each played in every rotation (default {iteration_curve.DEFAULT_DEALS:,})")
    parser.add_argument("--seed", type=options.seed_type, default=iteration_curve.DEFAULT_SEED, metavar="S",
                        help="seed S: against rule S, self-play S + 1, head to head S + 2, against --pimc S + 3, expert S + 4 "
                        f"(default {iteration_curve.DEFAULT_SEED})")
    parser.add_argument("--pimc-games", type=options.Number(int, 0, options.MAX_COUNT), default=0, metavar="M",
                        help="deals of each checkpoint against three --pimc (default 0: not played; search is slow)")
    parser.add_argument("--pimc", type=options.text_type, metavar="SPEC",
                        help=f"the search agent of --pimc-games (default {iteration_curve.DEFAULT_PIMC})")
    parser.add_argument("--expert-games", type=options.Number(int, 0, options.MAX_COUNT), default=0, metavar="M",
                        help="deals of each checkpoint's expert (pimc with the run's search settings and the checkpoint "
                        "as rollout policy and bid model) against three of it (default 0: not played; search is slow)")
    parser.add_argument("--out", type=options.path_type, metavar="DIR",
                        help="folder for climb.md, climb.json and climb.png (default RUN/climb, or runs/climb with --checkpoints)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines or bar")


def config_from(args: argparse.Namespace) -> iteration_curve.CurveConfig:
    """The curve's settings from the command line; ValueError naming the option or file at fault."""
    rules = make_rules(args)
    if args.run_folder is None and args.checkpoints is None:
        raise ValueError("give a wizard train-values run folder (RUN) or --checkpoints A,B,...")
    if args.run_folder is not None:
        checkpoints = iteration_curve.run_checkpoints(args.run_folder)
    else:
        checkpoints = iteration_curve.listed_checkpoints(args.checkpoints.split(","))
    if args.pimc is not None and args.pimc_games == 0:
        raise ValueError("--pimc applies with --pimc-games M only (M deals against it)")
    config = iteration_curve.CurveConfig(tuple(checkpoints), args.games, args.seed, args.pimc_games,
                                         (args.pimc or iteration_curve.DEFAULT_PIMC).strip(), rules, args.run_folder,
                                         args.expert_games)
    config.check()
    return config


def run(args: argparse.Namespace) -> int:
    """``wizard eval-iterations``: play every table, print the table, write climb.md, climb.json and climb.png."""
    from tqdm import tqdm

    config = config_from(args)
    out = args.out or (str(Path(args.run_folder) / "climb") if args.run_folder is not None else "runs/climb")
    data, paths = iteration_curve.run_to(out, config, log=lambda line: tqdm.write(line, file=sys.stderr),
                                         quiet=args.quiet, version=installed_version())
    print(iteration_curve.format_markdown(data), end="")
    print(f"\nwrote {', '.join(str(p) for p in paths)}")
    return 0
