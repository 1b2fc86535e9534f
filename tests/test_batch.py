"""The batched engine: the same seeds and actions give the same games as the AEC env, and a batch
validates like a single game."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import wizard_env
from helpers import oracle_legal, oracle_score, oracle_winner
from wizard_env.engine import kernels
from wizard_env.engine.actions import BID_OFFSET, TRUMP_OFFSET
from wizard_env.engine.batch import WizardBatch, deal_hands, shuffle_game
from wizard_env.engine.cards import NO_SUIT, SUITS, WIZARD, card_name, hand_names
from wizard_env.engine.game import CARD_OFFSET, NUM_ACTIONS, IllegalActionError, Phase, WizardGame
from wizard_env.engine.replay import game_record, log_record
from wizard_env.engine.rules import Rules

CONFIGS = [
    dict(num_players=3, rounds=4),
    dict(num_players=4, rounds="amigo", bidding="hidden"),
    dict(num_players=3, rounds=5, bid_total_rule=True),
    dict(num_players=5, rounds=[1, 3, 1], foresight=True),
    dict(num_players=6, rounds=3, bidding="secret"),
    dict(num_players=4, rounds="standard"),
]
SEEDS = [0, 7, 123456789, 2**40 + 3, 99]


def rules_of(config: dict) -> Rules:
    kwargs = dict(config)
    return Rules.make(kwargs.pop("num_players"), **kwargs)


def seats(n: int) -> list[str]:
    return [f"p{s}" for s in range(n)]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_batch_plays_exactly_the_games_of_the_aec_env(config: dict):
    """Same seeds and actions: every observation and mask equal the AEC env's, and the replays are identical."""
    rules = rules_of(config)
    batch = WizardBatch(rules, seeds=SEEDS, autoreset=False, record=True)
    envs = [wizard_env.env(**config) for _ in SEEDS]
    recorded = [WizardGame(rules, seed, record=True) for seed in SEEDS]
    for env, seed in zip(envs, SEEDS):
        env.reset(seed=seed)
    rng = np.random.default_rng(0)
    steps = 0
    while True:
        live = np.flatnonzero(batch.phase != Phase.OVER)
        if live.size == 0:
            break
        observations, masks = batch.observe(live), batch.legal_masks(live)
        actions = []
        for row, i in enumerate(live):
            observation, _, terminated, _, _ = envs[i].last()
            assert not terminated
            np.testing.assert_array_equal(observations[row], observation["observation"])
            np.testing.assert_array_equal(masks[row], observation["action_mask"])
            seat = envs[i].possible_agents.index(envs[i].agent_selection)
            assert seat == batch.current[i]
            for other in range(rules.num_players):  # every seat's view, not only the acting one
                np.testing.assert_array_equal(
                    batch.observe(np.array([i]), np.array([other]))[0],
                    envs[i].observe(envs[i].possible_agents[other])["observation"],
                )
            actions.append(int(rng.choice(np.flatnonzero(masks[row]))))
        batch.step(np.array(actions), live)
        for i, action in zip(live, actions):
            envs[i].step(action)
            recorded[i].step(action)
        steps += 1
    assert steps > rules.num_rounds
    for i, seed in enumerate(SEEDS):
        assert all(envs[i].terminations.values())
        assert log_record(rules, seed, batch.logs[i], seats(rules.num_players), True) == game_record(
            recorded[i], seats(rules.num_players), True
        )
        assert batch.totals[i].tolist() == recorded[i].totals.tolist()
        assert batch.game_seed[i] == seed


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_compiled_batch_agrees_with_the_referee_when_random_subsets_of_games_step(config: dict):
    """Every mask, trick winner and round score of the compiled kernels, against the oracles of tests/helpers."""
    rules, n = rules_of(config), config["num_players"]
    batch = WizardBatch(rules, 12, seed=5, autoreset=False)
    rng = np.random.default_rng(6)
    checked_tricks = checked_rounds = 0
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        games = np.sort(rng.choice(live, size=int(rng.integers(1, live.size + 1)), replace=False))
        masks = batch.legal_masks(games)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        before = {name: getattr(batch, name)[games].copy() for name in
                  ("phase", "current", "dealer", "leader", "trump", "trick", "trick_len", "bids", "tricks_won", "round_index", "hands")}
        batch.step(actions, games)
        for i, g in enumerate(games):
            phase, seat, legal = before["phase"][i], before["current"][i], set(np.flatnonzero(masks[i]).tolist())
            if phase == Phase.TRUMP:
                assert legal == {TRUMP_OFFSET + s for s in range(4)}
                continue
            size = rules.hand_sizes[before["round_index"][i]]
            if phase == Phase.BID:
                allowed = set(range(size + 1))
                if rules.bid_total_rule and seat == before["dealer"][i]:
                    allowed.discard(size - int(before["bids"][i][before["bids"][i] >= 0].sum()))
                assert legal == {BID_OFFSET + b for b in allowed}
                continue
            trick = [card_name(c) for c in before["trick"][i][: before["trick_len"][i]]]
            assert {card_name(a - CARD_OFFSET) for a in legal} == oracle_legal(hand_names(before["hands"][i][seat]), trick)
            if len(trick) < n - 1:
                assert batch.trick_won_by[g] == -1
                continue
            trump = None if before["trump"][i] == NO_SUIT else SUITS[before["trump"][i]]
            winner = (before["leader"][i] + oracle_winner(trick + [card_name(actions[i] - CARD_OFFSET)], trump)) % n
            assert batch.trick_won_by[g] == winner
            checked_tricks += 1
            tricks = before["tricks_won"][i].astype(int)
            tricks[winner] += 1
            assert batch.round_over[g] == (tricks.sum() == size)
            if batch.round_over[g]:
                expected = [oracle_score(int(b), int(t)) for b, t in zip(before["bids"][i], tricks)]
                assert batch.round_scores[g].tolist() == expected
                checked_rounds += 1
    assert checked_rounds == 12 * rules.num_rounds and checked_tricks == 12 * sum(rules.hand_sizes)


def test_autoreset_restarts_finished_games_with_fresh_reproducible_seeds():
    rules = Rules.make(3, rounds=2)
    finished = []
    for _ in range(2):
        batch = WizardBatch(rules, 4, seed=11)
        first = batch.game_seed.copy()
        rng = np.random.default_rng(1)
        done = []
        for _ in range(200):
            masks = batch.legal_masks()
            batch.step((rng.random(masks.shape) * masks).argmax(axis=1))
            for i in np.flatnonzero(batch.game_over):
                done.append((int(batch.final_seed[i]), batch.final_totals[i].tolist()))
                assert batch.game_seed[i] != batch.final_seed[i] and batch.round_index[i] == 0
                assert batch.totals[i].tolist() == [0, 0, 0]
        assert set(first) <= {seed for seed, _ in done}
        assert not (batch.phase == Phase.OVER).any()
        finished.append(done)
    assert finished[0] == finished[1] and len(finished[0]) > 4
    other = WizardBatch(rules, 4, seed=12)
    assert other.game_seed.tolist() != WizardBatch(rules, 4, seed=11).game_seed.tolist()


def test_round_results_are_reported_on_the_step_that_ends_the_round():
    rules = Rules.make(4, rounds=3)
    batch = WizardBatch(rules, 8, seed=3, autoreset=False)
    rng = np.random.default_rng(2)
    ended = np.zeros(8, dtype=int)
    while (batch.phase != Phase.OVER).any():
        live = np.flatnonzero(batch.phase != Phase.OVER)
        masks = batch.legal_masks(live)
        before = batch.totals.copy()
        batch.step((rng.random(masks.shape) * masks).argmax(axis=1), live)
        for i in range(8):
            if batch.round_over[i]:
                ended[i] += 1
                assert batch.round_tricks[i].sum() == batch.round_hand_size[i] == ended[i]
                bids, tricks = batch.round_bids[i], batch.round_tricks[i]
                expected = np.where(bids == tricks, 20 + 10 * tricks, -10 * np.abs(bids.astype(int) - tricks))
                assert batch.round_scores[i].tolist() == expected.tolist()
                assert (batch.totals[i] - before[i]).tolist() == expected.tolist()
            else:
                assert batch.totals[i].tolist() == before[i].tolist()
    assert ended.tolist() == [3] * 8
    assert batch.game_over.sum() >= 1


def snapshot(batch: WizardBatch) -> dict:
    return {name: value.copy() for name, value in vars(batch).items() if isinstance(value, np.ndarray)}


def test_one_illegal_action_in_a_batch_raises_naming_the_game_and_changes_nothing():
    batch = WizardBatch(Rules.make(4, rounds=3), 5, seed=0)
    masks = batch.legal_masks()
    actions = masks.argmax(axis=1)
    bad = int(np.flatnonzero(masks[3] == 0)[0])
    actions[3] = bad
    before = snapshot(batch)
    with pytest.raises(IllegalActionError, match=r"game 3, seat \d.*legal: ") as err:
        batch.step(actions)
    for a in np.flatnonzero(masks[3]):
        assert f"{a} (" in str(err.value)
    for name, value in snapshot(batch).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    for malformed in (actions[:4], actions.astype(float), np.append(actions, 0), np.full(5, NUM_ACTIONS)):
        with pytest.raises(IllegalActionError):
            batch.step(malformed)
    for name, value in snapshot(batch).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)


@pytest.mark.parametrize("games", [[5], [-1], [0, 0], [[0, 1]], [0.5]])
def test_bad_game_indices_are_refused(games):
    batch = WizardBatch(Rules.make(3, rounds=2), 5, seed=0)
    with pytest.raises(ValueError, match="game"):
        batch.legal_masks(np.array(games))


@pytest.mark.parametrize(
    "kwargs, message",
    [(dict(batch_size=0), "batch_size"), (dict(batch_size=2.0), "batch_size"), (dict(seeds=[1, -2]), "seed"),
     (dict(batch_size=3, seeds=[1, 2]), "batch_size=3 but 2 seeds")],
)
def test_bad_construction_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        WizardBatch(Rules.make(3), **kwargs)


def test_observers_and_output_buffer_are_validated_and_out_is_fully_overwritten():
    batch = WizardBatch(Rules.make(4, rounds=3), 3, seed=0)
    with pytest.raises(ValueError, match="observers"):
        batch.observe(observers=np.array([0, 1, 4]))
    with pytest.raises(ValueError, match="out"):
        batch.observe(out=np.zeros((3, 10), dtype=np.float32))
    dirty = np.full((3, batch.observe().shape[1]), 7.0, dtype=np.float32)
    np.testing.assert_array_equal(batch.observe(out=dirty), batch.observe())


def test_deal_round_deals_the_current_round_again_from_a_deck_order_written_in():
    batch = WizardBatch(Rules.make(4, [3, 5]), 3, seed=2, autoreset=False)
    for _ in range(6):  # some bids and cards, so that dealing again has something to clear
        batch.step(np.array([np.flatnonzero(m)[0] for m in batch.legal_masks()]))
    others = {name: getattr(batch, name)[[0, 2]].copy() for name in ("hands", "bids", "phase", "played")}
    order = np.random.default_rng(3).permutation(shuffle_game(9, 1, 4)[1][0])
    batch.orders[1, 0] = order
    batch.deal_round(np.array([1]))
    hands, turned = deal_hands(order[None], np.array([3]), 4)
    assert np.array_equal(batch.hands[1], hands[0]) and batch.trump_card[1] == turned[0]
    assert (batch.bids[1] == -1).all() and not batch.played[1].any() and batch.trick_len[1] == 0
    assert batch.phase[1] == (Phase.TRUMP if turned[0] == WIZARD else Phase.BID)
    assert all(np.array_equal(getattr(batch, name)[[0, 2]], before) for name, before in others.items())


def test_a_deal_row_depends_only_on_seed_and_round():
    _, short = shuffle_game(5, 3, 4)
    _, long = shuffle_game(5, 15, 4)
    np.testing.assert_array_equal(short, long[:3])
    for row in long:
        assert sorted(row.tolist()) == sorted(shuffle_game(6, 1, 4)[1][0].tolist())  # each row is the whole deck


def test_play_actions_follow_suit_across_a_batch_of_different_positions():
    """Every legal card in every game of a large batch is one the single-game rules allow."""
    rules = Rules.make(5, rounds=6)
    batch = WizardBatch(rules, 64, seed=9)
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(150):
        masks = batch.legal_masks()
        for i in np.flatnonzero(batch.phase == Phase.PLAY)[:8]:
            game = WizardGame(rules, 0)
            game.hands = batch.hands[i]
            game.trick_cards = batch.trick[i, : batch.trick_len[i]].tolist()
            game.trump, game.current, game.phase = int(batch.trump[i]), int(batch.current[i]), Phase.PLAY
            np.testing.assert_array_equal(game.legal_mask()[CARD_OFFSET:], masks[i, CARD_OFFSET:])
            checked += 1
        batch.step((rng.random(masks.shape) * masks).argmax(axis=1))
    assert checked > 500


def test_copy_games_copies_each_game_and_steps_apart_from_the_original():
    batch = WizardBatch(Rules.make(4), 6, seed=3, autoreset=False)
    rng = np.random.default_rng(0)
    for _ in range(40):  # into the middle of the first rounds
        batch.step(np.array([rng.choice(np.flatnonzero(m)) for m in batch.legal_masks()]))
    games = np.array([1, 4])
    copy = batch.copy_games(games, np.array([2, 3]))
    assert copy.batch_size == 5
    rows = np.array([0, 0, 1, 1, 1])
    assert (copy.observe() == batch.observe(games)[rows]).all()
    assert (copy.legal_masks() == batch.legal_masks(games)[rows]).all()
    before = snapshot(batch)
    while (copy.phase != Phase.OVER).any():  # play every copy to the end of its game
        live = np.flatnonzero(copy.phase != Phase.OVER)
        copy.step(np.array([np.flatnonzero(m)[0] for m in copy.legal_masks(live)]), live)
    assert all((value == snapshot(batch)[name]).all() for name, value in before.items())
    assert (copy.totals[0] == copy.totals[1]).all() and (copy.totals[2] == copy.totals[4]).all()


@pytest.mark.parametrize("seed", [2**63, 2**64, -1, True, 1.5])
def test_seeds_outside_int64_are_a_value_error_naming_the_range(seed):
    rules = Rules.make(3, 2)
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        WizardBatch(rules, seeds=[seed])
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        WizardBatch(rules, 2, seed=seed)
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        WizardGame(rules, seed)
    assert WizardGame(rules, 2**63 - 1).seed == 2**63 - 1


def test_a_seed_of_thousands_of_digits_is_described_not_printed():
    with pytest.raises(ValueError, match=r"not an integer of about 5000 digits"):
        WizardBatch(Rules.make(3, 2), seeds=[10**4999])


@pytest.mark.parametrize("autoreset, record", [(True, False), (False, False), (True, True)])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_step_observe_equals_step_then_observe_then_legal_masks(config: dict, autoreset: bool, record: bool):
    """The one-call step gives the same state, observations and masks as the three calls, through whole games,
    restarts included, on all games and on random subsets of them."""
    rules = rules_of(config)
    one = WizardBatch(rules, 6, seed=3, autoreset=autoreset, record=record)
    three = WizardBatch(rules, 6, seed=3, autoreset=autoreset, record=record)
    rng = np.random.default_rng(5)
    out, masks = one.observe(), one.legal_masks()
    finished = 0
    for step in range(3000):
        games = one.all_games if step % 3 else np.flatnonzero(rng.random(6) < 0.5)
        live = games[one.phase[games] != Phase.OVER]
        if finished >= 3 or (one.phase == Phase.OVER).all():
            break
        actions = kernels.random_legal(one.legal_masks(live), rng.random(live.size), np.empty(live.size, np.int64))
        rows_out, rows_masks = np.full((live.size, out.shape[1]), np.nan, np.float32), np.full((live.size, NUM_ACTIONS), 9, np.int8)
        one.step_observe(actions, rows_out, rows_masks, live)
        three.step(actions, live)
        finished += int(one.game_over[live].sum())
        np.testing.assert_array_equal(rows_out, three.observe(live))
        np.testing.assert_array_equal(rows_masks, three.legal_masks(live))
        for name, value in snapshot(three).items():
            if name not in ("_mask_cache", "mask_stale"):  # a cache: which stale rows were refreshed may differ
                np.testing.assert_array_equal(getattr(one, name), value, err_msg=name)
    assert finished > 0  # the restarts (or the ends, without autoreset) were met
    if record:
        assert one.finished_logs == three.finished_logs and one.logs == three.logs


def test_step_observe_refuses_bad_buffers_and_illegal_actions_and_changes_nothing():
    batch = WizardBatch(Rules.make(4, rounds=3), 3, seed=0)
    out, masks = batch.observe(), batch.legal_masks()
    actions = masks.argmax(axis=1)
    before = snapshot(batch)
    read_only = out.copy()
    read_only.flags.writeable = False
    bad_buffers = [(out[:2], masks, "out"), (out.astype(np.float64), masks, "out"), (read_only, masks, "read-only"),
                   ([[0.0]], masks, "out"), (out, masks.astype(bool), "masks"), (out, masks[:, :10], "masks")]
    for bad_out, bad_masks, message in bad_buffers:
        with pytest.raises(ValueError, match=message):
            batch.step_observe(actions, bad_out, bad_masks)
    illegal = actions.copy()
    illegal[1] = int(np.flatnonzero(masks[1] == 0)[0])
    out_before, masks_before = out.copy(), masks.copy()
    with pytest.raises(IllegalActionError, match=r"game 1, seat \d.*legal: "):
        batch.step_observe(illegal, out, masks)
    with pytest.raises(IllegalActionError, match="integer action ids"):
        batch.step_observe(actions.astype(float), out, masks)
    for name, value in snapshot(batch).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    np.testing.assert_array_equal(out, out_before)
    np.testing.assert_array_equal(masks, masks_before)
    batch.step_observe(actions, out, masks)  # and it still works
    np.testing.assert_array_equal(out, batch.observe())


def test_random_legal_picks_each_legal_action_for_its_share_of_uniforms():
    masks = np.zeros((3, NUM_ACTIONS), dtype=np.int8)
    masks[0, [2, 5, 70]] = 1
    masks[1, 40] = 1  # row 2: nothing legal
    legal = [2, 5, 70]
    out = np.empty(3, dtype=np.int64)
    for j, action in enumerate(legal):
        for u in (j / 3, (j + 0.5) / 3, (j + 1) / 3 - 1e-9):
            kernels.random_legal(masks, np.array([u, u, u]), out)
            assert out.tolist() == [action, 40, -1]


@pytest.mark.parametrize("duplicate", [copy.deepcopy, lambda batch: pickle.loads(pickle.dumps(batch))], ids=["deepcopy", "pickle"])
def test_a_copied_or_unpickled_batch_plays_on_by_itself(duplicate):
    """The copy gets its own compiled-state handle on its own arrays: stepping either leaves the other alone."""
    def play_30_steps(games: WizardBatch) -> None:
        rng = np.random.default_rng(0)
        for _ in range(30):
            games.step(kernels.random_legal(games.legal_masks(), rng.random(4), np.empty(4, np.int64)))

    batch = WizardBatch(Rules.make(4, rounds=3), 4, seed=2)
    twin = duplicate(batch)
    before = snapshot(batch)
    play_30_steps(twin)
    for name, value in snapshot(batch).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    replay = WizardBatch(Rules.make(4, rounds=3), 4, seed=2)
    play_30_steps(replay)
    for name, value in snapshot(replay).items():
        np.testing.assert_array_equal(getattr(twin, name), value, err_msg=name)
