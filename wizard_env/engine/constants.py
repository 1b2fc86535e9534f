"""The numbers of the rules: player counts, the largest hand and game, and the points of a round (no RL imports).

They sit apart from ``rules`` so that the modules ``rules`` builds on (the action ids, the compiled
kernels) can read them; ``rules`` re-exports every one.
"""

from __future__ import annotations

from .cards import DECK_SIZE

MIN_PLAYERS = 3
MAX_PLAYERS = 6
#: The largest hand any configuration can deal (3 players, 60 / 3).
MAX_HAND_SIZE = DECK_SIZE // MIN_PLAYERS
#: The most rounds a game may have (a list of hand sizes may repeat sizes): the round counter and
#: the totals of a game stay far inside their integer types.
MAX_ROUNDS = 1000

MADE_BID_BONUS = 20
POINTS_PER_TRICK = 10
PENALTY_PER_TRICK_OFF = 10
