"""The rules of Wizard as configuration and pure functions (no RL imports).

``Rules`` holds a validated configuration (players, round schedule, variants). The rules of play
(legal cards, the suit to follow, the winner of a trick, the legal bids, scoring) are stated once,
compiled, in ``kernels``; the functions below run them on numpy arguments. ``batch.WizardBatch``
applies them move by move.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from enum import Enum
from typing import Any, Sequence, cast

import numpy as np

from . import kernels
from .cards import DECK_SIZE, NO_CARD, NUM_CARD_TYPES
# the numbers of the rules, stated in ``constants`` (which the kernels read) and read by most callers here
from .constants import (MADE_BID_BONUS, MAX_HAND_SIZE, MAX_PLAYERS, MAX_ROUNDS, MIN_PLAYERS, PENALTY_PER_TRICK_OFF,
                        POINTS_PER_TRICK)

#: Amigo tournament hand sizes, by number of players (10 rounds each).
AMIGO_HAND_SIZES: dict[int, tuple[int, ...]] = {
    3: (2, 4, 6, 8, 10, 12, 14, 16, 18, 20),
    4: (1, 3, 5, 7, 9, 11, 12, 13, 14, 15),
    5: (2, 4, 5, 6, 7, 8, 9, 10, 11, 12),
    6: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
}


class Bidding(str, Enum):
    """Who sees a bid, and when."""

    OPEN = "open"  # each bid is seen as it is made
    HIDDEN = "hidden"  # bids are revealed all at once when bidding ends
    SECRET = "secret"  # other players' bids are revealed only when the round ends


def _parse_rounds(num_players: int, rounds: str | int | Sequence[int]) -> tuple[int, ...]:
    """Hand sizes of every round for a round schedule name, a round count or an explicit list."""
    most = DECK_SIZE // num_players
    if isinstance(rounds, str):
        if rounds == "standard":
            return tuple(range(1, most + 1))
        if rounds == "amigo":
            return AMIGO_HAND_SIZES[num_players]
        raise ValueError(f"unknown rounds {rounds!r}: expected 'standard', 'amigo', a round count or a list of hand sizes")
    if isinstance(rounds, (bool, np.bool_)):
        raise ValueError(f"rounds must be 'standard', 'amigo', an int or a list of hand sizes, not {rounds!r}")
    if isinstance(rounds, (int, np.integer)):
        if not 1 <= rounds <= most:
            raise ValueError(f"rounds={rounds}: {num_players} players can play 1 to {most} rounds")
        return tuple(range(1, int(rounds) + 1))
    try:
        sizes = tuple(itertools.islice(rounds, MAX_ROUNDS + 1))  # never read more than the most a game may have
    except TypeError:
        raise ValueError(f"rounds must be 'standard', 'amigo', an int or a list of hand sizes, not {rounds!r}") from None
    if not sizes:
        raise ValueError("rounds: the list of hand sizes is empty")
    if len(sizes) > MAX_ROUNDS:
        raise ValueError(f"rounds: a game has at most {MAX_ROUNDS} rounds, this list of hand sizes has more")
    for size in sizes:
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
            raise ValueError(f"rounds: hand size {size!r} is not an integer")
        if not 1 <= size <= most:
            raise ValueError(f"rounds: hand size {size} does not fit: {num_players} players hold 1 to {most} cards each")
    return tuple(int(s) for s in sizes)


@dataclass(frozen=True)
class Rules:
    """A validated game configuration: players, hand size of every round, and variants.

    ``Rules(...)`` and ``Rules.make(...)`` take the same user-facing values and check them alike (ValueError
    on an impossible configuration): ``hand_sizes`` may be a round schedule name (``"standard"``, the default,
    or ``"amigo"``), a round count or a list of hand sizes, and ``bidding`` a mode name.
    """

    num_players: int = 4
    hand_sizes: tuple[int, ...] = ()
    bidding: Bidding = Bidding.OPEN
    bid_total_rule: bool = False
    foresight: bool = False

    def __post_init__(self) -> None:
        num_players = self.num_players
        if isinstance(num_players, (bool, np.bool_)) or not isinstance(num_players, (int, np.integer)):
            raise ValueError(f"num_players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}, not {num_players!r}")
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players={num_players}: Wizard is played by {MIN_PLAYERS} to {MAX_PLAYERS} players")
        try:
            mode = Bidding(self.bidding)
        except ValueError:
            choices = ", ".join(repr(b.value) for b in Bidding)
            raise ValueError(f"unknown bidding {self.bidding!r}: expected one of {choices}") from None
        for flag in ("bid_total_rule", "foresight"):
            if not isinstance(getattr(self, flag), (bool, np.bool_)):
                raise ValueError(f"{flag} must be True or False, not {getattr(self, flag)!r}")
        if self.bid_total_rule and mode is not Bidding.OPEN:
            raise ValueError(
                f"bid_total_rule needs open bidding: with {mode.value} bidding the dealer cannot see "
                "the other bids, so the total cannot be restricted"
            )
        rounds = "standard" if isinstance(self.hand_sizes, tuple) and not self.hand_sizes else self.hand_sizes
        for name, value in (("num_players", int(num_players)), ("hand_sizes", _parse_rounds(int(num_players), rounds)),
                            ("bidding", mode), ("bid_total_rule", bool(self.bid_total_rule)),
                            ("foresight", bool(self.foresight))):
            object.__setattr__(self, name, value)

    @classmethod
    def make(
        cls,
        num_players: int = 4,
        rounds: str | int | Sequence[int] = "standard",
        bidding: str = "open",
        bid_total_rule: bool = False,
        foresight: bool = False,
    ) -> "Rules":
        """Build a configuration from user-facing options, raising ValueError on an impossible one."""
        # the fields take the user-facing values too: __post_init__ parses them into a tuple and a Bidding
        return cls(num_players, cast(Any, rounds), cast(Any, bidding), bid_total_rule, foresight)

    @property
    def num_rounds(self) -> int:
        """Number of rounds in a game."""
        return len(self.hand_sizes)

    @property
    def total_range(self) -> tuple[int, int]:
        """The lowest and highest total a player can end a game with: every bid missed by every trick, or every bid met."""
        sizes = np.asarray(self.hand_sizes, dtype=np.int64)
        return -PENALTY_PER_TRICK_OFF * int(sizes.sum()), int((MADE_BID_BONUS + POINTS_PER_TRICK * sizes).sum())

    def to_dict(self) -> dict:
        """The rules as written in a replay's ``rules`` field."""
        return {
            "hand_sizes": list(self.hand_sizes),
            "bidding": self.bidding.value,
            "bid_total_rule": self.bid_total_rule,
            "foresight": self.foresight,
        }

    @classmethod
    def from_dict(cls, num_players: int, rules: dict) -> "Rules":
        """Inverse of ``to_dict`` (validated)."""
        return cls.make(num_players, list(rules["hand_sizes"]), rules["bidding"], rules["bid_total_rule"], rules["foresight"])


# The rules of play are stated once, compiled, in ``kernels`` (one trick, hand or seat at a time); the
# functions below run them on Python and numpy arguments.


def trump_from_card(card: int) -> int:
    """Trump suit set by the turned card: its suit, or NO_SUIT for a Jester or no card.

    A turned Wizard also gives NO_SUIT here; the dealer then chooses the suit.
    """
    return int(kernels.trump_of_card(card))


def suit_to_follow(trick: Sequence[int]) -> int:
    """Suit that must be followed in a trick (cards in play order; NO_SUIT if none).

    The first non-Jester card sets it; if that card is a Wizard (or only Jesters were played),
    there is no suit to follow.
    """
    return int(kernels.suit_to_follow(_trick(trick)))


def legal_cards(hand: np.ndarray, trick: Sequence[int]) -> np.ndarray:
    """Boolean mask [card types] of the cards a hand (counts) may play onto a trick.

    Follow suit if you can; a Wizard or a Jester may always be played instead.
    """
    out = np.zeros(NUM_CARD_TYPES, dtype=bool)
    kernels.legal_cards_into(np.asarray(hand, dtype=np.int8), _trick(trick), out)
    return out


def trick_winner(trick: Sequence[int], trump: int) -> int:
    """Index (in play order) of the winning card of a complete trick.

    The first Wizard; else the highest trump; else the highest card of the suit led;
    if every card is a Jester, the first Jester.
    """
    return int(kernels.trick_winner(_trick(trick), int(trump)))


def legal_bids(hand_size: int, bids_so_far: Sequence[int], is_last: bool, bid_total_rule: bool) -> np.ndarray:
    """Boolean mask [0..MAX_HAND_SIZE] of the bids a bidder may make, given the bids made before.

    Any bid from 0 to the hand size; with the plus/minus-1 rule the last bidder may not make
    the total of bids equal the number of tricks.
    """
    out = np.zeros(MAX_HAND_SIZE + 1, dtype=bool)
    kernels.legal_bids_into(int(hand_size), int(sum(bids_so_far)), bool(is_last), bool(bid_total_rule), out)
    return out


def round_scores(bids: np.ndarray, tricks: np.ndarray) -> np.ndarray:
    """Points for one round: 20 + 10 per trick when the bid is met, else -10 per trick off."""
    bids, tricks = np.broadcast_arrays(np.asarray(bids, dtype=np.int64), np.asarray(tricks, dtype=np.int64))
    return np.array([kernels.round_score(b, t) for b, t in zip(bids.ravel(), tricks.ravel())], dtype=np.int64).reshape(bids.shape)


def round_score(bid: int, tricks: int) -> int:
    """``round_scores`` for one player."""
    return int(kernels.round_score(int(bid), int(tricks)))


def _trick(trick: Sequence[int]) -> np.ndarray:
    """A trick as int8 cards, the type the kernels are compiled for (an empty trick: a single NO_CARD slot)."""
    return np.array(list(trick) or [NO_CARD], dtype=np.int8)


def winners(totals: Sequence[int]) -> list[int]:
    """Seats with the highest total (ties share the win)."""
    best = max(totals)
    return [seat for seat, total in enumerate(totals) if total == best]


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

