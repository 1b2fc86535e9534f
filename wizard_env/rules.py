"""The rules of Wizard as configuration and pure functions (no RL imports).

``Rules`` holds a validated configuration (players, round schedule, variants); the functions
below state the rules of play once: legal cards, the suit to follow, the winner of a trick,
the legal bids, and scoring. ``game.WizardGame`` applies them move by move.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Sequence

import numpy as np

from .cards import (
    CARD_RANK,
    CARD_SUIT,
    DECK_SIZE,
    JESTER,
    NO_CARD,
    NO_SUIT,
    NUM_RANKS,
    NUM_SUITED,
    WIZARD,
)

MIN_PLAYERS = 3
MAX_PLAYERS = 6
#: The largest hand any configuration can deal (3 players, 60 / 3).
MAX_HAND_SIZE = DECK_SIZE // MIN_PLAYERS

MADE_BID_BONUS = 20
POINTS_PER_TRICK = 10
PENALTY_PER_TRICK_OFF = 10

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
        sizes = tuple(rounds)
    except TypeError:
        raise ValueError(f"rounds must be 'standard', 'amigo', an int or a list of hand sizes, not {rounds!r}") from None
    if not sizes:
        raise ValueError("rounds: the list of hand sizes is empty")
    for size in sizes:
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
            raise ValueError(f"rounds: hand size {size!r} is not an integer")
        if not 1 <= size <= most:
            raise ValueError(f"rounds: hand size {size} does not fit: {num_players} players hold 1 to {most} cards each")
    return tuple(int(s) for s in sizes)


@dataclass(frozen=True)
class Rules:
    """A validated game configuration: players, hand size of every round, and variants."""

    num_players: int = 4
    hand_sizes: tuple[int, ...] = ()
    bidding: Bidding = Bidding.OPEN
    bid_total_rule: bool = False
    foresight: bool = False

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
        if isinstance(num_players, (bool, np.bool_)) or not isinstance(num_players, (int, np.integer)):
            raise ValueError(f"num_players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}, not {num_players!r}")
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players={num_players}: Wizard is played by {MIN_PLAYERS} to {MAX_PLAYERS} players")
        try:
            mode = Bidding(bidding)
        except ValueError:
            choices = ", ".join(repr(b.value) for b in Bidding)
            raise ValueError(f"unknown bidding {bidding!r}: expected one of {choices}") from None
        if not isinstance(bid_total_rule, (bool, np.bool_)):
            raise ValueError(f"bid_total_rule must be True or False, not {bid_total_rule!r}")
        if not isinstance(foresight, (bool, np.bool_)):
            raise ValueError(f"foresight must be True or False, not {foresight!r}")
        if bid_total_rule and mode is not Bidding.OPEN:
            raise ValueError(
                f"bid_total_rule needs open bidding: with {mode.value} bidding the dealer cannot see "
                "the other bids, so the total cannot be restricted"
            )
        sizes = _parse_rounds(int(num_players), rounds)
        return cls(int(num_players), sizes, mode, bool(bid_total_rule), bool(foresight))

    @property
    def num_rounds(self) -> int:
        """Number of rounds in a game."""
        return len(self.hand_sizes)

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


def trump_from_card(card: int) -> int:
    """Trump suit set by the turned card: its suit, or NO_SUIT for a Jester or no card.

    A turned Wizard also gives NO_SUIT here; the dealer then chooses the suit.
    """
    if card == NO_CARD or card >= NUM_SUITED:
        return NO_SUIT
    return int(CARD_SUIT[card])


def suit_to_follow(trick: Sequence[int]) -> int:
    """Suit that must be followed, given the cards played so far in trick order.

    The first non-Jester card sets it; if that card is a Wizard (or only Jesters were played),
    there is no suit to follow.
    """
    for card in trick:
        if card != JESTER:
            return NO_SUIT if card == WIZARD else int(CARD_SUIT[card])
    return NO_SUIT


def legal_cards(hand: np.ndarray, trick: Sequence[int]) -> np.ndarray:
    """Boolean mask over card types that may be played from ``hand`` (counts) onto ``trick``.

    Follow suit if you can; a Wizard or a Jester may always be played instead.
    """
    held = hand > 0
    suit = suit_to_follow(trick)
    if suit != NO_SUIT:
        of_suit = held & (CARD_SUIT == suit)
        if of_suit.any():
            of_suit[WIZARD] = held[WIZARD]
            of_suit[JESTER] = held[JESTER]
            return of_suit
    return held


def trick_winner(trick: Sequence[int], trump: int) -> int:
    """Index (in play order) of the card that wins a complete trick.

    The first Wizard; else the highest trump; else the highest card of the suit led;
    if every card is a Jester, the first Jester.
    """
    led = suit_to_follow(trick)
    best, best_key = 0, -1
    for i, card in enumerate(trick):
        if card == WIZARD:
            return i
        if card == JESTER:
            continue
        suit, rank = int(CARD_SUIT[card]), int(CARD_RANK[card])
        if suit == trump:
            key = 2 * NUM_RANKS + rank
        elif suit == led:
            key = NUM_RANKS + rank
        else:
            key = 0
        if key > best_key:
            best, best_key = i, key
    return best


def legal_bids(hand_size: int, bids_so_far: Sequence[int], is_last: bool, bid_total_rule: bool) -> np.ndarray:
    """Boolean mask over bids 0..MAX_HAND_SIZE.

    Any bid from 0 to the hand size; with the plus/minus-1 rule the last bidder may not make
    the total of bids equal the number of tricks.
    """
    mask = np.zeros(MAX_HAND_SIZE + 1, dtype=bool)
    mask[: hand_size + 1] = True
    if bid_total_rule and is_last:
        forbidden = hand_size - int(sum(bids_so_far))
        if 0 <= forbidden <= hand_size:
            mask[forbidden] = False
    return mask


def round_score(bid: int, tricks: int) -> int:
    """Points for one round: 20 + 10 per trick when the bid is met, else -10 per trick off."""
    if bid == tricks:
        return MADE_BID_BONUS + POINTS_PER_TRICK * tricks
    return -PENALTY_PER_TRICK_OFF * abs(bid - tricks)


def winners(totals: Sequence[int]) -> list[int]:
    """Seats with the highest total (ties share the win)."""
    best = max(totals)
    return [seat for seat, total in enumerate(totals) if total == best]
