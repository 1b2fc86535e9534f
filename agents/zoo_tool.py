"""Upkeep of the zoo (``zoo``), run from a clone of the repository.

``python -m wizard_env.agents.zoo_tool manifest``: write ``pretrained/zoo.json`` again with the sha256 of the
repository's files (after a network is added or rewritten).

``python -m wizard_env.agents.zoo_tool portable FILE ... [--run DIR]``: rewrite checkpoints' configs so that the
sources their ``train`` entry records name nothing of the machine they were trained on (``portable_sources``: a
network of the zoo by its agent name, another path relative to the run folder), every weight array as it was; each
file is written atomically.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from .checkpoint import portable_sources
from .ppo_agent import load_checkpoint, save_checkpoint
from .zoo import CLONE_ZOO, write_manifest


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wizard_env.agents.zoo_tool", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("manifest", help="write pretrained/zoo.json again with the sha256 of the repository's files")
    portable = commands.add_parser("portable", help="rewrite checkpoints' configs so that their sources name nothing "
                                   "of one machine (weights untouched)")
    portable.add_argument("files", nargs="+", metavar="FILE")
    portable.add_argument("--run", metavar="DIR", help="the run folder sources are written relative to (default: the "
                          "folder above 'steps/' in the sources)")
    args = parser.parse_args(argv)
    try:
        if args.command == "manifest":
            print(write_manifest(CLONE_ZOO.parent))
            return 0
        for file in args.files:
            config, weights = load_checkpoint(file)
            new = portable_sources(config, args.run)
            if new == config:
                print(f"{file}: unchanged")
                continue
            save_checkpoint(file, new, weights)
            train = new["train"]
            print(f"{file}: train.start {json.dumps(train.get('start'))}, train.data_from {json.dumps(train.get('data_from'))}")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
