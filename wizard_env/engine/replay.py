"""Replays: whole games as JSON lines (format ``wizard-replay/1``), read back and re-played.

One line per game::

    {"format": "wizard-replay/1", "num_players": 4, "seed": 7,
     "rules": {"hand_sizes": [1, 2, ...], "bidding": "open", "bid_total_rule": false, "foresight": false},
     "seats": ["rule", "random", "rule", "rule"],
     "rounds": [{"round": 1, "dealer": 2, "hands": [["Ah"], ...], "trump_card": "7d", "trump": "d",
                 "bids": [{"seat": 3, "bid": 1, "legal": [0, 1]}, ...],
                 "tricks": [{"leader": 3, "plays": [{"seat": 3, "card": "Tc", "legal": ["Tc"]}, ...],
                             "winner": 1}],
                 "tricks_won": [0, 1, 0, 0], "scores": [-10, 30, 20, -10], "totals": [-10, 30, 20, -10]}],
     "final_totals": [...]}

Cards are named rank + suit (``"Ah"``, ``"Tc"``), ``"Wiz"`` or ``"Jes"``. ``hands`` are the cards dealt,
by seat; ``trump_card`` is null when the whole deck is dealt; ``trump`` is a suit letter or null (after
a turned Wizard, the suit the dealer chose). Bids and plays are in the order made. ``legal`` (the legal
bids, or card types, at that moment) is written only when asked for. The round dicts are the engine's
own log (``WizardGame(rules, seed, record=True).log``), so this module never restates a rule. A recorded
game as text is ``render.replay_text``.

The module runs past 400 lines because it is the one statement of the format: what is written, what a
reader accepts and what a re-play checks read side by side.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
from collections import Counter
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Sequence

from wizard_env.util.checks import JSONIntegerError, check_seed, json_loads
from wizard_env.util.files import AtomicWriter, file_kind

from .cards import DECK_COUNTS, SUITS, WIZARD_NAME, card_name, parse_card
from .game import BID_OFFSET, CARD_OFFSET, TRUMP_OFFSET, IllegalActionError, WizardGame
from .rules import Rules

FORMAT = "wizard-replay/1"
#: The name of a person's seat in a replay (``wizard play --replay``, the web table's play page).
HUMAN = "human"


class ReplayError(ValueError):
    """A replay file or record that cannot be read, is not a Wizard replay, or does not re-play."""


# -- writing ---------------------------------------------------------------------------------


def _strip_legal(entries: list[dict]) -> list[dict]:
    return [{k: v for k, v in entry.items() if k != "legal"} for entry in entries]


def _round_record(round_log: dict, with_legal: bool) -> dict:
    if with_legal:
        return json.loads(json.dumps(round_log))  # a deep copy that shares nothing with the game
    out = dict(round_log)
    out["hands"] = [list(hand) for hand in round_log["hands"]]
    out["bids"] = _strip_legal(round_log["bids"])
    out["tricks"] = [{**trick, "plays": _strip_legal(trick["plays"])} for trick in round_log["tricks"]]
    for key in ("tricks_won", "scores", "totals"):
        out[key] = list(round_log[key])
    return out


def game_record(game: WizardGame, seats: Sequence[str], with_legal: bool = False) -> dict:
    """The replay record of a finished game played with ``record=True``; ``seats`` names each seat's agent."""
    if not game.record:
        raise ValueError("game_record needs a game played with WizardGame(rules, seed, record=True)")
    if not game.is_over:
        raise ValueError(f"game_record needs a finished game; this one is in round {game.round_index + 1}")
    return log_record(game.rules, game.seed, game.log, seats, with_legal)


def log_record(rules: Rules, seed: int, log: list[dict], seats: Sequence[str], with_legal: bool = False) -> dict:
    """The replay record of a finished game from its seed and round log (a ``WizardBatch`` slot's ``logs``)."""
    if len(seats) != rules.num_players:
        raise ValueError(f"{rules.num_players} seats need {rules.num_players} agent names, got {len(seats)}")
    if len(log) != rules.num_rounds or "totals" not in log[-1]:
        raise ValueError(f"the log holds {len(log)} of {rules.num_rounds} rounds: the game is not finished")
    return {
        "format": FORMAT,
        "num_players": rules.num_players,
        "seed": int(seed),
        "rules": rules.to_dict(),
        "seats": [str(s) for s in seats],
        "rounds": [_round_record(r, with_legal) for r in log],
        "final_totals": list(log[-1]["totals"]),
    }


def _dumps(record: dict) -> str:
    return json.dumps(record, allow_nan=False)


class ReplayWriter:
    """Writes records as JSON lines onto ``path`` through an ``AtomicWriter``: ``close`` commits them.

    Used as a context manager, it commits on a normal exit and on an exception removes the temporary
    file, leaving whatever was at ``path`` untouched: a crash never leaves a half-written replay file.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.count = 0
        self._out = AtomicWriter(path)
        self.temp_path = self._out.temp_path

    def write(self, record: dict) -> None:
        """Append one game record as a line."""
        self._out.write(_dumps(record) + "\n")
        self.count += 1

    def close(self) -> None:
        """Flush to disk and move the file onto ``path`` (replacing any file there)."""
        self._out.commit()

    def abort(self) -> None:
        """Drop what was written; ``path`` keeps its old content."""
        self._out.abort()

    def __enter__(self) -> "ReplayWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_replays(path: str | os.PathLike, records: Iterable[dict]) -> int:
    """Write ``records`` (any iterable, consumed lazily) atomically as JSON lines; return how many."""
    with ReplayWriter(path) as writer:
        for record in records:
            writer.write(record)
    return writer.count


# -- reading ---------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_list(value: Any, length: int | None = None) -> bool:
    return isinstance(value, list) and all(map(_is_int, value)) and (length is None or len(value) == length)


def _require(obj: dict, where: str, fields: dict[str, tuple[type, ...] | str]) -> None:
    """Each field present with the given type (``"int"``: an int that is not a bool)."""
    for key, kind in fields.items():
        if key not in obj:
            raise ReplayError(f"{where}: missing key {key!r}")
        value = obj[key]
        if isinstance(kind, str):  # "int"
            ok, expected = _is_int(value), "an integer"
        else:
            ok, expected = isinstance(value, kind), " or ".join(t.__name__ for t in kind)
        if not ok:
            raise ReplayError(f"{where}: {key!r} must be {expected}, not {value!r:.60}")


def _check_round(rnd: Any, where: str, n: int) -> None:
    if not isinstance(rnd, dict):
        raise ReplayError(f"{where}: a round must be a JSON object")
    _require(rnd, where, {
        "round": "int", "dealer": "int", "hands": (list,), "trump_card": (str, type(None)), "trump": (str, type(None)),
        "bids": (list,), "tricks": (list,), "tricks_won": (list,), "scores": (list,), "totals": (list,),
    })
    if len(rnd["hands"]) != n or not all(isinstance(h, list) and all(isinstance(c, str) for c in h) for h in rnd["hands"]):
        raise ReplayError(f"{where}: 'hands' must be {n} lists of card names")
    for key in ("tricks_won", "scores", "totals"):
        if not _int_list(rnd[key], n):
            raise ReplayError(f"{where}: {key!r} must be {n} integers")
    for i, bid in enumerate(rnd["bids"]):
        if not isinstance(bid, dict):
            raise ReplayError(f"{where}, bid {i + 1}: must be a JSON object")
        _require(bid, f"{where}, bid {i + 1}", {"seat": "int", "bid": "int"})
    for t, trick in enumerate(rnd["tricks"]):
        at = f"{where}, trick {t + 1}"
        if not isinstance(trick, dict):
            raise ReplayError(f"{at}: must be a JSON object")
        _require(trick, at, {"leader": "int", "plays": (list,), "winner": "int"})
        for p, play in enumerate(trick["plays"]):
            if not isinstance(play, dict):
                raise ReplayError(f"{at}, play {p + 1}: must be a JSON object")
            _require(play, f"{at}, play {p + 1}", {"seat": "int", "card": (str,)})


def _card(name: str, where: str) -> int:
    try:
        return parse_card(name)
    except ValueError:
        raise ReplayError(f"{where}: {name!r:.20} is not a card name") from None


def _seat(value: int, what: str, where: str, n: int) -> int:
    if not 0 <= value < n:
        raise ReplayError(f"{where}: {what} {value!r:.20} is not a seat (0 to {n - 1})")
    return value


def _check_round_ranges(rnd: dict, where: str, index: int, rules: Rules) -> None:
    """Every number in its range and every card dealt from the deck and played by the seat holding it."""
    n, size = rules.num_players, rules.hand_sizes[index]
    if rnd["round"] != index + 1:
        raise ReplayError(f"{where}: 'round' is {rnd['round']!r:.20}, expected {index + 1}")
    _seat(rnd["dealer"], "dealer", where, n)
    held = [Counter(_card(card, where) for card in hand) for hand in rnd["hands"]]
    for seat, hand in enumerate(rnd["hands"]):
        if len(hand) != size:
            raise ReplayError(f"{where}: seat {seat} holds {len(hand)} cards, but the round deals {size}")
    dealt = sum(held, Counter()) + Counter([] if rnd["trump_card"] is None else [_card(rnd["trump_card"], where)])
    for card, count in dealt.items():
        if count > DECK_COUNTS[card]:
            raise ReplayError(f"{where}: {card_name(card)} is dealt {count} times, but the deck holds {DECK_COUNTS[card]}")
    if rnd["trump"] is not None and (len(rnd["trump"]) != 1 or rnd["trump"] not in SUITS):
        raise ReplayError(f"{where}: trump {rnd['trump']!r:.20} is not a suit ({', '.join(SUITS)} or null)")
    if len(rnd["bids"]) > n or len({b["seat"] for b in rnd["bids"]}) != len(rnd["bids"]):
        raise ReplayError(f"{where}: {len(rnd['bids'])} bids, but each of the {n} seats bids once")
    for b in rnd["bids"]:
        _seat(b["seat"], "bid by seat", where, n)
        if not 0 <= b["bid"] <= size:
            raise ReplayError(f"{where}: seat {b['seat']} bids {b['bid']!r:.20}, but bids go from 0 to {size}")
    if len(rnd["tricks"]) > size:
        raise ReplayError(f"{where}: {len(rnd['tricks'])} tricks, but the round has {size}")
    for t, trick in enumerate(rnd["tricks"], 1):
        at = f"{where}, trick {t}"
        _seat(trick["leader"], "leader", at, n)
        _seat(trick["winner"], "winner", at, n)
        if len(trick["plays"]) > n:
            raise ReplayError(f"{at}: {len(trick['plays'])} cards played by {n} players")
        for play in trick["plays"]:
            seat, card = _seat(play["seat"], "play by seat", at, n), _card(play["card"], at)
            if held[seat][card] == 0:
                raise ReplayError(f"{at}: seat {seat} plays {card_name(card)}, which it does not hold")
            held[seat][card] -= 1
    if not all(0 <= won <= size for won in rnd["tricks_won"]):
        raise ReplayError(f"{where}: 'tricks_won' {rnd['tricks_won']!r:.60} must each be 0 to {size}")


def check_record(record: Any) -> dict:
    """``record`` if it has the ``wizard-replay/1`` shape (keys, types, lengths, rules, ranges, cards held), else ReplayError."""
    if not isinstance(record, dict):
        raise ReplayError(f"not a JSON object but {type(record).__name__}")
    if "format" not in record:
        raise ReplayError(f"no 'format' key: not a Wizard replay (expected format {FORMAT!r})")
    if record["format"] != FORMAT:
        raise ReplayError(f"format {record['format']!r:.60} is not {FORMAT!r}")
    _require(record, "game", {
        "num_players": "int", "seed": "int", "rules": (dict,), "seats": (list,), "rounds": (list,), "final_totals": (list,),
    })
    n = record["num_players"]
    _require(record["rules"], "rules", {"hand_sizes": (list,), "bidding": (str,), "bid_total_rule": (bool,), "foresight": (bool,)})
    try:
        rules = Rules.from_dict(n, record["rules"])
    except ValueError as err:
        raise ReplayError(f"rules: {err}") from None
    try:
        check_seed(record["seed"])
    except ValueError as err:
        raise ReplayError(str(err)) from None
    if len(record["seats"]) != n or not all(isinstance(s, str) for s in record["seats"]):
        raise ReplayError(f"'seats' must be {n} agent names")
    if not _int_list(record["final_totals"], n):
        raise ReplayError(f"'final_totals' must be {n} integers")
    if len(record["rounds"]) != rules.num_rounds:
        raise ReplayError(f"{len(record['rounds'])} rounds recorded, but the rules play {rules.num_rounds}")
    for i, rnd in enumerate(record["rounds"]):
        _check_round(rnd, f"round {i + 1}", n)
        _check_round_ranges(rnd, f"round {i + 1}", i, rules)
    return record


#: The longest line read as a game: a real one is under 100 kB (3 players, 20 rounds, legal choices written).
MAX_LINE_BYTES = 4 << 20


def _open_replay(path: str | os.PathLike) -> BinaryIO:
    """A regular file or a pipe, opened without waiting for a writer (a FIFO nobody writes to reads as empty)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        os.close(fd)
        raise ReplayError(f"{os.fspath(path)}: is {file_kind(mode)}, not a replay file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def replay_lines(path: str | os.PathLike, progress: Callable[[int], object] | None = None) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a replay file with their numbers, read lazily; ``progress(n)`` hears of every byte read."""
    with _open_replay(path) as file:
        yield from file_lines(file, os.fspath(path), progress)


def file_lines(file: BinaryIO, name: str, progress: Callable[[int], object] | None = None) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a replay open as binary ``file`` (``name`` in messages), as ``replay_lines`` reads them."""
    for lineno in itertools.count(1):
        raw = file.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if progress is not None:
            progress(len(raw))
        if len(raw) > MAX_LINE_BYTES:
            raise ReplayError(f"{name}, line {lineno}: longer than {MAX_LINE_BYTES >> 20} MiB, "
                              "so not a game record (a game's line is under 100 kB)")
        if raw.strip():
            yield lineno, raw


def parse_line(path: str | os.PathLike, lineno: int, raw: bytes) -> dict:
    """The validated record on one line of a replay file (ReplayError names file and line)."""
    where = f"{os.fspath(path)}, line {lineno}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ReplayError(f"{where}: not UTF-8 text: not a Wizard replay file") from None
    try:
        record = json_loads(text)
    except JSONIntegerError as err:
        raise ReplayError(f"{where}: {err}") from None
    except json.JSONDecodeError as err:
        hint = " (the line is cut short)" if not raw.endswith(b"\n") else ""
        raise ReplayError(f"{where}: not valid JSON{hint}: {err.msg} at column {err.colno}") from None
    except RecursionError:
        raise ReplayError(f"{where}: JSON nested too deeply to be a game record") from None
    try:
        return check_record(record)
    except ReplayError as err:
        raise ReplayError(f"{where}: {err}") from None


def iter_replays(path: str | os.PathLike, progress: Callable[[int], object] | None = None) -> Iterator[dict]:
    """Validated records of a replay file, one per line, read lazily (ReplayError names file and line)."""
    for lineno, raw in replay_lines(path, progress):
        yield parse_line(path, lineno, raw)


def read_replays(path: str | os.PathLike) -> list[dict]:
    """All validated records of a replay file (see ``iter_replays``)."""
    return list(iter_replays(path))


# -- re-playing ------------------------------------------------------------------------------


def _card_action(name: Any, where: str) -> int:
    try:
        return CARD_OFFSET + parse_card(name)
    except (TypeError, ValueError) as err:
        raise ReplayError(f"{where}: {err}") from None


def _round_actions(rnd: dict) -> list[int]:
    where = f"round {rnd.get('round', '?')}"
    actions = []
    if rnd["trump_card"] == WIZARD_NAME:
        if rnd["trump"] is None or rnd["trump"] not in SUITS or len(rnd["trump"]) != 1:
            raise ReplayError(f"{where}: a Wizard was turned, so 'trump' must be the suit chosen (one of {SUITS!r}), not {rnd['trump']!r}")
        actions.append(TRUMP_OFFSET + SUITS.index(rnd["trump"]))
    actions += [BID_OFFSET + bid["bid"] for bid in rnd["bids"]]
    for t, trick in enumerate(rnd["tricks"]):
        actions += [_card_action(play["card"], f"{where}, trick {t + 1}") for play in trick["plays"]]
    return actions


def replay_actions(record: dict) -> list[int]:
    """The game's action ids in the order taken: trump choices after a turned Wizard, bids, card plays."""
    return [action for rnd in record["rounds"] for action in _round_actions(rnd)]


def _first_difference(recorded: Any, replayed: Any, where: str) -> str | None:
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in recorded:
            if key == "legal" and key not in replayed:
                continue
            found = _first_difference(recorded[key], replayed.get(key), f"{where}, {key}")
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(replayed, list) and len(recorded) == len(replayed):
        for i, (a, b) in enumerate(zip(recorded, replayed)):
            found = _first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if recorded == replayed else f"{where}: recorded {recorded!r:.80}, re-played {replayed!r:.80}"


def replay_game(record: dict) -> WizardGame:
    """Re-play a record on the engine (recording), checking each round: same deal, same moves, same results.

    Raises ReplayError at the first difference (a corrupted file, or one from another engine version).
    """
    check_record(record)
    rules = Rules.from_dict(record["num_players"], record["rules"])
    game = WizardGame(rules, record["seed"], record=True)
    with_legal = any("legal" in bid for rnd in record["rounds"] for bid in rnd["bids"])
    for index, rnd in enumerate(record["rounds"]):
        where = f"round {index + 1}"
        if game.log[index]["hands"] != rnd["hands"]:
            raise ReplayError(f"{where}: the recorded hands are not the deal of seed {record['seed']} (another engine version?)")
        for action in _round_actions(rnd):
            if game.round_index != index or game.is_over:
                raise ReplayError(f"{where}: more moves are recorded than the round has")
            try:
                game.step(action)
            except IllegalActionError as err:
                raise ReplayError(f"{where}: the recorded move is not legal on re-play: {err}") from None
        if game.round_index == index and not game.is_over:
            raise ReplayError(f"{where}: the recorded moves end before the round does")
        replayed = _round_record(game.log[index], with_legal)
        diff = _first_difference(rnd, replayed, where)
        if diff:
            raise ReplayError(f"re-play differs from the record: {diff}")
    if game.totals.tolist() != record["final_totals"]:
        raise ReplayError(f"re-played final totals {game.totals.tolist()} differ from recorded {record['final_totals']}")
    return game
