"""``wizard compare-evals``: the paired difference between two ``wizard eval`` results on the same deals (two
tables, or one agent in each).

    wizard eval --agents ppo,ppo,ppo,ppo --games 2000 --seed 2 --out runs/sp-net
    wizard eval --agents rule,rule,rule,rule --games 2000 --seed 2 --out runs/sp-rule
    wizard compare-evals runs/sp-net/eval.json runs/sp-rule/eval.json
    wizard compare-evals A/eval.json B/eval.json --first net --second net:play=rule

With one seed and deal count both evaluations play the same deals, so the per-deal mean score of the players
compared (by default every seat; ``--first``/``--second`` name one agent spec of each file) at the first table minus
that at the second is a paired sample: prints its mean with a 95% interval over deals
(``wizard_env.training.evaluation.pairing.paired``, which ``wizard eval-suite`` uses for its paired rows). Four copies of an
agent against four RuleAgents measure self-play strength; one agent against the same agent with RuleAgent's card
play, both against three RuleAgents, measure what the learned play adds. Exit status 2 if the files do not share
their deals.
"""

from __future__ import annotations

import argparse

from wizard_env.training.evaluation.pairing import paired
from wizard_env.util import options
from wizard_env.util.files import read_json

VARIANT_OPTIONS = False
HELP = "the paired difference, by deal, between two wizard eval results on the same deals"
DESCRIPTION = (
    "Pair two eval.json files of wizard eval on the same deals (same --seed and --games) deal by deal: the mean score "
    "of the players compared at the first table minus the second's, with its 95% interval over deals."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard compare-evals``."""
    parser.add_argument("first", type=options.path_type, metavar="FIRST", help="eval.json of the first table")
    parser.add_argument("second", type=options.path_type, metavar="SECOND",
                        help="eval.json of the second table, same --seed and --games")
    parser.add_argument("--first", type=options.text_type, dest="first_agent", metavar="SPEC", help="agent spec of the first file (default: every seat)")
    parser.add_argument("--second", type=options.text_type, dest="second_agent", metavar="SPEC", help="agent spec of the second file (default: every seat)")


def run(args: argparse.Namespace) -> int:
    """Print the paired difference per player per game; ValueError (exit 2) if the files do not share their deals."""
    evaluations = []
    for path in (args.first, args.second):
        data, problem = read_json(path)
        if problem is not None:
            raise ValueError(f"{path} {problem}")
        if not isinstance(data, dict) or not {"agents", "players", "deal_scores", "deal_seeds"} <= data.keys():
            raise ValueError(f"{path} is not the eval.json of wizard eval (agents, players, deal_seeds, deal_scores)")
        evaluations.append(data)
    a, b = evaluations
    result = paired(a, b, args.first_agent, args.second_agent)
    first_name = args.first_agent or ", ".join(a["agents"])
    second_name = args.second_agent or ", ".join(b["agents"])
    print(f"{first_name}: {result.first.mean:.1f} per player per game; {second_name}: {result.second.mean:.1f}; "
          f"paired by deal over {result.deals} deals: {result.diff.mean:+.1f} ± {result.diff.ci95 or 0:.1f}")
    return 0
