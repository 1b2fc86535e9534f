"""Wizard as an OpenSpiel game, ``python_wizard`` (optional extra ``openspiel``; needs ``pyspiel``).

Importing this module registers the game; then ``pyspiel.load_game("python_wizard", {...})`` makes it.
Every rule is the engine's: each state holds a ``WizardGame`` (a ``WizardBatch`` of one) and only adds
the chance nodes and the bookkeeping OpenSpiel asks for.

Parameters (all optional): ``players`` (3..6, default 4), ``schedule`` (``"standard"``, the default, or
``"amigo"``), ``rounds`` (play the first that many rounds of the schedule; 0, the default, plays them all),
``bidding`` (``"open"``, ``"hidden"``, ``"secret"``), ``bid_total_rule`` and ``foresight`` (booleans), as
``rules.Rules.make`` takes them. OpenSpiel parses a game string such as ``python_wizard(players=3)`` into
the parameters the game sees, keeping the last of a parameter given twice, and stops on an int too large for
C++ naming no parameter; so this module also wraps ``pyspiel.load_game`` and ``pyspiel.load_game_as_turn_based``
to refuse first, with a ValueError naming it, a ``python_wizard`` parameter given twice or of a value the game
refuses (``check_load_args``; every other call is passed on as it is).

Chance: the first chance node draws the first dealer (seats 0..n-1, uniform). Every round is then dealt
card by card, as a shuffled deck deals: seat 0's cards, seat 1's, ..., then the turned-up card (none when
the round deals the whole deck). A deal outcome is a card type id (0..53, as ``cards`` numbers them)
with probability (copies left) / (cards left), so a round's deal is uniform over shuffled decks. The rest
of the stack is never seen by anyone and is not drawn. While a round is dealt the engine shows the cards
dealt so far, no turned card and, in its ``phase`` field, bidding (the engine has no dealing phase).

Actions: the engine's flat ids (``actions``: bids 0..20, cards 21..74, trump suits 75..78); the legal
actions are the engine's mask. ``rewards()`` are each round's scores on the step that ends the round
(zero elsewhere); ``returns()`` are the totals so far, at the end the final Wizard totals.

Observer: the tensor (information state and observation alike) is the env's observation vector
(``observation.observe``), which holds only what the player may know; its named pieces are the layout's
fields. The observation string describes that vector. The information-state string is the player's
perfect-recall history: every deal, bid, trump choice and card as that player saw it (a hidden card or
bid as ``?``), bids as they are revealed, and each round's result. The tensor is not perfect recall (it
keeps this round's cards by seat, the last trick and the scores, not the order of earlier tricks).

``resample_from_infostate(player, sampler)``: ``determinize.determinize`` redraws the hidden hands of the
round (respecting voids) and the bids the player cannot see, which become the chance outcomes and bids of
a history consistent with the player's information state; the result is that history replayed on a new
state, so its ``history()``, strings and serialization agree with it. During a deal the hidden cards dealt
so far are redrawn uniformly from the cards the player has not seen.

The module runs past 400 lines because the game, its state, its observer and the check of its game strings
are one OpenSpiel registration, read best in one piece.
"""

from __future__ import annotations

import functools
import re
from typing import Callable

import numpy as np
import pyspiel

from wizard_env.engine.actions import BID_OFFSET, CARD_OFFSET, NUM_ACTIONS, Phase, action_name
from wizard_env.engine.cards import DECK_COUNTS, DECK_SIZE, NO_CARD, NO_SUIT, NUM_CARD_TYPES, card_name, hand_names, suit_name
from wizard_env.engine.determinize import determinize, hidden_seats
from wizard_env.engine.game import WizardGame
from wizard_env.engine.observation import FIELDS, OBS_SIZE, SLICES, decode, observe
from wizard_env.render.text import render_text
from wizard_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from wizard_env.util.checks import parse_int, short_repr

SHORT_NAME = "python_wizard"
#: Game parameters and their defaults (the types OpenSpiel checks against).
#: ``rounds`` is a count (0: the whole schedule) and ``schedule`` a name, apart: a game string such as
#: ``python_wizard(rounds=5)`` reads digits as an int, so one parameter could not hold both.
DEFAULT_PARAMS = {"players": 4, "rounds": 0, "schedule": "standard", "bidding": "open", "bid_total_rule": False,
                  "foresight": False}
#: The round schedules the ``schedule`` parameter names.
SCHEDULES = ("standard", "amigo")
_ENGINE_SEED = 0  # the engine's own deck orders are never used: every round is re-dealt from the chance outcomes
_DEALER, _DEAL, _PLAY = "dealer", "deal", "play"  # what the state waits for: first dealer, a card of the deal, a move

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Wizard (wizard_env engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


def rules_from_params(params: dict) -> Rules:
    """The ``Rules`` of a parameter dict (missing keys take ``DEFAULT_PARAMS``); ValueError if impossible."""
    unknown = set(params) - set(DEFAULT_PARAMS)
    if unknown:
        raise ValueError(f"unknown {SHORT_NAME} parameters {sorted(unknown)}: expected {sorted(DEFAULT_PARAMS)}")
    p = {**DEFAULT_PARAMS, **params}
    players = p["players"]
    if isinstance(players, bool) or not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"players={players!r}: Wizard is played by {MIN_PLAYERS} to {MAX_PLAYERS} players")
    if p["schedule"] not in SCHEDULES:
        raise ValueError(f"schedule={p['schedule']!r}: expected {' or '.join(map(repr, SCHEDULES))} "
                         "(rounds=K plays the first K rounds of it)")
    schedule = Rules.make(players, p["schedule"]).hand_sizes
    rounds = p["rounds"]
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 0 <= rounds <= len(schedule):
        raise ValueError(f"rounds={rounds!r}: the {p['schedule']} schedule of {p['players']} players has "
                         f"{len(schedule)} rounds (0 plays them all)")
    return Rules.make(p["players"], list(schedule[:rounds or None]), p["bidding"], p["bid_total_rule"], p["foresight"])


def _game_info(rules: Rules) -> pyspiel.GameInfo:
    sizes = np.array(rules.hand_sizes)
    n = rules.num_players
    return pyspiel.GameInfo(
        num_distinct_actions=NUM_ACTIONS,
        max_chance_outcomes=max(NUM_CARD_TYPES, n),
        num_players=n,
        min_utility=float(rules.total_range[0]),
        max_utility=float(rules.total_range[1]),
        utility_sum=None,
        max_game_length=int((1 + n + n * sizes).sum()),  # decisions: a trump choice, n bids, n * size cards a round
    )


class WizardOpenSpielGame(pyspiel.Game):
    """Wizard for OpenSpiel: one game of the configured rules, dealt by chance nodes."""

    def __init__(self, params: dict | None = None):
        params = dict(params or {})
        self.rules = rules_from_params(params)
        super().__init__(_GAME_TYPE, _game_info(self.rules), params)

    def new_initial_state(self) -> "WizardOpenSpielState":
        """The state before the first dealer is drawn."""
        return WizardOpenSpielState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> "WizardObserver":
        """The observer of ``iig_obs_type`` (default: the observation, not perfect recall)."""
        return WizardObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class WizardOpenSpielState(pyspiel.State):
    """A game in progress: the engine's ``WizardGame``, the deal in progress and each player's history."""

    def __init__(self, game: WizardOpenSpielGame):
        super().__init__(game)
        self.rules = game.rules
        self.engine = WizardGame(self.rules, _ENGINE_SEED)
        n = self.rules.num_players
        self._stage = _DEALER
        self._moves = 0  # length of the history
        self._dealt: list[int] = []  # card types dealt this round, in deal order
        self._deal_start = 0  # history index of this round's first deal outcome
        self._bid_index: dict[int, int] = {}  # seat -> history index of its bid this round
        self._known_bids: list[set[int]] = [set() for _ in range(n)]  # seats whose bid each player has seen this round
        self._events: list[list[str]] = [[] for _ in range(n)]  # each player's history, as they saw it
        self._rewards = np.zeros(n)
        self.engine.first_dealer = 0
        self._clear_round()

    # -- OpenSpiel API ------------------------------------------------------------------------

    def current_player(self) -> int:
        """The acting seat, CHANCE while the first dealer or a card is drawn, TERMINAL at the end."""
        if self.engine.is_over:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE if self._stage != _PLAY else self.engine.current

    def _legal_actions(self, player: int) -> list[int]:
        """The engine's legal action ids for the acting seat."""
        return self.engine.legal_actions() if player == self.current_player() else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """First dealer: each seat alike; a deal: each card type left, by its copies left."""
        n = self.rules.num_players
        if self._stage == _DEALER:
            return [(seat, 1.0 / n) for seat in range(n)]
        left = self._cards_left()
        total = int(left.sum())
        return [(int(card), int(left[card]) / total) for card in np.flatnonzero(left)]

    def _apply_action(self, action: int) -> None:
        """Apply a chance outcome (first dealer, a dealt card) or the acting seat's move (through the engine)."""
        if self._stage == _DEALER:
            if not 0 <= action < self.rules.num_players:
                raise ValueError(f"first dealer {action}: not a seat of {self.rules.num_players} players")
            self.engine.first_dealer = int(action)
            self._public(f"first dealer: seat {int(action)}")
            self._clear_round()
            self._stage = _DEAL
        elif self._stage == _DEAL:
            self._deal(int(action))
        else:
            self._move(int(action))
        self._moves += 1

    def _action_to_string(self, player: int, action: int) -> str:
        """``first dealer 2`` / ``deal Ah`` for chance, else the engine's name (``bid 3``, ``play Ah``, ``trump h``)."""
        if player == pyspiel.PlayerId.CHANCE:
            return f"first dealer {action}" if self._stage == _DEALER else f"deal {card_name(action)}"
        return action_name(action)

    def is_terminal(self) -> bool:
        """True once the last round is scored."""
        return self.engine.is_over

    def returns(self) -> list[float]:
        """Total scores so far (the final Wizard totals at the end)."""
        return [float(x) for x in self.engine.totals]

    def rewards(self) -> list[float]:
        """The rewards of the last move: the round's scores if it ended a round, else zeros.

        Chance steps (the next round's deal) keep them, so a reader at decision nodes misses none."""
        return [float(x) for x in self._rewards]

    def resample_from_infostate(self, player_id: int, probability_sampler) -> "WizardOpenSpielState":
        """A state whose history ``player_id`` cannot tell from this one's, the hidden cards and bids redrawn."""
        draw = probability_sampler()
        if isinstance(draw, (bool, np.bool_)) or not isinstance(draw, (float, int, np.floating, np.integer)) or not 0 <= draw < 1:
            raise ValueError(f"resample_from_infostate: probability_sampler() must return a number in [0, 1), not {short_repr(draw)}")
        rng = np.random.default_rng(int(draw * 2**53))
        history = list(self.history())
        if self._stage == _DEAL:
            self._redraw_deal(player_id, history, rng)
        elif self._stage == _PLAY and not self.engine.is_over:
            self._redraw_round(player_id, history, rng)
        state = self.get_game().new_initial_state()
        for action in history:
            state.apply_action(action)
        return state

    def __str__(self) -> str:
        return f"{self._stage} " + render_text(self.engine)

    # -- the deal -----------------------------------------------------------------------------

    def _deal_length(self) -> int:
        dealt = self.rules.num_players * self.engine.hand_size
        return dealt + (dealt < DECK_SIZE)  # the turned card, if any is left

    def _cards_left(self) -> np.ndarray:
        return DECK_COUNTS.astype(np.int64) - np.bincount(self._dealt, minlength=NUM_CARD_TYPES)

    def _sees_hand(self, player: int, seat: int) -> bool:
        """Whether ``player`` sees ``seat``'s cards this round (in a foresight round, the others' and not their own)."""
        return seat not in hidden_seats(self.engine.batch, 0, player)

    def _clear_round(self) -> None:
        """Set the engine to this round with nothing dealt yet (the engine deals from its own order: undo that)."""
        batch = self.engine.batch
        batch.deal_round()  # dealer, leader, cleared bids and tricks
        batch.hands[0] = 0
        batch.trump_card[0], batch.trump[0] = NO_CARD, NO_SUIT
        batch.phase[0], batch.current[0] = Phase.BID, batch.leader[0]
        batch.mask_stale[0] = True
        self._dealt, self._deal_start, self._bid_index = [], self._moves + 1, {}
        self._known_bids = [set() for _ in range(self.rules.num_players)]

    def _deal(self, card: int) -> None:
        """Deal one card: to the next seat in deal order, or turn it up; start the round once all are out."""
        if not 0 <= card < NUM_CARD_TYPES or self._cards_left()[card] <= 0:
            raise ValueError(f"deal {card}: no copy of that card is left")
        batch, size, n = self.engine.batch, self.engine.hand_size, self.rules.num_players
        position = len(self._dealt)
        self._dealt.append(card)
        if position < n * size:
            seat = position // size
            batch.hands[0, seat, card] += 1
            for p in range(n):
                self._events[p].append(f"seat {seat} dealt {card_name(card) if self._sees_hand(p, seat) else '?'}")
        else:
            batch.trump_card[0] = card
            self._public(f"turned up {card_name(card)}")
        batch.mask_stale[0] = True
        if len(self._dealt) == self._deal_length():
            rest = np.repeat(np.arange(NUM_CARD_TYPES), self._cards_left())  # the undealt stack, never seen
            batch.orders[0, self.engine.round_index] = np.concatenate([self._dealt, rest]).astype(np.int8)
            batch.deal_round()  # the engine deals the same cards
            self._stage = _PLAY

    # -- moves --------------------------------------------------------------------------------

    def _move(self, action: int) -> None:
        """The acting seat's move, through the engine; record what each player sees of it."""
        game, n = self.engine, self.rules.num_players
        seat, phase = game.current, game.phase
        scores = game.step(action)  # validates
        self._rewards = np.zeros(n)
        if phase == Phase.TRUMP:
            self._public(f"seat {seat} names trump {suit_name(game.trump)}")
        elif phase == Phase.BID:
            self._bid_index[seat] = self._moves
            for p in range(n):
                if not game.bid_visible(p, seat):
                    self._events[p].append(f"seat {seat} bids ?")
        else:
            self._public(f"seat {seat} plays {card_name(action - CARD_OFFSET)}")
        if scores is None:
            self._reveal_bids()
            return
        batch = game.batch
        self._rewards = scores.astype(np.float64)
        self._public(f"round ends: bids {batch.round_bids[0].tolist()} tricks {batch.round_tricks[0].tolist()} "
                     f"scores {scores.tolist()}")
        if not game.is_over:
            self._clear_round()
            self._stage = _DEAL

    def _reveal_bids(self) -> None:
        """Record the bids each player sees now and had not seen (as made, or revealed when play starts)."""
        for p in range(self.rules.num_players):
            for seat in range(self.rules.num_players):
                if seat not in self._known_bids[p] and self.engine.bid_visible(p, seat):
                    self._known_bids[p].add(seat)
                    self._events[p].append(f"seat {seat} bids {int(self.engine.bids[seat])}")

    def _public(self, event: str) -> None:
        for events in self._events:
            events.append(event)

    # -- resampling ---------------------------------------------------------------------------

    def _redraw_deal(self, player: int, history: list[int], rng: np.random.Generator) -> None:
        """Mid-deal: the cards dealt so far to seats ``player`` cannot see, redrawn from the cards they have not seen."""
        size = self.engine.hand_size
        hidden = [i for i in range(min(len(self._dealt), self.rules.num_players * size))
                  if not self._sees_hand(player, i // size)]
        seen = np.bincount([c for i, c in enumerate(self._dealt) if i not in hidden], minlength=NUM_CARD_TYPES)
        pool = rng.permutation(np.repeat(np.arange(NUM_CARD_TYPES), DECK_COUNTS - seen))
        for i, card in zip(hidden, pool):
            history[self._deal_start + i] = int(card)

    def _redraw_round(self, player: int, history: list[int], rng: np.random.Generator) -> None:
        """In play: the hidden hands and bids of this round as ``determinize`` redraws them, written into ``history``."""
        batch, size = self.engine.batch, self.engine.hand_size
        sample = determinize(batch, np.array([0]), np.array([player]), rng)
        for seat in hidden_seats(batch, 0, player):
            cards = np.repeat(np.arange(NUM_CARD_TYPES), sample.hands[0, seat] + sample.played[0, seat])
            start = self._deal_start + seat * size
            history[start:start + size] = cards.tolist()
        for seat, index in self._bid_index.items():
            if not self.engine.bid_visible(player, seat):
                history[index] = BID_OFFSET + int(sample.bids[0, seat])


def _describe(vector: np.ndarray) -> str:
    """An observation vector as text: each non-zero field, cards by name."""
    parts = []
    for field, value in decode(vector).items():
        if not value.any():
            continue
        if value.shape[-1:] == (NUM_CARD_TYPES,):
            rows = value.reshape(-1, NUM_CARD_TYPES)
            text = "/".join(" ".join(hand_names(row)) for row in rows)  # one hand per slot
        else:
            text = " ".join(map(str, value.ravel().tolist()))
        parts.append(f"{field}: {text}")
    return "\n".join(parts)


class WizardObserver:
    """OpenSpiel observer (the PyObserver interface): the env's observation vector, by named field."""

    def __init__(self, iig_obs_type, params=None):
        if params:
            raise ValueError(f"{SHORT_NAME} observers take no parameters, got {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(f"{SHORT_NAME} observes for one player (private and public information), not {iig_obs_type}")
        self.perfect_recall = iig_obs_type.perfect_recall
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict = {f.name: self.tensor[SLICES[f.name]].reshape(f.shape) for f in FIELDS}

    def set_from(self, state: WizardOpenSpielState, player: int) -> None:
        """Write ``player``'s observation of ``state`` into ``tensor``."""
        self.tensor[:] = observe(state.engine, player)

    def string_from(self, state: WizardOpenSpielState, player: int) -> str:
        """``player``'s history as they saw it (perfect recall), or their observation as text."""
        if self.perfect_recall:
            return f"player {player}\n" + "\n".join(state._events[player])
        return f"player {player}\n" + _describe(observe(state.engine, player))


def game_string_parameters(game_string: str) -> list[list[tuple[str, str]]]:
    """The parameters of each ``python_wizard(...)`` in ``game_string``: (key, value) as written, in order."""
    games = []
    for match in re.finditer(rf"(?<![\w.]){SHORT_NAME}\(", game_string):
        depth, pairs, part = 0, list[tuple[str, str]](), list[str]()
        for char in game_string[match.end():]:
            if depth == 0 and char in ",)":  # the end of one parameter (a nested game's commas are deeper)
                key, _, value = "".join(part).partition("=")
                pairs += [(key.strip(), value.strip())] if key.strip() else []
                part = []
                if char == ")":
                    break
                continue
            depth += (char == "(") - (char == ")")
            part.append(char)
        games.append(pairs)
    return games


def check_load_args(args: tuple) -> None:
    """ValueError naming a ``python_wizard`` parameter that a loader's arguments give twice or of a value
    ``rules_from_params`` refuses, before OpenSpiel reads it (its C++ stops on an int it cannot hold, naming nothing)."""
    if len(args) > 1 and args[0] == SHORT_NAME and isinstance(args[1], dict):
        rules_from_params(args[1])
    for pairs in game_string_parameters(args[0]) if args and isinstance(args[0], str) else []:
        keys = [key for key, _ in pairs]
        twice = next((key for i, key in enumerate(keys) if key in keys[:i]), None)
        if twice is not None:
            raise ValueError(f"game string {args[0]!r} gives the {SHORT_NAME} parameter {twice!r} twice: give it once")
        params: dict[str, object] = {}
        for key, text in pairs:
            default = DEFAULT_PARAMS.get(key)
            try:  # an int as the engine reads it; booleans are OpenSpiel's to read
                params.update({} if isinstance(default, bool) else {key: parse_int(text) if isinstance(default, int) else text})
            except ValueError as err:
                raise ValueError(f"game string {short_repr(args[0], 100)}: {key}: {err}") from None
        rules_from_params(params)


def _checking(load: Callable) -> Callable:
    """``load`` (a pyspiel loader), calling ``check_load_args`` first."""
    @functools.wraps(load)
    def checked(*args, **kwargs):
        check_load_args(args)
        return load(*args, **kwargs)

    checked.checks_wizard_params = True  # type: ignore[attr-defined]
    return checked


pyspiel.register_game(_GAME_TYPE, WizardOpenSpielGame)
for _loader in ("load_game", "load_game_as_turn_based"):
    if not getattr(getattr(pyspiel, _loader), "checks_wizard_params", False):
        setattr(pyspiel, _loader, _checking(getattr(pyspiel, _loader)))
