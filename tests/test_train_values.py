"""wizard train-values on tiny budgets: what a run writes, how it resumes, what it refuses."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from wizard_env.agents.ppo_agent import PPOAgent, load_checkpoint
from wizard_env.engine.actions import NUM_ACTIONS
from wizard_env.agents.rule_features import FEATURES
from wizard_env.training.values import rollout_values as rv
from wizard_env.training.values.rollout_values import VALUE_SCALE
from wizard_env.training.values.train_values import ValuesConfig, run_chunks, run_training
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.rules import Rules

pytest.importorskip("torch", reason="needs torch (the train extra), not installed")

RULES = Rules.make(3, rounds=3)
TINY = ValuesConfig(mix=[3], samples=150, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=2.0)


def run(out: Path, cfg: ValuesConfig = TINY, resume: bool = False):
    return run_training(cfg, RULES, out, resume=resume, quiet=True, log=lambda line: None, rounds=3)


def test_a_run_writes_agents_that_play_and_a_resume_keeps_what_is_finished(tmp_path: Path):
    out = tmp_path / "run"
    run(out)
    first = out / "checkpoints" / "iter-0.npz"
    config, _ = load_checkpoint(first)
    assert config["advice_bonus"] == pytest.approx(2.0 * VALUE_SCALE) and config["train"]["method"] == "rollout-values"
    assert len((out / "curve.csv").read_text().splitlines()) == 2  # header and one evaluation
    chunks = sorted((out / "data" / "iter-0").iterdir())
    stamps = [p.stat().st_mtime_ns for p in [first, *chunks]]

    run(out, dataclasses.replace(TINY, iterations=2), resume=True)
    assert [p.stat().st_mtime_ns for p in [first, *chunks]] == stamps  # iteration 0 was not redone
    assert sorted((out / "data" / "iter-0").iterdir()) == chunks
    assert (out / "data" / "iter-1").is_dir() and len((out / "curve.csv").read_text().splitlines()) == 3
    agent = PPOAgent.load(out / "checkpoints" / "latest.npz", seed=0)
    batch = WizardBatch(RULES, 4, seed=1, autoreset=False)
    while (live := np.flatnonzero(batch.phase != 3)).size:  # a whole game: every action legal (step checks)
        batch.step(agent.act_batch(batch.observe(live), batch.legal_masks(live)), live)


def test_a_new_run_into_a_used_folder_and_a_resume_with_other_settings_are_refused(tmp_path: Path):
    out = tmp_path / "run"
    run(out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    with pytest.raises(ValueError, match="already holds a run"):
        run(out)
    with pytest.raises(ValueError, match="--margin"):
        run(out, dataclasses.replace(TINY, margin=1.0), resume=True)
    with pytest.raises(ValueError, match="no run"):
        run(tmp_path / "empty", resume=True)
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


@pytest.mark.parametrize("change, option", [({"samples": 0}, "--samples"), ({"share": 1.5}, "--share"), ({"workers": 10**6}, "--workers"),
                                            ({"margin": -1.0}, "--margin"), ({"play_margin": -1.0}, "--play-margin"),
                                            ({"play_margin": float("nan")}, "--play-margin"), ({"hidden": []}, "--hidden"),
                                            ({"learn": "all"}, "--learn")])
def test_impossible_settings_are_named_before_anything_is_written(tmp_path: Path, change, option):
    with pytest.raises(ValueError, match=option):
        run(tmp_path / "run", dataclasses.replace(TINY, **change))
    assert not (tmp_path / "run").exists()


def test_a_play_margin_gives_card_play_its_own_advice_bonus(tmp_path: Path):
    run(tmp_path / "run", dataclasses.replace(TINY, play_margin=5.0))
    config, _ = load_checkpoint(tmp_path / "run" / "checkpoints" / "latest.npz")
    assert config["advice_bonus"] == {"bid": pytest.approx(2.0 * VALUE_SCALE), "play": pytest.approx(5.0 * VALUE_SCALE)}
    assert PPOAgent.load(tmp_path / "run" / "checkpoints" / "latest.npz").phase_bonus.tolist() == pytest.approx(
        [2.0 * VALUE_SCALE, 2.0 * VALUE_SCALE, 5.0 * VALUE_SCALE, 0.0])


def test_the_same_seed_gives_the_same_agent_whatever_order_the_workers_finish_in(tmp_path: Path):
    run(tmp_path / "one", dataclasses.replace(TINY, workers=1))
    run(tmp_path / "two", dataclasses.replace(TINY, workers=2))
    chunks = [sorted(p.name for p in (tmp_path / name / "data" / "iter-0").iterdir()) for name in ("one", "two")]
    _, first = load_checkpoint(tmp_path / "one" / "checkpoints" / "latest.npz")
    _, second = load_checkpoint(tmp_path / "two" / "checkpoints" / "latest.npz")
    assert set(chunks[0]) <= set(chunks[1])  # two workers may have started one chunk more, unused
    assert first.keys() == second.keys() and all(np.array_equal(first[k], second[k]) for k in first)


def test_data_all_fits_every_iterations_data_and_a_resume_may_change_the_fit(tmp_path: Path):
    out = tmp_path / "run"
    run(out)
    lines: list[str] = []
    run_training(dataclasses.replace(TINY, iterations=2, data="all", epochs=2, learning_rate=5e-4), RULES, out,
                 resume=True, log=lines.append, rounds=3)
    config, _ = load_checkpoint(out / "checkpoints" / "iter-1.npz")
    first, _ = load_checkpoint(out / "checkpoints" / "iter-0.npz")
    assert config["train"]["data"] == "all" and first["train"]["data"] == "last"
    own = config["num_samples"] - first["num_samples"]  # iteration 1's own decisions
    fitted = [int(line.split("fitted ")[1].split(" ")[0].replace(",", "")) for line in lines if "fitted" in line]
    assert len(fitted) == 1 and fitted[0] > own  # iteration 0's decisions too (less the held-out chunks)
    assert "on held-out games it departs from RuleAgent at" in next(line for line in lines if "fitted" in line)
    with pytest.raises(ValueError, match="--share"):  # a setting of the data may not change
        run(out, dataclasses.replace(TINY, iterations=3, share=0.5), resume=True)


def test_a_fit_of_fewer_than_twelve_chunks_says_it_has_no_held_out_games(tmp_path: Path):
    lines: list[str] = []
    run_training(dataclasses.replace(TINY, games=48), RULES, tmp_path / "run", log=lines.append, rounds=3)
    assert len(list((tmp_path / "run" / "data").glob("iter-*/chunk-*.npz"))) < 12
    fitted = next(line for line in lines if "fitted" in line)
    assert "none held out: every 12th chunk is held out" in fitted and "departs" not in fitted


def test_features_give_a_network_that_reads_rule_agents_numbers_and_a_resume_may_not_drop_them(tmp_path: Path):
    out = tmp_path / "run"
    run(out, dataclasses.replace(TINY, features=True))
    config, weights = load_checkpoint(out / "checkpoints" / "latest.npz")
    plain, _ = load_checkpoint(run(tmp_path / "plain").out / "checkpoints" / "latest.npz")
    assert config["features"] is True and plain["features"] is False
    first = weights["mlp_extractor.policy_net.0.weight"]
    assert first.shape[1] == rv.input_width(True) == rv.input_width(False) + FEATURES * NUM_ACTIONS
    agent = PPOAgent(config, weights, seed=0)
    batch = WizardBatch(RULES, 4, seed=1, autoreset=False)
    while (live := np.flatnonzero(batch.phase != 3)).size:  # a whole game: every action legal (step checks)
        batch.step(agent.act_batch(batch.observe(live), batch.legal_masks(live)), live)
    # The features' columns carry weight: zeroing them changes the values the agent plays by.
    observations, masks = batch_positions()
    cut = dict(weights, **{"mlp_extractor.policy_net.0.weight": np.where(np.arange(first.shape[1]) >= rv.input_width(False), 0, first)})
    assert not np.allclose(agent.logits(observations, masks), PPOAgent(config, cut, seed=0).logits(observations, masks))
    with pytest.raises(ValueError, match="--features"):
        run(out, dataclasses.replace(TINY, iterations=2), resume=True)


def batch_positions() -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the first decisions of a few fresh games (bids and trump choices)."""
    batch = WizardBatch(RULES, 8, seed=5, autoreset=False)
    return batch.observe(batch.all_games), batch.legal_masks(batch.all_games)


def test_a_resume_keeps_the_runs_settings_and_refuses_one_that_changes_them_naming_them(tmp_path: Path, capsys):
    from wizard_env.cli.main import main

    out = tmp_path / "run"
    started = ["--players", "3", "--rounds", "2", "--mix", "3", "--games", "4", "--workers", "1", "--eval-deals", "2",
               "--samples", "30", "--hidden", "16", "--margin", "2", "--seed", "5", "--epochs", "1", "--data", "all",
               "--features", "--quiet"]
    assert main(["train-values", "--out", str(out), *started]) == 0
    saved = json.loads((out / "config.json").read_text())
    capsys.readouterr()
    refused = [(["--samples", "40", "--share", "0.5"], "was started with --samples 30, --share 0.25; leave out --samples, --share"),
               (["--players", "4"], "was started with rules"), (["--rounds", "3"], "was started with rules")]
    for options, named in refused:
        assert main(["train-values", "--out", str(out), "--resume", "--iterations", "2", "--quiet", *options]) == 2
        err = capsys.readouterr().err
        assert named in err and "leave out" in err and not (out / "data" / "iter-1").exists()
        assert json.loads((out / "config.json").read_text()) == saved  # nothing written
    assert main(["train-values", "--out", str(out), "--resume", "--iterations", "2", "--quiet"]) == 0
    resumed = json.loads((out / "config.json").read_text())
    assert resumed["train"] == {**saved["train"], "iterations": 2}  # the same run, data and fit settings included
    assert resumed["rules"] == saved["rules"] and resumed["rounds"] == saved["rounds"] == 2
    assert (out / "checkpoints" / "iter-1.npz").is_file()

def test_a_resume_reads_the_rules_and_rounds_of_runs_saved_before_config_json_held_the_rounds(tmp_path: Path):
    from wizard_env.engine.rules import Rules
    from wizard_env.training.common import rules_json
    from wizard_env.training.values.values_config import saved_rules

    path = tmp_path / "config.json"
    standard, short = Rules.make(4), Rules.make(3, [1, 2], "hidden", False, True)
    assert saved_rules({"rules": rules_json(standard)}, path) == (standard, "standard", None)
    assert saved_rules({"rules": rules_json(short)}, path) == (short, [1, 2], None)
    assert saved_rules({"rules": rules_json(short), "rounds": 2, "setting": "wizard-3p-5r"}, path)[1:] == (2, "wizard-3p-5r")
    with pytest.raises(ValueError, match=f"{path} is damaged"):
        saved_rules({"rules": {**rules_json(short), "bidding": "loud"}}, path)


def test_a_resume_of_a_setting_run_keeps_its_setting(tmp_path: Path, capsys):
    from wizard_env.cli.main import main

    out = tmp_path / "run"
    tiny = ["--games", "4", "--workers", "1", "--eval-deals", "2", "--samples", "20", "--hidden", "8", "--quiet"]
    assert main(["train-values", "--out", str(out), "--setting", "wizard-3p-5r", *tiny]) == 0
    saved = json.loads((out / "config.json").read_text())
    assert saved["setting"] == "wizard-3p-5r" and saved["train"]["mix"] == [3]
    capsys.readouterr()
    assert main(["train-values", "--out", str(out), "--resume", "--mix", "3,4", "--quiet"]) == 2
    assert "setting 'wizard-3p-5r' fixes the game: --mix" in capsys.readouterr().err
    assert main(["train-values", "--out", str(out), "--resume", "--iterations", "2", "--quiet"]) == 0
    assert "--setting wizard-3p-5r --agents" in capsys.readouterr().out
    resumed = json.loads((out / "config.json").read_text())
    assert {k: resumed[k] for k in ("setting", "rules", "rounds")} == {k: saved[k] for k in ("setting", "rules", "rounds")}
    assert (out / "checkpoints" / "iter-1.npz").is_file()


def test_data_from_adds_the_data_of_earlier_runs_to_every_fit_and_names_what_it_cannot_read(tmp_path: Path):
    first, second = tmp_path / "first", tmp_path / "second"
    run(first, dataclasses.replace(TINY, iterations=2, seed=1))
    lines: list[str] = []
    cfg = dataclasses.replace(TINY, data_from=[str(first)])
    run_training(cfg, RULES, second, log=lines.append, rounds=3)
    used = [run_chunks(folder, dataclasses.replace(TINY, iterations=k + 1), RULES, [k], 3)[0]
            for folder, k in ((first, 0), (first, 1), (second, 0))]  # the chunks each iteration used, in order
    sizes = [rv.read_chunk(path).advice.size for chunks in used for path in chunks]
    fitted = [int(line.split("fitted ")[1].split(" ")[0].replace(",", "")) for line in lines if "fitted" in line]
    assert len(used[0]) + len(used[1]) >= 12  # so a chunk of the first run is held out too
    assert fitted == [sum(n for i, n in enumerate(sizes) if i % 12 != 11)]  # every 12th chunk of the list held out
    assert f"--data-from: {sum(sizes[:-len(used[2])]):,} decisions in {len(used[0]) + len(used[1])} chunks" in lines[0]
    assert json.loads((second / "config.json").read_text())["train"]["data_from"] == [str(first)]
    with pytest.raises(ValueError, match="--data-from"):  # a resume keeps the runs it reads
        run(second, dataclasses.replace(TINY, iterations=2), resume=True)

    unfinished = tmp_path / "unfinished"
    run(unfinished)
    config = json.loads((unfinished / "config.json").read_text())
    config["train"]["iterations"] = 2  # as a run stopped before its second iteration
    (unfinished / "config.json").write_text(json.dumps(config))
    scratch = tmp_path / "scratch"
    run(scratch, dataclasses.replace(TINY, advice=False, margin=0.0))
    for names, message in [([str(tmp_path / "none")], "no wizard train-values run there"),
                           ([str(first), str(first)], "named twice"), ([str(tmp_path / "new")], "this run's own folder"),
                           ([str(unfinished)], "iteration 1 of the train-values run is not finished.*finish that run first"),
                           ([str(scratch)], r"stored with the action played \(--no-advice\), this run's with RuleAgent's choice")]:
        with pytest.raises(ValueError, match=f"--data-from .*{message}"):
            run(tmp_path / "new", dataclasses.replace(TINY, data_from=names))
        assert not (tmp_path / "new").exists()


def test_a_gate_keeps_an_iteration_only_if_it_climbs_and_the_next_collects_with_the_last_kept(tmp_path: Path, monkeypatch):
    from wizard_env.training.evaluation import gate
    from wizard_env.training.values import train_values
    from wizard_env.training.evaluation.iteration_curve import run_checkpoints

    played = []

    def judged(candidate, earlier, rules, deals, seed, rule):  # the real games, then the verdict this test needs
        verdict = gate.play_gate(candidate, earlier, rules, deals, seed, rule)
        played.append((Path(candidate).name, Path(earlier).name, seed))
        return {**verdict, "kept": Path(candidate).name != "iter-1.npz"}

    monkeypatch.setattr(train_values, "play_gate", judged)
    out = tmp_path / "run"
    cfg = dataclasses.replace(TINY, iterations=3, gate=4, pool_tables=0.5, pool=["previous"])
    trainer = run(out, cfg)
    checkpoints = out / "checkpoints"
    # iteration 0 had no network before it; iteration 2 met iteration 0, the one the gate kept, not the rejected 1
    assert [p for p, _, _ in played] == ["iter-1.npz", "iter-2.npz"] and [e for _, e, _ in played] == ["iter-0.npz"] * 2
    assert len({s for _, _, s in played}) == 2  # each iteration's gate plays deals of its own
    assert not gate.gate_path(checkpoints / "iter-0.npz").exists()
    verdicts = [gate.read_gate(gate.gate_path(checkpoints / f"iter-{k}.npz")) for k in (1, 2)]
    assert [v["kept"] for v in verdicts] == [False, True]
    assert all(set(v["previous"]) == {"mean", "ci95"} and v["deals"] == 4 for v in verdicts)
    assert trainer.before(2) == str(checkpoints / "iter-0.npz") and trainer.before(3) == str(checkpoints / "iter-2.npz")
    assert trainer.pool(2) == ("rule", f"ppo:{checkpoints / 'iter-0.npz'}")  # previous: the agents that collected, once each
    latest, last = load_checkpoint(checkpoints / "latest.npz")[1], load_checkpoint(checkpoints / "iter-2.npz")[1]
    assert all(np.array_equal(latest[k], last[k]) for k in last)
    assert [c.label for c in run_checkpoints(out)] == ["iter-0", "iter-2"]  # the curve's rows: the networks kept


def test_a_gate_rejecting_the_last_iteration_leaves_latest_at_the_network_before_and_a_resume_plays_a_lost_gate_again(tmp_path: Path):
    from wizard_env.training.evaluation import gate

    out = tmp_path / "run"
    run(out, dataclasses.replace(TINY, iterations=2, gate=4))
    checkpoints = out / "checkpoints"
    path = gate.gate_path(checkpoints / "iter-1.npz")
    verdict = gate.read_gate(path)
    kept = checkpoints / ("iter-1.npz" if verdict["kept"] else "iter-0.npz")
    latest, expected = load_checkpoint(checkpoints / "latest.npz")[1], load_checkpoint(kept)[1]
    assert all(np.array_equal(latest[k], expected[k]) for k in expected)
    assert verdict["kept"] == (verdict["previous"]["mean"] > 0 and verdict["self_play_change"]["mean"] >= 0)

    path.unlink()  # as if killed during the gate: the iteration is not finished, its checkpoint is kept
    stamp = (checkpoints / "iter-1.npz").stat().st_mtime_ns
    run(out, dataclasses.replace(TINY, iterations=2, gate=4), resume=True)
    assert gate.read_gate(path) == verdict and (checkpoints / "iter-1.npz").stat().st_mtime_ns == stamp

    path.write_text("{")
    with pytest.raises(ValueError, match="iter-1.gate.json is not valid JSON.*delete it"):
        run(out, dataclasses.replace(TINY, iterations=3, gate=4), resume=True)
    with pytest.raises(ValueError, match="--gate"):
        run(out, dataclasses.replace(TINY, iterations=2, gate=6), resume=True)
    with pytest.raises(ValueError, match="--gate must be 0 .* not 1"):
        run(tmp_path / "one", dataclasses.replace(TINY, gate=1))
    assert not (tmp_path / "one").exists()


@pytest.mark.parametrize(("previous", "change", "means", "climbs"), [
    ((6.5, 1.3), (6.7, 1.7), True, True),  # wizard-v9's kept iteration: its interval above 0
    ((0.2, 1.2), (0.8, 1.6), True, False),  # its run's level iteration 2: kept on the means, not climbing
    ((2.0, 1.0), (-0.5, 1.5), False, False),  # climbs in eval-iterations' words, but loses in self-play on the mean
    ((-0.4, 1.2), (1.8, 1.7), False, False),  # behind head to head
    ((1.5, 1.5), (0.0, 1.0), True, False),  # the interval touches 0: not above it
])
def test_the_gate_rules_keep_what_their_documentation_says(previous, change, means, climbs):
    from wizard_env.training.evaluation.gate import keeps
    from wizard_env.training.evaluation.pairing import Figure, verdict

    previous, change = Figure(*previous), Figure(*change)
    assert keeps(previous, change, "means") is means and keeps(previous, change, "climbs") is climbs
    assert not climbs or verdict(previous, change) == "climbs"  # what climbs keeps, eval-iterations calls climbs
    assert not climbs or means  # and means keeps too
    with pytest.raises(ValueError, match="--gate-rule must be one of means, climbs, not 'sure'"):
        keeps(previous, change, "sure")


def test_a_climbs_gate_records_its_rule_judges_by_it_and_a_resume_may_change_the_rule(tmp_path: Path, monkeypatch):
    from wizard_env.training.evaluation import gate
    from wizard_env.training.values import train_values

    rules = []

    def judged(candidate, earlier, game, deals, seed, rule):
        rules.append(rule)
        return gate.play_gate(candidate, earlier, game, deals, seed, rule)

    monkeypatch.setattr(train_values, "play_gate", judged)
    out = tmp_path / "run"
    run(out, dataclasses.replace(TINY, iterations=2, gate=4, gate_rule="climbs"))
    checkpoints = out / "checkpoints"
    verdict = gate.read_gate(gate.gate_path(checkpoints / "iter-1.npz"))
    figures = [gate.Figure(**verdict[k]) for k in ("previous", "self_play_change")]
    assert rules == ["climbs"] and verdict["rule"] == "climbs" and verdict["kept"] == gate.keeps(*figures, "climbs")
    kept = checkpoints / ("iter-1.npz" if verdict["kept"] else "iter-0.npz")
    latest, expected = load_checkpoint(checkpoints / "latest.npz")[1], load_checkpoint(kept)[1]
    assert all(np.array_equal(latest[k], expected[k]) for k in expected)
    assert "gate (climbs) over 4 deals" in gate.describe(1, verdict)
    # a resume judges its new iterations by the rule it gives; the verdict written earlier stands
    run(out, dataclasses.replace(TINY, iterations=3, gate=4, gate_rule="means"), resume=True)
    assert rules == ["climbs", "means"] and gate.read_gate(gate.gate_path(checkpoints / "iter-2.npz"))["rule"] == "means"
    assert gate.read_gate(gate.gate_path(checkpoints / "iter-1.npz")) == verdict
    # a verdict written before --gate-rule existed reads as the means rule
    old = {k: v for k, v in verdict.items() if k != "rule"}
    assert "gate (means)" in gate.describe(1, old)


def test_a_gate_rule_without_a_gate_or_of_another_name_is_refused_before_anything_is_written(tmp_path: Path):
    for cfg, message in [(dataclasses.replace(TINY, gate_rule="climbs"), "--gate-rule applies with --gate only"),
                         (dataclasses.replace(TINY, gate=4, gate_rule="sure"), "--gate-rule must be one of means, climbs, not 'sure'")]:
        with pytest.raises(ValueError, match=message):
            run(tmp_path / "run", cfg)
        assert not (tmp_path / "run").exists()


def test_confirm_plays_a_kept_network_again_on_other_deals_and_keeps_it_only_if_kept_there_too(tmp_path: Path, monkeypatch):
    from wizard_env.training.evaluation import gate
    from wizard_env.training.values import train_values

    played = []

    def judged(candidate, earlier, game, deals, seed, rule):  # the real games; iter-1 passes the gate and not its confirmation
        verdict = gate.play_gate(candidate, earlier, game, deals, seed, rule)
        played.append((Path(candidate).name, deals, seed))
        return {**verdict, "kept": Path(candidate).name == "iter-2.npz" or deals == 4}

    monkeypatch.setattr(train_values, "play_gate", judged)
    lines: list[str] = []
    out = tmp_path / "run"
    cfg = dataclasses.replace(TINY, iterations=3, gate=4, confirm=6)
    run_training(cfg, RULES, out, quiet=False, log=lines.append, rounds=3)
    # each gate that keeps is played again on 6 deals of its own seed; the first gate is its usual one
    assert [(name, deals) for name, deals, _ in played] == [("iter-1.npz", 4), ("iter-1.npz", 6), ("iter-2.npz", 4), ("iter-2.npz", 6)]
    seeds = [seed for _, _, seed in played]
    assert len(set(seeds)) == 4 and seeds[0] == gate.gate_seed(cfg.seed, 1) and seeds[1] == gate.confirm_seed(cfg.seed, 1)
    checkpoints = out / "checkpoints"
    first, second = (gate.read_gate(gate.gate_path(checkpoints / f"iter-{k}.npz")) for k in (1, 2))
    assert first["kept"] is False and first["confirm"]["kept"] is False and first["confirm"]["deals"] == 6
    assert second["kept"] is True and second["confirm"]["kept"] is True and second["earlier"].endswith("iter-0.npz")
    assert set(first["confirm"]["previous"]) == {"mean", "ci95"} and first["previous"] != first["confirm"]["previous"]
    line = next(l for l in lines if l.startswith("iteration 1: gate"))
    assert "confirmed over 6 other deals" in line and "(not kept there)" in line and line.endswith("again")
    latest, kept = load_checkpoint(checkpoints / "latest.npz")[1], load_checkpoint(checkpoints / "iter-2.npz")[1]
    assert all(np.array_equal(latest[k], kept[k]) for k in kept)
    # a gate that rejects plays no confirmation; a resume may add --confirm, and the verdicts written stand
    monkeypatch.setattr(train_values, "play_gate", lambda *a: {**judged(*a), "kept": False})
    run(out, dataclasses.replace(cfg, iterations=4), resume=True)
    assert [deals for _, deals, _ in played[4:]] == [4] and "confirm" not in gate.read_gate(gate.gate_path(checkpoints / "iter-3.npz"))
    assert gate.read_gate(gate.gate_path(checkpoints / "iter-1.npz")) == first


@pytest.mark.parametrize(("cfg", "message"), [
    (dataclasses.replace(TINY, confirm=4), "--confirm applies with --gate only"),
    (dataclasses.replace(TINY, gate=4, confirm=1), "--confirm must be 0 .* not 1"),
    (dataclasses.replace(TINY, gate=4, confirm=-2), "--confirm"),
])
def test_a_confirm_without_a_gate_or_of_one_deal_is_refused_before_anything_is_written(tmp_path: Path, cfg, message):
    with pytest.raises(ValueError, match=message):
        run(tmp_path / "run", cfg)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("kept", "patience", "played"), [
    ([True, False, False, True], 2, 3),  # two rejected in a row: it stops after the second
    ([True, False, True, False], 2, 4),  # never two in a row
    ([True, False, False, True], 0, 4),  # no patience: every iteration
    ([False, True], 1, 1),  # the first rejected
    ([True, False, None, None], 1, 2),
    ([True, None, None, None], 1, 4),  # iteration 1 not judged yet: every iteration is still to play
])
def test_patience_stops_a_run_after_that_many_rejected_in_a_row(kept, patience, played):
    from wizard_env.training.evaluation.gate import iterations_played

    verdicts = [None if k is None else {"kept": k} for k in kept]
    assert iterations_played(len(kept), patience, verdicts.__getitem__) == played


def test_a_run_stopped_by_patience_ends_there_resumes_past_it_with_more_and_its_data_serve_data_from(tmp_path: Path, monkeypatch):
    from wizard_env.training.evaluation import gate
    from wizard_env.training.values import train_values

    def rejected(candidate, earlier, game, deals, seed, rule):  # the real games; every candidate rejected
        return {**gate.play_gate(candidate, earlier, game, deals, seed, rule), "kept": False}

    monkeypatch.setattr(train_values, "play_gate", rejected)
    out, lines = tmp_path / "run", []
    cfg = dataclasses.replace(TINY, iterations=4, gate=4, patience=1)
    trainer = run_training(cfg, RULES, out, quiet=False, log=lines.append, rounds=3)
    checkpoints = out / "checkpoints"
    assert sorted(p.name for p in checkpoints.glob("iter-*.npz")) == ["iter-0.npz", "iter-1.npz"]
    assert trainer.done()["stopped_by"] == "patience" and trainer.played() == 2
    assert any(line.startswith("iteration 2: not played: the gate rejected the last 1 in a row") for line in lines)
    latest, first = load_checkpoint(checkpoints / "latest.npz")[1], load_checkpoint(checkpoints / "iter-0.npz")[1]
    assert all(np.array_equal(latest[k], first[k]) for k in first)  # the network kept: iteration 0
    assert json.loads((out / "config.json").read_text())["train"]["patience"] == 1
    # its data serve --data-from: the iterations it played
    (chunks, decisions), (own, held) = train_values.data_from_chunks(dataclasses.replace(TINY, data_from=[str(out)]), tmp_path / "next"), \
        train_values.run_chunks(out, cfg, RULES, [0, 1], rounds=3)
    assert chunks == own and decisions == held > 0
    # a resume with the same patience plays nothing; with more it goes on
    run(out, cfg, resume=True)
    assert not (checkpoints / "iter-2.npz").exists()
    run(out, dataclasses.replace(cfg, patience=2), resume=True)
    assert (checkpoints / "iter-2.npz").is_file() and not (checkpoints / "iter-3.npz").exists()
    with pytest.raises(ValueError, match="--patience applies with --gate only"):
        run(tmp_path / "ungated", dataclasses.replace(TINY, patience=2))
    assert not (tmp_path / "ungated").exists()


def test_soup_judges_an_iteration_after_rejected_ones_as_the_mean_of_their_fits_and_keeps_it_as_any(tmp_path: Path, monkeypatch):
    from wizard_env.training.evaluation import gate
    from wizard_env.training.values import train_values

    def judged(candidate, earlier, game, deals, seed, rule):  # the real games; iterations 1, 2 and 4 rejected
        return {**gate.play_gate(candidate, earlier, game, deals, seed, rule), "kept": Path(candidate).name == "iter-3.npz"}

    monkeypatch.setattr(train_values, "play_gate", judged)
    cfg = dataclasses.replace(TINY, iterations=5, gate=4)
    plain, souped, lines = tmp_path / "plain", tmp_path / "souped", []
    run(plain, cfg)
    run_training(dataclasses.replace(cfg, soup=True), RULES, souped, quiet=False, log=lines.append, rounds=3)

    def weights(out, k):
        return load_checkpoint(out / "checkpoints" / f"iter-{k}.npz")[1]

    # iterations 0-3 collect with iteration 0 in both runs, so each fit is the same; the soup averages those since it
    fits = [weights(plain, k) for k in range(4)]
    for k, averaged in [(1, [1]), (2, [1, 2]), (3, [1, 2, 3])]:
        soup = weights(souped, k)
        assert all(np.allclose(soup[name], np.mean([fits[j][name] for j in averaged], axis=0), atol=1e-6) for name in soup)
    differ = [not all(np.array_equal(a[k], b[k]) for k in a) for a, b in [(fits[1], fits[2]), (fits[3], weights(souped, 3))]]
    assert differ == [True, True]  # the fits differ, so a mean is none of them
    counts = [load_checkpoint(souped / "checkpoints" / f"iter-{k}.npz")[0]["soup_fits"] for k in range(5)]
    assert counts == [1, 1, 2, 3, 1]  # iteration 4 fits from the kept soup: its own weights alone
    latest = load_checkpoint(souped / "checkpoints" / "latest.npz")[1]
    assert all(np.array_equal(latest[k], weights(souped, 3)[k]) for k in latest)  # the kept soup is the network kept
    assert f"iteration 3: judged as the mean of the weights of 3 fits from {souped / 'checkpoints' / 'iter-0.npz'} (--soup): " \
           "its own and the 2 rejected before it" in lines
    assert "soup_fits" not in load_checkpoint(plain / "checkpoints" / "iter-2.npz")[0]
    with pytest.raises(ValueError, match="--soup applies with --gate only"):
        run(tmp_path / "ungated", dataclasses.replace(TINY, soup=True))
    assert not (tmp_path / "ungated").exists()


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_progress_counts_the_decisions_the_iteration_uses_and_the_fit_fits_them(tmp_path: Path):
    import re

    lines: list[str] = []
    # two workers start two chunks at once, each more than --samples: the second is collected and not used
    run_training(dataclasses.replace(TINY, workers=2, samples=40), RULES, tmp_path / "run", log=lines.append, rounds=3)
    collected = [number(m[1]) for line in lines if (m := re.search(r"chunk \d+ done: ([\d,]+) decisions collected, 40 needed", line))]
    uses = next(re.search(r"uses chunks 0-(\d+), ([\d,]+) decisions", line) for line in lines if "uses chunks" in line)
    used = number(uses[2])
    fitted = next(re.search(r"fitted ([\d,]+) decisions in \d+ s \(all ([\d,]+) of this iteration's", line) for line in lines if "fitted" in line)
    assert collected and all(c <= used for c in collected) and collected[-1] == used
    assert number(fitted[1]) == number(fitted[2]) == used  # nothing held out, nothing but this iteration's
    assert load_checkpoint(tmp_path / "run" / "checkpoints" / "iter-0.npz")[0]["num_samples"] == used


def test_a_resumed_run_says_where_it_goes_on_from(tmp_path: Path):
    out = tmp_path / "run"
    first = run(out)
    lines: list[str] = []
    run_training(dataclasses.replace(TINY, iterations=2), RULES, out, resume=True, log=lines.append, rounds=3)
    said = [line for line in lines if line.startswith("resumed ")]
    assert len(said) == 1 and said[0].startswith(f"resumed {out} from checkpoints/iter-0.npz (iteration 0: "
                                                 f"{first.samples:,} decisions,")
    assert said[0].endswith("iteration 1 goes on")


def test_minutes_is_a_wall_time_budget_checked_before_anything_is_written(tmp_path: Path, capsys):
    from wizard_env.cli.main import main

    tiny = ["--players", "3", "--rounds", "2", "--mix", "3", "--games", "4", "--workers", "1", "--eval-deals", "2",
            "--samples", "30", "--hidden", "16", "--epochs", "1"]
    for minutes, message in (("0", "argument --minutes: must be more than 0 and at most 1000000000000, not 0"),
                             ("-1", "argument --minutes: must be more than 0"),
                             ("nan", "expected a finite number")):
        assert main(["train-values", "--out", str(tmp_path / "refused"), *tiny, "--minutes", minutes]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and not (tmp_path / "refused").exists()
    out = tmp_path / "run"
    assert main(["train-values", "--out", str(out), *tiny, "--iterations", "3", "--minutes", "0.0001"]) == 0
    printed = capsys.readouterr().out
    assert "iteration 1: the run's 0.0001 minutes have passed; it stops at iteration 0" in printed
    assert sorted(p.name for p in (out / "checkpoints").glob("iter-*.npz")) == ["iter-0.npz"]


def test_checkpoints_record_what_the_run_read_relative_to_its_folder_or_by_agent_name(tmp_path: Path):
    from wizard_env.agents.checkpoint import portable_path

    first = run(tmp_path / "a").out.resolve()
    latest, iter0 = first / "checkpoints" / "latest.npz", first / "checkpoints" / "iter-0.npz"
    cfg = dataclasses.replace(TINY, start=str(latest), data_from=[str(first)], pool=[str(iter0), "rule"], pool_tables=0.25)
    run(tmp_path / "b", cfg)
    for name in ("iter-0.npz", "latest.npz"):
        config, _ = load_checkpoint(tmp_path / "b" / "checkpoints" / name)
        train = config["train"]
        assert train["start"] == "../a/checkpoints/latest.npz" and train["data_from"] == ["../a"]
        assert train["pool"] == ["../a/checkpoints/iter-0.npz", "rule"]
        assert str(tmp_path) not in json.dumps(config) and str(tmp_path.resolve()) not in json.dumps(config)
    assert json.loads((tmp_path / "b" / "config.json").read_text())["train"]["start"] == str(latest)  # as given, to resume
    assert portable_path("/any/checkout/agents/pretrained/wizard-v11.npz", tmp_path) == "net-v11"  # the versioned name
