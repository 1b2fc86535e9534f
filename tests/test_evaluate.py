"""``wizard eval``: duplicate deals, the statistics over deals, the files it writes and its errors."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from wizard_env.engine.actions import IllegalActionError
from wizard_env.agents.base import Agent
from wizard_env.agents.registry import make_agent
from helpers import oracle_score
from wizard_env.training.evaluation import eval_report
from wizard_env.training.evaluation.evaluate import (GameRecords, evaluate, mean_ci, play_games, ratings, seatings,
                                                     summarise)
from wizard_env.cli.main import main
from wizard_env.engine.game import BID_OFFSET, CARD_OFFSET, WizardGame
from wizard_env.engine.observation import observe
from wizard_env.engine.rules import Rules

Z = 1.959963984540054  # the 0.975 quantile of the standard normal distribution
TINY = ["--players", "4", "--rounds", "3", "--games", "2"]


class FixedBidAgent(Agent):
    """Bids ``bid`` whenever it is legal and plays its first legal card: deterministic and recognisable."""

    name = "fixed"

    def __init__(self, bid: int):
        self.bid = bid

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The fixed bid if legal, else the first legal action."""
        if action_mask[BID_OFFSET + self.bid] and not action_mask[CARD_OFFSET:].any():
            return BID_OFFSET + self.bid
        return int(np.flatnonzero(action_mask)[0])


def play_games_one_by_one(rules: Rules, tables: list[list[Agent]], seeds: list[int]) -> GameRecords:
    """The oracle for ``play_games``: each game in turn on the single-game engine, read from its replay log."""
    records = GameRecords.empty(len(seeds), rules.num_players, rules.num_rounds)
    for k, (seed, agents) in enumerate(zip(seeds, tables)):
        game = WizardGame(rules, seed, record=True)
        while not game.is_over:
            seat = game.current
            game.step(agents[seat].act(observe(game, seat), game.legal_mask()))
        records.seeds[k], records.totals[k] = seed, game.totals
        for rnd, log in enumerate(game.log):
            for bid in log["bids"]:
                records.bids[k, rnd, bid["seat"]] = bid["bid"]
            records.tricks[k, rnd] = log["tricks_won"]
            records.hand_sizes[k, rnd], records.dealers[k, rnd] = rules.hand_sizes[rnd], log["dealer"]
    return records


def assert_same_records(a: GameRecords, b: GameRecords) -> None:
    """Assert two sets of records are identical, field by field."""
    for name in ("seeds", "totals", "bids", "tricks", "hand_sizes", "dealers"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def entries_by_seat(records: GameRecords) -> np.ndarray:
    """[games, seats]: which FixedBidAgent (its bid) sat in each seat, read from the first round's bids."""
    return records.bids[:, 0, :]


# -- duplicate deals ---------------------------------------------------------------------------


def test_rotations_put_every_agent_in_every_seat_of_every_deal():
    rules = Rules.make(4, [3])
    result = evaluate(rules, ["a", "b", "c", "d"], deals=3, seed=1, agents=[FixedBidAgent(e) for e in range(4)])
    sat = entries_by_seat(result.records).reshape(3, 4, 4)  # [deal, game of the deal, seat]
    seeds = result.records.seeds.reshape(3, 4)
    assert (seeds == seeds[:, :1]).all() and len(set(seeds[:, 0])) == 3  # a deal is one seed, deals differ
    for deal in range(3):
        for entry in range(4):
            assert sorted(np.argwhere(sat[deal] == entry)[:, 1]) == [0, 1, 2, 3]  # every seat once
    assert [tuple(row) for row in sat[0]] == result.seatings


def test_permutations_play_every_order_of_the_agents_once_per_deal():
    rules = Rules.make(4, [3])
    result = evaluate(rules, ["a", "b", "c", "d"], deals=2, seed=0, permutations=True,
                      agents=[FixedBidAgent(e) for e in range(4)])
    sat = entries_by_seat(result.records).reshape(2, 24, 4)
    for deal in range(2):
        assert sorted(tuple(row) for row in sat[deal]) == sorted(itertools.permutations(range(4)))


def test_play_games_records_agree_with_the_scoring_rules():
    rules = Rules.make(3, [1, 4, 2])
    agents = [FixedBidAgent(1), FixedBidAgent(0), FixedBidAgent(2)]
    finished = []
    records = play_games(rules, [agents, agents[::-1]], [11, 12], progress=finished.append)
    assert finished == [2, 2, 2]  # progress by rounds: the first, second and third of both games
    assert records.seeds.tolist() == [11, 12]
    assert records.hand_sizes.tolist() == [[1, 4, 2]] * 2
    assert (records.tricks.sum(axis=2) == records.hand_sizes).all()
    assert ((records.dealers[:, 1:] - records.dealers[:, :-1]) % 3 == 1).all()  # the deal passes left
    for g in range(2):
        for seat in range(3):
            rounds = zip(records.bids[g, :, seat], records.tricks[g, :, seat])
            assert records.totals[g, seat] == sum(oracle_score(int(b), int(t)) for b, t in rounds)


@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_play_games_in_batches_matches_the_single_game_engine(batch_size):
    rules = Rules.make(4, [2, 5, 3], bidding="hidden")  # no one-card round: RuleAgent draws no random numbers
    rule = [make_agent("rule", s) for s in range(2)]
    fixed = [FixedBidAgent(1), FixedBidAgent(0)]
    tables = [[rule[0], fixed[0], rule[1], fixed[1]], [fixed[1], rule[0], fixed[0], rule[1]],
              [rule[1], rule[0], fixed[1], fixed[0]]] * 3
    seeds = [5, 5, 7, 9, 11, 5, 123456789, 8, 8]
    got = play_games(rules, tables, seeds, batch_size=batch_size)
    assert_same_records(got, play_games_one_by_one(rules, tables, seeds))


def test_play_games_rejects_a_table_of_the_wrong_size():
    with pytest.raises(ValueError, match="4 players need 4 agents, got 3"):
        play_games(Rules.make(4, [1]), [[FixedBidAgent(0)] * 3], [0])


class Spoilt(Agent):
    """Bids 0 (action 0) at every decision, so its first card is illegal; or answers with floats."""

    def __init__(self, floats: bool):
        self.name, self.floats = "spoilt", floats

    def act_batch(self, observations, action_masks):
        """Action 0 for every row, or the first legal action plus a half."""
        return np.argmax(action_masks, axis=1) + 0.5 if self.floats else np.zeros(len(action_masks), dtype=np.int64)


@pytest.mark.parametrize("floats, why", [(False, r"game \d+, seat \d+: action 0 \(bid 0\) is not legal"), (True, "returned float64 actions")])
def test_play_games_names_the_agent_of_a_malformed_or_illegal_action(floats, why):
    rule = make_agent("rule", 0)
    with pytest.raises(IllegalActionError, match=f"agent 'spoilt'.*{why}"):
        play_games(Rules.make(4, [2, 3]), [[rule, Spoilt(floats), rule, rule]] * 2, [0, 1])


# -- statistics --------------------------------------------------------------------------------


def test_mean_ci_matches_a_hand_computation():
    mean, half = mean_ci(np.array([1.0, 2.0, 3.0, 4.0]))
    assert mean == 2.5
    assert half == pytest.approx(Z * math.sqrt(5 / 3) / 2)  # sample variance (2.25+0.25+0.25+2.25)/3
    assert mean_ci(np.array([7.0])) == (7.0, None)


def tiny_records() -> tuple[GameRecords, list[tuple[int, ...]]]:
    """Two deals of one 1-card round, three players, each deal in three rotations, with chosen results.

    Entry scores per game (e0, e1, e2): deal 0: (30, 0, -10), (30, -10, 0), (0, 30, -10);
    deal 1: (20, 20, -10), (40, 0, -10), (0, 0, 30). Entry 0 always bids right, entry 1 never,
    entry 2 only when first to bid (games 0-2) and not when second (games 3-5).
    """
    orders = seatings(3)
    by_entry = [(30, 0, -10), (30, -10, 0), (0, 30, -10), (20, 20, -10), (40, 0, -10), (0, 0, 30)]
    records = GameRecords.empty(6, 3, 1)
    records.hand_sizes[:] = 1
    for g, scores in enumerate(by_entry):
        order = orders[g % 3]
        seat = {entry: s for s, entry in enumerate(order)}
        records.seeds[g] = g // 3
        records.totals[g] = [scores[order[s]] for s in range(3)]
        records.dealers[g, 0] = (seat[2] - (1 if g < 3 else 2)) % 3  # puts entry 2 first (then second) to bid
        records.tricks[g, 0, seat[0]] = 1
        records.bids[g, 0] = [{0: 1, 1: 1, 2: 0 if g < 3 else 1}[order[s]] for s in range(3)]
    return records, orders


def test_summary_rows_match_a_hand_computation_on_tiny_records():
    records, orders = tiny_records()
    deal_scores, specs, entries = summarise(Rules.make(3, [1]), ["a", "b", "a"], orders, records, reference="a")
    np.testing.assert_allclose(deal_scores, [[20, 20 / 3, -20 / 3], [20, 20 / 3, 10 / 3]])
    a, b = specs
    assert (a.name, a.entries, b.name, b.entries) == ("a", [0, 2], "b", [1])
    assert a.mean_score == pytest.approx((20 / 3 + 35 / 3) / 2)  # a's seats pooled: deal 0 20/3, deal 1 35/3
    assert b.mean_score == pytest.approx(20 / 3) and b.ci95 == pytest.approx(0)
    assert b.diff == pytest.approx(-2.5)  # paired by deal: 0 and -5
    assert b.diff_ci95 == pytest.approx(Z * math.sqrt(12.5) / math.sqrt(2))
    assert a.diff == 0 and a.diff_ci95 == 0
    # wins: e0 in games 0, 1, 4 and half of game 3; e1 in game 2 and half of game 3; e2 in game 5
    assert [e.win_rate for e in entries] == pytest.approx([3.5 / 6, 1.5 / 6, 1 / 6])
    assert (a.win_rate, b.win_rate) == pytest.approx((4.5 / 12, 1.5 / 6))
    assert [e.bid_accuracy for e in entries] == [1.0, 0.0, 0.5]
    assert entries[2].by_position == [(0, 1.0, 3), (1, 0.0, 3)]
    assert entries[2].by_hand_size == [(1, 0.5, 6)]
    assert a.by_hand_size == [(1, 0.75, 12)]
    assert entries[1].diff == pytest.approx(np.mean([20 / 3 - 20, 20 / 3 - 20]))  # entry rows: to entry 0


def test_ratings_rank_a_constant_winner_first_and_tied_players_equal():
    scores = np.array([[3, 1, 1], [5, 0, 0], [2, 1, 1], [9, 4, 4]])
    best, second, third = ratings(scores)
    assert best.mu > second.mu
    assert second.mu == pytest.approx(third.mu) and second.sigma == pytest.approx(third.sigma)


def test_ratings_do_not_depend_on_the_order_of_the_games():
    scores = np.random.default_rng(5).integers(-80, 200, size=(120, 4))
    forward = ratings(scores, seed=1)
    assert ratings(scores[::-1], seed=1) == forward  # reversed: exactly the same ratings
    assert ratings(scores[np.random.default_rng(2).permutation(120)], seed=1) == forward
    assert ratings(scores, seed=1) == forward  # deterministic for a seed
    other = ratings(scores, seed=2)
    assert other != forward  # another seed: other shuffled orders, so slightly other means
    assert all(o.mu == pytest.approx(f.mu, abs=3 * f.mu_spread) for o, f in zip(other, forward))
    assert all(r.mu_spread > 0 for r in forward)  # one order alone moves openskill's ratings


def test_ratings_average_the_orders_they_report():
    scores = np.array([[3, 1, 2], [0, 5, 1], [2, 2, 4], [7, 0, 0]])
    single = ratings(scores, seed=0, orders=1)
    assert [r.mu_spread for r in single] == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="orders must be at least 1"):
        ratings(scores, orders=0)
    with pytest.raises(ValueError, match="at least 2 players"):
        ratings(scores[:, :1])


def test_eval_ratings_do_not_depend_on_the_order_of_the_games():
    rules = Rules.make(4, 2)
    result = evaluate(rules, ["rule", "random", "random", "random"], deals=4, seed=0)
    orders = seatings(4)
    assert len(set(result.records.seeds)) > 1  # several deals, so reversing changes the order
    reversed_records = GameRecords(*(getattr(result.records, f)[::-1] for f in
                                     ("seeds", "totals", "bids", "tricks", "hand_sizes", "dealers")))
    # every deal's games reversed too: the seatings of a deal come in reverse
    _, specs, entries = summarise(rules, result.agent_specs, orders[::-1], reversed_records, "rule", seed=0)
    assert [s.rating for s in specs] == [s.rating for s in result.specs]
    assert [e.rating for e in entries] == [e.rating for e in result.entries]


def test_the_same_agent_against_itself_differs_by_exactly_zero():
    rules = Rules.make(4, [2, 3])
    result = evaluate(rules, ["x"] * 4, deals=3, seed=2, agents=[FixedBidAgent(1) for _ in range(4)])
    assert [(e.diff, e.diff_ci95) for e in result.entries] == [(0.0, 0.0)] * 4
    rule = evaluate(Rules.make(4, 2), ["rule"] * 4, deals=2, seed=0)
    assert [(s.name, s.entries, s.diff, s.diff_ci95) for s in rule.specs] == [("rule", [0, 1, 2, 3], 0.0, 0.0)]
    assert rule.specs[0].rating is None  # one agent: nobody to be ranked against


def test_evaluate_checks_its_arguments():
    rules = Rules.make(3, [1])
    with pytest.raises(ValueError, match="3 players need 3 agents"):
        evaluate(rules, ["rule", "random"], deals=1, seed=0)
    with pytest.raises(ValueError, match="positive integer"):
        evaluate(rules, ["rule"] * 3, deals=0, seed=0)
    with pytest.raises(ValueError, match="reference agent 'random' is not one of the agents"):
        evaluate(rules, ["rule"] * 3, deals=1, seed=0, reference="random")


# -- the command -------------------------------------------------------------------------------


def test_eval_writes_json_and_png_and_prints_the_table(tmp_path, capsys):
    out = tmp_path / "ev"
    assert main(["eval", *TINY, "--agents", "rule,random,rule,random", "--seed", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["eval.json", "eval.png"]  # no temporary files left
    assert (out / "eval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((out / "eval.json").read_text())
    expected = evaluate(Rules.make(4, 3), ["rule", "random", "rule", "random"], deals=2, seed=3)
    png = data.pop("png")
    assert png == {"file": "eval.png", "sha256": hashlib.sha256((out / "eval.png").read_bytes()).hexdigest()}
    assert data == eval_report.to_json(expected)  # the file holds exactly the result, and reads back whole
    assert (data["format"], data["deals"], data["games"], data["reference"]) == ("wizard-eval/1", 2, 8, "rule")
    rule, rand = data["specs"]
    assert rule["entries"] == [0, 2] and rand["entries"] == [1, 3]
    pooled = np.mean([data["entries"][0]["mean_score"], data["entries"][2]["mean_score"]])
    assert rule["mean_score"] == pytest.approx(pooled)  # the row of a spec pools its seats
    assert "| rule | 2 |" in printed and "| random | 2 |" in printed
    assert "its seats pooled" in printed
    assert f"wrote {out / 'eval.json'}, {out / 'eval.png'}" in printed


def test_eval_is_deterministic_in_its_seed(tmp_path):
    texts = []
    for name, seed in (("one", "4"), ("two", "4"), ("three", "5")):
        argv = ["eval", *TINY, "--agents", "random,rule,random,random", "--seed", seed, "--out", str(tmp_path / name)]
        assert main(argv) == 0
        texts.append((tmp_path / name / "eval.json").read_text())
    assert texts[0] == texts[1]
    assert json.loads(texts[0])["deal_scores"] != json.loads(texts[2])["deal_scores"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--agents", "rule,bogus,rule,rule"], "unknown agent 'bogus'"),
        (["--agents", "rule,rule"], "--agents names 2 agents for 4 seats"),
        (["--agents", "rule,rule,rule,rule", "--games", "0"], "argument --games: must be at least 1 and at most 1000000000000, not 0"),
        (["--agents", "rule,rule,rule,rule", "--reference", "random"], "--reference 'random' is not one of --agents"),
        (["--agents", "rule,rule,rule,rule", "--players", "7"], "argument --players: must be at least 3 and at most 6, not 7"),
    ],
)
def test_eval_reports_bad_options_in_one_line(args, message, tmp_path, capsys):
    assert main(["eval", "--rounds", "1", "--out", str(tmp_path / "ev"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "ev").exists()


def test_eval_command_runs_without_a_progress_bar_when_not_on_a_terminal(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "wizard_env", "eval", "--players", "3", "--rounds", "1", "--games", "1",
         "--agents", "random,rule,random", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0 and run.stderr == ""
    assert run.stdout.splitlines()[0].endswith("1 deal x 3 rotations = 3 games, seed 0")


def test_eval_in_a_log_prints_progress_lines_and_quiet_prints_none(tmp_path, capsys, monkeypatch):
    from wizard_env.training import progress

    monkeypatch.setattr(progress, "LINE_EVERY", 0.0)  # a line at every update, as a long run gets one every 30 s
    args = ["eval", "--players", "3", "--rounds", "2", "--games", "2", "--agents", "random,rule,random"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("eval: ") and "of 12 rounds" in line for line in lines)
    assert lines[-1].startswith("eval: 100% (12 of 12 rounds")
    assert main([*args, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
