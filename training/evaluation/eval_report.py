"""What ``wizard eval`` shows and saves: Markdown tables, the JSON file (wizard-eval/1) and a PNG plot."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING

from wizard_env.render.replay_text import describe_rules
from wizard_env.util.files import write_atomic

from .evaluate import EVAL_INSTALL, RATING_ORDERS, EvalResult, MissingExtra, Stats

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMAT = "wizard-eval/1"
JSON_NAME = "eval.json"
PNG_NAME = "eval.png"


def _orders_text(result: EvalResult) -> str:
    kind = "orderings" if result.permutations else "rotations"
    per_deal = len(result.seatings)
    deals = f"{result.deals} deal{'s' if result.deals != 1 else ''}"
    return f"{deals} x {per_deal} {kind} = {result.deals * per_deal} games"


def _ci(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"±{value:.{digits}f}"


def _table(header: list[str], align: str, rows: list[list[str]]) -> list[str]:
    """A Markdown table; ``align`` has one letter per column, l or r."""
    rule = ["---" if a == "l" else "---:" for a in align]
    return ["| " + " | ".join(cells) + " |" for cells in (header, rule, *rows)]


def format_markdown(result: EvalResult) -> str:
    """The report as Markdown: configuration, the summary table, bid accuracy by hand size and by position."""
    specs = result.specs
    lines = [f"{describe_rules(result.rules)}; {_orders_text(result)}, seed {result.seed}", ""]
    if len(specs) < len(result.agent_specs):
        lines += ["An agent named at several seats is one row, its seats pooled (per-seat rows are in the JSON).", ""]
    header = ["agent", "seats", "mean score", "95% CI", f"diff to {result.reference}", "95% CI",
              "win rate", "bid accuracy", "rating (mu ± sigma)"]
    rows = []
    for s in specs:
        rating = "-" if s.rating is None else f"{s.rating.mu:.1f} ± {s.rating.sigma:.1f}"
        rows.append([s.name, str(len(s.entries)), f"{s.mean_score:.1f}", _ci(s.ci95), f"{s.diff:+.1f}",
                     _ci(s.diff_ci95), f"{s.win_rate:.1%}", f"{s.bid_accuracy:.1%}", rating])
    lines += _table(header, "lrrrrrrrr", rows)
    spreads = [s.rating.mu_spread for s in specs if s.rating is not None]
    if spreads:
        lines += ["", f"Ratings: openskill (Plackett-Luce), averaged over {RATING_ORDERS} shuffled orders of the games, so the "
                  f"same games give the same ratings in any order; between orders mu varies by a standard deviation of up to "
                  f"{max(spreads):.2f}."]
    names = [s.name for s in specs]
    for title, key, attr in (("Bid accuracy by hand size", "cards", "by_hand_size"),
                             ("Bid accuracy by bidding position (0 = first to bid, left of the dealer)", "position",
                              "by_position")):
        columns = [{k: acc for k, acc, _ in getattr(s, attr)} for s in specs]
        keys = sorted({k for c in columns for k in c})
        body = [[str(k), *(f"{c[k]:.1%}" if k in c else "-" for c in columns)] for k in keys]
        lines += ["", title, ""] + _table([key, *names], "r" * (len(names) + 1), body)
    return "\n".join(lines)


def _stats_json(s: Stats) -> dict:
    return {
        "name": s.name,
        "entries": list(s.entries),
        "mean_score": s.mean_score,
        "ci95": s.ci95,
        "diff": s.diff,
        "diff_ci95": s.diff_ci95,
        "win_rate": s.win_rate,
        "bid_accuracy": s.bid_accuracy,
        "bid_accuracy_by_hand_size": [{"hand_size": k, "accuracy": a, "rounds": c} for k, a, c in s.by_hand_size],
        "bid_accuracy_by_position": [{"position": k, "accuracy": a, "rounds": c} for k, a, c in s.by_position],
        "rating": None if s.rating is None else
        {"mu": s.rating.mu, "sigma": s.rating.sigma, "ordinal": s.rating.ordinal, "mu_spread": s.rating.mu_spread},
    }


def to_json(result: EvalResult) -> dict:
    """The result as plain JSON values (what eval.json holds)."""
    return {
        "format": FORMAT,
        "players": result.rules.num_players,
        "rules": result.rules.to_dict(),
        "agents": list(result.agent_specs),
        "seed": result.seed,
        "deals": result.deals,
        "orders": "permutations" if result.permutations else "rotations",
        "games": len(result.records.seeds),
        "reference": result.reference,
        "seatings": [list(order) for order in result.seatings],
        "deal_seeds": list(result.deal_seeds),
        "agent_seeds": list(result.agent_seeds),
        "specs": [_stats_json(s) for s in result.specs],
        "entries": [_stats_json(s) for s in result.entries],
        "deal_scores": result.deal_scores.tolist(),
    }


def _dump_json(data: dict, file: IO[str]) -> None:
    json.dump(data, file, indent=1, allow_nan=False)
    file.write("\n")


def new_figure(figsize: tuple[float, float]) -> Figure:
    """An empty matplotlib Figure (not drawn on screen); MissingExtra when matplotlib is not installed."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtra(f"the plots need matplotlib, from the eval extra: {EVAL_INSTALL}") from None
    return Figure(figsize=figsize, layout="constrained")


def plot(result: EvalResult) -> Figure:
    """Mean score and paired difference with their intervals, and bid accuracy by hand size and by position."""
    specs = result.specs
    names = [s.name for s in specs]
    fig = new_figure((11, 8))
    from matplotlib.ticker import MaxNLocator

    (score_ax, diff_ax), (hand_ax, pos_ax) = fig.subplots(2, 2)
    ys = range(len(specs))
    score_ax.barh(ys, [s.mean_score for s in specs], xerr=[s.ci95 or 0 for s in specs], capsize=4, color="tab:blue")
    score_ax.set(yticks=list(ys), yticklabels=names, xlabel="mean score per game (95% CI over deals)")
    diff_ax.barh(ys, [s.diff for s in specs], xerr=[s.diff_ci95 or 0 for s in specs], capsize=4, color="tab:orange")
    diff_ax.axvline(0, color="black", linewidth=0.8)
    diff_ax.set(yticks=list(ys), yticklabels=names, xlabel=f"paired difference to {result.reference} (95% CI)")
    for s in specs:
        hand_ax.plot([k for k, _, _ in s.by_hand_size], [a for _, a, _ in s.by_hand_size], marker="o", label=s.name)
        pos_ax.plot([k for k, _, _ in s.by_position], [a for _, a, _ in s.by_position], marker="o", label=s.name)
    hand_ax.set(xlabel="cards in hand", ylabel="bid accuracy", ylim=(0, 1))
    pos_ax.set(xlabel="bidding position (0 = left of the dealer)", ylabel="bid accuracy", ylim=(0, 1),
               xticks=list(range(result.rules.num_players)))
    for ax in (score_ax, diff_ax):
        ax.invert_yaxis()  # first agent on top, as in the table
    diff_ax.use_sticky_edges = False  # room on both sides of the zero line
    diff_ax.margins(x=0.1)
    hand_ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    hand_ax.legend()
    fig.suptitle(f"{describe_rules(result.rules)}\n{_orders_text(result)}, seed {result.seed}", fontsize=9)
    return fig


def write(result: EvalResult, out: str | os.PathLike) -> list[Path]:
    """Write eval.png, then eval.json (naming the sha256 of its png) into the folder ``out``; return their paths.

    eval.json is the commit point: killed before it is replaced, the folder keeps the old eval.json, and
    a png that is newer than the json shows by its hash.
    """
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    json_path, png_path = folder / JSON_NAME, folder / PNG_NAME
    png = io.BytesIO()
    plot(result).savefig(png, format="png", dpi=100)
    write_atomic(png_path, lambda file: file.write(png.getvalue()), binary=True)
    data = to_json(result) | {"png": {"file": PNG_NAME, "sha256": hashlib.sha256(png.getvalue()).hexdigest()}}
    write_atomic(json_path, lambda file: _dump_json(data, file))
    return [json_path, png_path]
