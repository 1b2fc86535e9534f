"""Replay files: the exact line format, atomic writing, validation on read, and the re-play round trip."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import wizard_env.engine.replay as replay_module
from wizard_env.agents.random_agent import RandomAgent
from wizard_env.engine.cards import DECK_COUNTS, SUITS, WIZARD, card_name, parse_card
from wizard_env.engine.game import TRUMP_OFFSET, WizardGame, deal
from wizard_env.engine.replay import (
    FORMAT,
    ReplayError,
    ReplayWriter,
    game_record,
    read_replays,
    replay_actions,
    replay_game,
    write_replays,
)
from wizard_env.engine.rules import Rules, winners
from wizard_env.engine.simulate import play_game
from wizard_env.render.replay_text import format_game

TOP_KEYS = {"format", "num_players", "seed", "rules", "seats", "rounds", "final_totals"}
RULES_KEYS = {"hand_sizes", "bidding", "bid_total_rule", "foresight"}
ROUND_KEYS = {"round", "dealer", "hands", "trump_card", "trump", "bids", "tricks", "tricks_won", "scores", "totals"}
TRICK_KEYS = {"leader", "plays", "winner"}


class Recorder:
    """Wraps an agent and keeps every action it takes, in order, in a shared list."""

    def __init__(self, agent, taken: list[int]):
        self.agent, self.taken = agent, taken

    def __call__(self, observation, mask):
        action = self.agent(observation, mask)
        self.taken.append(action)
        return action


def recorded_game(rules: Rules, seed: int, agent_seed: int = 0):
    """Play a recorded game between seeded random agents; return (result, actions in order)."""
    taken: list[int] = []
    agents = [Recorder(RandomAgent(seed=[agent_seed, seat]), taken) for seat in range(rules.num_players)]
    return play_game(rules, agents, seed, record=True), taken


def seats_for(n: int) -> list[str]:
    return ["random"] * n


def find_seed(rules: Rules, wanted) -> int:
    """The first game seed whose deal satisfies ``wanted(round_index, turned_card, dealer)``."""
    for seed in range(5000):
        game = WizardGame(rules, seed)
        for r, size in enumerate(rules.hand_sizes):
            _, turned = deal(seed, r, rules.num_players, size)
            if wanted(r, turned, (game.first_dealer + r) % rules.num_players):
                return seed
    raise AssertionError("no seed found")


# -- the line format -----------------------------------------------------------------------------


def test_written_line_has_exactly_the_format_keys_and_types(tmp_path):
    rules = Rules.make(4, "standard")
    result, _ = recorded_game(rules, seed=7)
    path = tmp_path / "games.jsonl"
    assert write_replays(path, [game_record(result.game, ["rule", "random", "rule", "rule"])]) == 1
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert set(rec) == TOP_KEYS
    assert rec["format"] == FORMAT == "wizard-replay/1"
    assert rec["num_players"] == 4 and rec["seed"] == 7
    assert set(rec["rules"]) == RULES_KEYS
    assert rec["rules"] == {"hand_sizes": list(range(1, 16)), "bidding": "open", "bid_total_rule": False, "foresight": False}
    assert rec["seats"] == ["rule", "random", "rule", "rule"]
    assert rec["final_totals"] == result.totals.tolist()
    assert len(rec["rounds"]) == 15
    for index, rnd in enumerate(rec["rounds"]):
        assert set(rnd) == ROUND_KEYS
        assert rnd["round"] == index + 1
        assert type(rnd["dealer"]) is int and 0 <= rnd["dealer"] < 4
        assert [len(h) for h in rnd["hands"]] == [index + 1] * 4
        for hand in rnd["hands"]:
            for name in hand:
                assert card_name(parse_card(name)) == name
        assert rnd["trump_card"] is None or card_name(parse_card(rnd["trump_card"])) == rnd["trump_card"]
        assert rnd["trump"] is None or rnd["trump"] in SUITS
        for bid in rnd["bids"]:
            assert set(bid) == {"seat", "bid"}
            assert type(bid["seat"]) is int and type(bid["bid"]) is int
        assert len(rnd["tricks"]) == index + 1
        for trick in rnd["tricks"]:
            assert set(trick) == TRICK_KEYS
            assert type(trick["leader"]) is int and type(trick["winner"]) is int
            for play in trick["plays"]:
                assert set(play) == {"seat", "card"}
                assert isinstance(play["card"], str)
        for key in ("tricks_won", "scores", "totals"):
            assert len(rnd[key]) == 4 and all(type(v) is int for v in rnd[key])
    assert rec["rounds"][-1]["totals"] == rec["final_totals"]


def test_legal_is_written_only_when_asked_and_holds_the_choice_made():
    result, _ = recorded_game(Rules.make(3, 4, bid_total_rule=True), seed=3)
    plain = game_record(result.game, seats_for(3))
    full = game_record(result.game, seats_for(3), with_legal=True)
    assert "legal" not in json.dumps(plain)
    for rnd in full["rounds"]:
        for bid in rnd["bids"]:
            assert bid["bid"] in bid["legal"]
        for trick in rnd["tricks"]:
            for play in trick["plays"]:
                assert play["card"] in play["legal"]
    restricted = 0
    for size, rnd in enumerate(full["rounds"], start=1):  # the dealer bids last, under the plus/minus-1 rule
        *others, last = rnd["bids"]
        forbidden = size - sum(b["bid"] for b in others)
        assert forbidden not in last["legal"] and len(last["legal"]) == size + (0 if 0 <= forbidden <= size else 1)
        restricted += 0 <= forbidden <= size
    assert restricted
    assert "legal" in result.game.log[0]["bids"][0], "stripping must not change the game's own log"


def test_game_record_refuses_unrecorded_or_unfinished_games():
    rules = Rules.make(3, 2)
    with pytest.raises(ValueError, match="record=True"):
        game_record(WizardGame(rules, 1), seats_for(3))
    with pytest.raises(ValueError, match="finished"):
        game_record(WizardGame(rules, 1, record=True), seats_for(3))
    result, _ = recorded_game(rules, 1)
    with pytest.raises(ValueError, match="3 seats"):
        game_record(result.game, ["rule"])


# -- round trip ----------------------------------------------------------------------------------

CONFIGS = [
    (3, "standard", "open", False, False, 0),
    (4, "standard", "hidden", False, False, 11),
    (4, "amigo", "open", True, False, 5),
    (5, "standard", "secret", False, True, 2),
    (6, "standard", "open", True, True, 9),
    (3, [1, 1, 20], "secret", False, True, 4),
]


@pytest.mark.parametrize("players, rounds, bidding, total_rule, foresight, seed", CONFIGS)
def test_replay_round_trip_reproduces_the_game(tmp_path, players, rounds, bidding, total_rule, foresight, seed):
    rules = Rules.make(players, rounds, bidding, total_rule, foresight)
    result, taken = recorded_game(rules, seed, agent_seed=seed)
    record = game_record(result.game, seats_for(players))
    path = tmp_path / "one.jsonl"
    write_replays(path, [record])
    (read_back,) = read_replays(path)
    assert read_back == record
    assert replay_actions(read_back) == taken
    again = replay_game(read_back)
    assert again.is_over
    assert again.totals.tolist() == result.totals.tolist() == read_back["final_totals"]
    for original, replayed, recorded in zip(result.game.log, again.log, read_back["rounds"]):
        assert replayed["hands"] == original["hands"] == recorded["hands"]
        assert replayed["trump"] == original["trump"] == recorded["trump"]
        assert [t["winner"] for t in replayed["tricks"]] == [t["winner"] for t in recorded["tricks"]]
        assert replayed["totals"] == recorded["totals"]


def test_round_trip_replays_the_dealers_trump_choice_after_a_turned_wizard():
    rules = Rules.make(4, "standard")
    seed = find_seed(rules, lambda r, turned, dealer: turned == WIZARD)
    result, _ = recorded_game(rules, seed)
    record = game_record(result.game, seats_for(4))
    wizard_rounds = [rnd for rnd in record["rounds"] if rnd["trump_card"] == "Wiz"]
    assert wizard_rounds
    for rnd in wizard_rounds:
        assert rnd["trump"] in SUITS
    actions = replay_actions(record)
    trump_actions = [a - TRUMP_OFFSET for a in actions if a >= TRUMP_OFFSET]
    assert [SUITS[s] for s in trump_actions] == [rnd["trump"] for rnd in wizard_rounds]
    again = replay_game(record)
    assert [r["trump"] for r in again.log] == [r["trump"] for r in record["rounds"]]
    assert again.totals.tolist() == record["final_totals"]


def test_replayed_trump_choice_is_the_recorded_one_not_a_default():
    rules = Rules.make(4, "standard")
    seed = find_seed(rules, lambda r, turned, dealer: turned == WIZARD)
    result, _ = recorded_game(rules, seed)
    record = game_record(result.game, seats_for(4))
    rnd = next(r for r in record["rounds"] if r["trump_card"] == "Wiz")
    rnd["trump"] = SUITS[(SUITS.index(rnd["trump"]) + 1) % 4]  # a different suit than the one chosen
    actions = replay_actions(record)
    assert TRUMP_OFFSET + SUITS.index(rnd["trump"]) in actions


def test_last_round_of_a_standard_game_deals_the_whole_deck_without_trump():
    for players in (3, 4, 5, 6):
        result, _ = recorded_game(Rules.make(players, "standard"), seed=players)
        record = game_record(result.game, seats_for(players))
        last = record["rounds"][-1]
        assert last["trump_card"] is None and last["trump"] is None
        dealt = Counter(name for hand in last["hands"] for name in hand)
        assert dealt == Counter({card_name(c): int(k) for c, k in enumerate(DECK_COUNTS)})
        assert replay_game(record).totals.tolist() == record["final_totals"]


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_cards_of_every_round_conserve_the_deck(players):
    rules = Rules.make(players, "standard", foresight=True)
    result, _ = recorded_game(rules, seed=100 + players)
    record = game_record(result.game, seats_for(players))
    deck = {card_name(c): int(k) for c, k in enumerate(DECK_COUNTS)}
    for size, rnd in zip(rules.hand_sizes, record["rounds"]):
        seen = Counter(name for hand in rnd["hands"] for name in hand)
        if rnd["trump_card"] is not None:
            seen[rnd["trump_card"]] += 1
        assert sum(seen.values()) == players * size + (rnd["trump_card"] is not None)
        assert all(count <= deck[name] for name, count in seen.items())
        played = {seat: Counter() for seat in range(players)}
        for trick in rnd["tricks"]:
            assert [p["seat"] for p in trick["plays"]] == [(trick["leader"] + i) % players for i in range(players)]
            for play in trick["plays"]:
                played[play["seat"]][play["card"]] += 1
        assert all(played[s] == Counter(rnd["hands"][s]) for s in range(players))
        assert Counter(t["winner"] for t in rnd["tricks"]) == Counter(
            {s: k for s, k in enumerate(rnd["tricks_won"]) if k}
        )
        assert sum(rnd["tricks_won"]) == size


def test_replay_game_rejects_a_record_that_does_not_replay():
    result, _ = recorded_game(Rules.make(4, 5), seed=21)
    record = game_record(result.game, seats_for(4))
    bad_card = json.loads(json.dumps(record))
    bad_card["rounds"][4]["tricks"][0]["plays"][0]["card"] = "Zz"
    with pytest.raises(ReplayError, match="round 5"):
        replay_game(bad_card)
    other_hand = json.loads(json.dumps(record))
    other_hand["seed"] += 1
    with pytest.raises(ReplayError, match="hands"):
        replay_game(other_hand)
    wrong_score = json.loads(json.dumps(record))
    wrong_score["rounds"][2]["scores"][0] += 10
    with pytest.raises(ReplayError, match="scores"):
        replay_game(wrong_score)
    wrong_total = json.loads(json.dumps(record))
    wrong_total["final_totals"][1] -= 10
    with pytest.raises(ReplayError, match="final totals"):
        replay_game(wrong_total)


# -- atomic writing ------------------------------------------------------------------------------


def _records(count: int, fail_after: int | None = None):
    rules = Rules.make(3, 2)
    for seed in range(count):
        if seed == fail_after:
            raise RuntimeError("simulated crash while simulating")
        yield game_record(recorded_game(rules, seed)[0].game, seats_for(3))


def test_a_crash_mid_write_leaves_the_old_file_intact_and_no_temp_file(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("old content\n")
    with pytest.raises(RuntimeError, match="simulated crash"):
        write_replays(path, _records(5, fail_after=3))
    assert path.read_text() == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["games.jsonl"]


def test_a_failed_rename_leaves_no_partial_target(tmp_path, monkeypatch):
    path = tmp_path / "new.jsonl"

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(replay_module.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_replays(path, _records(2))
    assert list(tmp_path.iterdir()) == []


def test_writer_fills_a_temp_file_and_replaces_the_target_only_at_close(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("old content\n")
    records = list(_records(3))
    with ReplayWriter(path) as writer:
        for record in records:
            writer.write(record)
        assert path.read_text() == "old content\n"
        assert writer.temp_path.parent == tmp_path and writer.temp_path.exists()
    assert read_replays(path) == records
    assert [p.name for p in tmp_path.iterdir()] == ["games.jsonl"]


# -- reading errors ------------------------------------------------------------------------------


@pytest.fixture
def good_file(tmp_path):
    path = tmp_path / "good.jsonl"
    write_replays(path, _records(3))
    return path


def test_read_error_for_a_truncated_last_line_names_file_and_line(good_file):
    data = good_file.read_bytes()
    good_file.write_bytes(data[: len(data) - 50])
    with pytest.raises(ReplayError) as info:
        read_replays(good_file)
    assert isinstance(info.value, ValueError)
    assert str(good_file) in str(info.value) and "line 3" in str(info.value)
    assert "JSON" in str(info.value)


def test_read_error_for_a_file_that_is_not_json(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("these are not the games\nyou are looking for\n")
    with pytest.raises(ReplayError, match=r"notes\.txt, line 1: not valid JSON"):
        read_replays(path)


def test_read_error_for_a_binary_file(tmp_path):
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\xff\xfe\x00\x01garbage\n")
    with pytest.raises(ReplayError, match="line 1: not UTF-8"):
        read_replays(path)


def test_read_error_for_a_wrong_format_tag(good_file):
    lines = good_file.read_text().splitlines()
    foreign = json.loads(lines[1])
    foreign["format"] = "chess-pgn/2"
    good_file.write_text("\n".join([lines[0], json.dumps(foreign), lines[2]]) + "\n")
    with pytest.raises(ReplayError, match=r"line 2: format 'chess-pgn/2' is not 'wizard-replay/1'"):
        read_replays(good_file)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.pop("format"), "no 'format' key"),
        (lambda r: r.pop("rounds"), "missing key 'rounds'"),
        (lambda r: r.update(seats=["random"]), "'seats' must be 3"),
        (lambda r: r["rounds"][0].pop("tricks"), "round 1: missing key 'tricks'"),
        (lambda r: r["rounds"][1]["tricks"][0].update(winner="x"), "trick 1: 'winner' must be an integer"),
        (lambda r: r["rules"].update(bidding="shouted"), "rules: unknown bidding"),
        (lambda r: r["rounds"].pop(), "1 rounds recorded, but the rules play 2"),
    ],
)
def test_read_error_for_a_record_missing_or_mistyping_a_key(tmp_path, change, message):
    record = next(_records(1))
    change(record)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(ReplayError, match=message):
        read_replays(path)


def test_read_error_for_a_json_value_that_is_not_an_object(tmp_path):
    path = tmp_path / "list.jsonl"
    path.write_text("[1, 2, 3]\n")
    with pytest.raises(ReplayError, match="line 1: not a JSON object"):
        read_replays(path)


# -- text view -----------------------------------------------------------------------------------


def test_format_game_shows_every_round_trick_and_the_winner():
    rules = Rules.make(3, 3)
    result, _ = recorded_game(rules, seed=8)
    record = game_record(result.game, ["rule", "random", "random"])
    text = format_game(record)
    for rnd in record["rounds"]:
        assert f"Round {rnd['round']}/3" in text
        for trick in rnd["tricks"]:
            plays = " ".join(f"{p['seat']}:{p['card']}" for p in trick["plays"])
            assert f"seat {trick['leader']} leads  {plays}  -> seat {trick['winner']} wins" in text
    totals = record["final_totals"]
    assert "Final totals: " + ", ".join(f"seat {s} ({a}) {t}" for s, (a, t) in enumerate(zip(record["seats"], totals))) in text
    best = winners(totals)
    assert f"seat {best[0]} ({record['seats'][best[0]]})" in text.splitlines()[-1]
    assert np.array(totals).max() == int(text.splitlines()[-1].rsplit(" ", 1)[1])


# -- wizard replay shows only what could have happened, bounded -------------------------------------


def _not_held(record: dict) -> None:
    play = record["rounds"][1]["tricks"][0]["plays"][0]
    hand = record["rounds"][1]["hands"][play["seat"]]
    play["card"] = next(c for c in ("Ah", "Kh", "Qh") if c not in hand)


IMPOSSIBLE = {
    "dealer -1": (lambda r: r["rounds"][0].update(dealer=-1), r"round 1: dealer -1 is not a seat \(0 to 2\)"),
    "dealer 99": (lambda r: r["rounds"][0].update(dealer=99), r"round 1: dealer 99 is not a seat \(0 to 2\)"),
    "bid 75": (lambda r: r["rounds"][1]["bids"][0].update(bid=75), "round 2: seat .* bids 75, but bids go from 0 to 2"),
    "bid by seat 7": (lambda r: r["rounds"][1]["bids"][0].update(seat=7), "round 2: bid by seat 7 is not a seat"),
    "card not held": (_not_held, "round 2, trick 1: seat .* plays .*, which it does not hold"),
    "not a card": (lambda r: r["rounds"][0]["hands"][0].__setitem__(0, "Zz"), "round 1: 'Zz' is not a card name"),
    "card dealt twice": (lambda r: r["rounds"][1].update(trump_card="Jes", hands=[["Jes", "Jes"]] * 3),
                         "round 2: Jes is dealt 7 times, but the deck holds 4"),
    "hand too long": (lambda r: r["rounds"][0]["hands"][0].append("2c"), "round 1: seat 0 holds 2 cards, but the round deals 1"),
    "winner 5": (lambda r: r["rounds"][0]["tricks"][0].update(winner=5), "round 1, trick 1: winner 5 is not a seat"),
    "trump x": (lambda r: r["rounds"][0].update(trump="x"), "round 1: trump 'x' is not a suit"),
    "round 7": (lambda r: r["rounds"][1].update(round=7), "round 2: 'round' is 7, expected 2"),
}


@pytest.mark.parametrize("case", IMPOSSIBLE)
def test_replay_without_check_refuses_impossible_content_in_one_line(case, tmp_path, capsys):
    from wizard_env.cli.main import main

    change, message = IMPOSSIBLE[case]
    record = next(_records(1))
    change(record)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["replay", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"wizard: error: {path}, line 1: ")
    assert re.search(message, err), err


def test_replay_cuts_long_agent_names_so_output_stays_small(tmp_path, capsys):
    from wizard_env.cli.main import main

    record = next(_records(1))
    record["seats"][1] = "ppo:" + "x" * 100_000
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) < 200 and re.search(r"seat 1 \(ppo:x+\.\.\.x+\)", out)


def test_replay_refuses_a_line_too_long_to_be_a_game(tmp_path, capsys):
    from wizard_env.cli.main import main

    record = next(_records(1))
    record["seats"][1] = "x" * (5 << 20)
    path = tmp_path / "huge.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["replay", str(path)]) == 2
    assert capsys.readouterr().err == f"wizard: error: {path}, line 1: longer than 4 MiB, so not a game record (a game's line is under 100 kB)\n"


# -- wizard replay reads only what it needs, shows progress on a terminal, never blocks -----------------


def test_replay_of_one_game_reads_no_further_lines(good_file, capsys):
    from wizard_env.cli.main import main

    with open(good_file, "a") as f:
        f.write("not json at all\n")
    assert main(["replay", str(good_file), "--game", "2"]) == 0
    assert capsys.readouterr().out.startswith(f"{good_file}: game 2\n")
    assert main(["replay", str(good_file), "--game", "2", "--check"]) == 2  # --check reads every line
    assert f"{good_file}, line 4: not valid JSON" in capsys.readouterr().err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_replay_check_shows_progress_on_a_terminal_only(good_file, capsys, monkeypatch):
    from wizard_env.cli.main import main

    assert main(["replay", str(good_file), "--check"]) == 0
    assert capsys.readouterr().err == ""
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["replay", str(good_file), "--check"]) == 0
    assert "reading:" in terminal.getvalue() and "B/s" in terminal.getvalue()
    assert "all 3 games re-play identically" in capsys.readouterr().out


def test_replay_of_a_fifo_nobody_writes_to_does_not_block(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    run = subprocess.run([sys.executable, "-m", "wizard_env", "replay", str(fifo)], capture_output=True, text=True,
                         timeout=120)  # a guard against the hang this test is about, not a timing
    assert run.returncode == 2
    assert run.stderr == f"wizard: error: {fifo}: holds no games (a pipe nobody wrote to)\n"


def test_replay_refuses_a_device(tmp_path, capsys):
    from wizard_env.cli.main import main

    zero = tmp_path / "zero"
    try:
        os.mknod(zero, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # a /dev/zero of our own: endless, no newline
        os.close(os.open(zero, os.O_RDONLY))
    except OSError:
        pytest.skip("device nodes cannot be made or opened here (needs root and a dev mount)")
    assert main(["replay", str(zero)]) == 2
    assert capsys.readouterr().err == f"wizard: error: {zero}: is a character device, not a replay file\n"
