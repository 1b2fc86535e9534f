"""PIMCAgent: registered with its options, legal and seeded, blind to hidden cards, and playable by wizard eval."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wizard_env.agents.pimc_agent import PIMCAgent
from wizard_env.agents.ppo_agent import PRETRAINED, PPOAgent
from wizard_env.agents.registry import make_agent
from wizard_env.agents.rollouts import search_prior, search_values
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.actions import Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.determinize import determinize
from wizard_env.engine.rules import Rules
from wizard_env.training.evaluation.evaluate import evaluate, play_games

from test_determinize import positions


def test_spec_options_build_the_agent():
    agent = make_agent("pimc:samples=5:rollout=rule", 0)
    assert isinstance(agent, PIMCAgent) and agent.samples == 5 and agent.rollout == "rule"
    assert make_agent("pimc", 0).samples > 0
    assert make_agent("pimc:rollout=ppo:samples=2", 0).rollout == "ppo"
    assert make_agent("pimc:top=3", 0).top == 3 and make_agent("pimc", 0).top is None


def test_search_is_pimc_with_the_network_and_inference_and_its_options_override_them():
    from wizard_env.agents.registry import SEARCH_AGENTS, searches_games

    agent = make_agent("search", 0)
    assert isinstance(agent, PIMCAgent) and "search" in SEARCH_AGENTS and searches_games("search:samples=2")
    assert (agent.samples, agent.rollout, agent.top, agent.inference.oversample, agent.inference.resample) == (
        32, "net-v7", 3, 8, "systematic")
    # wizard-v7, the network it was measured with, plays the rollouts and is the prior and the bid model
    assert {Path(a.source).name for a in (agent.policy, agent.prior, agent.inference.model)} == {"wizard-v7.npz"}
    assert make_agent("search:model=rule", 0).inference.model is None
    larger = make_agent("search:samples=48:top=5:over=8", 0)
    assert (larger.samples, larger.rollout, larger.top, larger.inference.oversample) == (48, "net-v7", 5, 8)
    assert make_agent("search:rollout=rule", 0).rollout == "rule"
    earlier = make_agent("search:rollout=ppo-v3", 0)  # an earlier shipped network plays the rollouts and is the prior
    assert Path(earlier.policy.source).name == Path(earlier.prior.source).name == "wizard-v3.npz"
    assert Path(make_agent("pimc:top=2", 0).prior.source).name == Path(make_agent("ppo", 0).source).name
    with pytest.raises(ValueError, match=r"agent spec 'search:samples=0': samples must be a positive integer"):
        make_agent("search:samples=0", 0)


@pytest.mark.parametrize("spec", ["pimc:samples=0", "pimc:samples=-1", "pimc:samples=x", "pimc:samples=",
                                  "pimc:rollout=random", "pimc:depth=3", "pimc:samples", "pimc:top=0",
                                  "pimc:top=two", "pimc:bid_samples=0", "pimc:bid_samples=9999"])
def test_bad_options_are_refused(spec):
    with pytest.raises(ValueError, match="pimc"):
        make_agent(spec, 0)


@pytest.mark.parametrize("spec", ["pimc:samples=\u00b2", "pimc:over=\u0663", "search:top=\u2460"])
def test_digits_that_are_not_ascii_name_the_option(spec):
    with pytest.raises(ValueError, match="must be a positive integer"):  # not int()'s "invalid literal"
        make_agent(spec, 0)


def test_act_batch_alone_is_refused_clearly():
    batch = WizardBatch(Rules.make(4, 3), 1, seed=0)
    with pytest.raises(ValueError, match="act_games"):
        PIMCAgent(samples=2, seed=0).act_batch(batch.observe(), batch.legal_masks())


@pytest.mark.parametrize("rules", [Rules.make(3, 4), Rules.make(4, [1, 3], "secret", foresight=True),
                                   Rules.make(5, 3, "hidden"), Rules.make(6, 2, bid_total_rule=True)],
                         ids=["3p", "4p-foresight-secret", "5p-hidden", "6p-total"])
def test_actions_are_legal_and_seeded(rules):
    batch = positions(rules, 12, seed=1)
    before = {name: getattr(batch, name).copy() for name in batch._state}
    first = PIMCAgent(samples=3, seed=7).act_games(batch, np.arange(12))
    second = PIMCAgent(samples=3, seed=7).act_games(batch, np.arange(12))
    np.testing.assert_array_equal(first, second)
    masks = batch.legal_masks()
    assert masks[np.arange(12), first].all()
    for name, value in before.items():  # searching changes nothing in the real games
        np.testing.assert_array_equal(getattr(batch, name), value, err_msg=name)


def test_decisions_depend_only_on_what_the_seat_sees():
    # a determinized copy differs from the game only in what the acting seat cannot see
    batch = positions(Rules.make(4, 6, "hidden"), 16, seed=2)
    worlds = determinize(batch, np.arange(16), batch.current.copy(), np.random.default_rng(5))
    assert any(not np.array_equal(worlds.hands[g], batch.hands[g]) for g in range(16))
    real = PIMCAgent(samples=4, seed=3).act_games(batch, np.arange(16))
    imagined = PIMCAgent(samples=4, seed=3).act_games(worlds, np.arange(16))
    np.testing.assert_array_equal(real, imagined)


def test_search_finds_the_only_making_bid():
    # one card each, 3 players: the acting seat holds a Wizard, so bidding 1 makes 30 points and bidding 0 loses 10
    batch = WizardBatch(Rules.make(3, 1), 1, seed=0, autoreset=False)
    seat = int(batch.current[0])
    batch.hands[0] = 0
    batch.hands[0, :, 0] = 1  # placeholders, redrawn for the others
    batch.hands[0, seat] = 0
    batch.hands[0, seat, 52] = 1
    batch.hands[0, (seat + 1) % 3] = 0
    batch.hands[0, (seat + 1) % 3, 1] = 1
    batch.trump_card[0] = 2
    batch.trump[0] = 0
    batch.mask_stale[0] = True
    assert PIMCAgent(samples=4, seed=0).act_games(batch, np.array([0]))[0] == 1


def test_plays_whole_games_in_eval_with_the_same_result_for_the_same_seed():
    rules = Rules.make(4, 3)
    one = evaluate(rules, ["pimc:samples=2", "rule", "rule", "rule"], 2, seed=4)
    two = evaluate(rules, ["pimc:samples=2", "rule", "rule", "rule"], 2, seed=4)
    np.testing.assert_array_equal(one.records.totals, two.records.totals)
    assert one.records.bids.shape == (8, 3, 4) and (one.records.bids >= 0).all()


def test_other_agents_are_still_called_with_observations():
    class Recorder(RuleAgent):
        calls = 0

        def act_batch(self, observations, action_masks):
            Recorder.calls += 1
            return super().act_batch(observations, action_masks)

    rules = Rules.make(4, 2)
    records = play_games(rules, [[PIMCAgent(samples=2, seed=0), Recorder(0), Recorder(1), Recorder(2)]], [3])
    assert Recorder.calls > 0 and records.totals.shape == (1, 4)


class FixedPrior:
    """A prior whose logits are given: action a of every row rates ``rating[a]``."""

    def __init__(self, rating):
        self.rating = np.asarray(rating, dtype=np.float32)

    def logits(self, observations, masks):
        return np.tile(self.rating, (len(observations), 1))


def test_the_prior_keeps_its_top_legal_actions_and_the_one_asked_for():
    masks = np.zeros((3, 79), dtype=bool)
    masks[0, [3, 5, 7, 9]] = True
    masks[1, [2, 5]] = True  # fewer legal actions than top: all kept
    masks[2, [1, 4, 6, 8]] = True
    rating = np.zeros(79)
    rating[[9, 7, 1, 6, 4]] = [5, 4, 9, 9, 3]  # 1 and 6 tie: the lower id first
    chosen = search_prior(FixedPrior(rating), np.zeros((3, 1)), masks, 2, keep=np.array([3, 2, 8]))
    assert [np.flatnonzero(row).tolist() for row in chosen] == [[3, 7, 9], [2, 5], [1, 6, 8]]
    assert not (chosen & ~masks).any()


def test_search_with_a_prior_plays_out_only_the_kept_actions_with_the_same_worlds():
    batch = positions(Rules.make(4, [3, 4]), 12, seed=3)  # no one-card round: RuleAgent's rollouts draw nothing
    games, masks = np.arange(12), batch.legal_masks()
    kept = masks.astype(bool) & (np.random.default_rng(0).random(masks.shape) < 0.5)
    kept[games, masks.argmax(axis=1)] = True
    full = search_values(batch, games, RuleAgent(0), np.random.default_rng(9), 3)
    pruned = search_values(batch, games, RuleAgent(0), np.random.default_rng(9), 3, masks=kept)
    np.testing.assert_array_equal(np.isfinite(pruned), kept)
    np.testing.assert_array_equal(pruned[kept], full[kept])


def test_top_one_plays_the_prior_and_top_past_every_option_changes_nothing():
    batch = positions(Rules.make(4, 5), 10, seed=4)
    games = np.arange(10)
    network = PPOAgent.load(PRETRAINED, seed=0).act_batch(batch.observe(), batch.legal_masks())
    np.testing.assert_array_equal(PIMCAgent(samples=2, seed=1, top=1).act_games(batch, games), network)
    np.testing.assert_array_equal(PIMCAgent(samples=3, seed=1, top=79).act_games(batch, games),
                                  PIMCAgent(samples=3, seed=1).act_games(batch, games))


def test_bid_samples_search_the_bids_on_their_own_number_of_worlds():
    batch = positions(Rules.make(4, [3, 4]), 24, seed=5)
    legal = batch.legal_masks().sum(axis=1) > 1
    bids = np.flatnonzero(legal & (batch.phase == Phase.BID))
    others = np.flatnonzero(legal & (batch.phase != Phase.BID))
    assert bids.size and others.size
    # alone, each kind of decision is searched draw for draw as by an agent with that many samples for all
    np.testing.assert_array_equal(PIMCAgent(samples=2, bid_samples=6, seed=1).act_games(batch, bids),
                                  PIMCAgent(samples=6, seed=1).act_games(batch, bids))
    np.testing.assert_array_equal(PIMCAgent(samples=2, bid_samples=6, seed=1).act_games(batch, others),
                                  PIMCAgent(samples=2, seed=1).act_games(batch, others))
    # together: the cards first, then the bids
    both = PIMCAgent(samples=2, bid_samples=6, seed=1)
    chosen = both.act_games(batch, np.arange(24))
    assert batch.legal_masks()[np.arange(24), chosen].all() and both.searched == bids.size + others.size
    np.testing.assert_array_equal(chosen[others], PIMCAgent(samples=2, seed=1).act_games(batch, others))
    np.testing.assert_array_equal(PIMCAgent(samples=3, bid_samples=3, seed=2).act_games(batch, np.arange(24)),
                                  PIMCAgent(samples=3, seed=2).act_games(batch, np.arange(24)))
    assert make_agent("search:bid_samples=64", 0).bid_samples == 64 and make_agent("pimc:samples=4", 0).bid_samples == 4
