"""The model cards (docs/cards/NAME.md): each is what one template makes of its text (NAME.toml) and the JSON
``wizard eval-suite`` wrote (NAME.json); ``wizard card`` makes and checks them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from wizard_env.cli.main import main
from wizard_env.training.evaluation import cards

CARDS_DIR = Path(__file__).resolve().parent.parent / "docs" / "cards"
TEXTS = sorted(CARDS_DIR.glob("*.toml"))


def table_lines(card: str) -> list[str]:
    """The rows of the card's battery table, in order."""
    lines = card.splitlines()
    start = lines.index("| measurement | result | wall time |") + 2
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("| "))
    return lines[start:end]


def test_the_cards_of_the_shipped_agents_are_there():
    assert {"net", "net-bid"} <= {path.stem for path in TEXTS}
    for card in CARDS_DIR.glob("*.md"):  # no card without its text and its battery's JSON
        assert card.with_suffix(".toml").is_file() and card.with_suffix(".json").is_file(), card.name


@pytest.mark.parametrize("text", TEXTS, ids=lambda path: path.stem)
def test_every_card_is_what_its_text_and_json_make(text):
    card = text.with_suffix(".md").read_text(encoding="utf-8")
    assert card == cards.make_card(text), f"run: wizard card docs/cards/{text.name}"
    assert len(card.splitlines()) <= cards.MAX_CARD_LINES == 150
    assert card.startswith(f"# `{text.stem}`: ")
    assert [line for line in card.splitlines() if line.startswith("## ")] == [
        "## How to play it", "## How it was made", "## The battery", "## What bounds it"]


@pytest.mark.parametrize("text", TEXTS, ids=lambda path: path.stem)
def test_every_figure_of_a_cards_table_is_its_jsons_and_the_json_holds_the_games(text):
    data = json.loads(text.with_suffix(".json").read_text(encoding="utf-8"))
    card = text.with_suffix(".md").read_text(encoding="utf-8")
    assert data["format"] == "wizard-eval-suite/1"
    assert f"{data['deals']:,} duplicate deals a row" in card
    lines = table_lines(card)
    assert len(lines) == len(data["rows"])
    for line, row in zip(lines, data["rows"]):
        figures = row["figures"]
        if row["skipped"] is not None:
            assert figures is None and "not run" in line
        elif row["kind"] == "bid-accuracy":
            assert f"**{figures['bid_accuracy']['mean']:.1%} ± {figures['bid_accuracy']['ci95'] * 100:.1f}**" in line
        else:
            assert f"**{figures['diff']['mean']:+.1f} ± {figures['diff']['ci95']:.1f}**" in line
    # the rule row's figure is the mean over its deals of the agent's score minus the RuleAgents', from the JSON's games
    rule = next(row for row in data["rows"] if row["key"] == "rule")
    table = data["tables"][rule["tables"][0]]
    scores = np.asarray(table["deal_scores"])
    assert scores.shape == (data["deals"], 4) == (len(table["deal_seeds"]), len(table["agents"]))
    assert np.isclose((scores[:, 0] - scores[:, 1:].mean(axis=1)).mean(), rule["figures"]["diff"]["mean"])


def test_rename_changes_the_names_that_start_a_spec_only():
    renames = {"ppo": "net", "ppo-v12": "net-v12"}
    text = "`ppo` vs `ppo:play=rule` (`--agents ppo,ppo-v12,ppo-bid --reference ppo-v12`) `search:rollout=ppo` ppo-v7"
    assert cards.rename(text, renames) == (
        "`net` vs `net:play=rule` (`--agents net,net-v12,ppo-bid --reference net-v12`) `search:rollout=ppo` ppo-v7")


@pytest.fixture
def card(tmp_path):
    """A copy of the `net` card's three files in a folder of its own."""
    for suffix in (".toml", ".json", ".md"):
        shutil.copy(CARDS_DIR / f"net{suffix}", tmp_path / f"net{suffix}")
    return tmp_path / "net.toml"


def test_check_names_a_card_whose_json_changed_and_wizard_card_makes_it_again(card, capsys):
    assert main(["card", str(card), "--check"]) == 0
    data = json.loads(card.with_suffix(".json").read_text())
    data["rows"][0]["figures"]["diff"] = {"mean": 12.34, "ci95": 5.67}
    card.with_suffix(".json").write_text(json.dumps(data))
    before = card.with_suffix(".md").read_text()
    capsys.readouterr()
    assert main(["card", str(card), "--check"]) == 1
    assert capsys.readouterr().out == (f"{card.with_suffix('.md')} differs from what its text and JSON make: "
                                      f"run wizard card {card}\n")
    assert card.with_suffix(".md").read_text() == before  # --check writes nothing
    assert main(["card", str(card.with_suffix(".md"))]) == 0
    assert "**+12.3 ± 5.7**" in table_lines(card.with_suffix(".md").read_text())[0]
    assert main(["card", str(card), "--check"]) == 0


def test_suite_takes_a_new_batterys_json_as_the_cards(card, tmp_path, capsys):
    data = json.loads(card.with_suffix(".json").read_text())
    data["deals"] = 1234
    (tmp_path / "suite.json").write_text(json.dumps(data))
    assert main(["card", str(card), "--suite", str(tmp_path / "suite.json")]) == 0
    assert json.loads(card.with_suffix(".json").read_text()) == data
    assert "1,234 duplicate deals a row" in card.with_suffix(".md").read_text()


@pytest.mark.parametrize("change, message", [
    (lambda text: text.replace("bounds = ", "limits = "), "'bounds' must be Markdown text"),
    (lambda text: text + "\ncolour = \"red\"\n", "unknown key 'colour'"),
    (lambda text: text + "\neval_deals = 0\n", "'eval_deals' must be a number of deals"),
    (lambda text: text.replace('title = "', 'title = '), "not valid TOML"),
    (lambda text: text.replace('what = """', 'what = """' + "line\n" * 200), "at most 150"),
])
def test_a_bad_text_is_named_in_one_line_and_nothing_is_written(card, change, message, capsys):
    card.write_text(change(card.read_text()))
    before = card.with_suffix(".md").read_text()
    assert main(["card", str(card)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: ") and message in err and err.count("\n") == 1
    assert card.with_suffix(".md").read_text() == before


def test_a_json_that_is_not_a_battery_is_refused_and_nothing_is_written(card, tmp_path, capsys):
    (tmp_path / "eval.json").write_text(json.dumps({"agents": ["rule"] * 4}))
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert main(["card", str(card), "--suite", str(tmp_path / "eval.json")]) == 2
    assert "not the JSON of `wizard eval-suite`" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files
    assert main(["card", str(tmp_path / "net.txt")]) == 2
    assert "a card is NAME.toml" in capsys.readouterr().err
