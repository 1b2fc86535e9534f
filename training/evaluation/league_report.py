"""What ``wizard league`` shows and saves: league.md (a page: ratings, the margin of every two agents, the commands
that reproduce it and add an agent), league.png (the margins and the ratings) and league.json, all from the JSON."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

from wizard_env.engine.rules import Rules
from wizard_env.util.files import write_atomic

from .eval_report import new_figure
from .league import JSON_NAME, MARKDOWN_NAME, PNG_NAME
from .pairing import Figure, pm

_COUNTS = ("no", "one", "two", "three", "four", "five", "six")


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def variant_flags(data: dict[str, Any]) -> str:
    """The variant options of ``wizard league`` that make the league's rules (none for 4 players, standard rounds)."""
    n, rules = data["players"], data["rules"]
    flags = [] if n == 4 else [f"--players {n}"]
    if rules["hand_sizes"] != list(Rules.make(n).hand_sizes):
        sizes = rules["hand_sizes"]
        if sizes == list(range(1, len(sizes) + 1)):
            flags.append(f"--rounds {len(sizes)}")
        else:
            flags.append(f"--rounds {','.join(map(str, sizes))}" + ("," if len(sizes) == 1 else ""))
    if rules["bidding"] != "open":
        flags.append(f"--bidding {rules['bidding']}")
    flags += [flag for flag, key in (("--bid-total-rule", "bid_total_rule"), ("--foresight", "foresight")) if rules[key]]
    return " ".join(flags)


def command(data: dict[str, Any]) -> str:
    """The ``wizard league`` command line that plays the league of ``data`` (into the folder DIR)."""
    flags = variant_flags(data)
    return " ".join(["wizard league", *data["agents"], "--deals", str(data["deals"]), "--seed", str(data["seed"]),
                     *([flags] if flags else []), "--out DIR"])


def _figure(pair: dict[str, Any], key: str = "margin", flip: bool = False) -> Figure:
    found = pair[key]
    return Figure(-found["mean"] if flip else found["mean"], found["ci95"])


def margins(data: dict[str, Any]) -> dict[tuple[str, str], Figure]:
    """The margin of every agent over every other, both ways (B over A is A over B negated)."""
    found = {}
    for pair in data["pairs"]:
        a, b = pair["agents"]
        found[a, b], found[b, a] = _figure(pair), _figure(pair, flip=True)
    return found


def by_rating(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The ratings, highest ordinal (mu - 3 sigma) first."""
    return sorted(data["ratings"], key=lambda r: -r["ordinal"])


def format_markdown(data: dict[str, Any]) -> str:
    """league.md from the league's JSON: settings and wall time, ratings, the margin table, the pairs, the figure and
    the commands; a league not finished is refused."""
    if not data["finished"]:
        raise ValueError("the league is not finished: run it again to play the tables missing")
    n = data["players"]
    rest, name = _COUNTS[n - 1], {spec: f"`{spec}`" for spec in data["agents"]}
    found, order = margins(data), [r["agent"] for r in by_rating(data)]
    lines = ["# League", ""] + ([data["note"].strip(), ""] if data["note"].strip() else []) + [
        f"{len(data['agents'])} agents, each against every other (`wizard league`, wizard-env {data['version']}): "
        f"{data['rules_text']}; {data['deals']:,} duplicate deals per table, each played in every rotation of the "
        f"seats, at two tables per pair of agents (one against {rest}, {rest} against one); {data['games']:,} games, "
        f"seed {data['seed']}; the tables played for {_minutes(data['wall_seconds'])}. Intervals are 95% over deals.",
        "", "## Ratings", "",
        "| rank | agent | rating (mu ± sigma) | mu - 3 sigma | mean margin over the others |", "| ---: | --- | ---: | ---: | ---: |"]
    for rank, r in enumerate(by_rating(data), 1):
        mean = sum(found[r["agent"], other].mean for other in data["agents"] if other != r["agent"]) / (len(order) - 1)
        lines.append(f"| {rank} | {name[r['agent']]} | {r['mu']:.1f} ± {r['sigma']:.1f} | {r['ordinal']:.1f} | {mean:+.1f} |")
    lines += ["", f"openskill (Plackett-Luce) ratings over every deal of every table, each deal ranking its two agents "
              f"by their mean scores; averaged over {data['rating_orders']} shuffled orders of the deals.", "",
              "## Margins", "",
              "The row agent's points a game over the column agent's, the mean over deals of both tables of the pair:",
              "", "| | " + " | ".join(name[spec] for spec in order) + " |", "| --- |" + " ---: |" * len(order)]
    for row in order:
        cells = ["-" if row == col else pm(found[row, col]) for col in order]
        lines.append(f"| {name[row]} | " + " | ".join(cells) + " |")
    lines += ["", "## Pairs", "", f"| A | B | A over B | one A vs {rest} B | {rest} A vs one B | wall time |",
              "| --- | --- | ---: | ---: | ---: | ---: |"]
    for pair in data["pairs"]:
        a, b = pair["agents"]
        lines.append(f"| {name[a]} | {name[b]} | **{pm(_figure(pair))}** | {pm(_figure(pair, 'one_vs_rest'))} | "
                     f"{pm(_figure(pair, 'rest_vs_one'))} | {_minutes(pair['wall_seconds'])} |")
    lines += ["", f"![The margin of every two agents, and each agent's rating]({PNG_NAME})", "", "## Commands", "",
              "```sh", "# this league, from nothing (the same seed: the same tables)", command(data),
              "# this league and AGENT, in the folder NEW: plays AGENT's tables alone",
              f"wizard league --from DIR/{JSON_NAME} AGENT --out NEW", "```"]
    return "\n".join(lines) + "\n"


def plot(data: dict[str, Any]) -> Any:
    """The margins as a grid (row over column) and the ratings with their sigma, best first."""
    order = [r["agent"] for r in by_rating(data)]
    found, k = margins(data), len(order)
    fig = new_figure((4 + 1.1 * k, 1.5 + 0.55 * k))
    grid, rated = fig.subplots(1, 2, width_ratios=[k, 3])
    values = [[0.0 if a == b else found[a, b].mean for b in order] for a in order]
    top = max(1e-9, max(abs(v) for row in values for v in row))
    grid.imshow(values, cmap="RdBu", vmin=-top, vmax=top)
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            if a != b:
                grid.text(j, i, f"{found[a, b].mean:+.0f}\n±{found[a, b].ci95 or 0:.0f}", ha="center", va="center", fontsize=7,
                          color="white" if abs(found[a, b].mean) > top / 2 else "black")  # legible on the dark cells
    grid.set_xticks(range(k), order, rotation=30, ha="right")
    grid.set_yticks(range(k), order)
    grid.set_title("row agent's points a game over the column agent's", fontsize=9)
    best = by_rating(data)
    rated.errorbar([r["mu"] for r in best], range(k), xerr=[r["sigma"] for r in best], fmt="o", capsize=4)
    rated.set_yticks(range(k), order)
    rated.invert_yaxis()
    rated.set(xlabel="openskill mu ± sigma")
    fig.suptitle(f"{data['rules_text']}\n{data['deals']:,} duplicate deals per table, seed {data['seed']}", fontsize=9)
    return fig


def json_text(data: dict[str, Any]) -> str:
    """The league's JSON as league.json holds it: one key a line, each table (with its per-deal scores) on one line."""
    head = json.dumps({k: v for k, v in data.items() if k != "tables"}, indent=1, allow_nan=False)
    tables = ",\n".join(f"  {json.dumps(table, allow_nan=False)}" for table in data["tables"])
    return f"{head[:-2]},\n \"tables\": [\n{tables}\n ]\n}}\n"


def write_json(data: dict[str, Any], folder: Path) -> Path:
    """Write league.json alone (after each table of a run: the tables played so far)."""
    return write_atomic(folder / JSON_NAME, lambda file: file.write(json_text(data)))


def write(data: dict[str, Any], out: str | os.PathLike) -> list[Path]:
    """Write league.md, league.png, then league.json (the commit point, naming the png's sha256) into ``out``."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    markdown, png = format_markdown(data), io.BytesIO()
    plot(data).savefig(png, format="png", dpi=100)
    md_path = write_atomic(folder / MARKDOWN_NAME, lambda file: file.write(markdown))
    png_path = write_atomic(folder / PNG_NAME, lambda file: file.write(png.getvalue()), binary=True)
    data = data | {"png": {"file": PNG_NAME, "sha256": hashlib.sha256(png.getvalue()).hexdigest()}}
    return [md_path, png_path, write_json(data, folder)]
