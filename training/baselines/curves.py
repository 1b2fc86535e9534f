"""The learning curves of several baseline runs in one figure, for docs/baselines.md:

    python -m wizard_env.training.baselines.curves runs/base/*-3p5r-0 --title wizard-3p-5r --out docs/baselines-3p5r.png

Each run folder's ``curve.csv`` (every algorithm writes one: its first column counts the run's steps, ``diff`` and
``diff_ci95`` are the paired margin to the setting's opponents and its 95% interval, ``wall_s`` the run's seconds)
becomes one line in each of two panels: the margin against wall minutes (the budget all rows share) and against the
run's steps (decisions, and for ``values`` decisions with action values; on a log scale, as the algorithms' speeds
differ by ten times, so without the untrained network's point at 0). A run is labelled by its folder's name.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wizard_env.util.files import write_atomic

from ..evaluation.eval_report import new_figure
from ..train_report import read_curve


def plot_curves(runs: list[Path], out: Path, title: str = "") -> Path:
    """One figure of the curves of ``runs`` (folders with a curve.csv) into ``out`` (PNG, written atomically);
    ValueError naming a folder without a readable curve."""
    curves = []
    for run in runs:
        path = Path(run) / "curve.csv"
        try:
            rows = read_curve(path)
        except OSError as e:
            raise ValueError(f"{run}: no learning curve ({path}: {e.strerror or e})") from None
        if not rows or "diff" not in rows[0] or "wall_s" not in rows[0]:
            raise ValueError(f"{path}: not a learning curve of wizard baseline (no rows, or no diff and wall_s columns)")
        curves.append((Path(run).name, rows))
    fig = new_figure((11, 4.5))
    wall_ax, steps_ax = fig.subplots(1, 2, sharey=True)
    for name, rows in curves:
        steps = [int(next(iter(r.values()))) for r in rows]
        minutes = [float(r["wall_s"]) / 60 for r in rows]
        diff, ci = [float(r["diff"]) for r in rows], [float(r["diff_ci95"]) for r in rows]
        line, = wall_ax.plot(minutes, diff, marker="o", markersize=3, label=name)
        wall_ax.fill_between(minutes, [d - c for d, c in zip(diff, ci)], [d + c for d, c in zip(diff, ci)],
                             color=line.get_color(), alpha=0.15)
        later = [i for i, step in enumerate(steps) if step > 0]  # the untrained network's point has no place on a log scale
        steps_ax.plot([steps[i] for i in later], [diff[i] for i in later], marker="o", markersize=3, color=line.get_color())
    for ax in (wall_ax, steps_ax):
        ax.axhline(0, color="black", linewidth=0.8)
    wall_ax.set(xlabel="wall minutes", ylabel="score per game minus the opponents' (95% interval)")
    steps_ax.set(xlabel="the run's steps (log scale)", xscale="log")
    wall_ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    write_atomic(Path(out), lambda file: fig.savefig(file, format="png", dpi=100), binary=True)
    return Path(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wizard_env.training.baselines.curves",
                                     description="Plot the learning curves of baseline runs in one figure.")
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders of wizard baseline")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    parser.add_argument("--title", default="", help="the figure's title")
    args = parser.parse_args(argv)
    try:
        print(f"wrote {plot_curves(args.runs, args.out, args.title)}")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
