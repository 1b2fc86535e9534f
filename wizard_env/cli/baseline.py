"""``wizard baseline ALGO``: a standard RL algorithm learning a benchmark setting from scratch, with nothing from RuleAgent.

    wizard baseline dmc --setting wizard-3p-5r --seed 0 --minutes 30 --steps 5000000 --out runs/base/dmc-3p-0
    wizard baseline dqn --setting wizard-3p-5r --seed 1 --out runs/base/dqn-3p-1 --set buffer_size=128000
    wizard baseline dmc --out runs/base/dmc-3p-0 --setting wizard-3p-5r --resume --minutes 60   # more budget
    wizard baseline values --setting wizard-3p-5r --seed 0 --minutes 15 --out runs/base/values-3p-0
    wizard eval --setting wizard-3p-5r --agents baseline:runs/base/dmc-3p-0 --games 2000

The algorithms (``ALGORITHMS``) are the modules of ``wizard_env.training.baselines``, each reading top to bottom:
``dmc`` (Deep Monte-Carlo: action values regressed on round returns), ``dqn`` (Double DQN with masks, replay and a
target network), ``nfsp`` (Neural Fictitious Self-Play's learner: a Double DQN best response and an average policy
from a reservoir of its choices), ``nfsp-self`` (the same in self-play: the learner in every seat, as in the paper),
``maskable-ppo`` (sb3-contrib's MaskablePPO, run by ``wizard train``'s trainer with no advice and no cloning) and
``values`` (action values from rollouts, run by ``wizard train-values``' trainer with ``--no-advice``; its steps are
decisions with action values). Each learns against the setting's opponents but ``nfsp-self``, which learns against
itself; every learning curve is measured against the setting's opponents. The budget is ``--minutes`` of wall time
and ``--steps`` learner decisions (in self-play, every seat's), whichever ends first, both recorded in config.json.
``--set NAME=VALUE`` changes one of the algorithm's other settings (listed in ``--help``). ``--resume`` keeps the
settings the run was started with, but for those given again (a larger budget, say; ``maskable-ppo`` needs its
``--set`` options again). The run writes checkpoints, a learning curve (curve.csv, curve.png) and config.json into
``--out``; the first Ctrl-C stops it after saving, and ``--resume`` continues it.
The agent it learned plays as ``baseline:OUT``. Needs the train extras. docs/baselines.md has the results.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys

from wizard_env.envs.settings import SETTINGS
from wizard_env.util import options
from wizard_env.util.checks import short_repr

from wizard_env.training.baselines.common import OPTIONS, RANGES, RunArgs

from .common import field_docs, require_packages

HELP = "train a standard RL algorithm on a benchmark setting from scratch (no RuleAgent help)"
DESCRIPTION = ("Train dmc (Deep Monte-Carlo), dqn (Double DQN with masks), nfsp (NFSP's learner), nfsp-self (NFSP in "
               "self-play: the learner in every seat), maskable-ppo (sb3-contrib) or values (action values from "
               "rollouts, wizard train-values --no-advice) in a named setting against its opponents (nfsp-self: against "
               "itself), with no advice, no cloning and no RuleAgent numbers, on a budget of wall minutes and learner "
               "decisions (in self-play, every seat's). Writes checkpoints (played as baseline:OUT), config.json and a "
               "learning curve against the setting's opponents (curve.csv, curve.png) into --out.")
#: The variant options are refused: the setting fixes the game.
VARIANT_OPTIONS = False
#: Each algorithm's module, in ``wizard_env.training.baselines``.
ALGORITHMS = {"dmc": "dmc", "dqn": "dqn", "nfsp": "nfsp", "nfsp-self": "nfsp_self", "maskable-ppo": "maskable_ppo",
              "values": "values"}


def _module(algo: str):
    return importlib.import_module(f"wizard_env.training.baselines.{ALGORITHMS[algo]}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard baseline``."""
    d, docs = RunArgs(), {k: v.replace("%", "%%") for k, v in field_docs(RunArgs).items()}
    parser.add_argument("algo", choices=list(ALGORITHMS), metavar="ALGO", help=f"the algorithm: {', '.join(ALGORITHMS)}")
    parser.add_argument("--setting", required=True, choices=list(SETTINGS), metavar="NAME",
                        help=f"the named benchmark setting ({', '.join(SETTINGS)}): its rules, and its opponents, whom the "
                        "learner plays (nfsp-self: itself) and the learning curve is measured against")
    parser.add_argument("--out", type=options.path_type, required=True, metavar="DIR", help="the run's folder")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out (a larger budget may be given)")
    parser.add_argument("--seed", type=options.seed_type, metavar="S", help=f"{docs['seed']} (default {d.seed})")
    parser.add_argument("--minutes", type=options.Number(float, *RANGES["minutes"]), metavar="M", help=f"{docs['minutes']} (default {d.minutes:g})")
    parser.add_argument("--steps", type=options.Number(int, *RANGES["steps"]), metavar="N", help=f"{docs['steps']} (default {d.steps:,})")
    for name in OPTIONS[4:]:
        parser.add_argument(f"--{name.replace('_', '-')}", type=options.Number(int, *RANGES[name]), metavar="N",
                            help=f"{docs[name]} (default: the algorithm's)")
    others = ", ".join(f.name for f in dataclasses.fields(RunArgs) if f.name not in OPTIONS)
    parser.add_argument("--set", type=options.text_type, action="append", default=[], metavar="NAME=VALUE",
                        help=f"change another of the algorithm's settings, repeatable: {others}, or one of its own (the "
                        "fields of Args in wizard_env.training.baselines.ALGO, listed in docs/baselines.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")


def run(args: argparse.Namespace) -> int:
    """``wizard baseline``: build the algorithm's arguments, train, print where the agent is."""
    require_packages(("torch", "stable_baselines3", "sb3_contrib", "openskill", "matplotlib"), "wizard baseline")
    from wizard_env.training.baselines.common import saved_args

    module = _module(args.algo)
    given = {name: getattr(args, name) for name in OPTIONS if getattr(args, name) is not None}
    fields = {f.name for f in dataclasses.fields(module.Args)}
    # a resumed run keeps the settings it was started with, but for those given again
    saved = {k: v for k, v in (saved_args(args.out) or {}).items() if k in fields} if args.resume else {}
    algo_args = module.Args(**{**saved, **given, **parse_sets(args.set, module.Args)})
    done = module.train(algo_args, args.out, args.resume, args.quiet, log=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"{args.algo} on {args.setting}: {done['decisions']:,} learner decisions in {done['wall_s'] / 60:.1f} min "
          f"(stopped by {done['stopped_by']}); curve: {args.out}/curve.csv, {args.out}/curve.png\n"
          f"evaluate: wizard eval --setting {args.setting} --agents baseline:{args.out} --games 2000")
    return 0


def parse_sets(items: list[str], cls: type) -> dict:
    """``--set NAME=VALUE`` items as the fields of ``cls`` they change, each parsed as its default's type (a string as
    given); ValueError naming an unknown field, one with its own option, one given twice, or a value that is not of the
    field's type (its range is checked with the algorithm's other arguments, before the run writes anything)."""
    defaults = {f.name: getattr(cls(), f.name) for f in dataclasses.fields(cls)}
    values: dict = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in defaults:
            raise ValueError(f"--set {short_repr(item)}: expected NAME=VALUE with NAME one of "
                             f"{', '.join(n for n in defaults if n not in OPTIONS)}")
        if name in OPTIONS:
            raise ValueError(f"--set {name}: give it as --{name.replace('_', '-')}")
        if name in values:
            raise ValueError(f"--set {name}: given twice: give it once")
        default = defaults[name]
        try:
            if isinstance(default, list):
                values[name] = [options.int_type(part) for part in text.split(",")]
            elif isinstance(default, str):
                values[name] = options.text_type(text)
            elif isinstance(default, int):
                values[name] = options.int_type(text)
            else:
                values[name] = options.float_type(text)
        except argparse.ArgumentTypeError as e:
            raise ValueError(f"--set {name}: {e}") from None
    return values
