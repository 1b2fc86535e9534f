"""Replay files: the exact line format, atomic writing, validation on read, and the re-play round trip."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

import wizard_env.replay as replay_module
from agents.random_agent import RandomAgent
from wizard_env.cards import DECK_COUNTS, SUITS, WIZARD, card_name, parse_card
from wizard_env.game import TRUMP_OFFSET, WizardGame, deal
from wizard_env.replay import (
    FORMAT,
    ReplayError,
    ReplayWriter,
    format_game,
    game_record,
    read_replays,
    replay_actions,
    replay_game,
    write_replays,
)
from wizard_env.rules import Rules, winners
from wizard_env.simulate import play_game

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
