"""Paired difference between two ``wizard eval`` results on the same deals (two tables, or one agent in each).

Usage::

    wizard eval --agents ppo,ppo,ppo,ppo --games 2000 --seed 2 --out runs/sp-ppo
    wizard eval --agents rule,rule,rule,rule --games 2000 --seed 2 --out runs/sp-rule
    python benchmarks/paired_tables.py runs/sp-ppo/eval.json runs/sp-rule/eval.json
    python benchmarks/paired_tables.py A/eval.json B/eval.json --first ppo --second ppo:play=rule

With one seed both evaluations play the same deals, so the per-deal mean score of the players
compared (by default every seat; ``--first``/``--second`` name one agent spec of each file) at the
first table minus that at the second is a paired sample: the script prints its mean with a 95%
interval over deals (``wizard_env.training.pairing.paired``, which
``wizard eval-suite`` uses for its paired rows). Four copies of an agent against four RuleAgents measure self-play strength;
one agent against the same agent with RuleAgent's card play, both against three RuleAgents, measure
what the learned play adds.
"""

from __future__ import annotations

import argparse
import json
import sys

from wizard_env.training.pairing import paired


def main(argv: list[str] | None = None) -> int:
    """Print the paired difference per player per game; 2 if the files do not share their deals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", help="eval.json of the first table")
    parser.add_argument("second", help="eval.json of the second table, same --seed and --games")
    parser.add_argument("--first-agent", "--first", dest="first_agent", help="agent spec of the first file (default: every seat)")
    parser.add_argument("--second-agent", "--second", dest="second_agent", help="agent spec of the second file (default: every seat)")
    args = parser.parse_args(argv)
    try:
        a, b = (json.loads(open(path).read()) for path in (args.first, args.second))
    except (OSError, ValueError) as e:
        print(f"paired_tables: cannot read an evaluation: {e}", file=sys.stderr)
        return 2
    try:
        result = paired(a, b, args.first_agent, args.second_agent)
    except ValueError as e:
        print(f"paired_tables: {e}", file=sys.stderr)
        return 2
    first_name = args.first_agent or ", ".join(a["agents"])
    second_name = args.second_agent or ", ".join(b["agents"])
    print(f"{first_name}: {result.first.mean:.1f} per player per game; {second_name}: {result.second.mean:.1f}; "
          f"paired by deal over {result.deals} deals: {result.diff.mean:+.1f} ± {result.diff.ci95 or 0:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
