"""The ``wizard`` command, run as a user runs it (a subprocess), plus the agent registry behind --agents."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wizard_env.agents import make_agent
from wizard_env.agents.random_agent import RandomAgent
from wizard_env.agents.registry import AGENT_NAMES, parse_spec
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.cards import WIZARD, hand_names
from wizard_env.cli.main import main
from wizard_env.engine.rules import parse_rounds
from wizard_env.engine.game import WizardGame, deal, first_dealer
from wizard_env.render.text import render_text
from wizard_env.engine.replay import read_replays
from wizard_env.engine.rules import Rules

SMALL = ["--players", "3", "--rounds", "2", "--games", "3"]


def wizard(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m wizard_env ARGS`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "wizard_env", *args], input=stdin, capture_output=True, text=True, timeout=120
    )


def table_rows(stdout: str) -> list[list[str]]:
    """The seat rows of the simulate table (the lines under its header), split into cells."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["seat", "agent"]) + 1
    rows = []
    for line in lines[start:]:
        if not line.split() or not line.split()[0].isdigit():
            break
        rows.append(line.split())
    return rows


# -- simulate ------------------------------------------------------------------------------------


def test_simulate_prints_one_row_per_seat_and_the_configuration():
    run = wizard("simulate", *SMALL, "--agents", "rule,random,random", "--seed", "5")
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""  # no progress bar when stderr is not a terminal
    lines = run.stdout.splitlines()
    assert lines[0] == "3 players, 2 rounds (1..2 cards), open bidding, bid total rule off, foresight off; 3 games, seed 5"
    assert lines[1].split() == ["seat", "agent", "mean", "score", "95%", "CI", "win", "rate", "bid", "accuracy"]
    rows = table_rows(run.stdout)
    assert [row[:2] for row in rows] == [["0", "rule"], ["1", "random"], ["2", "random"]]
    win_rates = [float(row[4].rstrip("%")) for row in rows]
    assert sum(win_rates) == pytest.approx(100, abs=0.2)  # shared wins are split


def test_simulate_single_agent_name_fills_every_seat():
    run = wizard("simulate", "--players", "5", "--rounds", "1", "--games", "2", "--agents", "random")
    assert run.returncode == 0, run.stderr
    assert [row[:2] for row in table_rows(run.stdout)] == [[str(s), "random"] for s in range(5)]


def test_simulate_is_deterministic_in_its_seed():
    first = wizard("simulate", *SMALL, "--agents", "random", "--seed", "1")
    second = wizard("simulate", *SMALL, "--agents", "random", "--seed", "1")
    other = wizard("simulate", *SMALL, "--agents", "random", "--seed", "2")
    assert first.returncode == second.returncode == other.returncode == 0
    assert first.stdout == second.stdout
    assert table_rows(first.stdout) != table_rows(other.stdout)


def test_simulate_writes_one_readable_replay_line_per_game(tmp_path):
    path = tmp_path / "games.jsonl"
    run = wizard("simulate", *SMALL, "--agents", "rule,random,rule", "--seed", "4", "--replay", str(path))
    assert run.returncode == 0, run.stderr
    records = read_replays(path)
    assert len(path.read_text().splitlines()) == len(records) == 3
    assert all(r["seats"] == ["rule", "random", "rule"] for r in records)
    assert len({r["seed"] for r in records}) == 3
    assert "legal" not in path.read_text()
    rows = table_rows(run.stdout)
    mean = [sum(r["final_totals"][s] for r in records) / 3 for s in range(3)]
    assert [float(row[2]) for row in rows] == pytest.approx(mean, abs=0.05)


def test_simulate_with_legal_records_the_legal_choices(tmp_path):
    path = tmp_path / "games.jsonl"
    run = wizard("simulate", *SMALL, "--agents", "random", "--replay", str(path), "--with-legal")
    assert run.returncode == 0, run.stderr
    for record in read_replays(path):
        for rnd in record["rounds"]:
            assert all("legal" in bid and bid["bid"] in bid["legal"] for bid in rnd["bids"])
            assert all("legal" in play for trick in rnd["tricks"] for play in trick["plays"])


def test_simulate_variants_reach_the_rules(tmp_path):
    path = tmp_path / "games.jsonl"
    run = wizard("simulate", "--players", "4", "--rounds", "1,3,5", "--games", "1", "--bidding", "secret",
                 "--foresight", "--agents", "random", "--replay", str(path))
    assert run.returncode == 0, run.stderr
    (record,) = read_replays(path)
    assert record["rules"] == {"hand_sizes": [1, 3, 5], "bidding": "secret", "bid_total_rule": False, "foresight": True}


@pytest.mark.parametrize(
    "text, expected",
    [("standard", "standard"), ("amigo", "amigo"), ("5", 5), ("1,3,5", [1, 3, 5]), ("3,", [3]), (" 2, 4 ", [2, 4])],
)
def test_rounds_option_forms(text, expected):
    assert parse_rounds(text) == expected


# -- replay --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("replays") / "games.jsonl"
    run = wizard("simulate", "--players", "4", "--rounds", "3", "--games", "3", "--agents", "random", "--replay", str(path))
    assert run.returncode == 0, run.stderr
    return path


def test_replay_shows_the_chosen_game_round_by_round(replay_file):
    run = wizard("replay", str(replay_file), "--game", "2")
    assert run.returncode == 0, run.stderr
    record = read_replays(replay_file)[1]
    assert run.stdout.splitlines()[0] == f"{replay_file}: game 2"  # the lines after it are not read
    assert f"Game seed {record['seed']}:" in run.stdout
    for number in (1, 2, 3):
        assert f"Round {number}/3" in run.stdout
    assert "Final totals: " in run.stdout and "Round 4" not in run.stdout


def test_replay_defaults_to_the_first_game_and_checks_on_request(replay_file):
    run = wizard("replay", str(replay_file), "--check")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == f"{replay_file}: game 1 of 3"
    assert "all 3 games re-play identically" in run.stdout
    assert f"Game seed {read_replays(replay_file)[0]['seed']}:" in run.stdout


def test_replay_check_reports_a_tampered_game(replay_file, tmp_path):
    lines = replay_file.read_text().splitlines()
    record = json.loads(lines[2])
    record["rounds"][1]["scores"][0] += 10
    bad = tmp_path / "tampered.jsonl"
    bad.write_text("\n".join(lines[:2] + [json.dumps(record)]) + "\n")
    run = wizard("replay", str(bad), "--check")
    assert run.returncode == 2
    assert run.stderr.startswith("wizard: error: ") and "game 3" in run.stderr and "scores" in run.stderr


# -- play ----------------------------------------------------------------------------------------


def hand_at(seed: int, players: int, sizes: list[int], round_index: int, seat: int) -> list[str]:
    hands, _ = deal(seed, round_index, players, sizes[round_index])
    return hand_names(hands[seat])


def needs_trump(seed: int, players: int, sizes: list[int], round_index: int, seat: int) -> bool:
    _, turned = deal(seed, round_index, players, sizes[round_index])
    return turned == WIZARD and (first_dealer(seed, players) + round_index) % players == seat


def test_play_one_round_re_asks_bad_input_and_shows_final_totals():
    seed = next(s for s in range(100) if not needs_trump(s, 3, [1], 0, 0))
    (card,) = hand_at(seed, 3, [1], 0, 0)
    run = wizard("play", "--players", "3", "--rounds", "1", "--seed", str(seed), "--opponents", "random",
                 stdin=f"7\none\n1\nZz\n{card}\n")
    assert run.returncode == 0, run.stderr
    assert "'7' is not a legal bid; legal bids: 0 1" in run.stdout
    assert "'one' is not a legal bid" in run.stdout
    assert "'Zz': not a card name" in run.stdout
    assert f"you (seat 0) plays {card}" in run.stdout
    assert "End of round 1:" in run.stdout
    assert "Game over. Final totals: you (seat 0) " in run.stdout
    assert run.stdout.count("Your bid (0 1):") == 3 and "Traceback" not in run.stderr


def test_play_two_rounds_to_the_end():
    sizes = [1, 2]
    seed = next(s for s in range(100) if not any(needs_trump(s, 3, sizes, r, 1) for r in (0, 1)))
    (first,) = hand_at(seed, 3, sizes, 0, 1)
    c1, c2 = hand_at(seed, 3, sizes, 1, 1)
    # Whichever of c1, c2 must be played first, the extra line is read by the next card prompt.
    script = f"0\n{first}\n1\n{c1}\n{c2}\n{c1}\n"
    run = wizard("play", "--players", "3", "--rounds", "2", "--seat", "1", "--seed", str(seed),
                 "--opponents", "rule,random", stdin=script)
    assert run.returncode == 0, run.stderr
    assert "=== Round 1/2" in run.stdout and "=== Round 2/2" in run.stdout
    assert "End of round 2:" in run.stdout and "Game over. Final totals:" in run.stdout
    assert "rule (seat 0)" in run.stdout and "random (seat 2)" in run.stdout


def test_play_asks_the_dealer_for_trump_after_a_turned_wizard():
    seed = next(s for s in range(5000) if needs_trump(s, 3, [1], 0, 0))
    (card,) = hand_at(seed, 3, [1], 0, 0)
    run = wizard("play", "--players", "3", "--rounds", "1", "--seed", str(seed), "--opponents", "random",
                 stdin=f"x\nHearts\n0\n{card}\n")
    assert run.returncode == 0, run.stderr
    assert "A Wizard was turned: name trump (c clubs, d diamonds, h hearts, s spades):" in run.stdout
    assert "'x' is not a suit" in run.stdout
    assert "you (seat 0) names trump: h" in run.stdout


def test_play_enter_plays_the_only_legal_card_and_the_table_shows_the_round_so_far():
    sizes = [1, 2]
    seed = next(s for s in range(100) if not any(needs_trump(s, 3, sizes, r, 0) for r in (0, 1)))
    (first,) = hand_at(seed, 3, sizes, 0, 0)
    c1, c2 = hand_at(seed, 3, sizes, 1, 0)
    # Enter plays the one card of round 1; in round 2 whichever card is legal first, the other one follows
    run = wizard("play", "--players", "3", "--rounds", "2", "--seed", str(seed), "--opponents", "rule",
                 stdin=f"0\n\n1\n{c1}\n{c2}\n\n")
    assert run.returncode == 0, run.stderr
    assert f"Play a card ({first}; Enter plays it):" in run.stdout and f"you (seat 0) plays {first}" in run.stdout
    round_two = run.stdout.split("=== Round 2/2")[1]
    assert re.search(r"Bids so far: \d for 2 tricks", round_two)
    assert re.search(r"Trick 1: \S+ \S+ \S+  \(led by .+, won by .+\)", round_two)  # shown before the last card


def test_a_long_hand_gets_lines_of_its_own_within_80_columns():
    game = WizardGame(Rules.make(3, [20]), seed=0)
    text = render_text(game, names=["you (seat 0)", "rule (seat 1)", "rule (seat 2)"])
    assert max(map(len, text.splitlines())) <= 80
    assert sum(len(line.split()) - 1 for line in text.splitlines() if line.lstrip().startswith("hand:")) == 60


def test_play_shows_only_what_the_seat_may_see():
    sizes = [5]
    seed = next(s for s in range(100) if not needs_trump(s, 4, sizes, 0, 0))
    hands, turned = deal(seed, 0, 4, 5)
    own = set(hand_names(hands[0]))
    others = {name for seat in (1, 2, 3) for name in hand_names(hands[seat])} - {"Wiz", "Jes"}
    run = wizard("play", "--players", "4", "--rounds", "5,", "--seed", str(seed), "--opponents", "random",
                 "--bidding", "secret", stdin="0\n")  # input ends at the first card to play
    assert run.returncode == 1
    before_play = run.stdout.split(" plays ")[0]
    assert all(name in before_play for name in own - {"Wiz", "Jes"})
    assert not [name for name in others if name in before_play]
    assert before_play.count(" has bid") == 3  # secret bids stay secret while the round lasts
    assert " bids " not in before_play.replace("you (seat 0) bids 0", "")


def test_play_exits_cleanly_when_input_ends():
    run = wizard("play", "--players", "3", "--rounds", "2", "--seed", "1", "--opponents", "random", stdin="")
    assert run.returncode == 1
    assert "input ended before the game was over" in run.stderr
    assert "Traceback" not in run.stderr


def test_play_quit_abandons_the_game():
    run = wizard("play", "--players", "3", "--rounds", "2", "--seed", "1", stdin="quit\n")
    assert run.returncode == 1 and "game abandoned" in run.stderr and "Traceback" not in run.stderr


# -- errors --------------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "make_args, needle",
    [
        (lambda d: ["simulate", "--players", "7"], "argument --players: must be at least 3 and at most 6, not 7"),
        (lambda d: ["simulate", "--players", "x"], "argument --players: expected an integer, not 'x'"),
        (lambda d: ["simulate", "--games", "0"], "argument --games: must be at least 1"),
        (lambda d: ["simulate", "--rounds", "99"], "rounds=99"),
        (lambda d: ["simulate", "--rounds", "1,x"], "--rounds"),
        (lambda d: ["simulate", "--agents", "nobody"], "known agents are random, rule"),
        (lambda d: ["simulate", "--agents", "rule,random"], "2 agents for 4 seats"),
        (lambda d: ["simulate", "--bidding", "hidden", "--bid-total-rule"], "needs open bidding"),
        (lambda d: ["simulate", "--with-legal"], "--with-legal needs --replay"),
        (lambda d: ["simulate", "--seed", "-1"], "argument --seed: expected an integer from 0 to 2**63 - 1"),
        (lambda d: ["simulate", "--games", "1", "--replay", str(d / "missing" / "x.jsonl")], "No such file"),
        (lambda d: ["replay", str(d / "absent.jsonl")], "absent.jsonl"),
        (lambda d: ["replay", _write(d, "notes.txt", "hello\n")], "notes.txt, line 1: not valid JSON"),
        (lambda d: ["replay", _write(d, "other.jsonl", '{"format": "other/1"}\n')], "is not 'wizard-replay/1'"),
        (lambda d: ["replay", _write(d, "empty.jsonl", "")], "holds no games"),
        (lambda d: ["play", "--seat", "4"], "--seat"),
        (lambda d: ["play", "--opponents", "ghost"], "unknown agent 'ghost'"),
        (lambda d: ["dance"], "invalid choice"),
        (lambda d: [], "required"),
    ],
)
def test_errors_give_one_line_and_status_2(tmp_path, capsys, make_args, needle):
    assert main(make_args(tmp_path)) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("wizard: error: ") and needle in lines[0]
    assert out == ""


@pytest.mark.parametrize(
    "args",
    [["simulate", "--players", "7"], ["simulate", "--agents", "nobody"], ["replay", "/nonexistent/games.jsonl"], ["play", "--rounds", "0"]],
)
def test_errors_exit_2_without_traceback_from_the_command(args):
    run = wizard(*args)
    assert run.returncode == 2
    assert run.stderr.startswith("wizard: error: ") and len(run.stderr.splitlines()) == 1
    assert "Traceback" not in run.stderr and run.stdout == ""


def test_version_is_the_installed_distributions(capsys):
    from importlib import metadata

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"wizard {metadata.version('wizard-env')}\n"


def test_replay_game_out_of_range_names_the_count(replay_file):
    run = wizard("replay", str(replay_file), "--game", "4")
    assert run.returncode == 2
    assert run.stderr.strip() == f"wizard: error: {replay_file} holds 3 games; --game must be 1 to 3"


def test_console_script_and_main_agree(capsys):
    script = Path(sys.executable).with_name("wizard")
    if not script.exists():
        pytest.skip("console script not installed next to this interpreter")
    run = subprocess.run([str(script), "simulate", *SMALL, "--agents", "random"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert main(["simulate", *SMALL, "--agents", "random"]) == 0
    assert capsys.readouterr().out == run.stdout
    assert main(["--help"]) == 0


# -- agent registry ------------------------------------------------------------------------------


def test_make_agent_builds_the_named_agents_seeded():
    networks = {f"v{v}": f"wizard-v{v}.npz" for v in range(1, 14)} | {"": "wizard-v13.npz", "bid": "wizard-4p.npz"}
    names = {f"{family}-{n}" if n else family: file for family in ("net", "ppo") for n, file in networks.items()}
    assert set(AGENT_NAMES) == {"random", "rule", *names, "baseline", "pimc", "search", "oracle", "py"}
    assert {name: Path(make_agent(name, 0).source).name for name in names} == names
    assert isinstance(make_agent("rule", 0), RuleAgent)
    first, second = make_agent("random", 3), make_agent("random", 3)
    assert isinstance(first, RandomAgent)
    game = WizardGame(Rules.make(4, 5), 0)
    mask = game.legal_mask()
    assert [first.act(None, mask) for _ in range(20)] == [second.act(None, mask) for _ in range(20)]


def test_agent_specs_parse_name_and_argument_and_reject_unknown_names():
    assert parse_spec("rule") == ("rule", None)
    assert parse_spec("random:x") == ("random", "x")
    with pytest.raises(ValueError, match="unknown agent 'alphazero': known agents are random, rule, net"):
        make_agent("alphazero:model.zip", 0)
    with pytest.raises(ValueError, match="takes no argument"):
        make_agent("random:3", 0)

