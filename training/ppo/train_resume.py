"""What ``wizard train --resume`` checks of the run in its folder: it is a run of the command resuming it, with
nothing missing or damaged (``run_folder.resume_folder``), and its ``config.json`` is readable and asks for the rules
and the network the command asks for."""

from __future__ import annotations

import json
from pathlib import Path

from wizard_env.agents.checkpoint import check_hidden
from wizard_env.engine.rules import Rules
from wizard_env.util.checks import short_repr

from ..common import rules_json
from ..run_folder import TRAIN, resume_folder
from .train_config import TrainConfig


def check_resume(out: Path, cfg: TrainConfig, rules: Rules, commands: tuple[str, ...] = (TRAIN,)) -> None:
    """ValueError if ``out`` holds no run of ``commands`` that can go on, or one started with other rules or another
    network than this command asks for."""
    saved = saved_config(out, commands)
    if saved is None:
        return
    if saved.get("rules") != rules_json(rules):
        raise ValueError(f"--resume: {out} was trained with rules {saved.get('rules')}, this command asks for "
                         f"{rules_json(rules)}: pass the run's variant options")
    for key in ("learn", "mix", "episode", "advice"):
        if saved["train"].get(key) != getattr(cfg, key):
            raise ValueError(f"--resume: {out} was trained with --{key} {saved['train'].get(key)!r}, "
                             f"this command asks for {getattr(cfg, key)!r}")


def saved_config(out: Path, commands: tuple[str, ...] = (TRAIN,)) -> dict | None:
    """The config.json of the run of ``commands`` in ``out`` (None if it has none); ValueError naming the folder where
    ``resume_folder`` refuses it, or the file if it is damaged."""
    resume_folder(out, commands)
    path = out / "config.json"
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text())
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"{path}: not a run config ({type(e).__name__})") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("train"), dict):
        raise ValueError(f"{path}: not a run config (no 'train' object)")
    train = saved["train"]
    try:
        check_hidden(train.get("hidden"))
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    if train.get("activation") not in ("relu", "tanh") or not isinstance(train.get("advice", False), bool):
        raise ValueError(f"{path}: activation must be relu or tanh and advice true or false, "
                         f"not {short_repr(train.get('activation'))} and {short_repr(train.get('advice', False))}")
    return saved
