"""The rows of docs/baselines.md's tables, each from one command: train a baseline, evaluate it, print its row.

Usage::

    python benchmarks/baseline_rows.py --setting wizard-4p --algos dmc values --seeds 0 1
    python benchmarks/baseline_rows.py --setting wizard-3p-5r --algos dmc --seeds 0 --minutes 1 --games 200

For each algorithm and seed it runs, one after another, the commands docs/baselines.md names for a row:

    wizard baseline ALGO --setting NAME --seed S --minutes 15 --steps 20000000 --out RUNS/ALGO-SHORT-S
    wizard eval --setting NAME --agents baseline:DIR --games 2000 --seed 1 --out DIR/eval
    wizard eval --players P --rounds R --agents baseline:DIR,random,... --reference random --games 2000 --seed 1 --out DIR/eval-random

(``SHORT`` is the setting's name without ``wizard-`` and dashes, such as ``4p5r``; ``maskable-ppo``'s folder is
``ppo-SHORT-S``), then prints the row, from the run's ``config.json`` (or checkpoint) and the two ``eval.json``: the
decisions, the mean score and the paired margin to the setting's opponents with their 95% intervals, the bid accuracy
and the paired margin to random. A stopped script continues where it was: a run stopped by Ctrl-C is resumed to its
budget, any other run folder that exists already is evaluated as it is (train it further with ``wizard baseline ...
--resume``), and an evaluation whose ``eval.json`` exists with the same games and seed is read, not played again.
Options after ``--`` go to every ``wizard baseline`` (for example ``-- --num-envs 4``; the row's command shows them).
The rows go to standard output, the commands' own output to standard error. Ctrl-C stops the command running (a
baseline keeps what it has, for ``--resume``) and the script.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from wizard_env.agents.ppo_agent import load_checkpoint
from wizard_env.envs.settings import SETTINGS, get_setting
from wizard_env.training.pairing import Figure, pm

ALGOS = ("dmc", "dqn", "nfsp", "nfsp-self", "maskable-ppo", "values")
#: What a row's decisions count, where it is not every decision the learner played.
COUNTED = {"nfsp-self": " (every seat's)", "values": " with values"}


def run_folder(runs: Path, algo: str, setting: str, seed: int) -> Path:
    """The folder of one row's run, named as docs/baselines.md names it."""
    name = "ppo" if algo == "maskable-ppo" else algo
    return runs / f"{name}-{setting.removeprefix('wizard-').replace('-', '')}-{seed}"


def wizard(argv: list[str]) -> None:
    """Run ``wizard ARGV`` (this interpreter's); SystemExit with its status if it fails."""
    sys.stdout.flush()
    print("$ wizard " + " ".join(argv), file=sys.stderr, flush=True)
    status = subprocess.run([sys.executable, "-m", "wizard_env", *argv], stdout=2).returncode  # fd 2: stderr
    if status != 0:
        raise SystemExit(status)


def evaluation(out: Path, argv: list[str], games: int, seed: int) -> dict:
    """The baseline's entry in ``out/eval.json``, evaluating first unless it holds these games and seed already."""
    path = out / "eval.json"
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):  # none yet, or unreadable: evaluated (again)
        saved = None
    if saved is None or (saved.get("deals"), saved.get("seed")) != (games, seed):
        wizard(["eval", *argv, "--games", str(games), "--seed", str(seed), "--out", str(out), "--quiet"])
        saved = json.loads(path.read_text())
    return next(spec for spec in saved["specs"] if spec["name"].startswith("baseline:"))


def stopped_by(out: Path) -> str | None:
    """What stopped the run in ``out`` (``minutes``, ``steps`` or ``interrupt``), from its config.json's ``done``; None
    where that is not known (no ``done``: ``maskable-ppo``'s config.json, or a run killed before it wrote it)."""
    try:
        return json.loads((out / "config.json").read_text())["done"]["stopped_by"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def decisions(out: Path) -> int:
    """The learner decisions the run in ``out`` reached: its ``done`` in config.json, or its checkpoint's count
    (``maskable-ppo`` writes ``wizard train``'s config.json, which has no ``done``)."""
    config = json.loads((out / "config.json").read_text())
    if "done" in config:
        return int(config["done"]["decisions"])
    return int(load_checkpoint(out / "checkpoints" / "latest.npz")[0]["num_timesteps"])


def row(algo: str, seed: int, command: str, out: Path, rule: dict, random: dict) -> str:
    """One Markdown row of docs/baselines.md (figures as ``wizard eval-suite``'s tables show them)."""
    score, to_rule, to_random = (Figure(rule["mean_score"], rule["ci95"]), Figure(rule["diff"], rule["diff_ci95"]),
                                 Figure(random["diff"], random["diff_ci95"]))
    return (f"| {algo}, seed {seed} | `{command}` | {decisions(out):,}{COUNTED.get(algo, '')} | {pm(score, sign=False)} | "
            f"{pm(to_rule)} | {100 * rule['bid_accuracy']:.1f}% | {pm(to_random)} |")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setting", required=True, choices=list(SETTINGS), help="the benchmark setting")
    parser.add_argument("--algos", nargs="+", choices=ALGOS, default=list(ALGOS), help="the algorithms (default: all)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1], help="the training seeds (default: 0 1)")
    parser.add_argument("--minutes", type=float, default=15.0, help="each run's wall-time budget (default 15)")
    parser.add_argument("--steps", type=int, default=20_000_000, help="each run's decision budget (default 20,000,000)")
    parser.add_argument("--games", type=int, default=2000, help="duplicate deals of each evaluation (default 2,000)")
    parser.add_argument("--eval-seed", type=int, default=1, help="the evaluations' seed (default 1)")
    parser.add_argument("--runs", type=Path, default=Path("runs/base"), help="where the run folders go (default runs/base)")
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    setting = get_setting(args.setting)
    randoms = ",".join(["random"] * (setting.num_players - 1))
    rules = ["--players", str(setting.num_players), "--rounds", str(setting.rounds), "--bidding", setting.bidding,
             *(["--bid-total-rule"] if setting.bid_total_rule else []), *(["--foresight"] if setting.foresight else [])]
    rows = []
    for algo in args.algos:
        for seed in args.seeds:
            out = run_folder(args.runs, algo, args.setting, seed)
            train = ["baseline", algo, "--setting", args.setting, "--seed", str(seed), "--minutes", f"{args.minutes:g}",
                     "--steps", str(args.steps), "--out", str(out), *extra]
            if not out.exists():
                wizard([*train, "--quiet"])
            elif stopped_by(out) == "interrupt":  # Ctrl-C stopped it: it goes on to its budget
                wizard([*train, "--resume", "--quiet"])
            else:
                print(f"{out} holds a run: evaluated as it is (wizard baseline ... --resume trains it further)",
                      file=sys.stderr)
            agent = f"baseline:{out}"
            rule = evaluation(out / "eval", ["--setting", args.setting, "--agents", agent], args.games, args.eval_seed)
            random = evaluation(out / "eval-random", [*rules, "--agents", f"{agent},{randoms}", "--reference", "random"],
                                args.games, args.eval_seed)
            rows.append(row(algo, seed, "wizard " + " ".join(train), out, rule, random))
    print("| agent | command | decisions | mean score | margin to rule | bid accuracy | margin to random |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
