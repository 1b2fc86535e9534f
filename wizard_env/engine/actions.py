"""Action ids and phases shared by every engine (no RL imports).

Actions (one ``Discrete(NUM_ACTIONS)`` space for every player count and variant):

====================  ===========  ==============================================
actions               offset       meaning
====================  ===========  ==============================================
0 .. 20               BID_OFFSET   bid that many tricks
21 .. 74              CARD_OFFSET  play a card type: ``21 + suit * 13 + rank``
                                   (suits c d h s, ranks 2..A), 73 Wizard, 74 Jester
75 .. 78              TRUMP_OFFSET the dealer names trump after a turned Wizard:
                                   clubs, diamonds, hearts, spades
====================  ===========  ==============================================
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from .cards import NUM_CARD_TYPES, NUM_SUITS, SUITS, card_name
from .constants import MAX_HAND_SIZE

BID_OFFSET = 0
NUM_BID_ACTIONS = MAX_HAND_SIZE + 1
CARD_OFFSET = BID_OFFSET + NUM_BID_ACTIONS
TRUMP_OFFSET = CARD_OFFSET + NUM_CARD_TYPES
NUM_ACTIONS = TRUMP_OFFSET + NUM_SUITS


class Phase(IntEnum):
    """What the acting player decides."""

    TRUMP = 0  # the dealer names trump after a turned Wizard
    BID = 1
    PLAY = 2
    OVER = 3  # the game has ended


class IllegalActionError(ValueError):
    """An action that is malformed, out of range or not legal now."""


def action_name(action: int) -> str:
    """Readable name of an action id: ``bid 3``, ``play Ah``, ``trump h``."""
    action = int(action)
    if BID_OFFSET <= action < CARD_OFFSET:
        return f"bid {action - BID_OFFSET}"
    if CARD_OFFSET <= action < TRUMP_OFFSET:
        return f"play {card_name(action - CARD_OFFSET)}"
    if TRUMP_OFFSET <= action < NUM_ACTIONS:
        return f"trump {SUITS[action - TRUMP_OFFSET]}"
    raise ValueError(f"not an action id: {action} (expected 0..{NUM_ACTIONS - 1})")


def chosen_legal(masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """bool [k]: whether ``actions[i]`` is legal in mask row i (False for an id out of range)."""
    in_range = (actions >= 0) & (actions < NUM_ACTIONS)
    return in_range & (masks[np.arange(len(actions)), np.where(in_range, actions, 0)] != 0)


def legal_listing(mask: np.ndarray) -> str:
    """The legal actions of a mask, for error messages: ``3 (bid 3), 4 (bid 4)``."""
    return ", ".join(f"{a} ({action_name(a)})" for a in np.flatnonzero(mask).tolist())
