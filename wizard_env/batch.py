"""Many games of Wizard in lockstep, as numpy arrays with a leading batch axis (no RL imports).

``WizardBatch`` is the one engine: it holds B games, validates and applies one action per game
in a few vectorised numpy operations, and computes the legal-action masks and observations of
all acting seats at once. ``game.WizardGame`` is a batch of one, so the AEC environment, the
replays and the command line run on the same code as training.

A game's cards depend only on its seed: ``shuffle_game(seed, ...)`` draws the first dealer and
the deck order of every round from ``numpy.random.default_rng([seed, 0])``. With ``autoreset``,
a finished game's slot restarts at once with a new seed drawn from the batch's own seeded
generator, so a batch is reproducible from its seed and every game in it from its game seed.
"""

from __future__ import annotations

import copy
from typing import Sequence

import numpy as np

from .actions import BID_OFFSET, CARD_OFFSET, NUM_ACTIONS, TRUMP_OFFSET, IllegalActionError, Phase, action_name, legal_listing
from .cards import CARD_SUIT, DECK, DECK_SIZE, NO_CARD, NO_SUIT, NUM_CARD_TYPES, NUM_SUITS, WIZARD, card_name, hand_names, suit_name
from .rules import Rules, legal_bids_batch, legal_cards_batch, round_scores, suits_to_follow, trick_winners, trumps_from_cards

#: Game seeds drawn by a batch stay below 2**53, so every JSON reader holds them exactly.
MAX_GAME_SEED = 2**53
#: Every seed (of a game, a batch, an env or a command) is an integer 0 <= seed < SEED_LIMIT: games store theirs as int64.
SEED_LIMIT = 2**63
_DEAL_STREAM = 0
_BATCH_STREAM = 1
# plain ints for the hot paths (reading an enum member costs a Python call per access)
TRUMP, BID, PLAY, OVER = (int(p) for p in (Phase.TRUMP, Phase.BID, Phase.PLAY, Phase.OVER))
# the per-step results that ``step`` sets (see the class docstring)
_RESULTS = ("round_over", "round_scores", "round_bids", "round_tricks", "round_hand_size", "round_dealer",
            "game_over", "final_totals", "final_seed")


def check_seed(seed: object, name: str = "seed") -> int:
    """A seed as an int in 0 .. SEED_LIMIT - 1, or ValueError naming ``name``."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"{name} must be an integer from 0 to 2**63 - 1, not {short_repr(seed)}")
    return int(seed)


def short_repr(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters (an int too long to print is described by its digits)."""
    if isinstance(value, (int, np.integer)) and abs(int(value)).bit_length() > 3 * limit:
        return f"an integer of about {int(abs(int(value)).bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
    k, n = len(orders), num_players
    order = orders.astype(np.int64)
    seat = np.arange(DECK_SIZE) // sizes[:, None]
    dealt = seat < n
    keys = ((np.arange(k)[:, None] * n + seat) * NUM_CARD_TYPES + order)[dealt]
    hands = np.bincount(keys, minlength=k * n * NUM_CARD_TYPES).reshape(k, n, NUM_CARD_TYPES).astype(np.int8)
    turned = np.where(n * sizes < DECK_SIZE, order[np.arange(k), np.minimum(n * sizes, DECK_SIZE - 1)], NO_CARD)
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
    ``round_dealer``; ``game_over`` with ``final_totals`` and ``final_seed``.

    Legal masks are cached per game until ``step`` changes it; code that writes the state arrays
    directly (tests building a position) must set ``mask_stale`` for those games.
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
        if seeds is not None:
            seeds = [check_seed(s) for s in seeds]
            if batch_size is not None and batch_size != len(seeds):
                raise ValueError(f"batch_size={batch_size} but {len(seeds)} seeds were given")
            batch_size = len(seeds)
        if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}")
        self.rules = rules
        self.batch_size = b = int(batch_size)
        self.num_players = n = rules.num_players
        self.autoreset = autoreset
        self.record = record
        self.hand_sizes = np.array(rules.hand_sizes, dtype=np.int64)
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

        # masks of the acting seats, recomputed only for games changed since they were last asked for
        self._mask_cache = np.zeros((b, NUM_ACTIONS), dtype=np.int8)
        self.mask_stale = np.ones(b, dtype=bool)

        #: With ``record``: the replay log (list of round dicts) of each slot's current game, and
        #: (seed, log) of every game that finished and was restarted.
        self.logs: list[list[dict]] = [[] for _ in range(b)]
        self.finished_logs: list[tuple[int, list[dict]]] = []
        self._new_games(self._all, self._draw_seeds(b) if seeds is None else np.array(seeds, dtype=np.int64))

    # -- reading the state -------------------------------------------------------------------

    def state_nbytes(self) -> float:
        """Bytes of game state per game (the arrays that ``step`` reads and writes)."""
        return sum(getattr(self, name).nbytes for name in self._state) / self.batch_size

    def legal_masks(self, games: np.ndarray | None = None) -> np.ndarray:
        """int8 masks [k, NUM_ACTIONS] of the acting seat of each game (all zeros once over)."""
        g = self._select(games)
        stale = g[self.mask_stale[g]]
        if stale.size:
            self._mask_cache[stale] = self._masks(stale)
            self.mask_stale[stale] = False
        return self._mask_cache[g]

    def _masks(self, g: np.ndarray) -> np.ndarray:
        masks = np.zeros((len(g), NUM_ACTIONS), dtype=np.int8)
        phase = self.phase[g]
        masks[phase == TRUMP, TRUMP_OFFSET:NUM_ACTIONS] = 1
        rows = np.flatnonzero(phase == BID)
        if rows.size:
            gb = g[rows]
            bids = self.bids[gb]
            made = np.where(bids >= 0, bids, 0).sum(axis=1)
            last = self.current[gb] == self.dealer[gb]
            masks[rows, BID_OFFSET:CARD_OFFSET] = legal_bids_batch(
                self.hand_sizes[self.round_index[gb]], made, last, self.rules.bid_total_rule
            )
        rows = np.flatnonzero(phase == PLAY)
        if rows.size:
            gp = g[rows]
            masks[rows, CARD_OFFSET:TRUMP_OFFSET] = legal_cards_batch(self.hands[gp, self.current[gp]], self.trick[gp])
        return masks

    def bids_visible(self, games: np.ndarray | None, observers: np.ndarray) -> np.ndarray:
        """Bool [k, n] by seat: which bids each observer may know now, as the bidding variant allows."""
        g = self._select(games)
        made = self.bids[g] >= 0
        mode = self.rules.bidding.value
        if mode == "open":
            return made
        phase = self.phase[g][:, None]
        shown = (np.arange(self.num_players) == np.asarray(observers)[:, None]) | (phase == OVER)
        if mode == "hidden":
            shown |= phase == PLAY
        # secret: others' bids are revealed at the end of the round, which starts the next one
        return made & shown

    def observe(
        self, games: np.ndarray | None = None, observers: np.ndarray | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """float32 observations [k, OBS_SIZE], by default of each game's acting seat.

        ``out``: an array of that shape to overwrite instead of allocating a new one.
        """
        from .observation import OBS_SIZE, encode

        g = self._select(games)
        observers = self.current[g] if observers is None else np.asarray(observers)
        if (
            observers.shape != g.shape
            or not np.issubdtype(observers.dtype, np.integer)
            or (observers.size and (observers.min() < 0 or observers.max() >= self.num_players))
        ):
            raise ValueError(f"observers must be {len(g)} seats in 0..{self.num_players - 1}, not {observers!r}")
        if out is not None and (out.shape != (len(g), OBS_SIZE) or out.dtype != np.float32):
            raise ValueError(f"out must be a float32 array of shape {(len(g), OBS_SIZE)}, not {out.dtype} {out.shape}")
        return encode(self, g, observers, out)

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
        return new

    # -- changing the state ------------------------------------------------------------------

    def step(self, actions: Sequence[int] | np.ndarray, games: np.ndarray | None = None) -> None:
        """Apply ``actions[i]`` to game ``games[i]`` (default: every game), after checking them all.

        Raises IllegalActionError, naming the game and its legal actions, and changes nothing
        if any action is malformed or not legal.
        """
        g = self._select(games)
        actions = np.asarray(actions)
        if actions.shape != g.shape or not (np.issubdtype(actions.dtype, np.integer) or actions.size == 0):
            raise IllegalActionError(f"expected {len(g)} integer action ids, got {actions.dtype} array of shape {actions.shape}")
        masks = self.legal_masks(g)
        in_range = (actions >= 0) & (actions < NUM_ACTIONS)
        legal = in_range & masks[np.arange(len(g)), np.where(in_range, actions, 0)].astype(bool)
        if not legal.all():
            i = int(np.flatnonzero(~legal)[0])
            what = action_name(actions[i]) if in_range[i] else "out of range"
            options = legal_listing(masks[i])
            raise IllegalActionError(
                f"game {g[i]}, seat {self.current[g[i]]}: action {actions[i]} ({what}) is not legal in the "
                f"{Phase(self.phase[g[i]]).name.lower()} phase; legal: {options or 'none, the game is over'}"
            )
        self.apply(g, actions.astype(np.int64), masks)

    def apply(self, games: np.ndarray, actions: np.ndarray, masks: np.ndarray | None = None) -> None:
        """Apply actions already known to be legal (``masks``: the legal masks, needed to record)."""
        self.round_over[:] = False
        self.game_over[:] = False
        self.mask_stale[games] = True
        phase = self.phase[games]
        for which, handler in ((TRUMP, self._choose_trump), (BID, self._bid), (PLAY, self._play)):
            rows = phase == which
            if rows.any():
                handler(games[rows], actions[rows], None if masks is None else masks[rows])

    def new_games(self, games: np.ndarray, seeds: np.ndarray | None = None) -> None:
        """Start new games in slots ``games``: with ``seeds``, or seeds drawn from the batch's generator."""
        g = self._select(games)
        seeds = self._draw_seeds(len(g)) if seeds is None else np.array([check_seed(s) for s in seeds], dtype=np.int64)
        if seeds.shape != g.shape:
            raise ValueError(f"{len(g)} games need {len(g)} seeds, got {len(seeds)}")
        self._new_games(g, seeds)

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

    def _left_of(self, seats: np.ndarray) -> np.ndarray:
        return (seats + 1) % self.num_players

    def _choose_trump(self, g: np.ndarray, actions: np.ndarray, masks: np.ndarray | None) -> None:
        self.trump[g] = actions - TRUMP_OFFSET
        self.phase[g] = BID
        self.current[g] = self._left_of(self.dealer[g])
        if self.record:
            for game, suit in zip(g, self.trump[g]):
                self.logs[game][-1]["trump"] = suit_name(suit)

    def _bid(self, g: np.ndarray, actions: np.ndarray, masks: np.ndarray | None) -> None:
        seat = self.current[g]
        if self.record:
            for game, s, action, mask in zip(g, seat, actions, masks):
                legal = np.flatnonzero(mask[BID_OFFSET:CARD_OFFSET]).tolist()
                self.logs[game][-1]["bids"].append({"seat": int(s), "bid": int(action - BID_OFFSET), "legal": legal})
        self.bids[g, seat] = actions - BID_OFFSET
        self.current[g] = self._left_of(seat)  # after the dealer's bid: the dealer's left leads
        self.phase[g[seat == self.dealer[g]]] = PLAY

    def _play(self, g: np.ndarray, actions: np.ndarray, masks: np.ndarray | None) -> None:
        seat, card = self.current[g], actions - CARD_OFFSET
        position = self.trick_len[g]
        if self.record:
            for game, s, c, pos, mask in zip(g, seat, card, position, masks):
                tricks = self.logs[game][-1]["tricks"]
                if pos == 0:
                    tricks.append({"leader": int(s), "plays": [], "winner": None})
                legal = [card_name(c) for c in np.flatnonzero(mask[CARD_OFFSET:TRUMP_OFFSET])]
                tricks[-1]["plays"].append({"seat": int(s), "card": card_name(c), "legal": legal})
        # a suited card off the suit to follow shows the seat is out of that suit (Wizards and Jesters show nothing)
        follow = suits_to_follow(self.trick[g])
        off = (follow != NO_SUIT) & (CARD_SUIT[card] != NO_SUIT) & (CARD_SUIT[card] != follow)
        self.voids[g[off], seat[off], follow[off]] = 1
        self.hands[g, seat, card] -= 1
        self.played[g, seat, card] += 1
        self.trick[g, position] = card
        self.trick_len[g] = position + 1
        full = position + 1 == self.num_players
        self.current[g] = self._left_of(seat)
        if full.any():
            self._finish_trick(g[full])

    def _finish_trick(self, g: np.ndarray) -> None:
        winner = (self.leader[g] + trick_winners(self.trick[g], self.trump[g])) % self.num_players
        self.tricks_won[g, winner] += 1
        by_seat = (self.leader[g, None] + np.arange(self.num_players)) % self.num_players
        self.last_trick[g[:, None], by_seat] = self.trick[g]
        self.last_winner[g] = winner
        if self.record:
            for game, w in zip(g, winner):
                self.logs[game][-1]["tricks"][-1]["winner"] = int(w)
        self.trick[g] = NO_CARD
        self.trick_len[g] = 0
        self.leader[g] = self.current[g] = winner
        ended = self.tricks_won[g].sum(axis=1) == self.hand_sizes[self.round_index[g]]
        if ended.any():
            self._end_round(g[ended])

    def _end_round(self, g: np.ndarray) -> None:
        scores = round_scores(self.bids[g], self.tricks_won[g])
        self.totals[g] += scores.astype(self.totals.dtype)
        self.round_over[g] = True
        self.round_scores[g] = scores
        self.round_bids[g] = self.bids[g]
        self.round_tricks[g] = self.tricks_won[g]
        self.round_hand_size[g] = self.hand_sizes[self.round_index[g]]
        self.round_dealer[g] = self.dealer[g]
        if self.record:
            for game in g:
                self.logs[game][-1].update(
                    tricks_won=self.tricks_won[game].tolist(),
                    scores=self.round_scores[game].tolist(),
                    totals=self.totals[game].tolist(),
                )
        more = self.round_index[g] + 1 < self.rules.num_rounds
        if more.any():
            self.round_index[g[more]] += 1
            self._start_round(g[more])
        done = g[~more]
        if done.size:
            self.game_over[done] = True
            self.final_totals[done] = self.totals[done]
            self.final_seed[done] = self.game_seed[done]
            if self.autoreset:
                self._new_games(done, self._draw_seeds(done.size))
            else:
                self.phase[done] = OVER

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
        self._start_round(g)

    def _start_round(self, g: np.ndarray) -> None:
        n = self.num_players
        self.mask_stale[g] = True
        rounds = self.round_index[g]
        size = self.hand_sizes[rounds]
        self.hands[g], turned = deal_hands(self.orders[g, rounds], size, n)
        self.trump_card[g] = turned
        self.trump[g] = trumps_from_cards(turned)
        dealer = ((self.first_dealer[g] + rounds) % n).astype(np.int8)
        self.dealer[g] = dealer
        self.leader[g] = self._left_of(dealer)
        self.bids[g] = -1
        self.tricks_won[g] = 0
        self.played[g] = 0
        self.trick[g] = NO_CARD
        self.trick_len[g] = 0
        self.voids[g] = 0
        self.last_trick[g] = NO_CARD
        self.last_winner[g] = -1
        wizard = turned == WIZARD
        self.phase[g] = np.where(wizard, TRUMP, BID)
        self.current[g] = np.where(wizard, dealer, self._left_of(dealer))
        if self.record:
            for game in g:
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

