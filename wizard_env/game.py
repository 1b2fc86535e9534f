"""The Wizard game as a state machine over one flat action space (no RL imports).

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

A deal depends only on (seed, round number), never on the actions taken.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from .cards import (
    DECK,
    DECK_SIZE,
    NO_CARD,
    NUM_CARD_TYPES,
    NUM_SUITS,
    SUITS,
    WIZARD,
    card_name,
    hand_names,
    suit_name,
)
from .rules import MAX_HAND_SIZE, Rules, legal_bids, legal_cards, round_score, trick_winner, trump_from_card

BID_OFFSET = 0
NUM_BID_ACTIONS = MAX_HAND_SIZE + 1
CARD_OFFSET = BID_OFFSET + NUM_BID_ACTIONS
TRUMP_OFFSET = CARD_OFFSET + NUM_CARD_TYPES
NUM_ACTIONS = TRUMP_OFFSET + NUM_SUITS

_DEAL_STREAM = 0
_DEALER_STREAM = 1


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


def check_seed(seed: object) -> int:
    """A game seed as a non-negative int, or ValueError."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, not {seed!r}")
    return int(seed)


def deal(seed: int, round_index: int, num_players: int, hand_size: int) -> tuple[np.ndarray, int]:
    """Hands (counts, one row per seat) and the turned card (NO_CARD if none) of one round.

    A function of (seed, round) only, so the same seed gives the same cards whatever is played.
    """
    order = np.random.default_rng([seed, _DEAL_STREAM, round_index]).permutation(DECK)
    dealt = order[: num_players * hand_size].reshape(num_players, hand_size)
    hands = np.zeros((num_players, NUM_CARD_TYPES), dtype=np.int8)
    for seat in range(num_players):
        np.add.at(hands[seat], dealt[seat], 1)
    turned = int(order[num_players * hand_size]) if num_players * hand_size < DECK_SIZE else NO_CARD
    return hands, turned


def first_dealer(seed: int, num_players: int) -> int:
    """Seat of the first dealer: a seeded random seat (the draw for the deal)."""
    return int(np.random.default_rng([seed, _DEALER_STREAM]).integers(num_players))


class WizardGame:
    """One game of Wizard: validated moves, state as small numpy arrays, and an optional replay log.

    Attributes are read by the observation encoder, the renderer and the replay writer;
    only ``step`` changes them.
    """

    def __init__(self, rules: Rules, seed: int, record: bool = False):
        self.rules = rules
        self.seed = check_seed(seed)
        self.record = record
        n = rules.num_players
        self.num_players = n
        self.first_dealer = first_dealer(self.seed, n)
        self.totals = np.zeros(n, dtype=np.int64)
        self.round_scores = np.zeros(n, dtype=np.int64)
        self.log: list[dict] = []
        self.round_index = -1
        self._start_round(0)

    # -- reading the state -------------------------------------------------------------------

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player this round."""
        return self.rules.hand_sizes[self.round_index]

    @property
    def is_over(self) -> bool:
        """True once the last round has been scored."""
        return self.phase == Phase.OVER

    def bid_visible(self, observer: int, seat: int) -> bool:
        """Whether ``observer`` may know ``seat``'s bid now, as the bidding variant allows."""
        if self.bids[seat] < 0:
            return False
        if seat == observer or self.phase == Phase.OVER:
            return True
        mode = self.rules.bidding.value
        if mode == "open":
            return True
        if mode == "hidden":
            return self.phase == Phase.PLAY
        return False  # secret: revealed at the end of the round

    def legal_mask(self) -> np.ndarray:
        """int8 mask over all NUM_ACTIONS for the acting player (all zeros when the game is over)."""
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if self.phase == Phase.TRUMP:
            mask[TRUMP_OFFSET:NUM_ACTIONS] = 1
        elif self.phase == Phase.BID:
            is_last = self.current == self.dealer
            made = self.bids[self.bids >= 0]
            mask[BID_OFFSET:CARD_OFFSET] = legal_bids(self.hand_size, made, is_last, self.rules.bid_total_rule)
        elif self.phase == Phase.PLAY:
            mask[CARD_OFFSET:TRUMP_OFFSET] = legal_cards(self.hands[self.current], self.trick_cards)
        return mask

    def legal_actions(self) -> list[int]:
        """Legal action ids for the acting player."""
        return [int(a) for a in np.flatnonzero(self.legal_mask())]

    # -- changing the state ------------------------------------------------------------------

    def check_action(self, action: object, actor: str | None = None) -> int:
        """The action as an int if it is legal now, else IllegalActionError naming the legal ones."""
        who = actor or f"seat {self.current}"
        if self.phase == Phase.OVER:
            raise IllegalActionError(f"{who}: action {action!r}: the game is over, no action is legal")
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise IllegalActionError(
                f"{who}: action {action!r} is not an integer action id; legal: {self._legal_text()}"
            )
        action = int(action)
        if not 0 <= action < NUM_ACTIONS or not self.legal_mask()[action]:
            what = action_name(action) if 0 <= action < NUM_ACTIONS else "out of range"
            raise IllegalActionError(
                f"{who}: action {action} ({what}) is not legal in the {self.phase.name.lower()} "
                f"phase; legal: {self._legal_text()}"
            )
        return action

    def step(self, action: int, actor: str | None = None) -> np.ndarray | None:
        """Validate and apply the acting player's action; return the round's scores if it ended a round.

        ``actor`` names the player in error messages (default: ``seat N``).
        """
        return self._apply(self.check_action(action, actor))

    def _legal_text(self) -> str:
        return ", ".join(f"{a} ({action_name(a)})" for a in self.legal_actions())

    def _apply(self, action: int) -> np.ndarray | None:
        if self.phase == Phase.TRUMP:
            self.trump = action - TRUMP_OFFSET
            if self.record:
                self.log[-1]["trump"] = suit_name(self.trump)
            self.phase = Phase.BID
            self.current = self._left_of(self.dealer)
            return None
        if self.phase == Phase.BID:
            return self._bid(action - BID_OFFSET)
        return self._play(action - CARD_OFFSET)

    def _left_of(self, seat: int) -> int:
        return (seat + 1) % self.num_players

    def _bid(self, bid: int) -> None:
        if self.record:
            legal = np.flatnonzero(self.legal_mask()[BID_OFFSET:CARD_OFFSET])
            self.log[-1]["bids"].append({"seat": self.current, "bid": bid, "legal": legal.tolist()})
        self.bids[self.current] = bid
        if self.current == self.dealer:
            self.phase = Phase.PLAY
            self.leader = self._left_of(self.dealer)
            self.current = self.leader
        else:
            self.current = self._left_of(self.current)
        return None

    def _play(self, card: int) -> np.ndarray | None:
        seat = self.current
        if self.record:
            legal = np.flatnonzero(self.legal_mask()[CARD_OFFSET:TRUMP_OFFSET])
            if not self.trick_cards:
                self.log[-1]["tricks"].append({"leader": seat, "plays": [], "winner": None})
            self.log[-1]["tricks"][-1]["plays"].append(
                {"seat": seat, "card": card_name(card), "legal": [card_name(c) for c in legal]}
            )
        self.hands[seat, card] -= 1
        self.played[seat, card] += 1
        self.trick_cards.append(card)
        if len(self.trick_cards) < self.num_players:
            self.current = self._left_of(seat)
            return None
        winner = (self.leader + trick_winner(self.trick_cards, self.trump)) % self.num_players
        self.tricks_won[winner] += 1
        if self.record:
            self.log[-1]["tricks"][-1]["winner"] = winner
        self.trick_cards = []
        self.leader = self.current = winner
        if self.hands[winner].any():
            return None
        return self._end_round()

    def _end_round(self) -> np.ndarray:
        scores = np.array([round_score(b, t) for b, t in zip(self.bids, self.tricks_won)], dtype=np.int64)
        self.round_scores = scores
        self.totals += scores
        if self.record:
            self.log[-1].update(
                tricks_won=self.tricks_won.tolist(), scores=scores.tolist(), totals=self.totals.tolist()
            )
        if self.round_index + 1 < self.rules.num_rounds:
            self._start_round(self.round_index + 1)
        else:
            self.phase = Phase.OVER
        return scores

    def _start_round(self, round_index: int) -> None:
        n = self.num_players
        self.round_index = round_index
        self.dealer = (self.first_dealer + round_index) % n
        self.hands, self.trump_card = deal(self.seed, round_index, n, self.hand_size)
        self.trump = trump_from_card(self.trump_card)
        self.bids = np.full(n, -1, dtype=np.int64)
        self.tricks_won = np.zeros(n, dtype=np.int64)
        self.played = np.zeros((n, NUM_CARD_TYPES), dtype=np.int8)
        self.trick_cards: list[int] = []
        self.leader = self._left_of(self.dealer)
        if self.trump_card == WIZARD:
            self.phase, self.current = Phase.TRUMP, self.dealer
        else:
            self.phase, self.current = Phase.BID, self._left_of(self.dealer)
        if self.record:
            self.log.append(
                {
                    "round": round_index + 1,
                    "dealer": self.dealer,
                    "hands": [hand_names(h) for h in self.hands],
                    "trump_card": None if self.trump_card == NO_CARD else card_name(self.trump_card),
                    "trump": suit_name(self.trump),
                    "bids": [],
                    "tricks": [],
                }
            )

    # -- derived views -----------------------------------------------------------------------

    @property
    def trick_seats(self) -> list[int]:
        """Seats that have played to the current trick, in play order."""
        return [(self.leader + i) % self.num_players for i in range(len(self.trick_cards))]
