"""The play page's games: one engine game per table, moved only through the engine's checks, held in memory.

A person plays one seat; agents play the others. A table's moves come in under its lock: the person's
move is checked by the engine (``WizardGame.step``) and by the table (is it this seat's turn, is it the
move the page saw), then the agents play until the person is to act again or the game is over. What the
page is sent is ``seat_view``: only what that seat may know (the other hands stay hidden, and bids as the
bidding variant shows them). A finished game is written to the replay folder as a ``wizard-replay/1`` file.
No web framework is imported here.

Past 400 lines: a table's whole life under its lock (created, moved, agents' turns, written), which the schema's
checks and the user agents' errors lengthened; the replay writing is next to leave if it grows.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from wizard_env.agents.base import Agent
from wizard_env.agents.registry import make_agent
from wizard_env.agents.user_agent import AgentError
from wizard_env.engine.batch import MAX_GAME_SEED
from wizard_env.engine.cards import NO_CARD, SUIT_WORDS, SUITS, card_name, hand_names
from wizard_env.engine.game import BID_OFFSET, CARD_OFFSET, TRUMP_OFFSET, IllegalActionError, Phase, WizardGame
from wizard_env.engine.observation import is_foresight_round
from wizard_env.engine.replay import HUMAN, game_record, write_replays
from wizard_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, Rules, parse_rounds
from wizard_env.engine.simulate import derive_seeds
from wizard_env.util.checks import check_seed, short_repr

from .limits import DEFAULT_OPPONENTS, MOVE_SECONDS, RequestError, check_offered, pick, too_slow

#: What the replay files of the play page are called: ``play-<time>-<seed>-<table>.jsonl``.
REPLAY_PREFIX = "play"
#: Tables held at once; past it the least recently used finished or abandoned table is dropped, else a new one is refused.
MAX_TABLES = 500
#: Seconds without a request after which an unfinished table counts as abandoned (dropped only to make room).
ABANDONED_SECONDS = 3600.0
#: The play page's word for the card a foresight round hides from its holder (the page never learns it).
UNSEEN = "unseen"
TABLE_ID = re.compile(r"[0-9a-f]{16}")
#: The fields of a new table's settings (each optional) and of a move (each required).
SETTINGS_FIELDS = ("players", "rounds", "bidding", "bid_total_rule", "foresight", "seat", "opponents", "seed")
MOVE_FIELDS = ("seat", "move", "action")


@dataclass(frozen=True)
class TableSettings:
    """What a new table is: rules, the person's seat, the agents of the other seats and the game seed."""

    rules: Rules
    seat: int
    opponents: tuple[str, ...]
    seed: int

    @classmethod
    def from_request(cls, body: Any, offered: Sequence[str] = DEFAULT_OPPONENTS) -> "TableSettings":
        """Settings from the play page's JSON, the opponents chosen from ``offered`` (RequestError naming the field
        at fault); a missing seed is drawn."""
        if not isinstance(body, dict):
            raise RequestError("the request body must be a JSON object")
        _no_unknown_fields(body, SETTINGS_FIELDS)
        players = _int_field(body, "players", 4)
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise RequestError(f"players: Wizard is played by {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
        rounds = body.get("rounds", "standard")
        if isinstance(rounds, int) and not isinstance(rounds, bool):
            rounds = str(rounds)
        try:
            if not isinstance(rounds, str) or len(rounds) > 200:
                raise ValueError(rounds)
            sizes = parse_rounds(rounds)
        except ValueError:  # parse_rounds names the command-line option: name the field instead
            raise RequestError("rounds: expected 'standard', 'amigo', a round count such as 5 or hand sizes such as "
                               f"1,3,5, not {short_repr(rounds)}") from None
        bidding = body.get("bidding", "open")
        flags = {name: body.get(name, False) for name in ("bid_total_rule", "foresight")}
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise RequestError(f"{name}: expected true or false, not {value!r:.40}")
        try:
            rules = Rules.make(players, sizes, bidding, flags["bid_total_rule"], flags["foresight"])
        except ValueError as err:
            raise RequestError(str(err)) from None
        seat = _int_field(body, "seat", 0)
        if not 0 <= seat < players:
            raise RequestError(f"seat: {players} players sit in seats 0 to {players - 1}, not {seat}")
        opponents = pick(offered, body.get("opponents", [offered[0]]), players - 1)
        seed = body.get("seed")
        if seed is None:
            seed = secrets.randbelow(MAX_GAME_SEED)
        try:
            seed = check_seed(seed)
        except ValueError as err:
            raise RequestError(str(err)) from None
        return cls(rules, seat, opponents, seed)


def _no_unknown_fields(body: dict, known: Sequence[str]) -> None:
    unknown = sorted(set(body) - set(known), key=str)
    if unknown:
        raise RequestError(f"unknown field {unknown[0]!r:.40}: the fields are {', '.join(sorted(known))}")


def _int_field(body: dict, name: str, default: int) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{name}: expected an integer, not {value!r:.40}")
    return value


def _last_trick(log: list[dict]) -> dict | None:
    """The last completed trick of the game so far, with its round (from 1): the page shows it until the next card."""
    for rnd in reversed(log):
        done = [t for t in rnd["tricks"] if t["winner"] is not None]
        if done:
            trick = done[-1]
            return {"round": rnd["round"], "leader": trick["leader"], "winner": trick["winner"],
                    "plays": [{"seat": p["seat"], "card": p["card"]} for p in trick["plays"]]}
    return None


def _legal_choices(game: WizardGame, foresight: bool) -> list[dict]:
    """The acting seat's legal moves as the page offers them: action id (or UNSEEN) and a label."""
    legal = game.legal_actions()
    if game.phase == Phase.PLAY and foresight:  # one card, hidden from its holder: the page may not learn it
        return [{"action": UNSEEN, "kind": "card", "label": "your unseen card"}]
    choices = []
    for action in legal:
        if action >= TRUMP_OFFSET:
            choices.append({"action": action, "kind": "trump", "label": SUITS[action - TRUMP_OFFSET]})
        elif action >= CARD_OFFSET:
            choices.append({"action": action, "kind": "card", "label": card_name(action - CARD_OFFSET)})
        else:
            choices.append({"action": action, "kind": "bid", "label": str(action - BID_OFFSET)})
    return choices


def seat_view(game: WizardGame, seat: int, names: Sequence[str], move: int) -> dict:
    """What ``seat`` may know of the table now, as JSON-ready data (the play page draws only this)."""
    n, rnd = game.num_players, game.round_index
    over = game.is_over
    foresight = not over and is_foresight_round(game)
    played_this_trick = set(game.trick_seats)
    players = []
    for s in range(n):
        held = int(game.hands[s].sum())
        bid = int(game.bids[s])
        players.append({
            "name": names[s],
            "hand": hand_names(game.hands[s]) if game.hand_visible(seat, s) and not over else None,
            "cards": held,
            "bid": bid if bid >= 0 and game.bid_visible(seat, s) else None,
            "has_bid": bid >= 0,
            "tricks": int(game.tricks_won[s]),
            "total": int(game.totals[s]),
            "played": s in played_this_trick,
        })
    trick = None
    if game.trick_cards:
        trick = {"leader": game.leader, "plays": [{"seat": s, "card": card_name(c)} for s, c in zip(game.trick_seats, game.trick_cards)],
                 "winner": None}
    rounds = [{"round": r["round"], "scores": list(r["scores"]), "totals": list(r["totals"]),
               "bids": [b["bid"] for b in sorted(r["bids"], key=lambda b: b["seat"])], "tricks_won": list(r["tricks_won"])}
              for r in game.log if "totals" in r]
    acting = not over and game.current == seat
    return {
        "move": move,
        "seat": seat,
        "over": over,
        "round": rnd + 1,
        "num_rounds": game.rules.num_rounds,
        "hand_size": game.hand_size,
        "phase": game.phase.name.lower(),
        "dealer": game.dealer,
        "current": None if over else game.current,
        "trump_card": None if game.trump_card == NO_CARD else card_name(game.trump_card),
        "trump": None if game.phase == Phase.TRUMP else (SUITS[game.trump] if game.trump >= 0 else None),
        "foresight": foresight,
        "players": players,
        "trick": trick,
        "last_trick": _last_trick(game.log),
        "rounds": rounds,
        "legal": _legal_choices(game, foresight) if acting else [],
    }


def _announcement(game: WizardGame, names: Sequence[str], seat: int, actor: int, action: int, rnd: int) -> str:
    """One line saying what a move showed ``seat`` (a bid hidden by the variant is only 'has bid')."""
    if action >= TRUMP_OFFSET:
        return f"{names[actor]} names trump: {SUIT_WORDS[action - TRUMP_OFFSET]}"
    if action >= CARD_OFFSET:
        line = f"{names[actor]} plays {card_name(action - CARD_OFFSET)}"
        trick = game.log[rnd]["tricks"][-1]
        if trick["winner"] is not None:
            line += f"; {names[trick['winner']]} wins the trick"
        return line
    return f"{names[actor]} bids {action - BID_OFFSET}" if game.bid_visible(seat, actor) else f"{names[actor]} has bid"


@dataclass
class Table:
    """One game at the play page: the engine game, the agents of the other seats and a lock for its moves."""

    id: str
    settings: TableSettings
    game: WizardGame
    agents: dict[int, Agent]
    names: list[str]
    specs: list[str]
    moves: int = 0
    replay: str | None = None
    touched: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def view(self) -> dict:
        """The person's view now, with the table's id and, once saved, its replay file's name."""
        return {"id": self.id, "seed": self.settings.seed, "replay": self.replay,
                **seat_view(self.game, self.settings.seat, self.names, self.moves)}

    def _agent_action(self, seat: int) -> int:
        """The move of the agent at ``seat``; a user's agent that raised or chose an illegal action is a 500 naming it
        (the game as before its move), not an internal error of the server."""
        try:
            return int(self.agents[seat].act_games(self.game.batch, self.game.batch.all_games)[0])
        except (AgentError, IllegalActionError) as err:
            raise RequestError(f"seat {seat}: {err}; this table cannot go on, start another with other opponents", 500) from None

    def _apply(self, action: int) -> dict:
        """Step the engine and return the frame the page shows after it (the view and what the move showed)."""
        actor, rnd = self.game.current, self.game.round_index
        self.game.step(action, actor=self.names[actor])
        self.moves += 1
        frame = self.view()
        frame["event"] = _announcement(self.game, self.names, self.settings.seat, actor, action, rnd)
        return frame

    def advance(self, deadline: float = math.inf) -> list[dict]:
        """Let the agents move until the person is to act or the game is over; one frame per move. Past
        ``deadline`` (``time.monotonic()``) no agent starts a move: RequestError 504, the moves made kept."""
        frames = []
        while not self.game.is_over and self.game.current != self.settings.seat:
            if time.monotonic() > deadline:
                raise too_slow(self.id)
            frames.append(self._apply(self._agent_action(self.game.current)))
        return frames

    def move(self, body: Any, deadline: float = math.inf) -> list[dict]:
        """Check and apply the person's move, then the agents' (RequestError and no change for a refused one)."""
        if not isinstance(body, dict):
            raise RequestError("the request body must be a JSON object with 'seat', 'move' and 'action'")
        _no_unknown_fields(body, MOVE_FIELDS)
        for key in ("seat", "move"):
            if isinstance(body.get(key), bool) or not isinstance(body.get(key), int):
                raise RequestError(f"{key!r} must be an integer (the page sends the seat it plays and the move number it saw)")
        if "action" not in body:
            raise RequestError("missing 'action': an action id from the view's 'legal' list")
        if self.game.is_over:
            raise RequestError("the game is over: no move is legal", 409)
        if body["seat"] != self.settings.seat:
            raise RequestError(f"seat {body['seat']!r:.20} is not yours: you play seat {self.settings.seat}", 403)
        if self.game.current != self.settings.seat:
            raise RequestError(f"not your turn: seat {self.game.current} is to act", 409)
        if body["move"] != self.moves:
            raise RequestError(f"out of turn: the table is at move {self.moves}, the move sent was for move {body['move']}", 409)
        action = body["action"]
        if action == UNSEEN:
            if not is_foresight_round(self.game) or self.game.phase != Phase.PLAY:
                raise RequestError(f"{UNSEEN!r} plays the card a foresight round hides from you; this is not one", 422)
            action = self.game.legal_actions()[0]  # the one card held
        try:
            self.game.check_action(action, actor="you")
        except IllegalActionError as err:
            raise RequestError(str(err), 422) from None
        frames = [self._apply(action)]
        return frames + self.advance(deadline)


def replay_name(table: Table, when: float | None = None) -> str:
    """The file name a finished table is saved under: time, seed and table id."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if when is None else when))
    return f"{REPLAY_PREFIX}-{stamp}-{table.settings.seed}-{table.id[:8]}.jsonl"


class Tables:
    """The tables being played, by id; each is moved only under its own lock."""

    def __init__(self, replay_dir: str | os.PathLike, max_tables: int = MAX_TABLES,
                 offered: Sequence[str] = DEFAULT_OPPONENTS, move_seconds: float = MOVE_SECONDS):
        if not move_seconds > 0:
            raise ValueError(f"the time per request must be a positive number of seconds, not {move_seconds!r:.40}")
        self.replay_dir = Path(replay_dir)
        self.max_tables = max_tables
        self.offered = check_offered(offered)
        self.move_seconds = float(move_seconds)
        self._tables: OrderedDict[str, Table] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tables)

    def create(self, body: Any) -> dict:
        """A new table from the play page's settings; the agents move until the person is to act."""
        return self.resume(self.open(body))

    def open(self, body: Any) -> str:
        """A new table from the play page's settings, by id; its agents have not moved yet (``resume`` moves them)."""
        settings = TableSettings.from_request(body, self.offered)
        n = settings.rules.num_players
        _, agent_seeds = derive_seeds(settings.seed, 0, n)  # as `wizard play --seed S` seeds its agents
        opponents = iter(settings.opponents)
        agents, names, specs = {}, [], []
        for s in range(n):
            if s == settings.seat:
                names.append(f"you (seat {s})")
                specs.append(HUMAN)
                continue
            spec = next(opponents)
            try:
                agents[s] = make_agent(spec, int(agent_seeds[s]))
            except (ValueError, OSError) as err:
                raise RequestError(f"opponents: {spec!r:.60}: {err}") from None
            names.append(f"{spec} (seat {s})")
            specs.append(spec)
        table = Table(secrets.token_hex(8), settings, WizardGame(settings.rules, settings.seed, record=True), agents, names, specs)
        with self._lock:
            self._make_room()
            self._tables[table.id] = table
        return table.id

    @contextlib.contextmanager
    def _holding(self, table: Table, deadline: float) -> Iterator[None]:
        """The table's lock, waited for until ``deadline`` (RequestError 503 while an earlier request's agents move)."""
        if not table.lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise RequestError(f"the agents at table {table.id} are still making the moves of an earlier request; "
                               "ask again in a moment", 503)
        try:
            yield
        finally:
            table.lock.release()

    def _make_room(self) -> None:
        """When full, drop the least recently used finished table, else one abandoned; RequestError 503 when none is."""
        if len(self._tables) < self.max_tables:
            return
        idle_since = time.monotonic() - ABANDONED_SECONDS
        for over in (True, False):
            for key, table in self._tables.items():  # least recently used first
                if table.game.is_over if over else table.touched < idle_since:
                    del self._tables[key]
                    return
        raise RequestError(f"{self.max_tables} games are being played: finish one or try later", 503)

    def get(self, table_id: str) -> Table:
        """The table with this id (RequestError 404 when there is none)."""
        if not isinstance(table_id, str) or not TABLE_ID.fullmatch(table_id):
            raise RequestError(f"{table_id!r:.40} is not a table id", 404)
        with self._lock:
            table = self._tables.get(table_id)
            if table is None:
                raise RequestError(f"no table {table_id}: it ended or the server restarted", 404)
            self._tables.move_to_end(table_id)
            table.touched = time.monotonic()
            return table

    def resume(self, table_id: str) -> dict:
        """The agents' moves still to make (those a request out of time left), their frames and the view after them."""
        table = self.get(table_id)
        deadline = time.monotonic() + self.move_seconds
        with self._holding(table, deadline):
            frames = table.advance(deadline)
            self._save_if_over(table)
            return {"table": table.view(), "frames": frames}

    def view(self, table_id: str) -> dict:
        """The person's view of a table now, once the agents have made any moves still to make."""
        return self.resume(table_id)["table"]

    def move(self, table_id: str, body: Any) -> dict:
        """Apply the person's move and the agents' answers; the frames to show and the view after them."""
        table = self.get(table_id)
        deadline = time.monotonic() + self.move_seconds
        with self._holding(table, deadline):
            frames = table.move(body, deadline)
            self._save_if_over(table)
            if frames:
                frames[-1]["replay"] = table.replay
            return {"table": table.view(), "frames": frames}

    def _save_if_over(self, table: Table) -> None:
        if not table.game.is_over or table.replay is not None:
            return
        self.replay_dir.mkdir(parents=True, exist_ok=True)
        name = replay_name(table)
        write_replays(self.replay_dir / name, [game_record(table.game, table.specs)])
        table.replay = name

