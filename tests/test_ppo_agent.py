"""PPOAgent: legal and deterministic actions, RuleAgent in the phases it did not learn, safe checkpoint loading."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.ppo_agent import FORMAT, PRETRAINED, PPOAgent, load_checkpoint, save_checkpoint
from agents.registry import make_agent
from agents.rule_agent import RuleAgent
from wizard_env.actions import Phase
from wizard_env.batch import WizardBatch
from wizard_env.game import NUM_ACTIONS
from wizard_env.observation import OBS_SIZE, SLICES
from wizard_env.rules import Rules

HIDDEN = [16, 8]


def random_weights(seed: int) -> dict[str, np.ndarray]:
    """Actor weights of the layout MaskablePPO's MlpPolicy uses, drawn at random."""
    rng = np.random.default_rng(seed)
    sizes = [OBS_SIZE, *HIDDEN, NUM_ACTIONS]
    names = [f"mlp_extractor.policy_net.{2 * i}" for i in range(len(HIDDEN))] + ["action_net"]
    weights = {}
    for name, (a, b) in zip(names, zip(sizes, sizes[1:])):
        weights[f"{name}.weight"] = rng.normal(size=(b, a)).astype(np.float32)
        weights[f"{name}.bias"] = rng.normal(size=b).astype(np.float32)
    return weights


def config(learn: str = "both") -> dict:
    return {"format": FORMAT, "hidden": HIDDEN, "activation": "relu", "learn": learn}


def positions(count: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the acting seats along random games (all phases)."""
    batch = WizardBatch(Rules.make(4, [1, 2, 5, 8]), 20, seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    while sum(len(o) for o in obs) < count:
        o, m = batch.observe(), batch.legal_masks()
        obs.append(o), masks.append(m)
        batch.step(np.array([rng.choice(np.flatnonzero(row)) for row in m]))
    return np.concatenate(obs), np.concatenate(masks)


def test_actions_are_legal_deterministic_and_the_best_masked_logit():
    agent = PPOAgent(config(), random_weights(1))
    obs, masks = positions()
    actions = agent.act_batch(obs, masks)
    assert masks[np.arange(len(obs)), actions].all()
    assert np.array_equal(actions, PPOAgent(config(), random_weights(1)).act_batch(obs, masks))
    assert [agent.act(o, m) for o, m in zip(obs[:20], masks[:20])] == actions[:20].tolist()
    # a hand-rolled forward pass of the same weights picks the same actions
    w = random_weights(1)
    x = np.maximum(obs @ w["mlp_extractor.policy_net.0.weight"].T + w["mlp_extractor.policy_net.0.bias"], 0)
    x = np.maximum(x @ w["mlp_extractor.policy_net.2.weight"].T + w["mlp_extractor.policy_net.2.bias"], 0)
    logits = x @ w["action_net.weight"].T + w["action_net.bias"]
    assert np.array_equal(actions, np.where(masks != 0, logits, -np.inf).argmax(axis=1))


@pytest.mark.parametrize("learn, delegated", [("bid", (Phase.PLAY,)), ("play", (Phase.TRUMP, Phase.BID))])
def test_the_phases_not_learned_are_played_by_rule_agent(learn, delegated):
    obs, masks = positions(600)
    phase = obs[:, SLICES["phase"]].argmax(axis=1)
    rows = np.isin(phase, [int(p) for p in delegated])
    assert rows.any() and (~rows).any()
    actions = PPOAgent(config(learn), random_weights(2), seed=7).act_batch(obs, masks)
    assert np.array_equal(actions[rows], RuleAgent(seed=7).act_batch(obs[rows], masks[rows]))
    network = PPOAgent(config("both"), random_weights(2)).act_batch(obs, masks)
    assert np.array_equal(actions[~rows], network[~rows])


def test_a_checkpoint_round_trips_and_loads_through_the_registry(tmp_path: Path):
    path = save_checkpoint(tmp_path / "a.npz", config("bid") | {"note": "x"}, random_weights(3))
    cfg, weights = load_checkpoint(path)
    assert cfg["note"] == "x" and cfg["learn"] == "bid"
    assert all(np.array_equal(weights[k], v) for k, v in random_weights(3).items())
    obs, masks = positions(100)
    expected = PPOAgent(config("bid"), random_weights(3), seed=0).act_batch(obs, masks)
    assert np.array_equal(make_agent(f"ppo:{path}", seed=0).act_batch(obs, masks), expected)
    assert [p.name for p in tmp_path.iterdir()] == ["a.npz"]  # no temporary file left behind


def test_the_shipped_checkpoint_is_small_and_plays_legally():
    assert PRETRAINED.is_file() and PRETRAINED.stat().st_size < 5_000_000
    agent = make_agent("ppo", seed=0)
    obs, masks = positions(100)
    assert masks[np.arange(len(obs)), agent.act_batch(obs, masks)].all()


class Exploit:
    """Unpickling this creates a file: proof that loading ran code from the file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def bad_files(tmp_path: Path) -> dict[str, Path]:
    good = save_checkpoint(tmp_path / "good.npz", config(), random_weights(4)).read_bytes()
    files = {"truncated": good[: len(good) // 2], "random bytes": np.random.default_rng(0).bytes(5000),
             "empty": b""}
    marker = tmp_path / "ran"
    files["pickle"] = pickle.dumps({"weights": Exploit(marker)})
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / f"{name.replace(' ', '_')}.npz"
        paths[name].write_bytes(data)
    np.savez(tmp_path / "foreign.npz", x=np.zeros(3))
    paths["foreign"] = tmp_path / "foreign.npz"
    np.savez(tmp_path / "pickled.npz", config=np.array([Exploit(marker)], dtype=object), allow_pickle=True)
    paths["object array"] = tmp_path / "pickled.npz"
    np.save(tmp_path / "single.npy", np.zeros(3))
    paths["npy"] = tmp_path / "single.npy"
    wrong = dict(random_weights(4))
    wrong["action_net.weight"] = wrong["action_net.weight"][:5]
    paths["wrong shape"] = save_checkpoint(tmp_path / "wrong.npz", config(), wrong)
    paths["other format"] = save_checkpoint(tmp_path / "other.npz", config() | {"format": "x/9"}, random_weights(4))
    paths["missing"] = tmp_path / "nowhere.npz"
    return paths


def test_bad_checkpoint_files_give_a_clear_error_and_never_run_code(tmp_path: Path):
    for what, path in bad_files(tmp_path).items():
        with pytest.raises(ValueError, match="checkpoint") as error:
            PPOAgent.load(path)
        assert str(path) in str(error.value), what
        with pytest.raises(ValueError):
            make_agent(f"ppo:{path}")
    assert not (tmp_path / "ran").exists()


def test_a_zip_with_a_damaged_member_is_reported(tmp_path: Path):
    path = tmp_path / "c.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.npy", json.dumps({"not": "npy"}))
    with pytest.raises(ValueError, match=str(path)):
        PPOAgent.load(path)
