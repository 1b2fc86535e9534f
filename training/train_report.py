"""What ``wizard train`` records: the learning curve (CSV and PNG), config JSON and the final summary."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from wizard_env.util.files import write_atomic

from .evaluation.eval_report import _dump_json, format_markdown, new_figure
from .evaluation.evaluate import EvalResult

COLUMNS = ("timesteps", "wall_s", "ppo_mean", "rule_mean", "diff", "diff_ci95", "bid_accuracy", "rule_bid_accuracy")


def columns(learner: str = "ppo", steps: str = "timesteps") -> tuple[str, ...]:
    """A curve's CSV columns for the agent ``learner`` over ``steps`` (``COLUMNS`` for ``wizard train``'s ``ppo``)."""
    return (steps, "wall_s", f"{learner}_mean", *COLUMNS[3:])


def row_of(result: EvalResult, learner: str = "ppo") -> dict:
    """The curve's numbers from an evaluation of ``learner`` (an agent spec's name) against ``rule`` agents."""
    mine, rule = (next(s for s in result.specs if s.name == name) for name in (learner, "rule"))
    return {f"{learner}_mean": mine.mean_score, "rule_mean": rule.mean_score, "diff": mine.diff,
            "diff_ci95": mine.diff_ci95 or 0.0, "bid_accuracy": mine.bid_accuracy, "rule_bid_accuracy": rule.bid_accuracy,
            "result": result}


def format_row(timesteps: int, wall_s: float, row: dict, learner: str = "ppo") -> str:
    """One progress line."""
    return (f"step {timesteps:>9,} | {wall_s / 60:5.1f} min | {learner} {row[f'{learner}_mean']:6.1f} vs rule "
            f"{row['rule_mean']:6.1f} | diff {row['diff']:+6.1f} ± {row['diff_ci95']:4.1f} | bid accuracy {row['bid_accuracy']:.1%}")


class Curve:
    """The evaluations of a run in a CSV file, appended to (atomically rewritten) after each one; ``learner`` names
    the evaluated agent and ``steps`` the first column (``columns``)."""

    def __init__(self, path: Path, learner: str = "ppo", steps: str = "timesteps"):
        self.path = Path(path)
        self.last: EvalResult | None = None
        self.learner, self.columns = learner, columns(learner, steps)

    def add(self, timesteps: int, wall_s: float, result: EvalResult) -> None:
        """Append one evaluation."""
        self.last = result
        steps = self.columns[0]
        rows = read_curve(self.path) if self.path.is_file() else []
        rows = [r for r in rows if int(r[steps]) < timesteps]  # a resumed run replaces what came later
        row = row_of(result, self.learner)
        rows.append({steps: timesteps, "wall_s": round(wall_s, 1), **{k: round(row[k], 4) for k in self.columns[2:]}})
        text = io.StringIO()
        writer = csv.DictWriter(text, self.columns)
        writer.writeheader()
        writer.writerows(rows)
        write_atomic(self.path, lambda file: file.write(text.getvalue()))


def read_curve(path: Path) -> list[dict]:
    """The rows of a curve CSV."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def plot(csv_path: Path, png_path: Path, steps_label: str = "PPO steps", learner: str = "ppo") -> Path:
    """The learning curve: paired difference to RuleAgent (95% CI) and bid accuracy against steps (``steps_label``,
    the first column) of the agent ``learner``."""
    rows = read_curve(csv_path)
    steps = [int(next(iter(r.values()))) for r in rows]
    diff = [float(r["diff"]) for r in rows]
    ci = [float(r["diff_ci95"]) for r in rows]
    fig = new_figure((9, 4))
    from matplotlib.ticker import FuncFormatter

    diff_ax, acc_ax = fig.subplots(1, 2)
    diff_ax.errorbar(steps, diff, yerr=ci, marker="o", capsize=3)
    diff_ax.axhline(0, color="black", linewidth=0.8)
    diff_ax.set(xlabel=steps_label, ylabel="score per game minus RuleAgent's", title="duplicate deals vs RuleAgents")
    acc_ax.plot(steps, [float(r["bid_accuracy"]) for r in rows], marker="o", label=learner)
    acc_ax.plot(steps, [float(r["rule_bid_accuracy"]) for r in rows], marker="o", label="rule")
    acc_ax.set(xlabel=steps_label, ylabel="bid accuracy")
    acc_ax.legend()
    for ax in (diff_ax, acc_ax):
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1000:g}k"))
    write_atomic(png_path, lambda file: fig.savefig(file, format="png", dpi=100), binary=True)
    return png_path


def write_json(path: Path, data: dict) -> None:
    """Write JSON atomically."""
    write_atomic(path, lambda file: _dump_json(data, file))


def summary(trainer) -> str:
    """The final summary: steps, wall time, outputs and the last evaluation table."""
    out, cfg, done = trainer.out, trainer.cfg, trainer.model.num_timesteps
    first = f"trained {done:,} of {cfg.timesteps:,} steps in {trainer.elapsed() / 60:.1f} min (learn={cfg.learn}, seed {cfg.seed})"
    if trainer.capped:
        first += f"; stopped by --max-minutes {cfg.max_minutes:g} (--resume continues)"
    elif done > cfg.timesteps and getattr(trainer, "resumed_at", 0) >= cfg.timesteps:
        first += f"; the run had trained {trainer.resumed_at:,} steps already when resumed"
    elif done > cfg.timesteps:
        first += (f"; PPO trains whole rollouts of {cfg.num_envs * cfg.n_steps:,} steps (--num-envs x --n-steps), "
                  f"so {cfg.timesteps:,} rounds up to {done:,}")
    lines = [first,
             f"checkpoint: {out / 'checkpoints' / 'latest.npz'}",
             f"curve: {out / 'curve.csv'}, {out / 'curve.png'}; TensorBoard: {out / 'tb'}", ""]
    if trainer.curve.last is not None:
        lines.append(format_markdown(trainer.curve.last))
    return "\n".join(lines)

