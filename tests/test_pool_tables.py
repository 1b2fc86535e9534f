"""Data from tables of earlier networks (``train-values --pool-tables F --pool SPEC,...``): in a share of the games the
network holds one seat and one agent drawn from the pool the others, at the table and in the rollouts, and only the
network's decisions are kept; with no pool share the data are those of the code before pools, bit for bit."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from wizard_env.agents.base import Agent  # noqa: E402
from wizard_env.agents.ppo_agent import LEARNED_PHASES, PRETRAINED_V3, PPOAgent, load_checkpoint  # noqa: E402
from wizard_env.agents.rule_agent import RuleAgent  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.engine.actions import NUM_ACTIONS  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.values import opponent_pool  # noqa: E402
from wizard_env.training.recipes import recipe as recipes  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402
from wizard_env.training.values.train_values import ValuesTrainer  # noqa: E402
from wizard_env.training.values.values_config import ValuesConfig, check_config  # noqa: E402

PHASES = LEARNED_PHASES["both"]
RULES = Rules.make(3, 3)


class Marked(Agent):
    """Plays the lowest (``low``) or the highest legal action id, and counts the rows it is asked."""

    def __init__(self, end: str):
        self.end, self.rows = end, 0

    def act_batch(self, observations, action_masks):
        legal = np.asarray(action_masks) != 0
        self.rows += len(legal)
        return legal.argmax(axis=1) if self.end == "low" else NUM_ACTIONS - 1 - legal[:, ::-1].argmax(axis=1)


def digest(samples: rv.ValueSamples) -> tuple[str, int]:
    """A chunk's bytes, hashed, and its decisions."""
    h = hashlib.sha256()
    for name in ("obs_bits", "obs_small", "obs_wide", "legal", "legal_values", "advice"):
        h.update(np.ascontiguousarray(getattr(samples, name)).tobytes())
    return h.hexdigest()[:16], len(samples.advice)


def v3(seed: int) -> PPOAgent:
    return PPOAgent(*load_checkpoint(PRETRAINED_V3), seed=np.random.default_rng([seed, 3]))


def test_no_pool_share_gives_the_chunks_the_code_before_pools_gave(tmp_path: Path):
    """The digests were written by the commit before pool tables (daab576): RuleAgent, the recipes' setting (rule
    tables, search pruned by the network) and rollouts of the network, and a trainer's chunks from --start."""
    assert digest(rv.collect_values(RULES, 6, 11, PHASES, 0.5, rule_tables=0.5)) == ("6a629f776a7fdd23", 32)
    pooled = rv.collect_values(RULES, 6, 11, PHASES, 0.5, rule_tables=0.5, pool=[Marked("high")], pool_tables=0.0)
    assert digest(pooled) == ("6a629f776a7fdd23", 32)
    agent = v3(11)
    searched = rv.collect_values(RULES, 6, 11, PHASES, 0.5, behaviour=agent, rollout=agent, search_samples=3,
                                 search_top=2, rule_tables=0.5)
    assert digest(searched) == ("f873530099f2e0dd", 32)
    agent = v3(11)
    assert digest(rv.collect_values(Rules.make(4, 2), 6, 12, PHASES, 0.5, behaviour=agent, rollout=agent)) == ("8b42978e5c8aa9cf", 34)
    cfg = ValuesConfig(mix=[3], samples=40, games=4, share=0.5, targets="search", search_samples=2, search_top=2,
                       rule_tables=0.5, workers=1, hidden=[512, 256], features=True, start=str(PRETRAINED_V3), seed=5)
    paths, decisions = ValuesTrainer(cfg, RULES, tmp_path, quiet=True, rounds=3).collect(0)
    assert decisions == 48 and [digest(rv.read_chunk(p)) for p in paths] == [("d24043311f512c22", 27), ("3514b6749c3f5962", 21)]


def test_pool_tables_are_other_games_than_rule_tables_and_their_opponents_are_drawn_from_the_seed():
    owners = rv.table_seats(4000, 4, 3, rule_tables=0.25, pool_tables=0.25, pool_size=3)
    rule_only = rv.table_seats(4000, 4, 3, rule_tables=0.25)
    np.testing.assert_array_equal(owners == rv.RULE, rule_only == rv.RULE)  # the rule tables stay where they were
    opponent = owners.max(axis=1)
    assert 1900 < (opponent == rv.LEARNER).sum() < 2100 and 900 < (opponent >= rv.POOL).sum() < 1100
    assert all(250 < (opponent == rv.POOL + j).sum() < 420 for j in range(3))
    tables = np.flatnonzero(opponent >= rv.POOL)
    assert ((owners[tables] == opponent[tables, None]).sum(axis=1) == 3).all()  # one opponent holds three seats
    assert (owners[tables, tables % 4] == rv.LEARNER).all()
    np.testing.assert_array_equal(rv.table_seats(4000, 4, 3, 0.25, 0.25, 3), owners)
    assert not np.array_equal(rv.table_seats(4000, 4, 4, 0.25, 0.25, 3), owners)
    every = rv.table_seats(400, 4, 3, rule_tables=0.5, pool_tables=0.5, pool_size=2)
    assert (every.max(axis=1) != rv.LEARNER).all()  # shares summing to 1: no self-play game


def replayed_values(batch, game: int, learner: Agent, opponent: Agent) -> np.ndarray:
    """Each legal action's round score for the acting seat of ``game``, the rest of the round played one game at a
    time with ``learner`` at seat game mod 3 and ``opponent`` at the others."""
    values = np.full(NUM_ACTIONS, np.nan, dtype=np.float32)
    seat, one = batch.current[game], np.zeros(1, dtype=np.int64)
    for action in np.flatnonzero(batch.legal_masks(np.array([game]))[0]):
        sim = batch.copy_games(np.array([game]))
        sim.step(np.array([action]), one)
        while not sim.round_over[0]:
            agent = learner if sim.current[0] == game % 3 else opponent
            sim.step(agent.act_batch(sim.observe(one), sim.legal_masks(one)), one)
        values[action] = sim.round_scores[0, seat]
    return values


def test_the_pool_agent_plays_the_other_seats_at_the_table_and_in_the_rollouts(monkeypatch):
    learner, opponent = Marked("low"), Marked("high")
    tables, checked = [], []
    made = rv.WizardBatch

    class Table(made):
        """The table's batch (not its copies, which ``copy.copy`` makes): every step's acting seats, masks and actions."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.table = self

        def step(self, actions, games=None):
            if self.table is self:
                tables.append((self.current[games].copy(), np.asarray(games).copy(), self.legal_masks(games),
                               np.asarray(actions).copy()))
            return super().step(actions, games)

    real = rv.rollout_values

    def spy(batch, games, rollout, masks=None, others=None, theirs=None):
        values = real(batch, games, rollout, masks, others, theirs)
        for i, game in enumerate(games[:3]):
            checked.append(np.array_equal(values[i], replayed_values(batch, game, learner, opponent), equal_nan=True))
        return values

    monkeypatch.setattr(rv, "WizardBatch", Table)
    monkeypatch.setattr(rv, "rollout_values", spy)
    samples = rv.collect_values(RULES, 6, 2, PHASES, 1.0, behaviour=learner, rollout=learner, pool=[opponent],
                                pool_tables=1.0)
    assert checked and all(checked)
    seats = np.concatenate([s for s, _, _, _ in tables])
    games = np.concatenate([g for _, g, _, _ in tables])
    legal = np.concatenate([m for _, _, m, _ in tables]) != 0
    actions = np.concatenate([a for _, _, _, a in tables])
    low, high = legal.argmax(axis=1), NUM_ACTIONS - 1 - legal[:, ::-1].argmax(axis=1)
    mine = seats == games % 3
    np.testing.assert_array_equal(actions[mine], low[mine])
    np.testing.assert_array_equal(actions[~mine], high[~mine])
    assert (low != high)[~mine].any() and 0 < len(samples) <= mine.sum()


def test_only_the_learners_decisions_are_kept_and_each_opponent_is_asked_once_a_step(monkeypatch):
    seen, calls = [], {}
    real, step = rv.search_values, rv.WizardBatch.step

    def spy(batch, games, rollout, rng, samples, inference=None, masks=None, others=None, theirs=None):
        seen.append((batch.current[games].copy(), games.copy(), others, theirs))
        return real(batch, games, rollout, rng, samples, inference, masks, others, theirs)

    def counted(self, actions, games=None):
        calls["steps"] = calls.get("steps", 0) + 1
        return step(self, actions, games)

    class Asked(Marked):
        def act_batch(self, observations, action_masks):
            calls[self.end] = calls.get(self.end, 0) + 1
            return super().act_batch(observations, action_masks)

    monkeypatch.setattr(rv, "search_values", spy)
    monkeypatch.setattr(rv.WizardBatch, "step", counted)  # the table's and every copy's
    pool = [Asked("low"), Asked("high")]
    samples = rv.collect_values(RULES, 8, 4, PHASES, 1.0, search_samples=2, pool=pool, pool_tables=1.0)
    assert len(samples) and seen
    owners = rv.table_seats(8, 3, 4, pool_tables=1.0, pool_size=2)
    for seats, games, others, theirs in seen:
        np.testing.assert_array_equal(seats, games % 3)  # the learner's seat of each game acts
        assert others[1:] == pool
        np.testing.assert_array_equal(theirs, owners[games])
    assert all(agent.rows for agent in pool)  # both drawn, at the table and in the searches' worlds
    # one call for all the rows of a step (every game's, every copy's), never one a game
    assert 0 < calls["low"] <= calls["steps"] and 0 < calls["high"] <= calls["steps"] < pool[0].rows


def test_the_same_seed_gives_the_same_data_and_another_seed_other_tables():
    def chunk(seed: int) -> tuple[str, int]:
        pool = opponent_pool.build_pool(["rule", "random"], seed)
        return digest(rv.collect_values(RULES, 6, seed, PHASES, 0.5, pool=pool, pool_tables=0.6, rule_tables=0.2))

    assert chunk(7) == chunk(7) and chunk(7) != chunk(8)
    assert chunk(7) != digest(rv.collect_values(RULES, 6, 7, PHASES, 0.5, rule_tables=0.2))


@pytest.mark.parametrize("change, message", [
    (dict(pool_tables=1.5), "--pool-tables"),
    (dict(pool_tables=0.5, rule_tables=0.6, pool=["rule"]), r"--pool-tables 0.5 with --rule-tables 0.6: .* at most 1"),
    (dict(pool_tables=0.5), "--pool-tables needs --pool"),
    (dict(pool=["ppo-v3"]), "--pool applies to --pool-tables only"),
    (dict(pool_tables=0.5, pool=["ppo-v99"]), "--pool ppo-v99: not an agent of the registry"),
    (dict(pool_tables=0.5, pool=["pimc:samples=2"]), "--pool pimc:samples=2: a search agent"),
    (dict(pool_tables=0.5, pool=["search"]), "--pool search: a search agent"),
    (dict(pool_tables=0.5, pool=["ppo-bid"]), "--pool ppo-bid: its network was trained for 4 players, not the 3 of --mix"),
    (dict(pool_tables=0.5, pool=["ppo-v3", "ppo-v3"]), "--pool names 'ppo-v3' twice"),
    (dict(pool_tables=0.5, pool=["rule", ""]), "--pool: '' is not an entry"),
    (dict(pool_tables=0.5, pool=["ppo:nowhere.npz"]), "--pool ppo:nowhere.npz: .*nowhere.npz"),
])
def test_impossible_pools_are_named(change, message):
    with pytest.raises(ValueError, match=message):
        check_config(dataclasses.replace(ValuesConfig(mix=[3, 4]), **change))


def test_collect_values_refuses_shares_it_cannot_seat():
    with pytest.raises(ValueError, match="pool_tables must be a share"):
        rv.collect_values(RULES, 1, 0, PHASES, pool=[Marked("low")], pool_tables=1.5)
    with pytest.raises(ValueError, match="sum to at most 1"):
        rv.collect_values(RULES, 1, 0, PHASES, pool=[Marked("low")], pool_tables=0.5, rule_tables=0.75)
    with pytest.raises(ValueError, match="pool_tables needs a pool"):
        rv.collect_values(RULES, 1, 0, PHASES, pool_tables=0.5)


def test_previous_is_the_runs_earlier_agents_and_a_resume_refuses_another_pool(tmp_path: Path, capsys):
    out = tmp_path / "run"
    args = ["--players", "3", "--rounds", "2", "--mix", "3", "--samples", "20", "--games", "4", "--workers", "1",
            "--epochs", "1", "--eval-deals", "2", "--hidden", "16", "--margin", "2", "--quiet", "--pool-tables", "0.5"]
    assert main(["train-values", "--out", str(out), *args, "--pool", "previous,ppo-v3", "--iterations", "2"]) == 0
    train = json.loads((out / "config.json").read_text())["train"]
    assert (train["pool"], train["pool_tables"]) == (["previous", "ppo-v3"], 0.5)
    assert load_checkpoint(out / "checkpoints" / "iter-1.npz")[0]["train"]["pool"] == ["previous", "ppo-v3"]
    cfg = dataclasses.replace(ValuesConfig(), mix=[3], pool=["previous", "ppo-v3"], pool_tables=0.5)
    trainer = ValuesTrainer(cfg, Rules.make(3, 2), out, quiet=True)
    assert trainer.pool(0) == ("rule", "ppo-v3")
    assert trainer.pool(2) == ("rule", f"ppo:{out / 'checkpoints' / 'iter-0.npz'}", f"ppo:{out / 'checkpoints' / 'iter-1.npz'}", "ppo-v3")
    started = dataclasses.replace(cfg, start=str(out / "checkpoints" / "iter-1.npz"), hidden=[16])
    assert ValuesTrainer(started, Rules.make(3, 2), tmp_path / "other", quiet=True).pool(0) == (f"ppo:{started.start}", "ppo-v3")
    capsys.readouterr()
    assert main(["train-values", "--out", str(out), *args, "--pool", "previous", "--iterations", "3", "--resume"]) == 2
    assert "was started with --pool previous,ppo-v3" in capsys.readouterr().err
    assert main(["train-values", "--out", str(tmp_path / "bad"), *args, "--pool", "ppo-v3,,rule"]) == 2
    assert "--pool: '' is not an entry" in capsys.readouterr().err and not (tmp_path / "bad").exists()


def test_a_recipe_takes_a_pool_and_reads_its_checkpoints_from_the_recipes_folder(tmp_path: Path):
    base = {"name": "pool", "step": [{"name": "data", "kind": "train-values", "mix": [3], "pool_tables": 0.25}]}
    step = dict(base["step"][0], pool=["previous", "ppo-v2", "../zoo/wizard-v3.npz"])
    folder = Path(PRETRAINED_V3).parent.parent / "recipes-here"  # need not exist: only its parent is read
    (cfg,) = recipes.parse({**base, "step": [step]}, folder / "pool.toml").step("data").values_stages()
    assert cfg.pool == ["previous", "ppo-v2", str(PRETRAINED_V3.resolve())] and cfg.pool_tables == 0.25
    with pytest.raises(ValueError, match=r"step 1 'data', key 'pool': expected a list of strings"):
        recipes.parse({**base, "step": [dict(step, pool="ppo-v2")]}, tmp_path / "pool.toml")
    with pytest.raises(ValueError, match=r"step 1 'data', key 'pool': .*search agent"):
        recipes.parse({**base, "step": [dict(step, pool=["pimc"])]}, tmp_path / "pool.toml")


def test_a_pool_read_by_the_driver_is_built_without_its_files(tmp_path: Path):
    """What Ray tasks get (a cluster's machines need not see the driver's files): the plain ``ppo:PATH`` checkpoints,
    read, and agents built from them."""
    shipped = str(PRETRAINED_V3)
    specs = ["rule", "ppo-v3", f"ppo:{shipped}", f"ppo:{shipped}:margin=0"]
    assert list(opponent_pool.read_checkpoints(specs)) == [shipped]
    gone = str(tmp_path / "gone.npz")
    (agent,) = opponent_pool.build_pool([f"ppo:{gone}"], 3, {gone: load_checkpoint(shipped)})
    assert isinstance(agent, PPOAgent) and agent.source == gone
    with pytest.raises(ValueError, match="gone.npz"):
        opponent_pool.build_pool([f"ppo:{gone}"], 3)
