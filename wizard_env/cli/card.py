"""``wizard card``: a model card (docs/cards/NAME.md) made from its text and its battery's JSON.

    wizard card docs/cards/net.toml                               # make net.md from net.toml and net.json
    wizard card docs/cards/net.toml --suite runs/suite-net/suite.json   # a new battery: it becomes net.json first
    wizard card docs/cards/*.toml --check                         # exit 1 naming each card its files would change

A card is three files of one name: NAME.toml, its text written by hand (``title``, ``what``, ``made``, ``bounds``,
Markdown; ``renames`` maps names the battery ran under to today's), NAME.json, the JSON ``wizard eval-suite`` wrote,
and NAME.md, made from both by one template; NAME is the agent's spec. Every figure of the card's tables is computed
from the JSON. The method is ``wizard_env.training.evaluation.cards``' (``CARD_TEMPLATE``, ``write_card``).
"""

from __future__ import annotations

import argparse

from wizard_env.training.evaluation import cards
from wizard_env.util import options

VARIANT_OPTIONS = False
HELP = "make a model card (NAME.md) from its text (NAME.toml) and its battery's JSON (NAME.json)"
DESCRIPTION = (
    "Make the model card NAME.md from NAME.toml (its text) and NAME.json (the JSON of wizard eval-suite) by the "
    "cards' template; with --suite, take that battery's JSON as NAME.json first; with --check, write nothing and "
    "exit 1 if a card differs from what its files make."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard card``."""
    parser.add_argument("cards", nargs="+", type=options.path_type, metavar="CARD",
                        help="a card's NAME.toml, NAME.json or NAME.md (any of the three names the card)")
    parser.add_argument("--suite", type=options.path_type, metavar="SUITE.json",
                        help="the suite.json of a `wizard eval-suite` run, written as the card's NAME.json (one card)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each card that differs")


def run(args: argparse.Namespace) -> int:
    """``wizard card``: make, or with --check compare, each card."""
    if args.suite is not None and (args.check or len(args.cards) > 1):
        raise ValueError("--suite gives one card its battery: name one CARD, without --check")
    if args.check:
        stale = [path for path in args.cards if cards.stale_card(path)]
        for path in stale:
            print(f"{cards.card_files(path)[2]} differs from what its text and JSON make: run wizard card {path}")
        if not stale:
            print(f"{len(args.cards)} card{'s' if len(args.cards) > 1 else ''} as their files make them")
        return 1 if stale else 0
    for path in args.cards:  # every card made before one is written: a bad one changes nothing
        cards.make_card(path, args.suite)
    for path in args.cards:
        written = cards.write_card(path, args.suite)
        print(f"wrote {', '.join(map(str, written))}")
    return 0
