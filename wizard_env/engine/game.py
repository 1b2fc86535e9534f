"""One game of Wizard, move by move: a batch of one of ``batch.WizardBatch`` (no RL imports).

Actions and phases are listed in ``actions``. A deal depends only on (seed, round number),
never on the actions taken.
"""

from __future__ import annotations

import numpy as np

from .actions import (  # noqa: F401  (re-exported: the engine's public names)
    BID_OFFSET,
    CARD_OFFSET,
    NUM_ACTIONS,
    NUM_BID_ACTIONS,
    TRUMP_OFFSET,
    IllegalActionError,
    Phase,
    action_name,
    legal_listing,
)
from .batch import OVER, WizardBatch, deal_hands, shuffle_game
from wizard_env.util.checks import check_seed
from .cards import NO_CARD
from .observation import is_foresight_round
from .rules import Rules


def deal(seed: int, round_index: int, num_players: int, hand_size: int) -> tuple[np.ndarray, int]:
    """Hands (counts, one row per seat) and the turned card (NO_CARD if none) of one round.

    A function of (seed, round) only, so the same seed gives the same cards whatever is played.
    """
    order = shuffle_game(seed, round_index + 1, num_players)[1][round_index]
    hands, turned = deal_hands(order[None], np.array([hand_size]), num_players)
    return hands[0], int(turned[0])


def first_dealer(seed: int, num_players: int) -> int:
    """Seat of the first dealer: a seeded random seat (the draw for the deal)."""
    return shuffle_game(seed, 0, num_players)[0]


def _state(name: str, doc: str, kind: type | None = None) -> property:
    """A property reading and writing game 0 of the batch's array ``name``: as ``kind`` (a scalar),
    or without ``kind`` as a writable view of its row."""

    def get(self):
        if kind is not None:
            return kind(getattr(self.batch, name)[0])
        self.batch.mask_stale[0] = True  # the caller may change the state through the view
        return getattr(self.batch, name)[0]

    def set_(self, value):
        getattr(self.batch, name)[0] = value
        self.batch.mask_stale[0] = True

    return property(get, set_, doc=doc)


class WizardGame:
    """One game of Wizard: validated moves and an optional replay log, on a ``WizardBatch`` of one.

    The state attributes are views of the batch's arrays (tests may set them to build a position);
    only ``step`` changes them in play.
    """

    def __init__(self, rules: Rules, seed: int, record: bool = False):
        self.rules = rules
        self.seed = check_seed(seed)
        self.record = record
        self.num_players = rules.num_players
        self.batch = WizardBatch(rules, seeds=[self.seed], autoreset=False, record=record)
        self._games = self.batch.all_games

    phase = _state("phase", "What the acting player decides.", Phase)
    round_index = _state("round_index", "Round being played, from 0.", int)
    current = _state("current", "Seat to act.", int)
    dealer = _state("dealer", "Seat that dealt this round.", int)
    leader = _state("leader", "Seat that leads (led) the current trick.", int)
    trump = _state("trump", "Trump suit, NO_SUIT for none.", int)
    trump_card = _state("trump_card", "Turned-up card, NO_CARD for none.", int)
    first_dealer = _state("first_dealer", "Seat that dealt the first round.", int)
    hands = _state("hands", "Cards held, counts [seat, card type].")
    played = _state("played", "Cards played this round, counts [seat, card type].")
    bids = _state("bids", "Bid by seat, -1 until made.")
    tricks_won = _state("tricks_won", "Tricks taken this round by seat.")
    totals = _state("totals", "Total score by seat.")
    round_scores = _state("round_scores", "Scores of the last completed round by seat.")

    @property
    def log(self) -> list[dict]:
        """Replay log: one dict per round (only with ``record``)."""
        return self.batch.logs[0]

    @property
    def trick_cards(self) -> list[int]:
        """Cards played to the current trick, in play order."""
        return self.batch.trick[0, : self.batch.trick_len[0]].tolist()

    @trick_cards.setter
    def trick_cards(self, cards: list[int]) -> None:
        self.batch.trick[0] = NO_CARD
        self.batch.trick[0, : len(cards)] = cards
        self.batch.trick_len[0] = len(cards)
        self.batch.mask_stale[0] = True

    # -- reading the state -------------------------------------------------------------------

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player this round."""
        return self.rules.hand_sizes[self.round_index]

    @property
    def is_over(self) -> bool:
        """True once the last round has been scored."""
        return bool(self.batch.phase[0] == OVER)

    def bid_visible(self, observer: int, seat: int) -> bool:
        """Whether ``observer`` may know ``seat``'s bid now, as the bidding variant allows."""
        return bool(self.batch.bids_visible(self._games, np.array([observer]))[0, seat])

    def hand_visible(self, observer: int, seat: int) -> bool:
        """Whether ``observer`` sees ``seat``'s hand now: their own, or in a foresight round everyone else's."""
        return seat != observer if is_foresight_round(self) else seat == observer

    def legal_mask(self) -> np.ndarray:
        """int8 mask over all NUM_ACTIONS for the acting player (all zeros when the game is over)."""
        return self.batch.legal_masks(self._games)[0]

    def legal_actions(self) -> list[int]:
        """Legal action ids for the acting player."""
        return [int(a) for a in np.flatnonzero(self.legal_mask())]

    @property
    def trick_seats(self) -> list[int]:
        """Seats that have played to the current trick, in play order."""
        return [(self.leader + i) % self.num_players for i in range(len(self.trick_cards))]

    # -- changing the state ------------------------------------------------------------------

    def check_action(self, action: object, actor: str | None = None) -> int:
        """The action as an int if it is legal now, else IllegalActionError naming the legal ones."""
        who = actor or f"seat {self.current}"
        if self.is_over:
            raise IllegalActionError(f"{who}: action {action!r}: the game is over, no action is legal")
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        mask = self.legal_mask()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise IllegalActionError(f"{who}: action {action!r} is not an integer action id; legal: {legal_listing(mask)}")
        action = int(action)
        if not 0 <= action < NUM_ACTIONS or not mask[action]:
            what = action_name(action) if 0 <= action < NUM_ACTIONS else "out of range"
            raise IllegalActionError(
                f"{who}: action {action} ({what}) is not legal in the {self.phase.name.lower()} phase; legal: {legal_listing(mask)}"
            )
        return action

    def step(self, action: int, actor: str | None = None) -> np.ndarray | None:
        """Validate and apply the acting player's action; return the round's scores if it ended a round.

        ``actor`` names the player in error messages (default: ``seat N``).
        """
        try:
            self.batch.step(np.array([action]))  # checked against the legal mask in the same compiled call
        except IllegalActionError:
            self.check_action(action, actor)  # raises the error that names this player and the legal actions
            raise
        return self.batch.round_scores[0].copy() if self.batch.round_over[0] else None
