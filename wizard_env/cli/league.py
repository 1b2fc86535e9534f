"""``wizard league``: every agent against every other on duplicate deals, with a margin for each two and a rating each.

    wizard league random rule net net-bid --deals 200 --out runs/league     # four agents, 6 pairings, 12 tables
    wizard league random rule net net-bid pimc --deals 200 --out runs/league   # and pimc: plays pimc's 4 pairings alone
    wizard league --from docs/league.json net:runs/my-run --out runs/my-league   # the docs' league and a network of yours
    wizard league random rule pimc search --deals 50 --workers 8 --out runs/search-league   # tables on 8 cores

For each two agents A and B, two tables on the same deals (``--deals``, each played in every rotation of the seats):
one A against three B, and three A against one B (at ``--players N``: one against N - 1). The margin of A over B
is the mean over deals of A's score minus B's at both tables, with its 95% interval. Writes league.md (ratings, the
margins, the pairs, the commands), league.png and league.json into ``--out``. league.json keeps every table
played, and is rewritten after each: the same command continues a league that stopped, and a league with an agent
more plays that agent's tables alone. ``--from`` takes another league's settings and tables (the docs' league, say).
Tables are kept by their agents' specs under the league's settings (rules, seed, deals): a folder whose league has
other settings is refused. The method is ``wizard_env.training.evaluation.league``'s; needs the eval extra.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from wizard_env.agents.registry import NAMES_IN_SHORT
from wizard_env.training.evaluation import league, league_report
from wizard_env.training.evaluation.eval_suite import MAX_WORKERS
from wizard_env.training.evaluation.evaluate import require_eval_extra
from wizard_env.training.evaluation.league_run import run_to
from wizard_env.util import options
from wizard_env.util.files import read_json

from .common import make_rules
from .main import installed_version

HELP = "every agent against every other on duplicate deals: a margin for each two and a rating each"
DESCRIPTION = (
    "Play every two agents at two duplicate tables on the same deals (one against three, three against one, every "
    "rotation of the seats) and write league.md, league.png and league.json into --out: the paired margin of each two "
    "agents with its 95% interval over deals, and an openskill rating of each. The tables played are kept: the same "
    "command continues a stopped league, and an agent added plays its own tables alone."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard league`` (the variant options are already there)."""
    parser.add_argument("agents", nargs="*", type=options.text_type, metavar="AGENT",
                        help=f"agent specs, at least two in all (known: {NAMES_IN_SHORT}; 'name:arg' passes an argument)")
    parser.add_argument("--deals", type=options.Number(int, 2, options.MAX_COUNT), metavar="D",
                        help=f"deals per table, each played in every rotation (default {league.DEFAULT_DEALS})")
    parser.add_argument("--seed", type=options.seed_type, metavar="S",
                        help=f"seed of every deal and agent: the same command gives the same table (default {league.DEFAULT_SEED})")
    parser.add_argument("--from", dest="source", type=options.path_type, metavar="LEAGUE.json",
                        help="a league's JSON: its agents (before AGENTs), settings and tables played; "
                        "no --deals, --seed or variant options beside it")
    parser.add_argument("--note", type=options.text_type, metavar="TEXT", help="a paragraph of Markdown under the title of league.md, kept in "
                        "league.json (default: the note of the league in --out, if any)")
    parser.add_argument("--out", type=options.path_type, metavar="DIR",
                        help="folder for league.md, league.png and league.json; its tables are reused (default runs/league-SEED)")
    parser.add_argument("--workers", type=options.Number(int, 1, MAX_WORKERS), default=1, metavar="N",
                        help="processes playing tables at once, each a core (default 1); the league is the same for any "
                        "N, and with N above 1 each table prints progress lines instead of a bar")
    parser.add_argument("--quiet", action="store_true", help="no progress lines or bar")


def config_from(args: argparse.Namespace) -> league.LeagueConfig:
    """The league's settings from the command line (and ``--from``'s JSON); ValueError naming the option at fault."""
    agents = [spec.strip() for spec in args.agents]  # each checked by the config, named
    if args.source is None:
        rules = make_rules(args)
        deals = league.DEFAULT_DEALS if args.deals is None else args.deals
        seed = league.DEFAULT_SEED if args.seed is None else args.seed
        return league.LeagueConfig(tuple(agents), rules, deals, seed)
    given = [*args.given_variant, *(["--deals"] if args.deals is not None else []), *(["--seed"] if args.seed is not None else [])]
    if given:
        raise ValueError(f"{given[0]}: --from {args.source} gives the league's settings; leave {given[0]} out")
    data, problem = read_json(args.source)
    if problem is not None:
        raise ValueError(f"--from {args.source} {problem}")
    return league.config_of(data, args.source, tuple(agents))


def run(args: argparse.Namespace) -> int:
    """``wizard league``: play the missing tables, print league.md, write the files."""
    from tqdm import tqdm

    config = config_from(args)
    require_eval_extra("wizard league")
    out = args.out or f"runs/league-{config.seed}"
    kept, _ = read_json(Path(out) / league.JSON_NAME)  # the folder's note stays (its problems are named later)
    note = args.note if args.note is not None else kept.get("note", "") if isinstance(kept, dict) else ""
    config = dataclasses.replace(config, note=note if isinstance(note, str) else "")
    data, paths = run_to(out, config, log=lambda line: tqdm.write(line, file=sys.stderr), quiet=args.quiet,
                         version=installed_version(), sources=() if args.source is None else (args.source,), workers=args.workers)
    print(league_report.format_markdown(data), end="")
    print(f"\nwrote {', '.join(str(p) for p in paths)}")
    return 0
