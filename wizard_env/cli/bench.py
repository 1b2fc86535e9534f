"""``wizard bench``: the speed of the engines, measured against peers in the same run (``wizard_env.tools.bench``).

    wizard bench                      # 4 players, standard rules, 3 s per measurement
    wizard bench --seconds 10 --json bench.json
    python -m wizard_env.cli.bench --sizes 1,64,1024,4096

Prints a Markdown table of decisions per second (the AEC env, OpenSpiel's oh_hell if installed, the batched
engine at each of ``--sizes``) and learner steps per second of the batched VecEnv against SB3's DummyVecEnv,
with the ratios between figures of the same run; the progress lines go to stderr.
"""

from __future__ import annotations

import argparse
import sys

from wizard_env.engine.rules import Rules
from wizard_env.tools import bench
from wizard_env.util import options
from wizard_env.util.checks import short_repr
from wizard_env.util.files import check_writable

HELP = "measure engine speed against OpenSpiel and the single-game path"
DESCRIPTION = (
    "Measure decisions per second of the AEC env, OpenSpiel's oh_hell (if installed), the batched "
    "engine at several batch sizes, and learner steps per second of the batched VecEnv against a "
    "DummyVecEnv; print a table and optionally write JSON."
)

#: The longest wall time per figure (``--seconds``).
MAX_SECONDS = 3600.0


def parse_sizes(text: str) -> list[int]:
    """``"1,64,1024"`` as a list of positive ints that fit in memory, or ValueError."""
    try:
        sizes = [options.int_type(s) for s in text.split(",")]
    except argparse.ArgumentTypeError:
        raise ValueError(f"--sizes must be comma-separated integers, not {short_repr(text)}") from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--sizes must be positive batch sizes, not {short_repr(text)}")
    options.check_memory("--sizes", max(sizes), options.GAME_BYTES)
    return sizes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard bench`` (the variant flags come from the CLI; only --players is used)."""
    parser.add_argument("--seconds", type=options.Number(float, 0, MAX_SECONDS, above=True), default=3.0, metavar="T", help="wall time per figure (default 3)")
    parser.add_argument("--sizes", type=options.text_type, default="1,64,1024,4096", metavar="B,...", help="batch sizes (default 1,64,1024,4096)")
    parser.add_argument("--vec-envs", type=options.Number(int, 0, options.MAX_COUNT), default=256, metavar="N",
                        help="games in the batched VecEnv measurement; 0 skips it (default 256)")
    parser.add_argument("--seed", type=options.seed_type, default=0, metavar="S", help="seed of games and actions (default 0)")
    parser.add_argument("--json", type=options.path_type, metavar="FILE", help="also write the results as JSON to FILE")


def run(args: argparse.Namespace) -> int:
    """``wizard bench``: measure, print the table, write JSON if asked."""
    options.check_memory("--vec-envs", args.vec_envs, options.GAME_BYTES)
    if args.rounds != "standard" or args.bidding != "open" or args.bid_total_rule or args.foresight:
        raise ValueError("wizard bench measures standard rules; only --players may be changed")
    Rules.make(args.players)  # a clear error for an impossible player count
    sizes = parse_sizes(args.sizes)
    if args.json:
        check_writable(args.json)  # before minutes of measuring, not after
    results = bench.run_all(args.players, sizes, args.seconds, args.seed, args.vec_envs, log=lambda m: print(m, file=sys.stderr))
    print(bench.table(results))
    if args.json:
        bench.write_json(results, args.json)
        print(f"wrote {args.json}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run as a script: the same as ``wizard bench``."""
    from .main import main as wizard

    return wizard(["bench", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    sys.exit(main())
