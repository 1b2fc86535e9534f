"""Many games of Wizard in lockstep, as numpy arrays with a leading batch axis (no RL imports).

``WizardBatch`` is the one engine: it holds B games, validates and applies one action per game
in a few vectorised numpy operations, and computes the legal-action masks and observations of
all acting seats at once. ``game.WizardGame`` is a batch of one, so the AEC environment, the
replays and the command line run on the same code as training.

A game's cards depend only on its seed: ``shuffle_game(seed, ...)`` draws the first dealer and
the deck order of every round from ``numpy.random.default_rng([seed, 0])``. With ``autoreset``,
a finished game's slot restarts at once with a new seed drawn from the batch's own seeded
generator, so a batch is reproducible from its seed and every game in it from its game seed.

The module runs past 400 lines because ``WizardBatch`` is the engine's one public class, each of whose
methods validates its arguments and then calls a kernel, and it reads best in one piece.
"""

from __future__ import annotations

import copy
from typing import Sequence

import numpy as np

from . import batch_kernels, kernels
from .actions import BID_OFFSET, CARD_OFFSET, NUM_ACTIONS, TRUMP_OFFSET, IllegalActionError, Phase, action_name, legal_listing
from .cards import DECK, DECK_SIZE, NO_CARD, NUM_CARD_TYPES, NUM_SUITS, card_name, hand_names, suit_name
from .observation import ENCODER_LAYOUT, OBS_SIZE, encode
from .rules import Bidding, Rules
from wizard_env.util.checks import check_seed, short_repr
from wizard_env.util.checks import GAME_BYTES, check_memory

#: Game seeds drawn by a batch stay below 2**53, so every JSON reader holds them exactly.
MAX_GAME_SEED = 2**53
_DEAL_STREAM = 0
_BATCH_STREAM = 1
TRUMP, BID, PLAY, OVER = kernels.TRUMP, kernels.BID, kernels.PLAY, kernels.OVER
_BIDDING = {Bidding.OPEN: kernels.OPEN, Bidding.HIDDEN: kernels.HIDDEN, Bidding.SECRET: kernels.SECRET}
# the per-step results that ``step`` sets (see the class docstring)
_RESULTS = ("round_over", "round_scores", "round_bids", "round_tricks", "round_hand_size", "round_dealer",
            "game_over", "final_totals", "final_seed", "trick_won_by")


_FLOAT32, _INT8 = np.dtype(np.float32), np.dtype(np.int8)


def check_out(name: str, array: object, shape: tuple[int, ...], dtype: np.dtype) -> None:
    """ValueError naming ``name`` unless ``array`` is a writable numpy array of this shape and dtype."""
    if not isinstance(array, np.ndarray) or array.shape != shape or array.dtype != dtype or not array.flags.writeable:
        if isinstance(array, np.ndarray):
            what = f"a {'' if array.flags.writeable else 'read-only '}{array.dtype} array of shape {array.shape}"
        else:
            what = short_repr(array)
        raise ValueError(f"{name} must be a writable {dtype.name} array of shape {shape}, not {what}")


def shuffle_game(seed: int, num_rounds: int, num_players: int) -> tuple[int, np.ndarray]:
    """First dealer and the deck order (card types, one row per round) of the game with this seed.

    Row r depends only on (seed, r), not on how many rounds the game has.
    """
    rng = np.random.default_rng([seed, _DEAL_STREAM])
    first_dealer = int(rng.random() * num_players)
    orders = DECK[rng.random((num_rounds, DECK_SIZE)).argsort(axis=1)]
    return first_dealer, orders.astype(np.int8)


def deal_hands(orders: np.ndarray, sizes: np.ndarray, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """Hands [k, n, card types] (counts) and turned cards [k] (NO_CARD if none) dealt from deck orders [k, 60].

    Seat s gets cards s*size .. s*size + size - 1 of the order; the next card is turned up.
    """
    orders = np.asarray(orders, dtype=np.int8)
    hands = np.zeros((len(orders), num_players, NUM_CARD_TYPES), dtype=np.int8)
    turned = np.array([kernels.deal_into(order, int(size), hand) for order, size, hand in zip(orders, sizes, hands)],
                      dtype=np.int64)
    return hands, turned


class WizardBatch:
    """B games of one rule set, stepped together; every array has the game as its first axis.

    State (n = number of players): ``hands`` and ``played`` [B, n, card types] counts, ``bids``
    [B, n] (-1 until made), ``tricks_won`` [B, n], ``totals`` [B, n], ``trick`` [B, n] cards in
    play order (NO_CARD-padded), ``voids`` [B, n, suits] (1 where the seat showed out of the suit
    this round), ``last_trick`` [B, n] (the last completed trick's card by seat, NO_CARD before the
    first), and per game ``phase``, ``current`` (acting seat), ``dealer``, ``leader``,
    ``last_winner`` (-1 before the first trick is won), ``round_index``, ``trump``, ``trump_card``,
    ``game_seed``.

    After each ``step``, flags and results of the step, valid where the flag is set:
    ``round_over`` with ``round_scores``, ``round_bids``, ``round_tricks``, ``round_hand_size``,
    ``round_dealer``; ``game_over`` with ``final_totals`` and ``final_seed``; ``trick_won_by``, the
    seat that won a trick completed by the step (-1 where none was).

    Legal masks are cached per game until ``step`` changes it; code that writes the state arrays
    directly (tests building a position) must set ``mask_stale`` for those games, and must write into
    the arrays rather than replace them: the kernels hold them, gathered in ``kernel_state``.
    """

    def __init__(
        self,
        rules: Rules,
        batch_size: int | None = None,
        seed: int = 0,
        *,
        seeds: Sequence[int] | None = None,
        autoreset: bool = True,
        record: bool = False,
    ):
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules, such as Rules.make(4), not {short_repr(rules)}")
        if seeds is not None:
            seeds = [check_seed(s) for s in seeds]
            if batch_size is not None and batch_size != len(seeds):
                raise ValueError(f"batch_size={batch_size} but {len(seeds)} seeds were given")
            batch_size = len(seeds)
        if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}")
        check_memory("batch_size", int(batch_size), GAME_BYTES)
        for name, flag in (("autoreset", autoreset), ("record", record)):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, not {short_repr(flag)}")
        self.rules = rules
        self.batch_size = b = int(batch_size)
        self.num_players = n = rules.num_players
        self.autoreset = autoreset
        self.record = record
        self.hand_sizes = np.array(rules.hand_sizes, dtype=np.int64)
        self.bidding_code = _BIDDING[rules.bidding]  #: the bidding variant as the kernels number it
        self._seed_rng = np.random.default_rng([check_seed(seed), _BATCH_STREAM])
        self.all_games = self._all = np.arange(b)

        self.game_seed = np.zeros(b, dtype=np.int64)
        self.orders = np.zeros((b, rules.num_rounds, DECK_SIZE), dtype=np.int8)
        self.first_dealer = np.zeros(b, dtype=np.int8)
        self.round_index = np.zeros(b, dtype=np.int16)
        self.phase = np.zeros(b, dtype=np.int8)
        self.current = np.zeros(b, dtype=np.int8)
        self.dealer = np.zeros(b, dtype=np.int8)
        self.leader = np.zeros(b, dtype=np.int8)
        self.trump = np.zeros(b, dtype=np.int8)
        self.trump_card = np.zeros(b, dtype=np.int8)
        self.hands = np.zeros((b, n, NUM_CARD_TYPES), dtype=np.int8)
        self.played = np.zeros((b, n, NUM_CARD_TYPES), dtype=np.int8)
        self.trick = np.zeros((b, n), dtype=np.int8)
        self.trick_len = np.zeros(b, dtype=np.int8)
        self.voids = np.zeros((b, n, NUM_SUITS), dtype=np.int8)
        self.last_trick = np.zeros((b, n), dtype=np.int8)
        self.last_winner = np.zeros(b, dtype=np.int8)
        self.bids = np.zeros((b, n), dtype=np.int8)
        self.tricks_won = np.zeros((b, n), dtype=np.int8)
        self.totals = np.zeros((b, n), dtype=np.int32)
        self._state = [name for name, value in vars(self).items() if isinstance(value, np.ndarray) and name != "hand_sizes" and name != "_all"]

        self.round_over = np.zeros(b, dtype=bool)
        self.round_scores = np.zeros((b, n), dtype=np.int64)
        self.round_bids = np.zeros((b, n), dtype=np.int8)
        self.round_tricks = np.zeros((b, n), dtype=np.int8)
        self.round_hand_size = np.zeros(b, dtype=np.int64)
        self.round_dealer = np.zeros(b, dtype=np.int8)
        self.game_over = np.zeros(b, dtype=bool)
        self.final_totals = np.zeros((b, n), dtype=np.int64)
        self.final_seed = np.zeros(b, dtype=np.int64)
        self.trick_won_by = np.zeros(b, dtype=np.int8)

        # masks of the acting seats, recomputed only for games changed since they were last asked for
        self._mask_cache = np.zeros((b, NUM_ACTIONS), dtype=np.int8)
        self.mask_stale = np.ones(b, dtype=bool)

        #: With ``record``: the replay log (list of round dicts) of each slot's current game, and
        #: (seed, log) of every game that finished and was restarted.
        self.logs: list[list[dict]] = [[] for _ in range(b)]
        self.finished_logs: list[tuple[int, list[dict]]] = []
        self._bind_kernels()
        self._new_games(self._all, self._draw_seeds(b) if seeds is None else np.array(seeds, dtype=np.int64))

    def _bind_kernels(self) -> None:
        """Gather the arrays into the one ``batch_kernels.BatchState`` every kernel takes (a kernel call then costs
        about a microsecond at B = 1, where checking 40 array arguments one by one cost several)."""
        kernels.require_compiler()
        starts, round_scale, score_scale = ENCODER_LAYOUT
        settings = dict(hand_sizes=self.hand_sizes, bid_total_rule=self.rules.bid_total_rule, bidding=self.bidding_code,
                        foresight=self.rules.foresight, starts=starts, round_scale=round_scale, score_scale=score_scale,
                        masks=self._mask_cache)
        self.kernel_state = batch_kernels.make_state(*(settings[name] if name in settings else getattr(self, name)
                                                       for name in batch_kernels.STATE_FIELDS))

    def __getstate__(self) -> dict:
        """For pickling and ``copy``: every attribute but the kernels' BatchState, which ``__setstate__`` rebuilds."""
        state = self.__dict__.copy()
        del state["kernel_state"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_kernels()

    # -- reading the state -------------------------------------------------------------------

    def state_nbytes(self) -> float:
        """Bytes of game state per game (the arrays that ``step`` reads and writes)."""
        return sum(getattr(self, name).nbytes for name in self._state) / self.batch_size

    def legal_masks(self, games: np.ndarray | None = None) -> np.ndarray:
        """int8 masks [k, NUM_ACTIONS] of the acting seat of each game (all zeros once over)."""
        g = self._select(games)
        batch_kernels.refresh_masks(g, self.kernel_state)
        return self._mask_cache.copy() if g is self._all else self._mask_cache[g]

    def bids_visible(self, games: np.ndarray | None, observers: np.ndarray) -> np.ndarray:
        """Bool [k, n] by seat: which bids each observer may know now, as the bidding variant allows."""
        g = self._select(games)
        return np.array([[kernels.bid_visible(self.bidding_code, self.phase[game], observer, seat, self.bids[game, seat])
                          for seat in range(self.num_players)] for game, observer in zip(g, np.asarray(observers))],
                        dtype=bool).reshape(len(g), self.num_players)

    def observe(
        self, games: np.ndarray | None = None, observers: np.ndarray | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """float32 observations [k, OBS_SIZE], by default of each game's acting seat.

        ``out``: an array of that shape to overwrite instead of allocating a new one.
        """
        g = self._select(games)
        observers = self.current[g] if observers is None else self.check_observers(g, observers)
        if out is not None:
            check_out("out", out, (len(g), OBS_SIZE), _FLOAT32)
        return encode(self, g, observers, out)

    def check_observers(self, games: np.ndarray, observers: object) -> np.ndarray:
        """``observers`` as int8 seats, one per game of ``games`` (checked by ``_select``), or ValueError."""
        seats = np.asarray(observers)
        if (
            seats.shape != games.shape
            or not np.issubdtype(seats.dtype, np.integer)
            or (seats.size and (seats.min() < 0 or seats.max() >= self.num_players))
        ):
            raise ValueError(f"observers must be {len(games)} seats in 0..{self.num_players - 1}, not {observers!r}")
        return seats.astype(np.int8)  # the type the encoder is compiled for, as ``current``

    def copy_games(self, games: np.ndarray | None = None, repeats: int | np.ndarray = 1) -> "WizardBatch":
        """A new batch holding copies of these games, each ``repeats`` times in a row (for rollouts).

        ``repeats``: one count for every game, or a count per game (as ``numpy.repeat`` takes them).

        The copy has every state array of the games, including the decks of the rounds to come,
        so it is for code that may see everything (training targets, referees), not for a player.
        It does not autoreset or record; stepping it leaves this batch unchanged.
        """
        g = np.repeat(self._select(games), repeats)
        new = copy.copy(self)
        for name in self._state + ["_mask_cache", "mask_stale", *_RESULTS]:
            setattr(new, name, getattr(self, name)[g])  # fancy indexing copies
        new.batch_size = len(g)
        new.all_games = new._all = np.arange(len(g))
        new.autoreset, new.record = False, False
        new.logs, new.finished_logs = [[] for _ in g], []
        new._seed_rng = copy.deepcopy(self._seed_rng)
        new._bind_kernels()
        return new

    # -- changing the state ------------------------------------------------------------------

    def step(self, actions: Sequence[int] | np.ndarray, games: np.ndarray | None = None) -> None:
        """Apply ``actions[i]`` to game ``games[i]`` (default: every game), after checking them all.

        Raises IllegalActionError, naming the game and its legal actions, and changes nothing
        if any action is malformed or not legal.
        """
        g = self._select(games)
        actions = self._check_actions(g, actions)
        masks, before = (self.legal_masks(g), self._before(g)) if self.record else (None, None)  # for the log
        bad, finished = batch_kernels.step_games(g, actions, self.kernel_state)
        if bad >= 0:
            raise self._illegal(g, actions, bad)
        self._after(g, actions, finished, masks, before)

    def step_observe(self, actions: Sequence[int] | np.ndarray, out: np.ndarray, masks: np.ndarray,
                     games: np.ndarray | None = None) -> None:
        """``step(actions, games)``, then the observations and legal masks of the seats that act next, written
        into ``out`` (float32 [k, OBS_SIZE]) and ``masks`` (int8 [k, NUM_ACTIONS]), row i for game ``games[i]``.

        The same results as ``step``, ``observe(games, out=out)`` and ``legal_masks(games)``, in one compiled
        call instead of three (three quarters of their time at B = 1). A game that the step finished and autoreset
        restarted is observed in its new game. An illegal action raises as in ``step``, and nothing changes.
        """
        g = self._select(games)
        check_out("out", out, (len(g), OBS_SIZE), _FLOAT32)
        check_out("masks", masks, (len(g), NUM_ACTIONS), _INT8)
        if self.record:  # the replay log reads the state between the step and the observation
            self.step(actions, g)
            self.observe(g, out=out)
            masks[:] = self.legal_masks(g)
            return
        actions = self._check_actions(g, actions)
        bad, finished = batch_kernels.step_observe(g, actions, out, masks, self.kernel_state)
        if bad >= 0:
            raise self._illegal(g, actions, bad)
        self._after(g, actions, finished, None, None)
        if finished and self.autoreset:  # observed before the restart: observe the new games
            rows = np.flatnonzero(self.game_over[g])
            out[rows] = self.observe(g[rows])
            masks[rows] = self.legal_masks(g[rows])

    def _check_actions(self, games: np.ndarray, actions: Sequence[int] | np.ndarray) -> np.ndarray:
        """``actions`` as int64, one per game of ``games``, or IllegalActionError if malformed."""
        actions = np.asarray(actions)
        if actions.shape != games.shape or (actions.dtype.kind not in "iu" and actions.size):
            raise IllegalActionError(f"expected {len(games)} integer action ids, got {actions.dtype} array of shape {actions.shape}")
        return actions.astype(np.int64, copy=False)

    def _illegal(self, games: np.ndarray, actions: np.ndarray, bad: int) -> IllegalActionError:
        """The error for the illegal action ``actions[bad]``, naming the game, seat, phase and the legal actions."""
        g = games[bad]
        what = action_name(actions[bad]) if 0 <= actions[bad] < NUM_ACTIONS else "out of range"
        options = legal_listing(self._mask_cache[g])
        return IllegalActionError(
            f"game {g}, seat {self.current[g]}: action {actions[bad]} ({what}) is not legal in the "
            f"{Phase(self.phase[g]).name.lower()} phase; legal: {options or 'none, the game is over'}"
        )

    def apply(self, games: np.ndarray, actions: np.ndarray, masks: np.ndarray | None = None) -> None:
        """Apply actions already known to be legal (``masks``: the legal masks, needed to record)."""
        if self.record and masks is None:
            raise ValueError("a recording WizardBatch needs the legal masks of the actions it applies")
        before = self._before(games) if self.record else None
        finished = batch_kernels.apply_actions(games, actions, self.kernel_state)
        self._after(games, actions, finished, masks, before)

    def _before(self, games: np.ndarray) -> list[tuple]:
        """What the replay log needs to know of each game before its move: phase, acting seat, place in the trick."""
        return [(self.phase[g], self.current[g], self.trick_len[g]) for g in games]

    def _after(self, games: np.ndarray, actions: np.ndarray, finished: int, masks: np.ndarray | None,
               before: list | None) -> None:
        """After a step: log it (with ``record``) and restart the finished games (with ``autoreset``)."""
        if self.record:
            assert masks is not None and before is not None  # step() and apply() pass both when recording
            self._log_step(games, actions, masks, before)
        if finished and self.autoreset:
            done = games[self.game_over[games]]
            self._new_games(done, self._draw_seeds(done.size))

    def new_games(self, games: np.ndarray, seeds: np.ndarray | None = None) -> None:
        """Start new games in slots ``games``: with ``seeds``, or seeds drawn from the batch's generator."""
        g = self._select(games)
        seeds = self._draw_seeds(len(g)) if seeds is None else np.array([check_seed(s) for s in seeds], dtype=np.int64)
        if seeds.shape != g.shape:
            raise ValueError(f"{len(g)} games need {len(g)} seeds, got {len(seeds)}")
        self._new_games(g, seeds)

    def deal_round(self, games: np.ndarray | None = None) -> None:
        """Deal the current round of these games again from their deck order (``orders``), from its first bid
        (or the dealer's trump choice): for code that sets a round's deck order itself, as the OpenSpiel game does."""
        batch_kernels.start_rounds(self._select(games), self.kernel_state)

    def _select(self, games: np.ndarray | None) -> np.ndarray:
        if games is None or games is self._all:
            return self._all
        g = np.asarray(games)
        if g.ndim != 1 or not (np.issubdtype(g.dtype, np.integer) or g.size == 0):
            raise ValueError(f"games must be a 1-D array of game indices, not {games!r}")
        if g.size and (g.min() < 0 or g.max() >= self.batch_size):
            raise ValueError(f"game index out of range 0..{self.batch_size - 1}: {games!r}")
        if g.size > 1 and not (g[1:] > g[:-1]).all() and np.unique(g).size != g.size:
            raise ValueError(f"games lists a game twice: {games!r}")
        return g.astype(np.intp)

    def _log_step(self, games: np.ndarray, actions: np.ndarray, masks: np.ndarray, before: list[tuple]) -> None:
        """Add a step to the replay logs: each move with its legal choices, a trick's winner, a round's end."""
        for game, action, mask, (phase, seat, position) in zip(games, actions, masks, before):
            log = self.logs[game][-1]  # the round the move was made in
            if phase == TRUMP:
                log["trump"] = suit_name(int(action - TRUMP_OFFSET))
            elif phase == BID:
                legal = np.flatnonzero(mask[BID_OFFSET:CARD_OFFSET]).tolist()
                log["bids"].append({"seat": int(seat), "bid": int(action - BID_OFFSET), "legal": legal})
            else:
                if position == 0:
                    log["tricks"].append({"leader": int(seat), "plays": [], "winner": None})
                legal = [card_name(c) for c in np.flatnonzero(mask[CARD_OFFSET:TRUMP_OFFSET]).tolist()]
                log["tricks"][-1]["plays"].append({"seat": int(seat), "card": card_name(int(action - CARD_OFFSET)), "legal": legal})
                if self.trick_won_by[game] >= 0:
                    log["tricks"][-1]["winner"] = int(self.trick_won_by[game])
            if self.round_over[game]:
                log.update(tricks_won=self.round_tricks[game].tolist(), scores=self.round_scores[game].tolist(),
                           totals=self.totals[game].tolist())
                if not self.game_over[game]:
                    self._log_round(game)

    def _log_round(self, game: int) -> None:
        """Start the replay log of the round just dealt in ``game``."""
        card = int(self.trump_card[game])
        self.logs[game].append(
            {
                "round": int(self.round_index[game]) + 1,
                "dealer": int(self.dealer[game]),
                "hands": [hand_names(h) for h in self.hands[game]],
                "trump_card": None if card == NO_CARD else card_name(card),
                "trump": suit_name(int(self.trump[game])),
                "bids": [],
                "tricks": [],
            }
        )

    def _draw_seeds(self, count: int) -> np.ndarray:
        return self._seed_rng.integers(MAX_GAME_SEED, size=count, dtype=np.int64)

    def _new_games(self, g: np.ndarray, seeds: np.ndarray) -> None:
        for game, seed in zip(g, seeds):
            self.first_dealer[game], self.orders[game] = shuffle_game(int(seed), self.rules.num_rounds, self.num_players)
            if self.record and self.logs[game]:
                self.finished_logs.append((int(self.game_seed[game]), self.logs[game]))
                self.logs[game] = []
        self.game_seed[g] = seeds
        self.totals[g] = 0
        self.round_index[g] = 0
        batch_kernels.start_rounds(g, self.kernel_state)
        if self.record:
            for game in g:
                self._log_round(game)
