"""Shared test helpers: build positions by card name, an independent rules oracle, random play.

The oracle functions restate docs/rules.md directly (on card names, with no code from ``wizard_env.engine.rules``)
so the tests compare the engine against a second, separately written reading of the rules.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Sequence

import numpy as np

from wizard_env.agents import Agent
from wizard_env import CARD_OFFSET, Phase, Rules, WizardGame, observe, parse_card
from wizard_env.engine.cards import DECK, NO_CARD, NO_SUIT, NUM_CARD_TYPES, SUITS
from wizard_env.engine.game import deal

RANK_ORDER = "23456789TJQKA"
WIZ, JES = "Wiz", "Jes"


# -- cards by name ---------------------------------------------------------------------------


def card(name: str) -> int:
    """Card type id of a name such as "Ah", "Wiz"."""
    return parse_card(name)


def play(name: str) -> int:
    """Action id that plays the named card."""
    return CARD_OFFSET + parse_card(name)


def counts(names: Sequence[str]) -> np.ndarray:
    """Hand count vector of card names."""
    hand = np.zeros(NUM_CARD_TYPES, dtype=np.int8)
    for name in names:
        hand[parse_card(name)] += 1
    return hand


def suit_index(letter: str | None) -> int:
    """Suit index of a suit letter, NO_SUIT for None."""
    return NO_SUIT if letter is None else SUITS.index(letter)


# -- building positions ----------------------------------------------------------------------


def position(
    hands: Sequence[Sequence[str]],
    trump: str | None,
    leader: int = 0,
    trick: Sequence[str] = (),
    hand_size: int | None = None,
    bids: Sequence[int] | None = None,
    seed: int = 0,
) -> WizardGame:
    """A game in the play phase: the given hands by seat, trump suit letter (None: no trump),
    ``leader`` who led the current trick and the cards already played to it (in play order)."""
    n = len(hands)
    size = hand_size or max(len(h) for h in hands) + (1 if trick else 0)
    game = WizardGame(Rules.make(n, rounds=[size]), seed)
    game.hands = np.array([counts(h) for h in hands], dtype=np.int8)
    game.played = np.zeros((n, NUM_CARD_TYPES), dtype=np.int8)
    for i, name in enumerate(trick):
        game.played[(leader + i) % n, card(name)] += 1
    game.trick_cards = [card(name) for name in trick]
    game.trump = suit_index(trump)
    game.trump_card = NO_CARD if trump is None else card("2" + trump)
    game.bids = np.array(bids if bids is not None else [0] * n, dtype=np.int64)
    game.tricks_won = np.zeros(n, dtype=np.int64)
    game.leader = leader
    game.current = (leader + len(trick)) % n
    game.phase = Phase.PLAY
    return game


def legal_card_names(game: WizardGame) -> set[str]:
    """Names of the cards the acting player may play."""
    from wizard_env import card_name

    return {card_name(a - CARD_OFFSET) for a in game.legal_actions()}


def find_seed(num_players: int, hand_size: int, turned: int, start: int = 0) -> int:
    """A game seed whose first round (``hand_size`` cards each) turns up card type ``turned``."""
    for seed in range(start, start + 20000):
        if deal(seed, 0, num_players, hand_size)[1] == turned:
            return seed
    raise AssertionError(f"no seed turns up card {turned}")


# -- an independent reading of the rules ------------------------------------------------------


def _suit(name: str) -> str | None:
    return None if name in (WIZ, JES) else name[1]


def _rank(name: str) -> int:
    return RANK_ORDER.index(name[0])


def oracle_led_suit(trick: Sequence[str]) -> str | None:
    """Suit to follow: set by the first card that is not a Jester, none if that card is a Wizard."""
    for name in trick:
        if name == JES:
            continue
        return _suit(name)
    return None


def oracle_legal(hand: Sequence[str], trick: Sequence[str]) -> set[str]:
    """Cards of ``hand`` that may be played onto ``trick``."""
    led = oracle_led_suit(trick)
    followers = {c for c in hand if _suit(c) == led} if led else set()
    if not followers:
        return set(hand)
    return followers | {c for c in hand if c in (WIZ, JES)}


def oracle_winner(trick: Sequence[str], trump: str | None) -> int:
    """Index in play order of the winning card of a complete trick."""
    for i, name in enumerate(trick):
        if name == WIZ:
            return i
    if all(name == JES for name in trick):
        return 0
    trumps = [i for i, c in enumerate(trick) if trump is not None and _suit(c) == trump]
    if trumps:
        return max(trumps, key=lambda i: _rank(trick[i]))
    led = oracle_led_suit(trick)
    of_led = [i for i, c in enumerate(trick) if _suit(c) == led]
    return max(of_led, key=lambda i: _rank(trick[i]))


def oracle_score(bid: int, took: int) -> int:
    """docs/rules.md#scoring: 20 + 10 per trick when the bid is met, else -10 per trick off."""
    return 20 + 10 * took if bid == took else -10 * abs(bid - took)


# -- whole games -------------------------------------------------------------------------------


def play_random_game(game: WizardGame, rng: np.random.Generator) -> list[np.ndarray]:
    """Play random legal actions to the end; return the round scores of every round."""
    scores = []
    while not game.is_over:
        result = game.step(int(rng.choice(game.legal_actions())))
        if result is not None:
            scores.append(result)
    return scores


def snapshot(game: WizardGame) -> dict:
    """Everything observable about a game: every seat's observation, the mask, and the raw state."""
    return {
        "obs": [observe(game, seat).copy() for seat in range(game.num_players)],
        "mask": game.legal_mask().copy(),
        "hands": game.hands.copy(),
        "played": game.played.copy(),
        "bids": game.bids.copy(),
        "tricks_won": game.tricks_won.copy(),
        "trick_cards": list(game.trick_cards),
        "totals": game.totals.copy(),
        "scalars": (game.phase, game.current, game.leader, game.dealer, game.round_index, game.trump, game.trump_card),
    }


def assert_same_snapshot(a: dict, b: dict) -> None:
    """Assert two snapshots are identical."""
    assert a.keys() == b.keys()
    for key in a:
        if key == "obs":
            for seat, (x, y) in enumerate(zip(a[key], b[key])):
                np.testing.assert_array_equal(x, y, err_msg=f"observation of seat {seat} changed")
        elif isinstance(a[key], np.ndarray):
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"{key} changed")
        else:
            assert a[key] == b[key], f"{key} changed"


def deck_counts() -> np.ndarray:
    """Count of each card type in the full deck, computed from the physical deck."""
    return np.bincount(DECK, minlength=NUM_CARD_TYPES)


# -- players for VecEnv tests ----------------------------------------------------------------------


class FirstLegal(Agent):
    """Plays its lowest legal action id: a deterministic opponent whose games can be re-played."""

    name = "first"

    def act_batch(self, observations, action_masks):
        """The first legal action of each row."""
        return np.asarray(action_masks).argmax(axis=1).astype(np.int64)


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of bool masks."""
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks])


# -- optional packages ------------------------------------------------------------------------------


def uninstalled(monkeypatch, package: str) -> None:
    """Make ``package`` and its submodules fail to import (``find_spec`` gives None), as when it is not installed."""
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")] + [package]:
        monkeypatch.setitem(sys.modules, name, None)


def loaded_by_import_and_help(packages: Sequence[str]) -> list[str]:
    """Which of ``packages`` a fresh interpreter has loaded after ``import wizard_env`` and building the CLI."""
    code = ("import sys, wizard_env, wizard_env.cli.main\n"
            "wizard_env.cli.main.build_parser()\n"
            f"print(','.join(sorted(m for m in {tuple(packages)!r} if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [m for m in done.stdout.strip().split(",") if m]


def with_options(args: Sequence[str], *changes: str) -> list[str]:
    """``args`` with the options of ``changes`` (option, value pairs) given instead of its own, each once (a
    repeated option is refused): an option of ``args`` and the value after it are left out."""
    given = set(changes[::2])
    kept = [arg for i, arg in enumerate(args) if arg not in given and (i == 0 or args[i - 1] not in given)]
    return [*kept, *changes]


def wizard_output(args: list[str]) -> tuple[int, str, str]:
    """``wizard ARGS`` in this process: its exit status, stdout and stderr."""
    import contextlib
    import io

    from wizard_env.cli.main import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(args)
    return code, stdout.getvalue(), stderr.getvalue()
