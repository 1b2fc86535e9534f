"""The ceiling: each agent's margin over three ``rule`` as a share of the oracle's (docs/search.md, "The ceiling").

The oracle (``agents.oracle_agent``) sees every hidden card, so its margin over three RuleAgents is a ceiling that a
player of hidden cards can approach. ``ceiling_table`` reads the ``wizard eval`` JSON files of one folder
(docs/oracle/: the oracles, and agents measured beside them) and the batteries of the model cards (docs/cards/: their
``rule`` row), and writes one Markdown table: per setting, each agent's margin and its share of each oracle's.
``python -m wizard_env.training.evaluation.ceiling`` prints the table of the repository's docs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from wizard_env.engine.rules import Rules
from wizard_env.envs.settings import SETTINGS
from wizard_env.util.files import read_json

from .cards import load_suite

#: The agent that is the ceiling, by the spec its evaluations name (with or without options).
ORACLE = "oracle"


@dataclass(frozen=True)
class Margin:
    """One agent's mean margin over three ``rule`` in one setting, with its 95% interval over ``deals`` deals."""

    setting: str
    agent: str
    mean: float
    ci95: float
    deals: int
    source: str  # the file it comes from, relative to the docs


def setting_name(rules: Rules) -> str:
    """The benchmark setting of ``rules`` (``wizard-4p-5r``), or ``standard 4p`` for the full game of 4 players."""
    named = [name for name, setting in SETTINGS.items() if setting.rules() == rules]
    if named:
        return named[0]
    return f"standard {rules.num_players}p" if rules == Rules.make(rules.num_players) else str(rules)


def eval_margin(path: Path, docs: Path) -> Margin:
    """The margin of the one agent of an ``eval.json`` that is not the reference ``rule``; ValueError naming the file."""
    data, problem = read_json(path)
    if problem is not None:
        raise ValueError(f"{path} {problem}")
    others = [spec for spec in data.get("specs", []) if spec["name"] != "rule"] if isinstance(data, dict) else []
    if not isinstance(data, dict) or data.get("reference") != "rule" or len(others) != 1 or data["agents"].count("rule") != 3:
        raise ValueError(f"{path}: not a wizard eval of one agent against three rule (reference rule)")
    r = data["rules"]
    rules = Rules.make(data["players"], r["hand_sizes"], r["bidding"], r["bid_total_rule"], r["foresight"])
    agent = others[0]
    return Margin(setting_name(rules), agent["name"], agent["diff"], agent["diff_ci95"], data["deals"],
                  path.relative_to(docs).as_posix())


def card_margin(path: Path, docs: Path) -> Margin | None:
    """The card's ``rule`` row (the agent against three ``rule``, 4 players), or None where it has none."""
    data = load_suite(path)
    row = next((row for row in data["rows"] if row["kind"] == "rule" and row.get("figures")), None)
    if row is None:
        return None
    rules = Rules.make(4, data["rounds"])
    diff = row["figures"]["diff"]
    return Margin(setting_name(rules), path.stem, diff["mean"], diff["ci95"], data["deals"], path.relative_to(docs).as_posix())


def _share(agent: Margin, oracle: Margin) -> str:
    """``agent``'s margin as a share of ``oracle``'s, with the 95% interval of the ratio of two independent means."""
    if agent == oracle:
        return "100%"
    share = agent.mean / oracle.mean
    spread = abs(share) * math.hypot(agent.ci95 / agent.mean if agent.mean else 0, oracle.ci95 / oracle.mean)
    return f"{share:.0%} ± {spread * 100:.0f}"


def ceiling_table(oracle_folder: Path, cards_folder: Path, docs: Path) -> str:
    """The Markdown table of every margin in ``oracle_folder``'s eval JSON files and ``cards_folder``'s batteries,
    each as a share of each oracle's in its setting (sources relative to ``docs``)."""
    margins = [eval_margin(path, docs) for path in sorted(oracle_folder.glob("*.json"))]
    margins += [m for path in sorted(cards_folder.glob("*.json")) if (m := card_margin(path, docs)) is not None]
    oracles = sorted({m.agent for m in margins if m.agent.partition(":")[0] == ORACLE})
    if not oracles:
        raise ValueError(f"{oracle_folder}: no wizard eval of {ORACLE} against three rule")
    header = ["setting", "agent", "margin over three `rule`", "deals", *(f"share of `{o}`" for o in oracles), "from"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for setting in sorted({m.setting for m in margins if m.agent in oracles}):
        here = sorted((m for m in margins if m.setting == setting), key=lambda m: -m.mean)
        by_agent = {m.agent: m for m in here}
        for m in here:
            shares = [_share(m, by_agent[o]) if o in by_agent else "-" for o in oracles]
            lines.append(f"| {setting} | `{m.agent}` | {m.mean:+.1f} ± {m.ci95:.1f} | {m.deals} | "
                         f"{' | '.join(shares)} | [{Path(m.source).name}]({m.source}) |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    DOCS = Path(__file__).resolve().parents[2] / "docs"
    print(ceiling_table(DOCS / "oracle", DOCS / "cards", DOCS), end="")
