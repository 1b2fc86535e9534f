"""The README's examples and its `make demo` table (its python blocks run with every docs page's: test_docs.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from doc_blocks import ROOT, python_blocks

README = ROOT / "README.md"


def test_the_readme_has_python_examples():
    assert len(python_blocks(README)) >= 3


def test_the_readme_is_a_front_door_of_at_most_250_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_table_the_readme_says_make_demo_prints_is_what_it_prints(tmp_path: Path, capsys):
    from wizard_env.cli.main import main

    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^demo:.*\n\t\$\(BIN\)/wizard (.*)$", makefile, re.M)[1].split()
    shown = re.search(r"`make demo` ends with this table.*?```text\n(.*?)```", README.read_text(), re.S)[1]
    out = recipe.index("--out")
    assert main([*recipe[:out + 1], str(tmp_path / "demo"), *recipe[out + 2:]]) == 0
    printed = capsys.readouterr().out
    assert [line for line in shown.splitlines() if line not in printed.splitlines()] == []


@pytest.mark.parametrize("name", ["net", "search", "net-bid"])
def test_the_agents_tables_give_each_carded_agent_the_strength_its_card_measured(name: str):
    """README's and docs/agents.md's row of an agent with a card shows its card's row against three `rule`, as the
    card's JSON (what `wizard eval-suite` wrote) has it: the difference, its interval and the deals."""
    suite = json.loads((README.parent / "docs" / "cards" / f"{name}.json").read_text())
    figure = next(row for row in suite["rows"] if row["key"] == "rule")["figures"]["diff"]
    strength = f"{figure['mean']:+.1f} ± {figure['ci95']:.1f}"
    readme_row = next(line for line in README.read_text().splitlines() if line.startswith(f"| `{name}`"))
    assert f"| {strength} ({suite['deals']:,} deals) |" in readme_row
    agents_row = next(line for line in (README.parent / "docs" / "agents.md").read_text().splitlines()
                      if line.startswith(f"| `{name}` | ") and "[card]" in line)
    assert agents_row.startswith(f"| `{name}` | {strength} | {suite['deals']:,} |")
