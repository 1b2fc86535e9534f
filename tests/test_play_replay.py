"""`wizard play --replay FILE`: the terminal game is saved as a replay that re-plays, and only a finished one."""

from __future__ import annotations

import subprocess
import sys

from wizard_env.engine.cards import WIZARD, hand_names
from wizard_env.engine.game import deal, first_dealer
from wizard_env.engine.replay import read_replays, replay_game


def wizard(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wizard_env", *args], input=stdin, capture_output=True, text=True, timeout=120)


def test_play_saves_the_finished_game_as_a_replay_that_re_plays(tmp_path):
    seed = next(s for s in range(100)
                if not (deal(s, 0, 3, 1)[1] == WIZARD and first_dealer(s, 3) == 0))  # no trump to name
    (card,) = hand_names(deal(seed, 0, 3, 1)[0][0])
    out = tmp_path / "game.jsonl"
    run = wizard("play", "--players", "3", "--rounds", "1", "--seed", str(seed), "--opponents", "rule,random",
                 "--replay", str(out), stdin=f"1\n{card}\n")
    assert run.returncode == 0, run.stderr
    assert f"replay: the game is saved to {out}" in run.stdout
    (record,) = read_replays(out)
    assert record["seats"] == ["human", "rule", "random"] and record["seed"] == seed
    assert {"seat": 0, "bid": 1} in record["rounds"][0]["bids"]
    assert replay_game(record).totals.tolist() == record["final_totals"]
    assert wizard("replay", str(out), "--check").returncode == 0


def test_play_saves_nothing_for_an_abandoned_game(tmp_path):
    out = tmp_path / "game.jsonl"
    run = wizard("play", "--players", "3", "--rounds", "2", "--seed", "1", "--replay", str(out), stdin="quit\n")
    assert run.returncode == 1 and not out.exists()


def test_play_refuses_a_replay_path_it_cannot_write_before_the_game_starts(tmp_path):
    run = wizard("play", "--players", "3", "--rounds", "1", "--seed", "1", "--replay", str(tmp_path), stdin="0\n")
    assert run.returncode == 2
    assert run.stderr.startswith("wizard: error: ") and "folder" in run.stderr and "Traceback" not in run.stderr
    assert "Your bid" not in run.stdout
