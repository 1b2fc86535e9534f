"""The model cards (docs/cards/NAME.md) made from the battery of ``eval_suite`` (``wizard card``, and
``wizard eval-suite --card``): ``CARD_TEMPLATE``, the checks of a card's text (``load_card_text``) and of a battery's
JSON (``load_suite``), the card's battery section (``battery_markdown``), and ``make_card``, ``write_card`` and
``stale_card``.

A card is three files of one name in one folder (docs/cards/ in the repository): NAME.toml, the text written by
hand (what the agent is, how it was made, what bounds it); NAME.json, the battery as ``wizard eval-suite`` wrote it;
NAME.md, the card, made from both by ``CARD_TEMPLATE`` and never edited by hand. NAME is the agent's spec.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from wizard_env.util.files import not_a_file, read_json, read_toml, write_atomic

from .eval_suite import DEFAULT_PLAYERS, FORMAT, Row, json_text, result_text
from .pairing import Figure

#: The keys of a card's text (NAME.toml), each Markdown; ``renames`` (optional) maps the names the battery ran under to
#: the names of today, as ``{"ppo": "net"}``; ``eval_deals`` and ``python_deals`` (optional) the deals of the card's
#: example commands.
CARD_TEXT_KEYS = ("title", "what", "made", "bounds")
CARD_OPTIONAL_KEYS = ("renames", "eval_deals", "python_deals")
#: The most lines a card has.
MAX_CARD_LINES = 150

CARD_TEMPLATE = """\
# `{agent}`: {title}

<!-- Made by `wizard card docs/cards/{stem}.toml` from {stem}.toml (its text) and {stem}.json (its battery, as `wizard eval-suite` \
wrote it): edit those, not this file. -->

{what}

## How to play it

```sh
wizard eval --agents {agent},rule,rule,rule --games {eval_deals} --seed 1   # against three RuleAgents
wizard play --opponents {agent}                                  # you and it at one table
```

```python
from wizard_env import Rules
from wizard_env.training.evaluation.evaluate import evaluate

result = evaluate(Rules.make(4), ["{agent}", "rule", "rule", "rule"], {python_deals}, seed=1, reference="rule")
print(result.specs[0].diff)  # its points a game over the RuleAgents at its table, on {python_deals} deals
```

## How it was made

{made}

## The battery

{battery}

## What bounds it

{bounds}
"""


def rename(text: str, renames: dict[str, str]) -> str:
    """``text`` with each agent name of ``renames`` that starts a spec replaced (``ppo:play=rule`` becomes
    ``net:play=rule``); a name inside a spec's options (``rollout=ppo``) or a longer name (``ppo-bid``) is kept."""
    if not renames:
        return text
    names = "|".join(re.escape(name) for name in sorted(renames, key=len, reverse=True))
    return re.sub(rf"(?<![\w.:=/-])({names})(?![\w-])", lambda m: renames[m[1]], text)


def row_from_json(row: dict[str, Any]) -> Row:
    """A row of the battery's JSON as the ``Row`` that wrote it (its figures, not its tables)."""
    figures_ = row.get("figures")
    return Row(row["key"], row["kind"], row["measurement"], (), row["skipped"], wall_seconds=row["wall_seconds"],
               figures=None if figures_ is None else {k: Figure(v["mean"], v["ci95"]) for k, v in figures_.items()})


def suite_command(data: dict[str, Any]) -> str:
    """The ``wizard eval-suite`` command line that plays the battery of ``data``."""
    parts = ["wizard eval-suite", data["agent"], "--reference", ",".join(data["references"]) or "none",
             "--games", str(data["deals"])]
    if data["reference_deals"] != data["deals"]:
        parts += ["--reference-games", str(data["reference_deals"])]
    if tuple(data["players"]) != DEFAULT_PLAYERS:
        parts += ["--players-battery", ",".join(map(str, data["players"])) or "none"]
    if data["skip"]:
        parts += ["--skip", ",".join(data["skip"])]
    return " ".join([*parts, "--seed", str(data["seed"])])


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def battery_markdown(data: dict[str, Any], renames: dict[str, str] | None = None) -> str:
    """The card's battery section from the battery's JSON: the command, its settings and the table, every figure
    computed from the JSON's figures; the names of ``renames`` replaced."""
    renames = renames or {}
    if data.get("format") != FORMAT:
        raise ValueError(f"the battery's JSON is {data.get('format')!r}, not {FORMAT!r}")
    command = suite_command(data)
    deals = f"{data['deals']:,} duplicate deals a row"
    if data["reference_deals"] != data["deals"]:
        deals += f" ({data['reference_deals']:,} against the references)"
    played = sum(row["wall_seconds"] for row in data["rows"])
    kinds = {row["kind"] for row in data["rows"] if row["skipped"] is None}
    seeds = [f"{data['seeds'][key]} ({what})" for key, kind, what in (
        ("4p", None, "4 players"), ("self-play", "self-play", "self-play"), ("players", "players", "other player counts"))
        if kind is None or kind in kinds]
    text = (f"`{rename(command, renames)}` (wizard-env {data['version']}; its tables played for {_minutes(played)}): "
            f"{deals}, each played in every rotation of the seats; standard rounds; 95% intervals over deals; "
            f"seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)}.")
    used = {old: new for old, new in renames.items() if rename(command, {old: new}) != command}
    if used:
        text += (f" It ran as `{command}`, under the names of wizard-env {data['version']}: "
                 + ", ".join(f"`{old}` is `{new}`" for old, new in used.items()) + " (the same files; the old names stay "
                 "as aliases).")
    lines = [text, "", "| measurement | result | wall time |", "| --- | --- | ---: |"]
    for row in data["rows"]:
        wall = "-" if row["skipped"] is not None or row["kind"] == "bid-accuracy" else _minutes(row["wall_seconds"])
        lines.append(f"| {rename(row['measurement'], renames)} | {rename(result_text(row_from_json(row)), renames)} | {wall} |")
    return "\n".join(lines)


def card_files(path: str | os.PathLike) -> tuple[Path, Path, Path]:
    """A card's text, JSON and Markdown (``NAME.toml``, ``NAME.json``, ``NAME.md``) from any of the three paths."""
    path = Path(path)
    if path.suffix not in (".toml", ".json", ".md"):
        raise ValueError(f"{path}: a card is NAME.toml (its text), NAME.json (its battery) or NAME.md (the card)")
    return path.with_suffix(".toml"), path.with_suffix(".json"), path.with_suffix(".md")


def load_card_text(path: Path) -> dict[str, Any]:
    """A card's text (NAME.toml), checked; ValueError naming the file and the key at fault."""
    problem = not_a_file(path)
    if problem is not None:
        raise ValueError(f"{path} {problem}")
    text = read_toml(path, "card text")
    for key in CARD_TEXT_KEYS:
        if not isinstance(text.get(key), str) or not text[key].strip():
            raise ValueError(f"{path}: {key!r} must be Markdown text (keys: {', '.join(CARD_TEXT_KEYS)})")
    unknown = sorted(set(text) - set(CARD_TEXT_KEYS) - set(CARD_OPTIONAL_KEYS))
    if unknown:
        raise ValueError(f"{path}: unknown key {unknown[0]!r} (keys: {', '.join(CARD_TEXT_KEYS + CARD_OPTIONAL_KEYS)})")
    renames = text.get("renames", {})
    if not isinstance(renames, dict) or not all(isinstance(v, str) for v in renames.values()):
        raise ValueError(f"{path}: 'renames' must map old agent names to new ones, as {{ ppo = \"net\" }}")
    for key in ("eval_deals", "python_deals"):
        if key in text and (not isinstance(text[key], int) or isinstance(text[key], bool) or text[key] < 1):
            raise ValueError(f"{path}: {key!r} must be a number of deals, at least 1")
    return text


def load_suite(path: Path) -> dict[str, Any]:
    """A battery's JSON (``wizard eval-suite``'s suite.json, or a card's NAME.json); ValueError naming the file."""
    data, problem = read_json(path)
    if problem is not None:
        raise ValueError(f"{path} {problem}")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not the JSON of `wizard eval-suite` (format {FORMAT!r})")
    return data


def render_card(name: str, text: dict[str, Any], data: dict[str, Any]) -> str:
    """The card of the agent ``name`` from its text and its battery's JSON, by ``CARD_TEMPLATE``."""
    card = CARD_TEMPLATE.format(
        agent=name, stem=name, title=text["title"].strip(), what=text["what"].strip(), made=text["made"].strip(),
        bounds=text["bounds"].strip(), battery=battery_markdown(data, text.get("renames")),
        eval_deals=text.get("eval_deals", 200), python_deals=text.get("python_deals", 20))
    lines = card.count("\n")
    if lines > MAX_CARD_LINES:
        raise ValueError(f"the card of {name} would be {lines} lines; a card has at most {MAX_CARD_LINES}: shorten its text")
    return card


def make_card(path: str | os.PathLike, suite: str | os.PathLike | None = None) -> str:
    """The card NAME.md of ``path`` (any of its three files) as its text and JSON make it, with the battery of the
    JSON file ``suite`` instead of NAME.json when given; ValueError naming what is wrong."""
    toml_path, json_path, _ = card_files(path)
    return render_card(toml_path.stem, load_card_text(toml_path), load_suite(Path(suite) if suite else json_path))


def write_card(path: str | os.PathLike, suite: str | os.PathLike | None = None) -> list[Path]:
    """Write the card NAME.md of ``path`` from its text and JSON; with ``suite``, first that battery's JSON as
    NAME.json. Everything is read and the card made before either file is written; return the files written."""
    toml_path, json_path, md_path = card_files(path)
    card = make_card(path, suite)
    written = []
    if suite is not None:
        data = load_suite(Path(suite))
        write_atomic(json_path, lambda file: file.write(json_text(data)))
        written.append(json_path)
    write_atomic(md_path, lambda file: file.write(card))
    return [*written, md_path]


def stale_card(path: str | os.PathLike) -> bool:
    """Whether the card NAME.md of ``path`` differs from what its text and JSON make (or is missing)."""
    md_path = card_files(path)[2]
    card = make_card(path)
    return not md_path.is_file() or md_path.read_text(encoding="utf-8") != card
