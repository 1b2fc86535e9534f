"""Cards of the 60-card Wizard deck, as card *types* (the four Wizards, and the four Jesters, are alike).

Card type ids: ``suit * 13 + rank`` for the 52 suited cards (suits ``c d h s``, ranks ``2 .. A``),
then ``WIZARD = 52`` and ``JESTER = 53``. A hand is a vector of 54 counts (0/1 for a suited card,
0..4 for Wizards and Jesters). The physical deck is the 60 card ids used when shuffling.
"""

from __future__ import annotations

import numpy as np

SUITS = "cdhs"
#: The name of each suit of ``SUITS``, which people may type besides its letter (and the singular).
SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
RANKS = "23456789TJQKA"
NUM_SUITS = len(SUITS)
NUM_RANKS = len(RANKS)
NUM_SUITED = NUM_SUITS * NUM_RANKS
WIZARD = NUM_SUITED
JESTER = NUM_SUITED + 1
NUM_CARD_TYPES = NUM_SUITED + 2
COPIES_OF_SPECIAL = 4
DECK_SIZE = NUM_SUITED + 2 * COPIES_OF_SPECIAL
NO_CARD = -1
NO_SUIT = -1

WIZARD_NAME = "Wiz"
JESTER_NAME = "Jes"

#: The 60 physical cards as card type ids (each Wizard and Jester appears four times).
DECK = np.array(
    list(range(NUM_SUITED)) + [WIZARD] * COPIES_OF_SPECIAL + [JESTER] * COPIES_OF_SPECIAL,
    dtype=np.int8,
)

#: Count of each card type in a full deck.
DECK_COUNTS = np.bincount(DECK, minlength=NUM_CARD_TYPES).astype(np.int8)

#: Suit of every card type (NO_SUIT for Wizard and Jester), and rank 0..12 (-1 for Wizard and Jester).
CARD_SUIT = np.array([c // NUM_RANKS for c in range(NUM_SUITED)] + [NO_SUIT, NO_SUIT], dtype=np.int8)
CARD_RANK = np.array([c % NUM_RANKS for c in range(NUM_SUITED)] + [-1, -1], dtype=np.int8)


def card_name(card: int) -> str:
    """Name of a card type: rank then suit (``"Ah"``, ``"Tc"``), or ``"Wiz"`` / ``"Jes"``."""
    card = int(card)
    if card == WIZARD:
        return WIZARD_NAME
    if card == JESTER:
        return JESTER_NAME
    if not 0 <= card < NUM_SUITED:
        raise ValueError(f"not a card type id: {card} (expected 0..{NUM_CARD_TYPES - 1})")
    return RANKS[card % NUM_RANKS] + SUITS[card // NUM_RANKS]


def parse_card(name: str) -> int:
    """Card type id of a card name such as ``"Ah"``, ``"Tc"``, ``"Wiz"`` or ``"Jes"``."""
    if name == WIZARD_NAME:
        return WIZARD
    if name == JESTER_NAME:
        return JESTER
    if len(name) == 2 and name[0] in RANKS and name[1] in SUITS:
        return SUITS.index(name[1]) * NUM_RANKS + RANKS.index(name[0])
    raise ValueError(f"not a card name: {name!r} (expected rank {RANKS} + suit {SUITS}, 'Wiz' or 'Jes')")


def suit_name(suit: int) -> str | None:
    """Suit letter of a suit index, or None for NO_SUIT."""
    return None if suit == NO_SUIT else SUITS[suit]


def hand_cards(counts: np.ndarray) -> list[int]:
    """Card type ids held in a count vector, in id order, a Wizard or Jester once per copy."""
    return [int(c) for c in np.repeat(np.arange(NUM_CARD_TYPES), counts)]


def hand_names(counts: np.ndarray) -> list[str]:
    """Names of the cards held in a count vector, in id order."""
    return [card_name(c) for c in hand_cards(counts)]
