"""``wizard league`` and ``training.evaluation.league``: the margin of every two agents, the ratings, the tables kept
(resume, an agent added), the errors, and the docs' league (docs/league.md is what docs/league.json makes)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from wizard_env.cli.main import main
from wizard_env.engine.rules import Rules
from wizard_env.training.evaluation import league, league_report, league_run
from wizard_env.training.evaluation.evaluate import evaluate

#: A league of seconds: three rounds of 1..3 cards, four deals a table.
TINY = ["--rounds", "3", "--deals", "4", "--seed", "5"]
DOCS = Path(__file__).resolve().parent.parent / "docs"


def run_league(*args: str) -> tuple[int, str, str]:
    """``wizard league ARGS``: its exit status, stdout and stderr."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = main(["league", *args])
    return status, stdout.getvalue(), stderr.getvalue()


def read(folder: Path) -> dict:
    return json.loads((folder / "league.json").read_text())


def without_times(data: dict) -> dict:
    """A league's JSON without what the clock decides: the wall times (and the figure's hash, which shows them not)."""
    data = {k: v for k, v in data.items() if k not in ("wall_seconds", "png")}
    data["pairs"] = [{k: v for k, v in pair.items() if k != "wall_seconds"} for pair in data["pairs"]]
    data["tables"] = [{k: v for k, v in table.items() if k != "wall_seconds"} for table in data["tables"]]
    return data


@pytest.fixture
def counted(monkeypatch):
    """The tables the league plays, by their agents, as it plays them."""
    tables = []
    play = league_run.timed_table

    def counting(table, *args, **kwargs):
        tables.append(table.agents)
        return play(table, *args, **kwargs)

    monkeypatch.setattr(league_run, "timed_table", counting)
    return tables


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """A league of random, rule and net:play=rule through the command line: its folder, stdout and stderr."""
    out = tmp_path_factory.mktemp("league") / "three"
    status, stdout, stderr = run_league("random", "rule", "net:play=rule", *TINY, "--out", str(out))
    assert status == 0, stderr
    return out, stdout, stderr


def test_every_two_agents_have_a_margin_both_ways_and_it_is_their_deals_mean(three):
    out, stdout, _ = three
    data = read(out)
    assert data["finished"] and data["agents"] == ["random", "rule", "net:play=rule"]
    assert [pair["agents"] for pair in data["pairs"]] == [["random", "rule"], ["random", "net:play=rule"],
                                                           ["rule", "net:play=rule"]]
    assert len(data["tables"]) == 6 and data["games"] == 6 * 4 * 4
    found = league_report.margins(data)
    for (a, b), figure in found.items():
        assert found[b, a].mean == -figure.mean and found[b, a].ci95 == figure.ci95
    # each direction is `wizard eval`'s difference of that table; the margin is their mean, deal by deal
    rules = Rules.make(4, 3)
    one = evaluate(rules, ["random", "rule", "rule", "rule"], 4, 5, reference="rule").specs[0]
    rest = evaluate(rules, ["random", "random", "random", "rule"], 4, 5, reference="rule").specs[0]
    pair = data["pairs"][0]
    assert pair["one_vs_rest"]["mean"] == pytest.approx(one.diff) and pair["rest_vs_one"]["mean"] == pytest.approx(rest.diff)
    assert pair["margin"]["mean"] == pytest.approx((one.diff + rest.diff) / 2)
    assert pair["margin"]["mean"] < 0  # random loses to the RuleAgents
    # the Markdown shows the JSON's figures, best rated first
    markdown = (out / "league.md").read_text()
    assert markdown == stdout.split("\nwrote ")[0] == league_report.format_markdown(data)
    assert f"**{pair['margin']['mean']:+.1f} ± {pair['margin']['ci95']:.1f}**" in markdown
    ranked = [r["agent"] for r in sorted(data["ratings"], key=lambda r: -r["ordinal"])]
    assert ranked[-1] == "random" and markdown.index(f"| 3 | `{ranked[-1]}` |") > 0
    assert (out / "league.png").read_bytes().startswith(b"\x89PNG")
    assert "\nwizard league random rule net:play=rule --deals 4 --seed 5 --rounds 3 --out DIR\n" in markdown  # this league


def test_progress_and_the_estimate_come_before_the_first_table(three):
    _, _, stderr = three
    lines = stderr.splitlines()
    assert lines[0].startswith("league: 3 agents, 3 pairings, 6 tables of 4 deals x 4 rotations")
    first_table = next(i for i, line in enumerate(lines) if line.startswith("[1/6]"))
    assert any(line.startswith("estimated time: ") for line in lines[:first_table])
    assert sum(line.startswith("[6/6] ") for line in lines) == 2


def test_the_same_seed_gives_the_same_league_on_any_workers_and_another_seed_another(three, tmp_path):
    out, _, _ = three
    status, _, stderr = run_league("random", "rule", "net:play=rule", *TINY, "--workers", "2", "--out", str(tmp_path / "again"))
    assert status == 0 and "on 2 worker processes" in stderr
    assert without_times(read(tmp_path / "again")) == without_times(read(out))
    other = [*TINY[:-1], "6"]
    assert run_league("random", "rule", *other, "--out", str(tmp_path / "other"))[0] == 0
    assert read(tmp_path / "other")["pairs"][0]["margin"] != read(out)["pairs"][0]["margin"]


def test_a_league_stopped_part_way_continues_to_the_same_json_playing_only_the_rest(three, tmp_path, monkeypatch, counted):
    out = tmp_path / "stopped"
    play = league_run.timed_table  # the counting one

    def stop_at_the_third(table, *args, **kwargs):
        if len(counted) == 2:
            raise KeyboardInterrupt
        return play(table, *args, **kwargs)

    monkeypatch.setattr(league_run, "timed_table", stop_at_the_third)
    status, _, stderr = run_league("random", "rule", "net:play=rule", *TINY, "--out", str(out))
    assert status == 130 and "stopped after 2 of 6 tables" in stderr
    kept = read(out)
    assert not kept["finished"] and len(kept["tables"]) == 2 and not (out / "league.md").exists()
    monkeypatch.setattr(league_run, "timed_table", play)
    counted.clear()
    status, _, stderr = run_league("random", "rule", "net:play=rule", *TINY, "--out", str(out))
    assert status == 0 and "2 tables already played, 4 to play" in stderr
    assert len(counted) == 4 and not set(counted) & {tuple(t["agents"]) for t in kept["tables"]}
    assert without_times(read(out)) == without_times(read(three[0]))


def test_an_agent_added_plays_its_own_tables_alone(three, tmp_path, counted):
    out = tmp_path / "two"
    assert run_league("random", "rule", *TINY, "--note", "Two *agents*.", "--out", str(out))[0] == 0
    assert len(counted) == 2
    counted.clear()
    assert run_league("random", "rule", "net:play=rule", *TINY, "--out", str(out))[0] == 0
    assert len(counted) == 4 and all("net:play=rule" in agents for agents in counted)
    assert (out / "league.md").read_text().startswith("# League\n\nTwo *agents*.\n")  # the folder's note stays
    assert without_times(read(out)) == without_times(read(three[0])) | {"note": "Two *agents*."}
    # --from: another league's settings and tables, in a folder of one's own
    counted.clear()
    status, _, _ = run_league("--from", str(out / "league.json"), "rule:", "--out", str(tmp_path / "x"))
    assert status == 2 and not (tmp_path / "x").exists()
    assert run_league("--from", str(out / "league.json"), "net", "--out", str(tmp_path / "mine"))[0] == 0
    assert len(counted) == 6 and all("net" in agents for agents in counted)
    assert read(tmp_path / "mine")["agents"] == ["random", "rule", "net:play=rule", "net"]
    assert read(tmp_path / "mine")["note"] == ""  # a note is its folder's
    again = [pair for pair in read(tmp_path / "mine")["pairs"] if "net" not in pair["agents"]]
    assert again == read(out)["pairs"]  # the pairs kept are the same figures, wall times and all


@pytest.mark.parametrize("args, message", [
    (["random", "nosuch"], "AGENT 'nosuch': unknown agent 'nosuch'"),
    (["random", "random"], "AGENT 'random' is named twice"),
    (["rule"], "a league needs at least 2 agents, not 1"),
    (["random", "rule", "--deals", "1"], "argument --deals: must be at least 2"),
    (["random", "net-bid", "--players", "3"], "AGENT 'net-bid' plays 4 players, not the 3 of this league"),
    (["--from", "missing.json", "rule"], "--from missing.json no such file"),
])
def test_a_bad_league_is_one_line_and_writes_nothing(tmp_path, args, message, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, stdout, stderr = run_league(*args, "--out", "out")
    assert status == 2 and stdout == ""
    assert stderr.startswith("wizard: error: ") and message in stderr and stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_folder_of_other_settings_is_refused_and_left_as_it_was(three, tmp_path):
    out = tmp_path / "kept"
    out.mkdir()
    (out / "league.json").write_bytes((three[0] / "league.json").read_bytes())
    before = sorted(out.iterdir())
    status, _, stderr = run_league("random", "rule", "--rounds", "3", "--deals", "5", "--seed", "5", "--out", str(out))
    assert status == 2 and "is a league of other settings (--deals: 4, not 5)" in stderr
    assert sorted(out.iterdir()) == before
    status, _, stderr = run_league("--from", str(out / "league.json"), "--deals", "3", "--out", str(out))
    assert status == 2 and "--deals: --from" in stderr


def test_ratings_rate_only_the_players_of_each_game():
    from wizard_env.training.evaluation.evaluate import ratings

    nan = np.nan
    scores = np.array([[3.0, 1.0, nan], [nan, 2.0, 1.0], [2.0, nan, 0.0]] * 5)
    rated = ratings(scores, seed=0)
    assert rated[0].mu > rated[1].mu > rated[2].mu  # 0 beats 1 and 2, 1 beats 2
    with pytest.raises(ValueError, match="at least 2 players"):
        ratings(np.array([[1.0, nan, nan], [1.0, 2.0, 3.0]]))


def same_up_to_the_last_digit(page: str, made: str, hint: str) -> None:
    """The page is ``made``, each number within one unit of its last printed digit: the figures recomputed from the
    per-deal scores may round the other way under another numpy (which sums in another order)."""
    number = re.compile(r"\d[\d,]*(?:\.\d+)?")
    assert number.sub("#", page) == number.sub("#", made), hint
    for shown, again in zip(number.findall(page), number.findall(made)):
        unit = 10.0 ** -len(shown.partition(".")[2])
        assert abs(float(shown.replace(",", "")) - float(again.replace(",", ""))) <= unit * 1.001, (hint, shown, again)


def test_the_docs_league_is_what_its_json_makes():
    data = json.loads((DOCS / "league.json").read_text())
    page = (DOCS / "league.md").read_text()
    same_up_to_the_last_digit(page, league_report.format_markdown(data), "run: wizard league --from docs/league.json --out docs")
    assert data["finished"] and {"random", "rule", "pimc", "search", "net", "net-bid"} <= set(data["agents"])
    assert len(data["tables"]) >= len(data["agents"]) * (len(data["agents"]) - 1)
    for pair in data["pairs"]:  # every margin is the mean of the per-deal scores the JSON keeps
        a, b = pair["agents"]
        one, rest = league.pair_tables(a, b, league.config_of(data, "docs/league.json"))
        tables = {tuple(t["agents"]): np.asarray(t["deal_scores"]) for t in data["tables"]}
        first = [(s[:, list(t.mine)].mean(axis=1) - np.delete(s, t.mine, axis=1).mean(axis=1))
                 for t in (one, rest) for s in [tables[t.agents]]]
        sign = 1 if sorted((a, b))[0] == a else -1
        assert pair["margin"]["mean"] == pytest.approx(sign * (first[0] + first[1]).mean() / 2)
        assert f"**{pair['margin']['mean']:+.1f} ± {pair['margin']['ci95']:.1f}**" in page
