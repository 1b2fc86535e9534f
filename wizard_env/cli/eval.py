"""``wizard eval``: compare agents on duplicate deals, every agent playing every deal from every seat.

    wizard eval --agents rule,rule,random,random --games 200 --players 4 --seed 0
    wizard eval --agents ppo:runs/ppo/checkpoints/latest.npz,rule,rule,rule --games 2000 --out runs/eval-ppo
    wizard eval --setting wizard-3p-5r --agents ppo --games 500

With ``--setting`` (a named benchmark setting, ``wizard_env.envs.settings``) the setting gives the rules and the
agents of every seat but one: ``--agents`` names the one agent to evaluate, which plays each deal from every seat
against the setting's opponents. The variant options, or more than one agent, beside ``--setting`` are an error.

Prints Markdown tables (per agent: mean score per game with a 95% interval over deals, the paired
difference to the reference agent, win rate, bid accuracy overall, by hand size and by bidding position,
an openskill rating) and writes ``eval.json`` and ``eval.png`` into ``--out``. The method is
``wizard_env.training.evaluation.evaluate``'s; the report is ``wizard_env.training.evaluation.eval_report``'s. Needs the eval extra.
"""

from __future__ import annotations

import argparse
import sys

from wizard_env.agents.registry import NAMES_IN_SHORT
from wizard_env.engine.rules import Rules
from wizard_env.training.evaluation import eval_report
from wizard_env.training.progress import Progress
from wizard_env.training.evaluation.evaluate import EVAL_BYTES_PER_GAME, evaluate, require_eval_extra, seatings
from wizard_env.util import options
from wizard_env.util.files import check_writable

from .common import add_setting_option, command_rules, setting_specs, split_specs

HELP = "compare agents on duplicate deals: every agent plays every deal from every seat"
DESCRIPTION = (
    "Play every deal once per rotation of the agents around the table (or per ordering, with "
    "--permutations) and report, per agent, the mean score per game with a 95% interval over deals, "
    "the paired difference to a reference agent, the win rate, bid accuracy (overall, by hand size, by "
    "bidding position) and an openskill rating. Writes eval.json and eval.png into --out."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard eval`` (the variant options are already there)."""
    parser.add_argument("--agents", type=options.text_type, required=True, metavar="A,B,...",
                        help=f"one agent per seat (known: {NAMES_IN_SHORT}; 'name:arg' passes an argument); "
                        "with --setting, the one agent to evaluate")
    add_setting_option(parser, "its rules, and its opponents in every seat but the one of --agents' agent")
    parser.add_argument("--games", type=options.Number(int, 1, options.MAX_COUNT), default=100, metavar="G",
                        help="deals to play; each is played once per rotation (default 100)")
    parser.add_argument("--seed", type=options.seed_type, default=0, metavar="S",
                        help="seed of every deal and agent: the same command gives the same output (default 0)")
    parser.add_argument("--permutations", action="store_true",
                        help="play every ordering of the agents (n! games per deal) instead of the n rotations")
    parser.add_argument("--reference", type=options.text_type, metavar="NAME",
                        help="agent the paired differences are taken to "
                        "(default: the first rule, else the first agent)")
    parser.add_argument("--out", type=options.path_type, metavar="DIR", help="folder for eval.json and eval.png (default runs/eval-SEED)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar (on a terminal) or progress lines (in a log)")


def run(args: argparse.Namespace) -> int:
    """``wizard eval``: play, print the Markdown tables, write the JSON and the plot."""
    rules, specs = _seats(args)
    require_eval_extra()
    options.check_memory("--games", args.games, EVAL_BYTES_PER_GAME * len(seatings(rules.num_players, args.permutations)))
    if args.reference is not None and args.reference.strip() not in specs:
        raise ValueError(f"--reference {args.reference!r} is not one of --agents: {', '.join(dict.fromkeys(specs))}")
    out = args.out or f"runs/eval-{args.seed}"
    check_writable(out, folder=True)  # before the games, not after
    rounds = args.games * len(seatings(rules.num_players, args.permutations)) * rules.num_rounds
    with Progress("eval", rounds, "round", args.quiet, lambda line: print(line, file=sys.stderr, flush=True)) as bar:
        result = evaluate(rules, specs, args.games, args.seed, args.permutations, args.reference, progress=bar.update)
    paths = eval_report.write(result, out)
    print(eval_report.format_markdown(result))
    print(f"\nwrote {', '.join(str(p) for p in paths)}")
    return 0


def _seats(args: argparse.Namespace) -> tuple[Rules, list[str]]:
    """The rules and an agent spec per seat: the variant options and --agents, or --setting and --agents' one agent."""
    specs = split_specs(args.agents, "--agents")
    rules, setting = command_rules(args)
    if setting is None:
        if len(specs) != rules.num_players:
            n = rules.num_players
            raise ValueError(f"--agents names {len(specs)} agents for {n} seats: give exactly {n}")
        return rules, specs
    return rules, setting_specs(specs, setting, "take the other seats: give the one agent to evaluate")
