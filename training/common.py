"""What every trainer shares (``train``, ``rllib_train``, ``train_values``): the lock a run holds on its folder,
the rules as a run's config.json stores them, the range check of numeric settings, the progress lines and the
Ctrl-C that asks a loop to stop (``stop_on_interrupt``); and ``locked_run``, which the evaluation commands write their
folders through.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from wizard_env.engine.rules import Rules
from wizard_env.envs.settings import Setting
from wizard_env.util import options
from wizard_env.util.checks import short_repr
from wizard_env.util.files import check_writable
from wizard_env.util.workers import pid_alive

Result = TypeVar("Result")


def rules_json(rules: Rules) -> dict[str, Any]:
    """The rules as JSON, enough to rebuild them with ``Rules.make``."""
    return {"num_players": rules.num_players, "rounds": list(rules.hand_sizes), "bidding": rules.bidding.value,
            "bid_total_rule": rules.bid_total_rule, "foresight": rules.foresight}


def json_rules(saved: dict[str, Any]) -> Rules:
    """Inverse of ``rules_json``: the rules a run's config.json or a checkpoint stores; KeyError, TypeError or
    ValueError where they make no game, for the caller to name the file."""
    return Rules.make(saved["num_players"], saved["rounds"], saved["bidding"], saved["bid_total_rule"], saved["foresight"])


def rule_opponents(setting: Setting, command: str) -> str:
    """The agent spec of ``setting``'s opponents when they are RuleAgents, whom ``command`` trains and evaluates
    against; ValueError for a setting with other opponents."""
    if set(setting.opponents) != {"rule"}:
        raise ValueError(f"{command} plays and evaluates against RuleAgents, and setting {setting.name!r} has the "
                         f"opponents {', '.join(setting.opponents)}")
    return "rule"


def check_ranges(cfg, ranges: dict[str, tuple[float | None, float | None]], above_zero: tuple[str, ...],
                 option: Callable[[str], str] = lambda name: f"--{name.replace('_', '-')}") -> None:
    """ValueError naming (as ``option`` names it on the command line) the first setting of ``cfg`` outside its range in
    ``ranges``; the range of a list (or a list of lists) is that of each of its numbers."""
    for name, (low, high) in ranges.items():
        value = getattr(cfg, name)
        for number in _numbers(value):
            if isinstance(number, bool) or not isinstance(number, (int, float)) or isinstance(number, float) and not math.isfinite(number):
                # an int is finite, and math.isfinite cannot take one past a float's range (OverflowError)
                raise ValueError(f"{option(name)} must be a finite number, not {short_repr(number)}")
            options.check_range(option(name), number, low, high, above=name in above_zero)


def _numbers(value: Any) -> list[Any]:
    """A setting's numbers: itself, or those of a list or of a list of lists."""
    if not isinstance(value, (list, tuple)):
        return [value]
    return [n for item in value for n in (item if isinstance(item, (list, tuple)) else [item])]


def say(line: str) -> None:
    """Print a progress line above the progress bar, at once (stdout may be a file)."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


def lock_holder(out: Path) -> int | None:
    """The pid of the live process that holds ``out``'s run lock (``run_lock``); None where none does."""
    lock = out / ".lock"
    try:
        text = lock.read_text().strip() if lock.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() and len(text) < 10 and pid_alive(int(text)) else None


@contextmanager
def run_lock(out: Path, command: str = "wizard train"):
    """Hold ``out/.lock`` (holding our pid) while a run writes into ``out``; ValueError (naming ``command``) if a live run holds it."""
    lock, mine = out / ".lock", out / f".lock.{os.getpid()}.tmp"
    mine.write_text(str(os.getpid()))
    try:
        for _ in range(2):
            try:
                os.link(mine, lock)  # atomic: the lock appears with our pid in it, or not at all
                break
            except FileExistsError:
                holder = lock_holder(out)
                if holder is not None:
                    raise ValueError(f"{out} is in use by another {command} (pid {holder}): wait for it, or use another --out") from None
                lock.unlink(missing_ok=True)  # left by a run that was killed
        else:
            raise ValueError(f"{out}: could not take the run lock {lock}")
    finally:
        mine.unlink(missing_ok=True)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def locked_run(out: str | os.PathLike, command: str, work: Callable[[], Result],
               write: Callable[[Result, Path], list[Path]]) -> tuple[Result, list[Path]]:
    """Check that files can be written into the folder ``out`` (before the work, not after), then hold its run lock
    while ``work`` runs and ``write`` writes its result there; the result and the paths written."""
    check_writable(out, folder=True)
    (folder := Path(out)).mkdir(parents=True, exist_ok=True)
    with run_lock(folder, command):
        result = work()
        return result, write(result, folder)


@contextmanager
def stop_on_interrupt() -> Iterator[Callable[[], bool]]:
    """While inside, the first Ctrl-C (SIGINT) only asks to stop: the callable yielded says whether it came, so a
    training loop stops where it can save; a second Ctrl-C raises KeyboardInterrupt at once. Outside the main thread,
    where signals cannot be handled, Ctrl-C acts as usual and the callable stays False."""
    asked = [False]

    def ask(signum: int, frame: object) -> None:
        if asked[0]:
            raise KeyboardInterrupt
        asked[0] = True

    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    previous = signal.signal(signal.SIGINT, ask)
    try:
        yield lambda: asked[0]
    finally:
        signal.signal(signal.SIGINT, previous)
