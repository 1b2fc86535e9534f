"""The ``wizard`` command: simulate games between agents, show replay files, play a seat yourself, serve the web table.

    wizard simulate --players 4 --agents rule,rule,rule,random --games 200 --seed 0 --replay games.jsonl
    wizard replay games.jsonl --game 2
    wizard play --players 3 --opponents rule --rounds 5 --replay my-game.jsonl
    wizard serve --replays replays   (needs the web extra)

Exit status: 0 on success; 2 after one ``wizard: error: ...`` line on stderr for bad arguments,
impossible configurations or unreadable replay files (every option is checked before any work starts,
by ``wizard_env.options``; an unexpected error is one line too, never a traceback); 1 when a ``play`` game is abandoned (input ended
or ``quit``); 130 after Ctrl-C and 143 after SIGTERM, files being written left as they were.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import os
import secrets
import signal
import stat
import sys
import threading
from typing import Iterator, Sequence

import numpy as np
from numba.core import event as numba_event
from tqdm import tqdm

from wizard_env.agents.registry import AGENT_NAMES, make_agent, parse_spec

from . import options
from .batch import MAX_GAME_SEED, check_seed, short_repr
from .cards import SUITS, card_name, parse_card
from .game import BID_OFFSET, CARD_OFFSET, TRUMP_OFFSET, Phase, WizardGame
from .kernels import CompilerDisabledError
from .observation import is_foresight_round, observe
from .render import render_text
from .files import check_writable
from .replay import (ReplayError, ReplayWriter, describe_rules, format_game, game_record, parse_line, replay_game, replay_lines,
                     write_replays)
from .rules import MAX_PLAYERS, MIN_PLAYERS, Rules, winners
from .simulate import SeatSummary, play_game, summarise

#: What ``play`` accepts for each suit of ``SUITS`` besides its letter (and the singular).
SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
USAGE_ERROR = 2
#: The longest error line ``main`` prints (a longer one, echoing a huge value, is cut in the middle).
MAX_MESSAGE = 500
#: What ``simulate`` keeps per game until the summary (its seed and scores; measured: about 550 bytes).
SIMULATE_BYTES_PER_GAME = 1000
ABANDONED = 1
#: The person's name in the seats of a replay that ``play --replay`` saves.
HUMAN = "human"
TERMINATED = 128 + signal.SIGTERM


#: Subcommands that live in their own modules. Each module defines ``HELP``, ``DESCRIPTION``,
#: ``add_arguments(parser)`` (the variant flags are already added) and ``run(args) -> int``.
COMMAND_MODULES: dict[str, str] = {"eval": "wizard_env.training.evaluate", "bench": "wizard_env.bench", "train": "wizard_env.training.train",
                                   "train-values": "wizard_env.training.train_values", "serve": "wizard_env.web.serve"}


class UsageError(Exception):
    """A command line argparse rejects (reported as one ``wizard: error:`` line)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        """Raise instead of printing the usage and exiting, so main reports one line."""
        raise UsageError(f"{message} (see '{self.prog} --help')")


# -- options shared by simulate and play -------------------------------------------------------


def parse_rounds(text: str) -> str | int | list[int]:
    """``--rounds``: ``standard``, ``amigo``, a round count ``K`` or hand sizes ``1,3,5`` (``3,`` for one)."""
    text = text.strip()
    if text in ("standard", "amigo"):
        return text
    parts = text.split(",")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()  # "3," is the one-round list [3]; "3" means rounds 1..3
    try:
        sizes = [int(p) for p in parts]
    except ValueError:
        raise ValueError(
            f"--rounds {text!r}: expected 'standard', 'amigo', a round count such as 5, "
            "or comma-separated hand sizes such as 1,3,5"
        ) from None
    return sizes if "," in text else sizes[0]


def make_rules(args: argparse.Namespace) -> Rules:
    """The Rules the variant options describe (ValueError when impossible)."""
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        raise ValueError(f"--players {args.players}: Wizard is played by {MIN_PLAYERS} to {MAX_PLAYERS} players")
    return Rules.make(args.players, parse_rounds(args.rounds), args.bidding, args.bid_total_rule, args.foresight)


def split_specs(text: str, option: str) -> list[str]:
    """The agent specs of a comma list, each checked; ValueError naming ``option`` and the spec at fault."""
    specs = [s.strip() for s in text.split(",")]
    for i, spec in enumerate(specs):
        try:
            parse_spec(spec)
        except ValueError as err:
            if i and ":" in specs[i - 1]:  # e.g. ppo:runs/a,b.npz: the comma split a checkpoint path
                raise ValueError(f"{option}: {err}; ',' separates agents, so '{specs[i - 1]},{spec}' was read as two: "
                                 "a checkpoint path cannot contain ',' here (rename or link the file)") from None
            raise ValueError(f"{option}: {err}") from None
    return specs


def seat_specs(text: str, count: int, option: str) -> list[str]:
    """Agent specs from a comma list: one spec for every seat, or exactly ``count`` of them."""
    specs = split_specs(text, option)
    if len(specs) == 1:
        return specs * count
    if len(specs) != count:
        raise ValueError(f"{option} names {len(specs)} agents for {count} seats: give one name for all, or exactly {count}")
    return specs


def derive_seeds(seed: int, games: int, players: int) -> tuple[list[int], list[int]]:
    """Game seeds and per-seat agent seeds, all from one seed (prefix-stable: game k is the same for any count)."""
    check_seed(seed, "--seed")
    game_seq, agent_seq = np.random.SeedSequence(seed).spawn(2)
    game_seeds = np.random.default_rng(game_seq).integers(0, MAX_GAME_SEED, size=games)
    agent_seeds = agent_seq.generate_state(players, np.uint64)
    return [int(s) for s in game_seeds], [int(s) for s in agent_seeds]


def _variant_options() -> _Parser:
    parent = _Parser(add_help=False)
    group = parent.add_argument_group("game variant")
    group.add_argument("--players", type=options.int_type, default=4, metavar="N", help="3 to 6 players (default 4)")
    group.add_argument(
        "--rounds", default="standard", metavar="R",
        help="standard (1..60/N cards), amigo (tournament schedule), K (rounds 1..K), "
        "or comma-separated hand sizes such as 1,3,5 ('3,' is one round of 3 cards); default standard",
    )
    group.add_argument("--bidding", choices=("open", "hidden", "secret"), default="open",
                       help="open: bids seen as made; hidden: revealed together before play; secret: at round end")
    group.add_argument("--bid-total-rule", action="store_true",
                       help="plus/minus 1: the dealer may not make the bids add up to the tricks (open bidding)")
    group.add_argument("--foresight", action="store_true",
                       help="in one-card rounds you see everyone's card but your own")
    return parent


# -- simulate ------------------------------------------------------------------------------------


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


def cmd_simulate(args: argparse.Namespace) -> int:
    """Play the games, write the replays if asked, print the table."""
    rules = make_rules(args)
    if args.games < 1:
        raise ValueError(f"--games must be at least 1, not {args.games}")
    options.check_memory("--games", args.games, SIMULATE_BYTES_PER_GAME)
    if args.with_legal and not args.replay:
        raise ValueError("--with-legal needs --replay FILE")
    n = rules.num_players
    specs = seat_specs(args.agents, n, "--agents")
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


# -- replay --------------------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    """Print one game of a replay file; with --check re-play every game (reading the lines before it only then)."""
    if args.game < 1:
        raise ValueError(f"--game counts from 1, not {args.game}")
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


# -- play ----------------------------------------------------------------------------------------


class _Quit(Exception):
    """The player typed quit."""


def _read(prompt: str) -> str:
    text = input(prompt).strip()
    if not sys.stdin.isatty():
        print(text)  # echo scripted input so the transcript reads like a session
    if text.lower() in ("q", "quit", "exit"):
        raise _Quit
    return text


def _normalise_card(text: str) -> str:
    low = text.lower()
    if low in ("wiz", "wizard"):
        return "Wiz"
    if low in ("jes", "jester"):
        return "Jes"
    if len(low) == 3 and low.startswith("10"):
        low = "t" + low[2]
    return low[0].upper() + low[1] if len(low) == 2 else text


def _ask_action(game: WizardGame, seat: int) -> int:
    """Ask the person for a legal action, re-asking with a message after bad input."""
    mask = game.legal_mask()
    if game.phase == Phase.TRUMP:
        choices = ", ".join(f"{letter} {word}" for letter, word in zip(SUITS, SUIT_WORDS))
        prompt = f"A Wizard was turned: name trump ({choices}): "
        while True:
            text = _read(prompt).lower()
            for index, (letter, word) in enumerate(zip(SUITS, SUIT_WORDS)):
                if text in (letter, word, word[:-1]):  # h, hearts or heart
                    return TRUMP_OFFSET + index
            print(f"  {text!r} is not a suit: type one of {choices}")
    if game.phase == Phase.BID:
        legal = [int(b) for b in np.flatnonzero(mask[BID_OFFSET:CARD_OFFSET])]  # indices are bids
        prompt = f"Your bid ({' '.join(map(str, legal))}): "
        while True:
            text = _read(prompt)
            if text.isascii() and text.isdigit() and int(text) in legal:
                return BID_OFFSET + int(text)
            rule = " (the bids may not add up to the tricks)" if game.rules.bid_total_rule and game.current == game.dealer else ""
            print(f"  {text!r} is not a legal bid; legal bids: {' '.join(map(str, legal))}{rule}")
    legal_cards = [card_name(c) for c in np.flatnonzero(mask[CARD_OFFSET:TRUMP_OFFSET]).tolist()]  # indices are card ids
    if is_foresight_round(game):  # the card is on your forehead: play it unseen
        _read("Foresight round: your card is hidden from you. Press Enter to play it: ")
        return CARD_OFFSET + parse_card(legal_cards[0])
    single = len(legal_cards) == 1
    prompt = f"Play a card ({' '.join(legal_cards)}{'; Enter plays it' if single else ''}): "
    while True:
        text = _read(prompt)
        name = legal_cards[0] if single and not text else _normalise_card(text) if text else text
        if name in legal_cards:
            return CARD_OFFSET + parse_card(name)
        try:
            held = game.hands[seat, parse_card(name)] > 0
            why = "you must follow suit" if held else "you do not hold it"
        except ValueError:
            why = "not a card name (e.g. Ah, Tc, Wiz, Jes)"
        print(f"  {text!r}: {why}; legal: {' '.join(legal_cards)}")


def _round_so_far(game: WizardGame, seat: int, names: list[str]) -> list[str]:
    """What the person may know of this round: the bids seen against the cards dealt, and the tricks played."""
    log = game.log[game.round_index]
    seen = [b["bid"] for b in log["bids"] if game.bid_visible(seat, b["seat"])]
    unseen = len(log["bids"]) - len(seen)
    lines = [f"Bids so far: {sum(seen)} for {game.hand_size} trick{'s' if game.hand_size > 1 else ''}"
             + (f" ({unseen} bid{'s' if unseen > 1 else ''} not shown)" if unseen else "")] if log["bids"] else []
    done = [trick for trick in log["tricks"] if trick["winner"] is not None]
    for number, trick in enumerate(done, 1):
        lines.append(f"Trick {number}: {' '.join(p['card'] for p in trick['plays'])}  "
                     f"(led by {names[trick['leader']]}, won by {names[trick['winner']]})")
    return lines


def _announce(game: WizardGame, names: list[str], seat: int, actor: int, action: int, rnd: int) -> None:
    """Say what a move showed the table, and what it ended (a trick, the bidding, the round)."""
    log = game.log[rnd]
    if TRUMP_OFFSET <= action:
        print(f"{names[actor]} names trump: {SUITS[action - TRUMP_OFFSET]}")
    elif action < CARD_OFFSET:
        # what the person may see follows the engine's bidding variant, after the bid is made
        bid = action - BID_OFFSET
        print(f"{names[actor]} bids {bid}" if game.bid_visible(seat, actor) else f"{names[actor]} has bid")
        if len(log["bids"]) == game.num_players and all(game.bid_visible(seat, b["seat"]) for b in log["bids"]):
            print("Bids: " + ", ".join(f"{names[b['seat']]} {b['bid']}" for b in log["bids"]))
    else:
        trick = log["tricks"][-1]
        print(f"{names[actor]} plays {card_name(action - CARD_OFFSET)}")
        if trick["winner"] is not None:
            print(f"  -> {names[trick['winner']]} wins the trick ({' '.join(p['card'] for p in trick['plays'])})")
    if "scores" in log:
        bid_of = {b["seat"]: b["bid"] for b in log["bids"]}
        print(f"\nEnd of round {rnd + 1}:")
        for s, name in enumerate(names):
            print(f"  {name:<{max(map(len, names))}}  bid {bid_of[s]:>2}  won {log['tricks_won'][s]:>2}  "
                  f"score {log['scores'][s]:>4}  total {log['totals'][s]:>5}")


def cmd_play(args: argparse.Namespace) -> int:
    """A person plays one seat in the terminal against agents."""
    rules = make_rules(args)
    n = rules.num_players
    if not 0 <= args.seat < n:
        raise ValueError(f"--seat counts from 0: {n} players sit in seats 0 to {n - 1}, not {args.seat}")
    opponents = iter(seat_specs(args.opponents, n - 1, "--opponents"))
    if args.replay:
        check_writable(args.replay)  # before the game: a person's game is not lost to a bad path at its end
    seed = secrets.randbelow(MAX_GAME_SEED) if args.seed is None else args.seed
    _, agent_seeds = derive_seeds(seed, 0, n)
    agents, names, specs = {}, [], []
    for s in range(n):
        if s == args.seat:
            names.append(f"you (seat {s})")
            specs.append(HUMAN)
        else:
            spec = next(opponents)
            agents[s] = make_agent(spec, agent_seeds[s])
            names.append(f"{spec} (seat {s})")
            specs.append(spec)
    game = WizardGame(rules, seed, record=True)
    print(f"Wizard: {describe_rules(rules)}; game seed {seed}.")
    print("Seats go round to the left; D marks the dealer, > the player to act. Type quit to stop.")
    shown_round = -1
    try:
        while not game.is_over:
            rnd, actor = game.round_index, game.current
            if rnd != shown_round:
                print(f"\n=== Round {rnd + 1}/{rules.num_rounds}: {game.hand_size} card{'s' if game.hand_size > 1 else ''} each, dealer {names[game.dealer]} ===")
                shown_round = rnd
            if actor == args.seat:
                print("\n" + "\n".join([render_text(game, viewer=args.seat, names=names), *_round_so_far(game, args.seat, names)]))
                action = _ask_action(game, args.seat)
            else:
                action = agents[actor](observe(game, actor), game.legal_mask())
            game.step(action, actor=names[actor])
            _announce(game, names, args.seat, actor, action, rnd)
    except EOFError:
        print(f"\nwizard: input ended before the game was over (seed {seed}); game abandoned", file=sys.stderr)
        return ABANDONED
    except _Quit:
        print(f"wizard: game abandoned (seed {seed})", file=sys.stderr)
        return ABANDONED
    totals = game.totals.tolist()
    if args.replay:
        write_replays(args.replay, [game_record(game, specs)])
    print("\nGame over. Final totals: " + ", ".join(f"{names[s]} {totals[s]}" for s in range(n)))
    best = winners(totals)
    if args.seat in best:
        print("You win!" if len(best) == 1 else "You share the win.")
    else:
        print("Winner: " + ", ".join(names[s] for s in best))
    if args.replay:
        print(f"replay: the game is saved to {args.replay}")
    return 0


# -- entry point ---------------------------------------------------------------------------------


def installed_version() -> str:
    """The version of the installed wizard-env distribution (pyproject.toml's), or a note that it is not installed."""
    from importlib import metadata

    try:
        return metadata.version("wizard-env")
    except metadata.PackageNotFoundError:
        return "(version unknown: wizard-env is not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The ``wizard`` argument parser with its three subcommands."""
    parser = _Parser(prog="wizard", description="Wizard card game: simulate agents, show replays, play a seat.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    variant = _variant_options()
    known = ", ".join(AGENT_NAMES)

    sim = commands.add_parser("simulate", parents=[variant], help="play many games between agents and summarise",
                              description="Play games between agents and print, per seat, the mean score with "
                              "its 95% confidence interval, the win rate and the bid accuracy. Games are played "
                              "one at a time, about 16 ms per standard 4-player game of RuleAgents (1,000 games: "
                              "about 16 s); 'wizard eval' plays many games at once.")
    sim.add_argument("--agents", default="rule", metavar="A,B,...",
                     help=f"one agent per seat, or one for all seats (known: {known}; default rule)")
    sim.add_argument("--games", type=options.int_type, default=100, metavar="G", help="games to play (default 100)")
    sim.add_argument("--seed", type=options.seed_type, default=0, metavar="S",
                     help="seed of every game and agent: the same command gives the same output (default 0)")
    sim.add_argument("--replay", type=options.path_type, metavar="FILE", help="write every game as one JSON line (wizard-replay/1) to FILE")
    sim.add_argument("--with-legal", action="store_true", help="with --replay: also record the legal choices")
    sim.set_defaults(run=cmd_simulate)

    rep = commands.add_parser("replay", help="show a game from a replay file",
                              description="Print a recorded game round by round.")
    rep.add_argument("file", type=options.path_type, metavar="FILE", help="a replay file written by 'wizard simulate --replay'")
    rep.add_argument("--game", type=options.int_type, default=1, metavar="K",
                     help="which game of the file to show, counting from 1 (default 1, the first); "
                     "without --check the lines after it are not read")
    rep.add_argument("--check", action="store_true", help="also re-play every game on the engine and compare")
    rep.set_defaults(run=cmd_replay)

    play = commands.add_parser("play", parents=[variant], help="play a seat yourself against agents",
                               description="Play one seat in the terminal; you see only what your seat may know.")
    play.add_argument("--opponents", default="rule", metavar="A,B,...",
                      help=f"one agent for every other seat, or one per other seat (known: {known}; default rule)")
    play.add_argument("--seat", type=options.int_type, default=0, metavar="K", help="your seat, counting from 0 (default 0)")
    play.add_argument("--seed", type=options.seed_type, default=None, metavar="S", help="game seed (default: a random one, printed)")
    play.add_argument("--replay", type=options.path_type, metavar="FILE",
                      help="save the finished game as a replay (wizard-replay/1) to FILE, for 'wizard replay' and the web viewer")
    play.set_defaults(run=cmd_play)

    for name, module in COMMAND_MODULES.items():
        commands_module = importlib.import_module(module)
        sub = commands.add_parser(name, parents=[variant], help=commands_module.HELP, description=commands_module.DESCRIPTION)
        commands_module.add_arguments(sub)
        sub.set_defaults(run=commands_module.run)
    return parser


class Terminated(BaseException):
    """SIGTERM, raised where the program is, so that files being written are dropped as after Ctrl-C."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


#: What ``wizard`` says once when numba starts compiling this package's code (the first run on a machine).
COMPILE_NOTICE = "wizard: compiling the engine and agents for this machine, once (up to half a minute) ..."


class _CompileNotice(numba_event.Listener):
    """Prints ``COMPILE_NOTICE`` on stderr at the first compile of one of this package's functions, when stderr
    is a terminal (as the progress bars: scripts and logs get the output alone).

    numba compiles on a function's first call unless its on-disk cache holds it, and says nothing meanwhile;
    a first ``wizard eval`` with RuleAgents would otherwise sit silent for 20-30 s.
    """

    def __init__(self) -> None:
        self.said = False

    def on_start(self, event: numba_event.Event) -> None:
        dispatcher = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
        if not self.said and module.split(".")[0] == __name__.split(".")[0]:
            self.said = True
            if sys.stderr.isatty():
                print(COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, event: numba_event.Event) -> None:
        pass


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises Terminated in the main thread (elsewhere signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``wizard`` command; return the exit status."""
    from threadpoolctl import threadpool_limits

    # one BLAS thread: the agents' matmuls are small, and two threads on a busy machine ran them 6x slower
    threadpool_limits(1, user_api="blas")
    try:
        with _sigterm_raises(), numba_event.install_listener("numba:compile", _CompileNotice()):
            args = build_parser().parse_args(argv)
            return args.run(args)
    except (UsageError, CompilerDisabledError) as err:
        message = str(err)
    except BrokenPipeError:  # output piped into a reader that stopped early (e.g. head)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return ABANDONED
    except OSError as err:
        message = f"{err.strerror}: {err.filename}" if err.filename else str(err)
    except ValueError as err:
        message = str(err)
    except ImportError as err:  # an optional package missing (MissingExtra names it and the install command)
        message = str(err)
    except KeyboardInterrupt:
        print("\nwizard: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("\nwizard: terminated", file=sys.stderr)
        return TERMINATED
    except SystemExit as exit_:  # --help
        return exit_.code if isinstance(exit_.code, int) else 0
    except MemoryError:  # the size options are checked against memory first; this is the backstop
        message = "out of memory: this machine cannot hold what the options ask for"
    except Exception as err:  # a bug: still one line and no traceback, as the contract promises
        message = f"internal error ({type(err).__name__}: {short_repr(str(err), 200)}); please report it with the command line"
    message = " ".join(message.splitlines())
    if len(message) > MAX_MESSAGE:  # a huge value echoed back: keep the start, which names the option, and the end
        cut = len(message) - MAX_MESSAGE + 100
        message = f"{message[:MAX_MESSAGE - 200]} ... ({cut:,} characters cut) ... {message[-100:]}"
    print(f"wizard: error: {message}", file=sys.stderr)
    return USAGE_ERROR
