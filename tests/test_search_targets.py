"""``wizard train-values --targets search``: action values from search on redrawn deals (expert iteration's targets),
drawn from the chunk's seed, kept exactly, and the default targets as they were."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from wizard_env.agents.ppo_agent import LEARNED_PHASES, SHIPPED, load_checkpoint  # noqa: E402
from wizard_env.agents.rollouts import rollout_values  # noqa: E402
from wizard_env.agents.rule_agent import RuleAgent  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.engine.actions import Phase  # noqa: E402
from wizard_env.engine.batch import WizardBatch  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402
from wizard_env.training.values.train_values import ValuesTrainer, run_training  # noqa: E402
from wizard_env.training.values.values_config import ValuesConfig, check_config  # noqa: E402
from wizard_env.util import checks  # noqa: E402

RULES = Rules.make(3, rounds=3)
PHASES = LEARNED_PHASES["both"]
SEARCH = ValuesConfig(mix=[3], samples=60, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=2.0,
                      targets="search", search_samples=2)
#: The same run from the command line.
ARGS = ["--players", "3", "--rounds", "3", "--mix", "3", "--samples", "60", "--games", "4", "--workers", "1", "--epochs", "1",
        "--eval-deals", "2", "--hidden", "16", "--margin", "2", "--quiet"]


def arrays(samples: rv.ValueSamples) -> dict[str, np.ndarray]:
    return {name: getattr(samples, name) for name in ("obs_bits", "obs_small", "obs_wide", "legal", "legal_values", "advice")}


def assert_same(a: rv.ValueSamples, b: rv.ValueSamples) -> None:
    first, second = arrays(a), arrays(b)
    assert all(first[k].dtype == second[k].dtype and np.array_equal(first[k], second[k]) for k in first)


def test_search_targets_are_search_values_of_the_decisions_played_from_the_seeds_stream(monkeypatch):
    """Each kept decision's values are ``search_values`` of that position, with the rollout agent as it was then and
    one Generator derived from the chunk's seed drawing every decision's deals in turn."""
    seen = []
    real = rv.search_values

    def spy(batch, games, rollout, rng, samples, inference=None, masks=None):
        assert masks is None and inference is None  # every legal action searched, in uniformly drawn deals
        seen.append((batch.copy_games(games), copy.deepcopy(rollout)))
        return real(batch, games, rollout, rng, samples)

    monkeypatch.setattr(rv, "search_values", spy)
    samples = rv.collect_values(RULES, 4, seed=3, phases=PHASES, share=0.5, search_samples=2)
    assert len(seen) > 2
    rng = np.random.default_rng([3, rv.SEARCH_STREAM])
    expected = np.concatenate([real(world, world.all_games, agent, rng, 2) for world, agent in seen])
    positions = np.concatenate([world.observe(world.all_games) for world, _ in seen])
    assert len(samples) == len(expected) and np.array_equal(samples.observations, positions)
    np.testing.assert_array_equal(samples.values, expected.astype(np.float32))  # NaN where illegal, on both sides
    # the values are those of search, not of the true deal
    truth = np.concatenate([rollout_values(world, world.all_games, RuleAgent(seed=0)) for world, _ in seen])
    assert not np.array_equal(np.nan_to_num(samples.values), np.nan_to_num(truth))


def test_a_mean_over_three_deals_is_kept_as_float32_and_a_chunk_gives_it_back(tmp_path: Path):
    samples = rv.collect_values(RULES, 4, seed=1, phases=PHASES, share=0.5, search_samples=3)
    values = samples.legal_values
    thirds = values.astype(np.float64) * 3 / 10
    assert np.allclose(thirds, np.rint(thirds), atol=1e-4)  # each a mean of three round scores (multiples of 10)
    assert values.dtype == np.float32 and not np.array_equal(values, np.rint(values))  # not rounded to int16
    rv.write_chunk(tmp_path / "chunk.npz", samples)
    assert_same(rv.read_chunk(tmp_path / "chunk.npz"), samples)


def committed_collect_values(rules: Rules, games: int, seed: int, phases: tuple[int, ...], share: float) -> rv.ValueSamples:
    """``collect_values`` with RuleAgent as it was before search targets: values in the true deal."""
    rng = np.random.default_rng([seed, 2])
    rule = RuleAgent(seed=np.random.default_rng([seed, 1]))
    learned = np.zeros(len(Phase), dtype=bool)
    learned[list(phases)] = True
    batch = WizardBatch(rules, games, seed=seed, autoreset=False)
    parts = []
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        o, m = batch.observe(live), batch.legal_masks(live)
        hint = rule.act_batch(o, m)
        keep = learned[batch.phase[live]] & (m.sum(axis=1) > 1) & (rng.random(len(live)) < share)
        if keep.any():
            parts.append(rv.ValueSamples.of(o[keep], m[keep], rollout_values(batch, live[keep], rule), hint[keep]))
        batch.step(hint, live)
    return rv.ValueSamples.concatenate(parts)


def test_the_default_targets_give_the_chunks_they_gave_before(tmp_path: Path):
    cfg = dataclasses.replace(SEARCH, targets="rollout", search_samples=ValuesConfig.search_samples)
    paths, _ = ValuesTrainer(cfg, RULES, tmp_path, quiet=True, rounds=3).collect(0)
    seed = int(np.random.default_rng([cfg.seed, 0, 0]).integers(2**62))  # the trainer's seed of chunk 0
    assert_same(rv.read_chunk(paths[0]), committed_collect_values(RULES, cfg.games, seed, PHASES, cfg.share))
    assert_same(rv.collect_values(RULES, 4, 5, PHASES, 0.5), committed_collect_values(RULES, 4, 5, PHASES, 0.5))


def test_a_seed_gives_one_data_set_with_one_or_two_workers(tmp_path: Path):
    one, _ = ValuesTrainer(SEARCH, RULES, tmp_path / "one", quiet=True, rounds=3).collect(0)
    two, _ = ValuesTrainer(dataclasses.replace(SEARCH, workers=2), RULES, tmp_path / "two", quiet=True, rounds=3).collect(0)
    assert [p.name for p in one] == [p.name for p in two] and len(one) > 1
    for a, b in zip(one, two):
        assert_same(rv.read_chunk(a), rv.read_chunk(b))
    rollout, _ = ValuesTrainer(dataclasses.replace(SEARCH, targets="rollout", search_samples=8), RULES, tmp_path / "rollout",
                               quiet=True, rounds=3).collect(0)
    assert not np.array_equal(rv.read_chunk(rollout[0]).values, rv.read_chunk(one[0]).values)  # the targets took effect


def test_a_run_with_search_targets_writes_an_agent_that_wizard_eval_plays_and_resumes_only_as_it_began(tmp_path: Path, capsys):
    out = tmp_path / "run"
    # iteration 1 searches with iteration 0's network as the rollout policy
    assert main(["train-values", "--out", str(out), *ARGS, "--iterations", "2", "--targets", "search", "--search-samples", "2"]) == 0
    config, _ = load_checkpoint(out / "checkpoints" / "latest.npz")
    assert config["iteration"] == 1 and len(list((out / "data" / "iter-1").iterdir())) > 0
    assert (config["train"]["targets"], config["train"]["search_samples"]) == ("search", 2)
    saved = json.loads((out / "config.json").read_text())
    assert (saved["train"]["targets"], saved["train"]["search_samples"]) == ("search", 2)
    assert main(["eval", "--agents", f"ppo:{out}/checkpoints/latest.npz,rule,rule", "--players", "3", "--rounds", "3",
                 "--games", "2", "--out", str(tmp_path / "eval"), "--quiet"]) == 0
    assert (tmp_path / "eval" / "eval.json").is_file()
    capsys.readouterr()
    for other in (["--targets", "rollout"], ["--targets", "search", "--search-samples", "3"]):
        assert main(["train-values", "--out", str(out), *ARGS, "--iterations", "3", "--resume", *other]) == 2
        assert "was started with --" in capsys.readouterr().err
    # a run saved before search targets existed is read as a run of rollout targets
    for key in ("targets", "search_samples"):
        del saved["train"][key]
    (out / "config.json").write_text(json.dumps(saved))
    assert main(["train-values", "--out", str(out), *ARGS, "--iterations", "3", "--resume", "--targets", "search",
                 "--search-samples", "2"]) == 2
    assert "was started with --targets rollout" in capsys.readouterr().err


def test_a_run_saved_before_search_targets_resumes_with_the_default_targets(tmp_path: Path):
    out = tmp_path / "run"
    cfg = dataclasses.replace(SEARCH, targets="rollout", search_samples=ValuesConfig.search_samples)
    run_training(cfg, RULES, out, quiet=True, log=lambda line: None, rounds=3)
    saved = json.loads((out / "config.json").read_text())
    for key in ("targets", "search_samples"):
        del saved["train"][key]
    (out / "config.json").write_text(json.dumps(saved))
    run_training(dataclasses.replace(cfg, iterations=2), RULES, out, resume=True, quiet=True, log=lambda line: None, rounds=3)
    assert (out / "checkpoints" / "iter-1.npz").is_file()


@pytest.mark.parametrize("change, message", [
    ({"targets": "mcts"}, "--targets must be one of rollout, search"),
    ({"search_samples": 0}, "--search-samples"),
    ({"targets": "rollout", "search_samples": 4}, "--search-samples applies to --targets search only"),
    ({"targets": "rollout", "search_samples": 8, "search_top": 4}, "--search-top applies to --targets search only"),
    ({"search_top": -1}, "--search-top"),
    ({"targets": "rollout", "search_samples": 8, "search_infer": True}, "--search-infer applies to --targets search only"),
])
def test_impossible_search_settings_are_named(change, message):
    with pytest.raises(ValueError, match=message):
        check_config(dataclasses.replace(SEARCH, **change))


@pytest.mark.parametrize("samples", [-1, 1.5, True])
def test_collect_values_names_a_search_samples_that_is_not_a_count(samples):
    with pytest.raises(ValueError, match="search_samples must be a non-negative integer"):
        rv.collect_values(RULES, 1, 0, PHASES, search_samples=samples)


def test_the_memory_check_counts_every_redrawn_deals_copies(monkeypatch):
    monkeypatch.setattr(checks, "available_memory", lambda: (2**30, 64 * 2**30))  # a loaded machine: 1 of 64 GiB free
    check_config(dataclasses.replace(SEARCH, games=1000, targets="rollout", search_samples=8))  # 250 MiB of copies
    check_config(dataclasses.replace(SEARCH, games=1000, search_samples=2))
    with pytest.raises(ValueError, match="--search-samples 8 would need about"):
        check_config(dataclasses.replace(SEARCH, games=1000, search_samples=8))
    with pytest.raises(ValueError, match="--search-samples 2 would need about"):  # 8 deals drawn for each one kept
        check_config(dataclasses.replace(SEARCH, games=1000, search_samples=2, search_infer=True))


def test_inferred_targets_value_the_same_decisions_in_the_deals_the_bids_make_likely(monkeypatch):
    """With ``search_infer`` the same decisions are kept, played and stored, and only the values differ: each is
    ``search_values`` with the inference of the rollout policy (RuleAgent's bid model here), 8 deals drawn for each one
    kept, systematic draws, from the same stream of the seed."""
    seen = []
    real = rv.search_values

    def spy(batch, games, rollout, rng, samples, inference=None, masks=None):
        assert inference is not None and inference.model is None  # RuleAgent plays out: its bid model
        assert (inference.oversample, inference.resample) == (rv.INFER_OVERSAMPLE, "systematic")
        seen.append((batch.copy_games(games), copy.deepcopy(rollout), inference))
        return real(batch, games, rollout, rng, samples, inference, masks)

    uniform = rv.collect_values(RULES, 4, seed=3, phases=PHASES, share=0.5, search_samples=2)
    monkeypatch.setattr(rv, "search_values", spy)
    inferred = rv.collect_values(RULES, 4, seed=3, phases=PHASES, share=0.5, search_samples=2, search_infer=True)
    same = {name: arrays(inferred)[name] for name in ("obs_bits", "obs_small", "obs_wide", "legal", "advice")}
    assert all(np.array_equal(value, arrays(uniform)[name]) for name, value in same.items())
    rng = np.random.default_rng([3, rv.SEARCH_STREAM])
    expected = np.concatenate([real(world, world.all_games, agent, rng, 2, inference) for world, agent, inference in seen])
    np.testing.assert_array_equal(inferred.values, expected.astype(np.float32))
    assert not np.array_equal(np.nan_to_num(inferred.values), np.nan_to_num(uniform.values))


def test_the_bid_model_of_inferred_targets_is_the_rollout_policys_and_random_bids_tell_nothing():
    network = rv.PPOAgent.load(SHIPPED["ppo"], seed=np.random.default_rng(1))
    inference = rv.search_inference(network, 7)
    assert inference is not None and inference.model is not network and inference.model.rule is not network.rule
    batch = WizardBatch(RULES, 3, seed=2)
    observations, masks = batch.observe(batch.all_games), batch.legal_masks(batch.all_games)
    np.testing.assert_array_equal(inference.model.logits(observations, masks), network.logits(observations, masks))
    assert rv.search_inference(RuleAgent(seed=0), 7).model is None
    assert rv.search_inference(rv.RandomAgent(seed=0), 7) is None
    # uniformly random bidders: the values of uniform search, draw for draw
    random = dict(rules=RULES, games=4, seed=3, phases=PHASES, share=0.5, search_samples=2, advice=False)
    assert_same(rv.collect_values(**random, search_infer=True), rv.collect_values(**random))


def test_a_run_records_inferred_targets_and_resumes_only_as_it_began(tmp_path: Path, capsys):
    search = [*ARGS, "--targets", "search", "--search-samples", "2"]
    out, uniform = tmp_path / "run", tmp_path / "uniform"
    assert main(["train-values", "--out", str(out), *search, "--search-infer"]) == 0
    assert json.loads((out / "config.json").read_text())["train"]["search_infer"] is True
    assert load_checkpoint(out / "checkpoints" / "latest.npz")[0]["train"]["search_infer"] is True
    assert main(["train-values", "--out", str(out), *search, "--iterations", "2", "--resume"]) == 0  # as it began
    assert load_checkpoint(out / "checkpoints" / "latest.npz")[0]["train"]["search_infer"] is True
    assert main(["train-values", "--out", str(uniform), *search]) == 0
    capsys.readouterr()
    assert main(["train-values", "--out", str(uniform), *search, "--iterations", "2", "--resume", "--search-infer"]) == 2
    assert "was started with no --search-infer" in capsys.readouterr().err
