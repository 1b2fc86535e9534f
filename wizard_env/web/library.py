"""The replay viewer's files: the replay folder's files by plain name, and uploads, read as ``wizard-replay/1``.

A name is one plain file name inside the folder: no ``/``, no leading dot, nothing that resolves (through
a link or ``..``) to a file outside it, and only regular files are opened. An upload is read from memory,
at most ``MAX_UPLOAD_BYTES``. Each game is validated by ``replay.parse_line`` and re-played on the engine
(``replay.replay_game``); one that does not re-play is still shown, with the reason as a warning.
No web framework is imported here.
"""

from __future__ import annotations

import io
import os
import re
import stat
from pathlib import Path
from typing import Any, Iterator

from wizard_env.engine.replay import ReplayError, file_lines, parse_line, replay_game, replay_lines
from .tables import RequestError

#: The largest upload the viewer reads (a replay of 100 standard games with legal choices is about 5 MiB).
MAX_UPLOAD_BYTES = 8 << 20
#: Replay files the folder listing shows at most (newest first).
MAX_LISTED = 1000
#: A file name the viewer opens: letters, digits, ``.``, ``_`` and ``-``, not starting with a dot.
FILE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}")
REPLAY_SUFFIXES = (".jsonl", ".json")


def _chosen(lines: Iterator[tuple[int, bytes]], where: str, game: int) -> dict:
    """The viewer's answer for game ``game`` (from 1) of a file's lines: the record, the game count, any warning."""
    if isinstance(game, bool) or not isinstance(game, int) or game < 1:
        raise RequestError(f"game counts from 1, not {game!r:.20}")
    chosen, count = None, 0
    try:
        for count, (lineno, raw) in enumerate(lines, 1):
            if count == game:
                chosen = parse_line(where, lineno, raw)
    except ReplayError as err:
        raise RequestError(str(err), 422) from None
    if count == 0:
        raise RequestError(f"{where}: holds no games: not a Wizard replay file", 422)
    if chosen is None:
        raise RequestError(f"{where} holds {count} game{'s' if count != 1 else ''}; game must be 1 to {count}", 404)
    try:
        replay_game(chosen)
        warning = None
    except ReplayError as err:
        warning = f"this game does not re-play on this engine: {err}"
    return {"name": where, "game": game, "games": count, "record": chosen, "warning": warning}


def read_upload(data: bytes, game: int = 1, name: str = "upload") -> dict:
    """Game ``game`` of an uploaded replay file (RequestError 413 past MAX_UPLOAD_BYTES, 422 when not a replay)."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise RequestError(f"the file is {len(data):,} bytes; the viewer reads at most {MAX_UPLOAD_BYTES >> 20} MiB", 413)
    shown = name if FILE_NAME.fullmatch(name) else "upload"
    return _chosen(file_lines(io.BytesIO(data), shown), shown, game)


class ReplayFolder:
    """The replay files of one folder, opened by plain name only."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)

    def path(self, name: str) -> Path:
        """The regular file ``name`` inside the folder (RequestError 400 for a name that is not plain, 404 when absent)."""
        if not isinstance(name, str) or not FILE_NAME.fullmatch(name) or ".." in name:
            raise RequestError(f"{name!r:.80} is not a file name in the replay folder (no '/', '..' or leading '.')", 400)
        root = self.folder.resolve()
        path = (root / name).resolve()
        if path.parent != root:  # a link leading out of the folder
            raise RequestError(f"{name} leads outside the replay folder", 400)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise RequestError(f"no replay file {name} in the replay folder", 404) from None
        if not stat.S_ISREG(mode):
            raise RequestError(f"{name} is not a regular file", 400)
        return path

    def listing(self) -> list[dict]:
        """The folder's replay files (``.jsonl``, ``.json``), newest first: name, size and modification time."""
        if not self.folder.is_dir():
            return []
        root = self.folder.resolve()
        found: list[dict[str, Any]] = []
        for entry in os.scandir(root):
            if not FILE_NAME.fullmatch(entry.name) or not entry.name.endswith(REPLAY_SUFFIXES):
                continue
            try:
                path = Path(entry.path).resolve()
                info = path.stat()
            except OSError:
                continue
            if path.parent == root and stat.S_ISREG(info.st_mode):
                found.append({"name": entry.name, "bytes": info.st_size, "modified": info.st_mtime})
        found.sort(key=lambda f: (-f["modified"], f["name"]))
        return found[:MAX_LISTED]

    def read(self, name: str, game: int = 1) -> dict:
        """Game ``game`` of the folder's file ``name`` (RequestError naming the problem)."""
        path = self.path(name)
        try:
            return _chosen(replay_lines(path), name, game)
        except OSError as err:
            raise RequestError(f"{name}: {err.strerror}", 404) from None
