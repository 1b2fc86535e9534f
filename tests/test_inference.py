"""Inference for pimc: bid-time views are the real ones, the bid likelihood prefers hands that fit the bids, resampled
worlds stay consistent with what the observer sees, the options are checked, and the same seed gives the same moves."""

from __future__ import annotations

import numpy as np
import pytest

from wizard_env.agents.inference import FLOOR, BidInference, bid_chances, bid_log_likelihoods, bid_time_copies
from wizard_env.agents.pimc_agent import PIMCAgent, parse_options
from wizard_env.agents.registry import make_agent
from wizard_env.agents.ppo_agent import VALUE_UNIT, PPOAgent
from wizard_env.agents.rollouts import draw_worlds, rollout_values, search_values
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.actions import BID_OFFSET, Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.cards import CARD_SUIT, WIZARD
from wizard_env.engine.determinize import determinize
from wizard_env.engine.rules import Rules
from wizard_env.training.evaluation.evaluate import play_games

from test_determinize import positions


def play_round_recording_bids(rules: Rules, seed: int, plays: int) -> tuple[WizardBatch, dict]:
    """A one-game batch played by RuleAgents through its first round's bids and ``plays`` cards, with each
    seat's observation and legal mask when it bid."""
    batch = WizardBatch(rules, 1, seed=seed, autoreset=False)
    agent, game, seen = RuleAgent(seed=seed), np.array([0]), {}
    while batch.phase[0] != Phase.PLAY or plays > 0:
        if batch.phase[0] == Phase.BID:
            seen[int(batch.current[0])] = (batch.observe(game)[0], batch.legal_masks(game)[0])
        elif batch.phase[0] == Phase.PLAY:
            plays -= 1
        batch.step(agent.act_batch(batch.observe(game), batch.legal_masks(game)), game)
    return batch, seen


@pytest.mark.parametrize("rules", [Rules.make(4, [6]), Rules.make(3, [5], "hidden"), Rules.make(5, [4], bid_total_rule=True),
                                   Rules.make(4, [1], foresight=True)], ids=["4p", "3p-hidden", "5p-total", "4p-foresight"])
def test_bid_time_copies_give_each_seat_its_view_when_it_bid(rules):
    for seed, plays in ((0, 0), (1, 3), (2, 7)):
        batch, seen = play_round_recording_bids(rules, seed, min(plays, rules.hand_sizes[0] * rules.num_players - 1))
        seats = np.array(sorted(seen))
        copies = bid_time_copies(batch, np.zeros(len(seats), dtype=np.int64), seats)
        observed, masks = copies.observe(copies.all_games, seats), copies.legal_masks()
        for i, seat in enumerate(seats):
            np.testing.assert_array_equal(observed[i], seen[seat][0], err_msg=f"seed {seed}, seat {seat}")
            np.testing.assert_array_equal(masks[i], seen[seat][1], err_msg=f"seed {seed}, seat {seat}")


def test_bid_time_copies_follow_the_order_of_the_games_asked_for():
    batch = positions(Rules.make(4, [6]), 3, seed=4)
    copies = bid_time_copies(batch, np.array([2, 0, 2]), np.array([1, 3, 0]))
    np.testing.assert_array_equal(copies.hands.sum(axis=(1, 2)), (batch.hands + batch.played)[[2, 0, 2]].sum(axis=(1, 2)))
    np.testing.assert_array_equal(copies.current, [1, 3, 0])
    np.testing.assert_array_equal(copies.hands[0] , (batch.hands + batch.played)[2])


def bid_position(bids: list[int], seed: int) -> tuple[WizardBatch, int]:
    """A 4-player game of 5 cards with the first three seats' bids made as ``bids`` (the dealer to bid next),
    and the dealer's seat."""
    for s in range(seed, seed + 50):
        batch = WizardBatch(Rules.make(4, [5]), 1, seed=s, autoreset=False)
        if batch.phase[0] == Phase.BID:  # no Wizard turned up: no trump choice first
            for bid in bids:
                batch.step(np.array([BID_OFFSET + bid]))
            return batch, int(batch.dealer[0])
    raise AssertionError("no deal without a turned-up Wizard")


@pytest.fixture(scope="module")
def network() -> PPOAgent:
    return PPOAgent.load(seed=0)


@pytest.mark.parametrize("model", ["rule", "ppo"])
def test_likelihood_prefers_hands_that_fit_the_bids(model, network):
    model = None if model == "rule" else network
    batch, dealer = bid_position([5, 0, 0], seed=3)
    high, low = (dealer + 1) % 4, (dealer + 2) % 4  # bid the whole hand, and nothing
    worlds = determinize(batch, np.array([0]), np.array([dealer]), np.random.default_rng(0), 400)
    log_l = bid_log_likelihoods(worlds, np.full(400, dealer), model=model)
    assert np.isfinite(log_l).all() and log_l.std() > 0
    for seat, fits in ((high, True), (low, False)):
        wizards = worlds.hands[:, seat, WIZARD]
        with_wizards, without = log_l[wizards >= 2].mean(), log_l[wizards == 0].mean()
        assert (with_wizards > without) == fits, (seat, with_wizards, without)
    # resampling moves the worlds towards the bids: more Wizards and trumps for the seat that bid 5, fewer for the one
    # that bid 0 (the model is soft: a few in 400 worlds can make 5 of 5). One draw of 100 worlds moves a seat's mean
    # by a noisy amount (from 0.0 to 0.4 for the seat that bid 5, by the draw), so the shift is the mean of 8 draws.
    trumps = CARD_SUIT[:WIZARD] == batch.trump[0]
    strengths = {seat: worlds.hands[:, seat, WIZARD] + worlds.hands[:, seat, :WIZARD][:, trumps].sum(axis=1) for seat in (high, low)}
    shifts = {high: [], low: []}
    for draw in range(1, 9):
        rows, weights = BidInference(oversample=4, model=model).select(worlds, np.array([dealer]), 100, np.random.default_rng(draw))
        assert np.isclose(weights.sum(), 1)
        for seat, sign in ((high, 1), (low, -1)):
            strength = strengths[seat]
            shifts[seat].append(sign * ((weights * strength[rows]).sum() - strength.mean()))
    assert all(np.mean(moved) > 0.1 for moved in shifts.values()), shifts


def test_a_seat_judged_on_a_hand_it_bid_for_is_likelier():
    batch, dealer = bid_position([5, 0, 0], seed=3)
    high, trump = (dealer + 1) % 4, int(batch.trump[0])
    free = np.ones(WIZARD, dtype=bool)  # suited cards neither the dealer holds nor turned up
    free[np.flatnonzero(batch.hands[0, dealer, :WIZARD])] = False
    if 0 <= batch.trump_card[0] < WIZARD:
        free[batch.trump_card[0]] = False
    assert batch.hands[0, dealer, WIZARD] == 0
    top_trump = max(np.flatnonzero(free & (CARD_SUIT[:WIZARD] == trump)))
    low = np.flatnonzero(free & (CARD_SUIT[:WIZARD] != trump))
    low = low[np.argsort(low % 13, kind="stable")][:5]  # the lowest ranks of the other suits
    worlds = batch.copy_games(np.array([0]), 2)
    worlds.hands[:, high] = 0
    worlds.hands[0, high, WIZARD], worlds.hands[0, high, top_trump] = 4, 1  # four Wizards and the best trump
    worlds.hands[1, high, low] = 1
    log_l = bid_log_likelihoods(worlds, np.array([dealer, dealer]))
    assert log_l[0] > log_l[1] + 1  # far likelier: e times and more


def test_bid_chances_are_a_distribution_over_the_legal_bids():
    batch = positions(Rules.make(4, [7], bid_total_rule=True), 6, seed=5)
    bidding = np.flatnonzero(batch.phase == Phase.BID)
    masks = batch.legal_masks()
    for temperature in (1.0, 10.0, 1000.0):
        chances = bid_chances(batch.observe(), masks, temperature)
        np.testing.assert_allclose(chances[bidding].sum(axis=1), 1)
        assert (chances[masks[:, :chances.shape[1]] == 0] == 0).all()
        assert (chances[bidding][masks[bidding, :chances.shape[1]] != 0] > 0).all()


def test_the_network_bid_model_reads_its_values_in_points(network):
    """At a low temperature nearly all the chance is on the network's own best bid; at 10 points, two bids whose values
    differ by 10 points differ by e times in chance (before the floor)."""
    batch = positions(Rules.make(4, [7], bid_total_rule=True), 8, seed=5)
    bidding = np.flatnonzero(batch.phase == Phase.BID)
    observations, masks = batch.observe()[bidding], batch.legal_masks()[bidding]
    sharp = bid_chances(observations, masks, 1e-3, network)
    bids = slice(BID_OFFSET, BID_OFFSET + sharp.shape[1])
    legal = masks[:, bids] != 0
    values = np.where(legal, network.logits(observations, masks)[:, bids] / VALUE_UNIT, -np.inf)
    best = values.argmax(axis=1)
    np.testing.assert_allclose(sharp[np.arange(len(best)), best], 1 - FLOOR + FLOOR / legal.sum(axis=1), rtol=1e-6)
    soft = bid_chances(observations, masks, 10.0, network) - FLOOR * legal / legal.sum(axis=1, keepdims=True)
    row, (a, b) = 0, np.flatnonzero(legal[0])[:2]
    np.testing.assert_allclose(np.log(soft[row, a] / soft[row, b]), (values[row, a] - values[row, b]) / 10, rtol=1e-6)
    assert not np.allclose(sharp, bid_chances(observations, masks, 1e-3))  # not RuleAgent's model


@pytest.mark.parametrize("rules", [Rules.make(4, 6), Rules.make(3, 5, "hidden"), Rules.make(5, [1, 4], bid_total_rule=True),
                                   Rules.make(4, [1, 3], foresight=True)], ids=["4p", "3p-hidden", "5p-total", "4p-foresight"])
def test_resampled_worlds_keep_what_the_observer_sees(rules):
    batch = positions(rules, 10, seed=6)
    games, observers = np.arange(10), batch.current.astype(np.int64)
    worlds = determinize(batch, games, observers, np.random.default_rng(2), 12)
    rows, weights = BidInference(oversample=3).select(worlds, observers, 4, np.random.default_rng(3))
    assert (np.diff(rows) > 0).all()
    np.testing.assert_allclose(np.bincount(rows // 12, weights, minlength=10), 1)
    for row in rows:
        game = row // 12
        np.testing.assert_array_equal(worlds.observe(np.array([row]), observers[[game]]),
                                      batch.observe(np.array([game]), observers[[game]]))


def test_without_inference_the_search_is_the_uniform_one_draw_for_draw():
    batch = positions(Rules.make(4, 4), 6, seed=7)
    games = np.flatnonzero(batch.legal_masks().sum(axis=1) > 1)
    policy = RuleAgent(seed=0)
    got = search_values(batch, games, policy, np.random.default_rng(9), 5)
    worlds = determinize(batch, games, batch.current[games].astype(np.int64), np.random.default_rng(9), 5)
    want = rollout_values(worlds, worlds.all_games, policy).reshape(len(games), 5, -1).astype(np.float64).mean(axis=1)
    np.testing.assert_array_equal(got, want)


def test_systematic_resampling_keeps_each_world_near_its_expected_count():
    """Each world is kept floor or ceil of ``samples`` times its chance (independent draws stray further), the weights
    are the counts over ``samples``, and the same generator gives the same rows."""
    batch, dealer = bid_position([5, 0, 0], seed=3)
    worlds = determinize(batch, np.array([0]), np.array([dealer]), np.random.default_rng(0), 64)
    log_l = bid_log_likelihoods(worlds, np.full(64, dealer))
    chances = np.exp(log_l - log_l.max())
    expected = 16 * chances / chances.sum()
    systematic, independent = BidInference(oversample=4, resample="systematic"), BidInference(oversample=4)
    strays = []
    for seed in range(20):
        rows, weights = systematic.select(worlds, np.array([dealer]), 16, np.random.default_rng(seed))
        counts = np.zeros(64)
        counts[rows] = weights * 16
        np.testing.assert_allclose(counts, np.rint(counts))
        assert counts.sum() == 16 and (counts >= np.floor(expected) - 1e-9).all() and (counts <= np.ceil(expected) + 1e-9).all()
        rows, weights = independent.select(worlds, np.array([dealer]), 16, np.random.default_rng(seed))
        counts[:] = 0
        counts[rows] = weights * 16
        strays.append(np.abs(counts - expected).max())
    assert max(strays) > 1  # the independent draws do stray past one
    again = systematic.select(worlds, np.array([dealer]), 16, np.random.default_rng(5))
    first = systematic.select(worlds, np.array([dealer]), 16, np.random.default_rng(5))
    np.testing.assert_array_equal(first[0], again[0])


def test_draw_worlds_are_the_searched_worlds_with_their_weights():
    batch = positions(Rules.make(4, 4), 6, seed=7)
    games = np.flatnonzero(batch.legal_masks().sum(axis=1) > 1)
    observers = batch.current[games].astype(np.int64)
    worlds, rows, weights = draw_worlds(batch, games, np.random.default_rng(9), 5)
    want = determinize(batch, games, observers, np.random.default_rng(9), 5)
    np.testing.assert_array_equal(worlds.hands, want.hands)
    np.testing.assert_array_equal(rows, np.arange(5 * len(games)))
    np.testing.assert_allclose(weights, 1 / 5)
    inference = BidInference(oversample=3)
    worlds, rows, weights = draw_worlds(batch, games, np.random.default_rng(9), 5, inference)
    rng = np.random.default_rng(9)
    want = determinize(batch, games, observers, rng, 15)
    np.testing.assert_array_equal(worlds.hands, want.hands)
    want_rows, want_weights = inference.select(want, observers, 5, rng)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(weights, want_weights)


def test_spec_options_build_the_inference():
    agent = make_agent("pimc:samples=6:infer=bids:over=3:temp=2.5", 0)
    assert isinstance(agent, PIMCAgent) and agent.samples == 6
    assert agent.inference == BidInference(oversample=3, temperature=2.5)
    assert make_agent("pimc:infer=bids", 0).inference == BidInference()
    assert make_agent("pimc:samples=6", 0).inference is None
    assert parse_options("infer=bids:over=2") == {"infer": "bids", "oversample": 2}
    networked = make_agent("pimc:samples=6:infer=bids:model=ppo-v6:over=2", 0)
    assert isinstance(networked.inference.model, PPOAgent) and networked.inference.oversample == 2
    assert networked.inference.model.source.endswith("wizard-v6.npz")
    assert make_agent("pimc:infer=bids:model=rule", 0).inference == BidInference()
    assert make_agent("pimc:infer=bids:resample=systematic", 0).inference == BidInference(resample="systematic")


@pytest.mark.parametrize("spec, message", [
    ("pimc:infer=cards", "unknown inference"), ("pimc:infer=bids:over=0", "over must be a positive integer"),
    ("pimc:infer=bids:over=x", "over must be"), ("pimc:infer=bids:temp=0", "temp must be a positive number"),
    ("pimc:infer=bids:temp=-1", "temp must be"), ("pimc:infer=bids:temp=abc", "temp must be"),
    ("pimc:infer=bids:temp=inf", "temp must be"), ("pimc:over=4", "add infer=bids"), ("pimc:temp=3", "add infer=bids"),
    ("pimc:samples=4096:infer=bids:over=4", "at most"), ("pimc:infer", "unknown option"),
    ("pimc:model=ppo", "add infer=bids"), ("pimc:infer=bids:model=ppo-bid", "unknown bid model"),
    ("pimc:infer=bids:model=net-bid", "unknown bid model"), ("pimc:resample=systematic", "add infer=bids"),
    ("pimc:infer=bids:resample=stratified", "resample must be multinomial or systematic"),
])
def test_bad_inference_options_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec, 0)


@pytest.mark.parametrize("kwargs", [dict(oversample=0), dict(oversample=2.0), dict(oversample=True), dict(temperature=0),
                                    dict(temperature=float("nan")), dict(temperature="5")])
def test_bad_inference_arguments_are_refused(kwargs):
    with pytest.raises(ValueError, match="pimc: (oversample|temperature) must be"):
        PIMCAgent(samples=2, infer="bids", **kwargs)


def test_same_seed_same_moves_with_inference():
    rules = Rules.make(4, [3, 4])
    records = [play_games(rules, [[PIMCAgent(samples=3, infer="bids", seed=5), RuleAgent(seed=1), RuleAgent(seed=2),
                                   RuleAgent(seed=3)]] * 2, [11, 12]) for _ in range(2)]
    np.testing.assert_array_equal(records[0].bids, records[1].bids)
    np.testing.assert_array_equal(records[0].totals, records[1].totals)
    batch = positions(rules, 8, seed=8)
    first = PIMCAgent(samples=3, infer="bids", seed=4).act_games(batch, np.arange(8))
    np.testing.assert_array_equal(first, PIMCAgent(samples=3, infer="bids", seed=4).act_games(batch, np.arange(8)))
    assert batch.legal_masks()[np.arange(8), first].all()
