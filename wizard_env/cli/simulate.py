"""``wizard simulate``: play games between agents and summarise them per seat.

    wizard simulate --players 4 --agents rule,rule,rule,random --games 200 --seed 0 --replay games.jsonl
    wizard simulate --setting wizard-3p-5r --agents random --games 200     # random in seat 0, the setting's opponents after

Prints, per seat, the mean score with its 95% confidence interval, the win rate and the bid accuracy.
Games are played one at a time; ``wizard eval`` plays many at once. With ``--replay FILE`` every game is
written as one JSON line (``wizard-replay/1``), into a temporary file renamed onto FILE at the end.

With ``--setting`` (a named benchmark setting, ``wizard_env.envs.settings``) the setting gives the rules and the
agents of seats 1 and on; ``--agents`` names the one agent of seat 0. Games are not rotated (``wizard eval --setting``
plays every deal from every seat). The variant options, or more than one agent, beside ``--setting`` are an error.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from typing import Sequence

from tqdm import tqdm

from wizard_env.agents.registry import OBSERVATION_AGENTS, PY, USER_SPECS, make_agent, refuse_hidden, searches_games
from wizard_env.agents.zoo import in_short
from wizard_env.engine.replay import ReplayWriter, game_record
from wizard_env.engine.rules import Rules
from wizard_env.engine.simulate import SeatSummary, derive_seeds, play_game, summarise
from wizard_env.render.replay_text import describe_rules
from wizard_env.util import options

from .common import add_setting_option, command_rules, seat_specs, setting_specs, split_specs

HELP = "play many games between agents and summarise"
DESCRIPTION = ("Play games between agents and print, per seat, the mean score with its 95% confidence interval, the "
               "win rate and the bid accuracy. Games are played one at a time, about 16 ms per standard 4-player game "
               "of RuleAgents (1,000 games: about 16 s); 'wizard eval' plays many games at once.")
#: What ``simulate`` keeps per game until the summary (its seed and scores; measured: about 550 bytes).
SIMULATE_BYTES_PER_GAME = 1000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard simulate`` (the variant options are already there)."""
    parser.add_argument("--agents", type=options.text_type, default="rule", metavar="A,B,...",
                        help=f"one agent per seat, or one for all seats (known: {in_short([a for a in OBSERVATION_AGENTS if a != PY])}, "
                        f"{USER_SPECS}; default rule)")
    add_setting_option(parser, "its rules, and its opponents in every seat but seat 0, where --agents' one agent plays")
    parser.add_argument("--games", type=options.Number(int, 1, options.MAX_COUNT), default=100, metavar="G", help="games to play (default 100)")
    parser.add_argument("--seed", type=options.seed_type, default=0, metavar="S",
                        help="seed of every game and agent: the same command gives the same output (default 0)")
    parser.add_argument("--replay", type=options.path_type, metavar="FILE",
                        help="write every game as one JSON line (wizard-replay/1) to FILE")
    parser.add_argument("--with-legal", action="store_true", help="with --replay: also record the legal choices")


def format_summary(rules: Rules, specs: Sequence[str], summaries: Sequence[SeatSummary], games: int, seed: int) -> str:
    """The simulate table: one row per seat, and a line naming the configuration, games and seed."""
    width = max(len("agent"), *map(len, specs))
    lines = [
        f"{describe_rules(rules)}; {games} game{'s' if games != 1 else ''}, seed {seed}",
        f"{'seat':>4}  {'agent':<{width}}  {'mean score':>10}  {'95% CI':>8}  {'win rate':>8}  {'bid accuracy':>12}",
    ]
    for seat, (spec, s) in enumerate(zip(specs, summaries)):
        ci = f"±{s.ci95:.1f}" if games > 1 else "-"
        lines.append(
            f"{seat:>4}  {spec:<{width}}  {s.mean_score:>10.1f}  {ci:>8}  {s.win_rate:>8.1%}  {s.bid_accuracy:>12.1%}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Play the games, write the replays if asked, print the table."""
    rules, setting = command_rules(args)
    options.check_memory("--games", args.games, SIMULATE_BYTES_PER_GAME)
    if args.with_legal and not args.replay:
        raise ValueError("--with-legal needs --replay FILE")
    n = rules.num_players
    if setting is None:
        specs = seat_specs(args.agents, n, "--agents")
    else:
        specs = setting_specs(split_specs(args.agents, "--agents"), setting, "take seats 1 and on: give the one agent of seat 0")
    for spec in specs:
        refuse_hidden(spec, f"--agents {spec!r}")
        if searches_games(spec):
            raise ValueError(f"--agents {spec!r}: a search agent reads the game itself, and simulate's agents play "
                             "from observations alone: play it with 'wizard eval' (or 'wizard play')")
    game_seeds, agent_seeds = derive_seeds(args.seed, args.games, n)
    agents = [make_agent(spec, agent_seed) for spec, agent_seed in zip(specs, agent_seeds)]
    results = []
    # The writer fills a temporary file as games finish and renames it onto FILE only at the end.
    with ReplayWriter(args.replay) if args.replay else contextlib.nullcontext() as writer:
        progress = tqdm(game_seeds, desc="games", unit="game", file=sys.stderr, leave=False,
                        disable=not sys.stderr.isatty())
        for game_seed in progress:
            result = play_game(rules, agents, game_seed, record=writer is not None)
            if writer is not None:
                assert result.game is not None  # play_game keeps the game; it is dropped just below
                writer.write(game_record(result.game, specs, with_legal=args.with_legal))
            results.append(dataclasses.replace(result, game=None))  # keep the numbers, drop the game state
    print(format_summary(rules, specs, summarise(results), args.games, args.seed))
    if writer is not None:
        print(f"replays: {writer.count} games written to {args.replay}")
    return 0
