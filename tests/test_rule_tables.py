"""Data from tables of RuleAgents (``train-values --rule-tables F``): in a share of the games the network holds one
seat and RuleAgents the others, at the table and in the rollouts, and only the network's decisions are kept."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from wizard_env.agents.ppo_agent import LEARNED_PHASES, PRETRAINED, PPOAgent, load_checkpoint  # noqa: E402
from wizard_env.agents.random_agent import RandomAgent  # noqa: E402
from wizard_env.agents.rollouts import rollout_values  # noqa: E402
from wizard_env.agents.rule_agent import RuleAgent  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402
from wizard_env.training.values.values_config import ValuesConfig, check_config  # noqa: E402

from test_determinize import positions  # noqa: E402

PHASES = LEARNED_PHASES["both"]


def network(seed: int = 0) -> PPOAgent:
    """The shipped network with no margin: it departs from RuleAgent's choice more often."""
    return PPOAgent.load(PRETRAINED, seed=seed, margins={"bid": 0, "play": 0})


def test_rollouts_give_the_marked_seats_to_the_others():
    batch = positions(Rules.make(4, 8), 16, seed=6)
    games = np.arange(16)
    theirs = np.ones((16, 4), dtype=bool)
    all_rule = rollout_values(batch, games, network(), others=RuleAgent(seed=2), theirs=theirs)
    np.testing.assert_array_equal(all_rule, rollout_values(batch, games, RuleAgent(seed=2)))
    none = rollout_values(batch, games, network(), others=RuleAgent(seed=2), theirs=~theirs)
    np.testing.assert_array_equal(none, rollout_values(batch, games, network()))
    # every seat but the acting one to a random player: the same whichever agent is named the others
    marked = np.arange(4) != batch.current[:, None]
    mixed = rollout_values(batch, games, network(), others=RandomAgent(seed=3), theirs=marked)
    swapped = rollout_values(batch, games, RandomAgent(seed=3), others=network(), theirs=~marked)
    np.testing.assert_array_equal(mixed, swapped)
    assert not np.array_equal(np.nan_to_num(mixed), np.nan_to_num(none))


def test_table_seats_leave_one_seat_in_the_share_of_games_drawn():
    owners = rv.table_seats(400, 5, 3, rule_tables=0.25)
    tables = (owners == rv.RULE).any(axis=1)
    assert 60 < tables.sum() < 140 and set(np.unique(owners)) == {rv.LEARNER, rv.RULE}
    assert ((owners[tables] == rv.RULE).sum(axis=1) == 4).all()
    assert (owners[np.flatnonzero(tables), np.flatnonzero(tables) % 5] == rv.LEARNER).all()
    np.testing.assert_array_equal(rv.table_seats(400, 5, 3, rule_tables=0.25), owners)
    assert (rv.table_seats(400, 5, 3) == rv.LEARNER).all()


class Counting(PPOAgent):
    """The network, counting the rows it is asked to decide."""

    rows = 0

    def act_batch(self, observations, action_masks):
        Counting.rows += len(observations)
        return super().act_batch(observations, action_masks)


def test_at_a_rule_table_only_the_networks_seat_is_asked_and_kept(monkeypatch):
    rules, seen = Rules.make(4, 3), []
    real = rv.rollout_values

    def spy(batch, games, rollout, masks=None, others=None, theirs=None):
        seen.append((batch.current[games].copy(), games.copy(), others, theirs))
        return real(batch, games, rollout, masks, others, theirs)

    monkeypatch.setattr(rv, "rollout_values", spy)
    asked, kept = [], []
    for share in (0.0, 1.0):
        agent = Counting(*load_checkpoint(PRETRAINED), seed=1)
        Counting.rows = 0
        samples = rv.collect_values(rules, 8, 4, PHASES, 1.0, behaviour=agent, rollout=network(1), rule_tables=share)
        asked.append(Counting.rows)
        kept.append(len(samples))
    assert 0.15 < asked[1] / asked[0] < 0.35 and 0.15 < kept[1] / kept[0] < 0.35  # one seat of four
    for seats, games, others, theirs in seen[-3:]:
        assert len(others) == 1 and isinstance(others[rv.RULE], RuleAgent)
        np.testing.assert_array_equal(seats, games % 4)  # the network's seat of each game acts
        np.testing.assert_array_equal(theirs, np.where(np.arange(4) != (games % 4)[:, None], rv.RULE, rv.LEARNER))


@pytest.mark.parametrize("share", [-0.1, 1.5, True])
def test_a_share_that_is_not_one_is_named(share):
    with pytest.raises(ValueError, match="rule_tables"):
        rv.collect_values(Rules.make(3, 2), 1, 0, PHASES, rule_tables=share)
    if not isinstance(share, bool):
        with pytest.raises(ValueError, match="--rule-tables"):
            check_config(dataclasses.replace(ValuesConfig(), rule_tables=share))


def test_a_run_saves_its_rule_tables_and_resumes_only_with_them(tmp_path: Path, capsys):
    out = tmp_path / "run"
    args = ["--players", "3", "--rounds", "3", "--mix", "3", "--samples", "30", "--games", "4", "--workers", "1",
            "--epochs", "1", "--eval-deals", "2", "--hidden", "16", "--margin", "2", "--quiet", "--rule-tables"]
    assert main(["train-values", "--out", str(out), *args, "0.5"]) == 0
    assert json.loads((out / "config.json").read_text())["train"]["rule_tables"] == 0.5
    capsys.readouterr()
    assert main(["train-values", "--out", str(out), *args, "0.25", "--iterations", "2", "--resume"]) == 2
    assert "was started with --rule-tables" in capsys.readouterr().err
