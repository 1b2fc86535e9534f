"""``wizard play``: play one seat yourself in the terminal against agents.

    wizard play --players 3 --opponents rule --rounds 5 --replay my-game.jsonl

You see only what your seat may know: your hand (in a foresight round, everyone's card but your own), the
bids as the bidding variant shows them, and the tricks played. Type ``quit`` (or end the input) to give the
game up: exit status 1. With ``--replay FILE`` the finished game is saved for ``wizard replay`` and the web viewer.
"""

from __future__ import annotations

import argparse
import secrets
import sys

import numpy as np

from wizard_env.agents.registry import NAMES_IN_SHORT, make_agent, refuse_hidden
from wizard_env.engine.batch import MAX_GAME_SEED
from wizard_env.engine.cards import SUIT_WORDS, SUITS, card_name, parse_card
from wizard_env.engine.game import BID_OFFSET, CARD_OFFSET, TRUMP_OFFSET, Phase, WizardGame
from wizard_env.engine.observation import is_foresight_round
from wizard_env.engine.replay import HUMAN, game_record, write_replays
from wizard_env.engine.rules import MAX_PLAYERS, winners
from wizard_env.engine.simulate import derive_seeds
from wizard_env.render.replay_text import describe_rules
from wizard_env.render.text import render_text
from wizard_env.util import options
from wizard_env.util.files import check_writable

from .common import ABANDONED, make_rules, seat_specs

HELP = "play a seat yourself against agents"
DESCRIPTION = "Play one seat in the terminal; you see only what your seat may know."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard play`` (the variant options are already there)."""
    parser.add_argument("--opponents", type=options.text_type, default="rule", metavar="A,B,...",
                        help=f"one agent for every other seat, or one per other seat (known: {NAMES_IN_SHORT}; default rule)")
    parser.add_argument("--seat", type=options.Number(int, 0, MAX_PLAYERS - 1), default=0, metavar="K", help="your seat, counting from 0 (default 0)")
    parser.add_argument("--seed", type=options.seed_type, default=None, metavar="S", help="game seed (default: a random one, printed)")
    parser.add_argument("--replay", type=options.path_type, metavar="FILE",
                        help="save the finished game as a replay (wizard-replay/1) to FILE, for 'wizard replay' and the web viewer")


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


def run(args: argparse.Namespace) -> int:
    """A person plays one seat in the terminal against agents."""
    rules = make_rules(args)
    n = rules.num_players
    if not 0 <= args.seat < n:
        raise ValueError(f"--seat counts from 0: {n} players sit in seats 0 to {n - 1}, not {args.seat}")
    specs_given = seat_specs(args.opponents, n - 1, "--opponents")
    for spec in specs_given:
        refuse_hidden(spec, f"--opponents {spec!r}")
    opponents = iter(specs_given)
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
                action = int(agents[actor].act_games(game.batch, game.batch.all_games)[0])  # a search (pimc) reads the game
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
