"""OracleAgent: search on the true deal, for measurement only. It plays legal moves, seeded; it beats RuleAgent
clearly; only the evaluator hands it the true deal, every other place refuses it in one line; no other agent is
handed hidden state; and the docs' ceiling table is the one its JSON makes."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from wizard_env.agents.base import Agent
from wizard_env.agents.oracle_agent import HIDDEN_REFUSAL, OracleAgent
from wizard_env.agents.registry import make_agent, sees_hidden
from wizard_env.cli.main import main
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.rules import Rules
from wizard_env.training.evaluation.ceiling import ceiling_table
from wizard_env.training.evaluation.evaluate import evaluate, play_games

RULES_5R = Rules.make(4, 5)
DOCS = Path(__file__).resolve().parents[1] / "docs"
REFUSED = "'oracle' sees every hidden card: it is for measurement only"


class Spy(Agent):
    """A normal agent: the first legal action; counts what it is handed."""

    name = "spy"

    def __init__(self):
        self.observed = self.hidden = 0

    def act_batch(self, observations, action_masks):
        self.observed += len(observations)
        return np.asarray(action_masks).argmax(axis=1).astype(np.int64)

    def act_hidden(self, batch, games):  # never called: a normal agent does not declare sees_hidden
        self.hidden += 1
        raise AssertionError("a normal agent was handed the true deal")


class SpyOracle(OracleAgent):
    """The oracle, recording the batches it is handed."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.batches: list[WizardBatch] = []

    def act_hidden(self, batch, games):
        self.batches.append(batch)
        return super().act_hidden(batch, games)


def test_spec_builds_the_oracle_with_its_rollout_policy_for_the_evaluator_alone():
    assert make_agent("oracle", 0, sees_hidden=True).rollout == "net"
    agent = make_agent("oracle:rollout=rule", 0, sees_hidden=True)
    assert isinstance(agent, OracleAgent) and agent.rollout == "rule" and agent.samples == 1 and agent.sees_hidden
    assert sees_hidden("oracle:rollout=rule") and not sees_hidden("pimc") and not sees_hidden(make_agent("rule", 0))
    with pytest.raises(ValueError, match=f"agent {REFUSED}"):
        make_agent("oracle", 0)  # every caller but the evaluator
    with pytest.raises(ValueError, match="unknown option 'samples=4'.*one world, the true one"):
        make_agent("oracle:samples=4", 0, sees_hidden=True)
    with pytest.raises(ValueError, match="unknown rollout policy 'random'"):
        make_agent("oracle:rollout=random", 0, sees_hidden=True)


def test_it_plays_legal_moves_and_the_same_seed_gives_the_same_games():
    # play_games raises on an illegal action; the oracle holds seat 0 of every game
    first = play_games(RULES_5R, [[OracleAgent("rule", seed=3), *(make_agent("rule", s) for s in (1, 2, 3))]] * 6,
                       list(range(6)))
    again = play_games(RULES_5R, [[OracleAgent("rule", seed=3), *(make_agent("rule", s) for s in (1, 2, 3))]] * 6,
                       list(range(6)))
    assert np.array_equal(first.totals, again.totals) and np.array_equal(first.bids, again.bids)
    batch = WizardBatch(RULES_5R, seeds=list(range(8)), autoreset=False)
    actions = OracleAgent("rule", seed=0).act_hidden(batch, batch.all_games)
    assert batch.legal_masks(batch.all_games)[np.arange(8), actions].all()


def test_it_beats_three_rule_agents_clearly():
    # measured: +72 (rule rollouts) and +51 (the network's) points a game over 1000 deals of wizard-4p-5r
    for spec in ("oracle:rollout=rule", "oracle"):
        row = evaluate(RULES_5R, [spec, "rule", "rule", "rule"], 12, seed=4).specs[0]
        assert row.name == spec and row.diff - row.diff_ci95 > 20, (spec, row.diff, row.diff_ci95)


def test_only_the_evaluator_hands_it_the_true_deal_and_no_normal_agent_gets_it():
    oracle, spy = SpyOracle(rollout="rule", seed=0), Spy()
    result = evaluate(RULES_5R, ["oracle", "spy", "rule", "rule"], 2, seed=1, agents=[oracle, spy, make_agent("rule", 1),
                                                                                    make_agent("rule", 2)])
    assert spy.observed > 0 and spy.hidden == 0  # the spy played from observations, and was never handed the deal
    assert oracle.batches and all(isinstance(b, WizardBatch) for b in oracle.batches)
    assert result.records.seeds.tolist() == [s for s in result.deal_seeds for _ in range(4)]  # the real deals
    with pytest.raises(ValueError, match=REFUSED):
        oracle.act_games(oracle.batches[0], np.arange(1))  # the web table and wizard play call act_games
    with pytest.raises(ValueError, match=REFUSED):
        oracle.act_batch(np.zeros((1, 1)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="does not see hidden cards"):
        make_agent("rule", 0).act_hidden(oracle.batches[0], np.arange(1))


@pytest.mark.parametrize("argv, where", [
    (["serve", "--opponents", "rule,oracle"], "--opponents: offered agent 'oracle': "),
    (["play", "--opponents", "oracle:rollout=rule", "--rounds", "2"], "--opponents 'oracle:rollout=rule': "),
    (["simulate", "--agents", "oracle", "--games", "1"], "--agents 'oracle': "),
    pytest.param(["train-values", "--pool", "oracle", "--pool-tables", "0.5", "--out", "unused"], "--pool oracle: ",
                 marks=pytest.mark.skipif(find_spec("torch") is None, reason="wizard train-values asks for torch (the train extra) first")),
])
def test_commands_other_than_eval_refuse_it_in_one_line(argv, where, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"wizard: error: {where}{HIDDEN_REFUSAL}\n"
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_learner_envs_refuse_it_by_spec_and_as_an_agent():
    pytest.importorskip("stable_baselines3", reason="WizardVecEnv needs stable-baselines3 (the train extra)")
    from wizard_env.envs.single_agent import WizardSingleAgentEnv
    from wizard_env.envs.vec_env import WizardVecEnv

    for opponents in ("oracle", ["rule", OracleAgent("rule", seed=0), "rule"]):
        with pytest.raises(ValueError, match=f"opponents\\[[01]\\]: {REFUSED}"):
            WizardSingleAgentEnv(opponents=opponents)
    with pytest.raises(ValueError, match=REFUSED):
        WizardVecEnv(2, opponents="oracle:rollout=rule")


def test_the_docs_ceiling_table_is_the_one_its_json_makes():
    table = ceiling_table(DOCS / "oracle", DOCS / "cards", DOCS)
    assert table in (DOCS / "search.md").read_text()
    assert "| wizard-4p | `oracle:rollout=rule` |" in table and "| wizard-4p-5r | `net` |" in table
