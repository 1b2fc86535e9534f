"""``wizard eval-suite``: the model card's evaluation battery for one agent spec, as one command.

    wizard eval-suite ppo --out runs/suite-ppo                  # the shipped agent, 2,000 deals a row
    wizard eval-suite ppo:runs/values/checkpoints/latest.npz --reference ppo,ppo-bid --out runs/suite-new
    wizard eval-suite rule --games 50 --skip reference,players --out runs/suite-rule
    wizard eval-suite search --games 100 --workers 2 --out runs/suite-search   # a slow agent: tables on 2 cores
    wizard eval-suite net --reference net-v12,net-v11 --out runs/suite-net --card docs/cards/net.toml  # and its card

Rows (``--skip`` leaves some out): the agent against three ``rule``; against each ``--reference`` one against
three and three against one; the learned-play ablation (``AGENT:play=rule`` against three ``rule``, paired by
deal with the agent's own row) for a ``ppo`` spec; four copies against four ``rule``, paired by deal; 3, 5 and
6 players against ``rule`` (``--players-battery``); bid accuracy. Every figure has its 95% interval over
deals. Prints the Markdown table and writes ``suite.md`` and ``suite.json`` (every figure, the per-deal
scores of every table, the settings) into ``--out``; with ``--card docs/cards/NAME.toml`` that JSON then becomes the
model card's NAME.json and the card NAME.md is made (``wizard card``). The method is
``wizard_env.training.evaluation.eval_suite``'s.
"""

from __future__ import annotations

import argparse
import sys

from wizard_env.training.evaluation import cards, eval_suite
from wizard_env.util import options

from .common import split_specs
from .main import installed_version

VARIANT_OPTIONS = False  # the battery fixes its tables: standard rounds, open bidding, 3-6 players
HELP = "the model card's evaluation battery for one agent: every row, its Markdown table and JSON"
DESCRIPTION = (
    "Evaluate one agent spec on duplicate deals against three rule agents, against reference agents (one "
    "against three and three against one), with RuleAgent's card play (ppo specs: the learned-play "
    "ablation), as four copies against four rule agents paired by deal, at 3, 5 and 6 players, and for bid "
    "accuracy, every figure with its 95% interval over deals. Prints the table and writes suite.md and "
    "suite.json into --out."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard eval-suite``."""
    parser.add_argument("agent", type=options.text_type, metavar="AGENT", help="the agent spec evaluated (ppo, ppo:PATH, pimc:samples=16, rule, ...)")
    parser.add_argument("--games", type=options.Number(int, 2, options.MAX_COUNT), default=eval_suite.DEFAULT_DEALS, metavar="G",
                        help=f"deals per table, each played in every rotation (default {eval_suite.DEFAULT_DEALS:,}, as the model card)")
    parser.add_argument("--seed", type=options.seed_type, default=eval_suite.DEFAULT_SEED, metavar="S",
                        help="seed S: 4-player rows use S, self-play S + 1, the other player counts S + 2 "
                        f"(default {eval_suite.DEFAULT_SEED}: the model card's seeds 1, 2, 3)")
    parser.add_argument("--reference", type=options.text_type, default=",".join(eval_suite.DEFAULT_REFERENCES), metavar="A,B,...",
                        help="reference agents, each met one against three and three against one; 'none' for no "
                        f"reference rows (default {','.join(eval_suite.DEFAULT_REFERENCES)}; the agent itself is skipped)")
    parser.add_argument("--reference-games", type=options.Number(int, 2, options.MAX_COUNT), metavar="G",
                        help="deals per reference table (default --games; less for a slow reference such as pimc)")
    parser.add_argument("--players-battery", type=options.text_type, default=",".join(map(str, eval_suite.DEFAULT_PLAYERS)), metavar="N,...",
                        help="the other player counts played against rule; 'none' for none (default 3,5,6)")
    parser.add_argument("--skip", type=options.text_type, default="", metavar="ROW,...",
                        help=f"rows to leave out: {', '.join(eval_suite.ROW_KINDS)} (bid accuracy comes with rule)")
    parser.add_argument("--out", type=options.path_type, metavar="DIR",
                        help="folder for suite.md and suite.json (default runs/eval-suite-SEED)")
    parser.add_argument("--workers", type=options.Number(int, 1, eval_suite.MAX_WORKERS), default=1, metavar="N",
                        help="processes playing the tables at once, each a core (default 1); the figures are the same "
                             "for any N, and with N above 1 each table prints progress lines instead of a bar")
    parser.add_argument("--card", type=options.path_type, metavar="NAME.toml",
                        help="then make this model card: the battery's JSON becomes NAME.json beside it, and NAME.md "
                             "is made from NAME.toml and it (as `wizard card`)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines or bar")


def _none_or_list(text: str) -> list[str]:
    return [] if text.strip().lower() in ("", "none") else [part.strip() for part in text.split(",")]


def _player_counts(text: str) -> tuple[int, ...]:
    try:
        return tuple(dict.fromkeys(int(part) for part in _none_or_list(text)))
    except ValueError:
        raise ValueError(f"--players-battery {text!r}: expected player counts such as 3,5,6, or none") from None


def config_from(args: argparse.Namespace) -> eval_suite.SuiteConfig:
    """The battery's settings from the command line; ValueError naming the option at fault."""
    references = _none_or_list(args.reference)
    if references:
        references = split_specs(",".join(references), "--reference")
    config = eval_suite.SuiteConfig(args.agent.strip(), args.games, args.seed, tuple(references), args.reference_games,
                                    _player_counts(args.players_battery), tuple(_none_or_list(args.skip)), args.workers)
    config.check()
    return config


def run(args: argparse.Namespace) -> int:
    """``wizard eval-suite``: play every row, print the table, write suite.md and suite.json."""
    from tqdm import tqdm

    config = config_from(args)
    if args.card is not None:  # the card's text is checked before any game
        cards.load_card_text(cards.card_files(args.card)[0])
    out = args.out or f"runs/eval-suite-{args.seed}"
    data, paths = eval_suite.run_to(out, config, log=lambda line: tqdm.write(line, file=sys.stderr),
                                    quiet=args.quiet, version=installed_version())
    print(eval_suite.format_markdown(data), end="")
    if args.card is not None:
        paths += cards.write_card(args.card, paths[-1])
    print(f"\nwrote {', '.join(str(p) for p in paths)}")
    return 0
