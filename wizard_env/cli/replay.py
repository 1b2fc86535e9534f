"""``wizard replay``: show one game of a replay file round by round.

    wizard replay games.jsonl --game 2
    wizard replay games.jsonl --check     # also re-play every game on this engine and compare

Without ``--check`` the lines after the chosen game are not read. An unreadable file or a game that does
not re-play is one error line.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys

from tqdm import tqdm

from wizard_env.engine.replay import ReplayError, parse_line, replay_game, replay_lines
from wizard_env.render.replay_text import format_game
from wizard_env.util import options

HELP = "show a game from a replay file"
DESCRIPTION = "Print a recorded game round by round."
#: The variant options are not added: the replay file says what game it holds.
VARIANT_OPTIONS = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard replay``."""
    parser.add_argument("file", type=options.path_type, metavar="FILE", help="a replay file written by 'wizard simulate --replay'")
    parser.add_argument("--game", type=options.Number(int, 1, options.MAX_COUNT), default=1, metavar="K",
                        help="which game of the file to show, counting from 1 (default 1, the first); "
                        "without --check the lines after it are not read")
    parser.add_argument("--check", action="store_true", help="also re-play every game on the engine and compare")


def run(args: argparse.Namespace) -> int:
    """Print one game of a replay file; with --check re-play every game (reading the lines before it only then)."""
    chosen, count = None, 0
    size = os.path.getsize(args.file) if os.path.isfile(args.file) else None
    with tqdm(total=size, desc="reading", unit="B", unit_scale=True, file=sys.stderr, leave=False,
              disable=not sys.stderr.isatty()) as bar:
        for count, (lineno, raw) in enumerate(replay_lines(args.file, bar.update), 1):
            if args.check or count == args.game:
                record = parse_line(args.file, lineno, raw)
            if args.check:
                try:
                    replay_game(record)
                except ReplayError as err:
                    raise ReplayError(f"{args.file}, game {count}: {err}") from None
            if count == args.game:
                chosen = record
                if not args.check:
                    break
    if count == 0:
        pipe = " (a pipe nobody wrote to)" if stat.S_ISFIFO(os.stat(args.file).st_mode) else ""
        raise ReplayError(f"{args.file}: holds no games{pipe}")
    if chosen is None:
        raise ValueError(f"{args.file} holds {count} game{'s' if count != 1 else ''}; --game must be 1 to {count}")
    print(f"{args.file}: game {args.game}" + (f" of {count}" if args.check else ""))
    if args.check:
        print(f"all {count} games re-play identically on this engine")
    print()
    print(format_game(chosen))
    return 0
