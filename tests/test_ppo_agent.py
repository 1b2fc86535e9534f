"""PPOAgent: legal and deterministic actions, RuleAgent in the phases it did not learn, safe checkpoint loading."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from wizard_env.agents.ppo_agent import (FORMAT, PRETRAINED, PRETRAINED_BID, VALUE_UNIT, PPOAgent, load_checkpoint,
                                         save_checkpoint)
from wizard_env.agents.registry import make_agent
from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.actions import Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.game import NUM_ACTIONS
from wizard_env.engine.observation import OBS_SIZE, OBS_VERSION, SLICES
from wizard_env.engine.rules import Rules

HIDDEN = [16, 8]


def random_weights(seed: int, inputs: int = OBS_SIZE, hidden: list[int] = HIDDEN) -> dict[str, np.ndarray]:
    """Actor weights of the layout MaskablePPO's MlpPolicy uses, drawn at random."""
    rng = np.random.default_rng(seed)
    sizes = [inputs, *hidden, NUM_ACTIONS]
    names = [f"mlp_extractor.policy_net.{2 * i}" for i in range(len(hidden))] + ["action_net"]
    weights = {}
    for name, (a, b) in zip(names, zip(sizes, sizes[1:])):
        weights[f"{name}.weight"] = rng.normal(size=(b, a)).astype(np.float32)
        weights[f"{name}.bias"] = rng.normal(size=b).astype(np.float32)
    return weights


def config(learn: str = "both") -> dict:
    return {"format": FORMAT, "hidden": HIDDEN, "activation": "relu", "learn": learn, "obs_version": OBS_VERSION}


def forward(weights: dict[str, np.ndarray], x: np.ndarray, hidden: list[int] = HIDDEN) -> np.ndarray:
    """Logits of a relu MLP in MaskablePPO's layout, written out by hand."""
    for i in range(len(hidden)):
        x = np.maximum(x @ weights[f"mlp_extractor.policy_net.{2 * i}.weight"].T + weights[f"mlp_extractor.policy_net.{2 * i}.bias"], 0)
    return x @ weights["action_net.weight"].T + weights["action_net.bias"]


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
    logits = forward(random_weights(1), obs)
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


@pytest.mark.parametrize("spec, path", [("ppo", PRETRAINED), ("ppo-bid", PRETRAINED_BID)])
def test_the_shipped_checkpoints_are_small_and_play_legally(spec, path):
    assert path.is_file() and path.stat().st_size < 5_000_000
    agent = make_agent(spec, seed=0)
    obs, masks = positions(100)
    assert masks[np.arange(len(obs)), agent.act_batch(obs, masks)].all()


# -- observation versions --------------------------------------------------------------------------

V0_FIELDS = ["num_players", "phase", "round", "num_rounds", "hand_size", "dealer", "hand", "trump_card", "trump",
             "bid_known", "bids", "tricks_won", "leader", "trick", "played", "foresight", "scores"]
V0_SIZE = 1132  # the v0 layout's length, as its docstring table gave it


def test_a_v0_checkpoint_reads_the_v0_fields_of_a_v1_observation():
    v0 = {k: v for k, v in config().items() if k != "obs_version"}  # checkpoints before v1 had no version
    weights = random_weights(5, inputs=V0_SIZE)
    obs, masks = positions(200)
    old = np.concatenate([obs[:, SLICES[name]] for name in V0_FIELDS], axis=1)
    assert old.shape[1] == V0_SIZE
    expected = np.where(masks != 0, forward(weights, old), -np.inf).argmax(axis=1)
    assert np.array_equal(PPOAgent(v0, weights).act_batch(obs, masks), expected)


def test_the_earlier_shipped_agent_still_loads_as_ppo_bid():
    cfg, _ = load_checkpoint(PRETRAINED_BID)
    assert "obs_version" not in cfg and cfg["learn"] == "bid"
    assert make_agent("ppo-bid").columns is not None  # read through the v0 adapter


@pytest.mark.parametrize("version", [7, -1, "1", True])
def test_an_unknown_observation_version_names_both_versions(tmp_path: Path, version):
    path = save_checkpoint(tmp_path / "v.npz", config() | {"obs_version": version}, random_weights(6))
    with pytest.raises(ValueError, match=rf"{path}.*version {version!r}.*version {OBS_VERSION}"):
        PPOAgent.load(path)


def test_weights_of_another_version_than_the_config_says_are_an_error_naming_the_version(tmp_path: Path):
    path = save_checkpoint(tmp_path / "w.npz", config(), random_weights(6, inputs=V0_SIZE))
    with pytest.raises(ValueError, match=f"expected \\(\\*, {OBS_SIZE}\\) \\(observation version {OBS_VERSION}\\)"):
        PPOAgent.load(path)


# -- RuleAgent's play, RuleAgent's advice ----------------------------------------------------------


def test_play_rule_hands_card_play_to_rule_agent_and_keeps_the_learned_bids(tmp_path: Path):
    path = save_checkpoint(tmp_path / "b.npz", config(), random_weights(8))
    obs, masks = positions(600)
    play = obs[:, SLICES["phase"]].argmax(axis=1) == int(Phase.PLAY)
    assert play.any() and (~play).any()
    net = make_agent(f"ppo:{path}", seed=3).act_batch(obs, masks)
    ruled = make_agent(f"ppo:{path}:play=rule", seed=3).act_batch(obs, masks)
    assert np.array_equal(ruled[play], RuleAgent(seed=3).act_batch(obs[play], masks[play]))
    assert np.array_equal(ruled[~play], net[~play])
    assert not np.array_equal(ruled[play], net[play])


@pytest.mark.parametrize("spec", ["ppo:x.npz:y.npz", "ppo:play=human", "ppo:speed=2", "ppo:margin=-1", "ppo:margin=x",
                                  "ppo:play-margin=nan", "ppo:margin=inf"])
def test_bad_ppo_options_are_named(spec):
    with pytest.raises(ValueError, match="ppo:"):
        make_agent(spec)


def test_margins_in_points_replace_the_checkpoints_by_phase():
    shipped = make_agent("ppo", 0).phase_bonus
    phases = [int(Phase.TRUMP), int(Phase.BID), int(Phase.PLAY)]
    for spec, points in [("ppo:margin=2", (2, 2, 2)), ("ppo:margin=2:play-margin=0.5", (2, 2, 0.5)),
                         ("ppo:play-margin=0.5:margin=2", (2, 2, 0.5))]:
        assert make_agent(spec, 0).phase_bonus[phases] == pytest.approx(np.array(points) * VALUE_UNIT), spec
    assert make_agent("ppo:play-margin=0", 0).phase_bonus[phases] == pytest.approx([*shipped[phases[:2]], 0])
    with pytest.raises(ValueError, match="margins apply to networks of wizard train-values"):
        make_agent("ppo-bid:margin=1")


def test_a_margin_past_every_gain_plays_rule_agent_and_a_smaller_one_departs_more():
    obs, masks = positions(600)
    rule = RuleAgent(seed=3).act_batch(obs, masks)
    assert np.array_equal(make_agent("ppo:margin=100000", seed=3).act_batch(obs, masks), rule)
    departures = [(make_agent(spec, seed=3).act_batch(obs, masks) != rule).sum() for spec in ("ppo:margin=0", "ppo")]
    assert departures[0] > departures[1] > 0


def test_a_policy_with_advice_reads_rule_agents_choice_after_the_observation():
    # no hidden layer, logits = the advice block: the policy is RuleAgent exactly
    weights = {"action_net.weight": np.concatenate([np.zeros((NUM_ACTIONS, OBS_SIZE)), np.eye(NUM_ACTIONS)], axis=1),
               "action_net.bias": np.zeros(NUM_ACTIONS)}
    agent = PPOAgent(config() | {"hidden": [], "advice": True}, weights, seed=4)
    obs, masks = positions(400)
    assert np.array_equal(agent.act_batch(obs, masks), RuleAgent(seed=4).act_batch(obs, masks))
    other = PPOAgent(config() | {"advice": True}, random_weights(9, inputs=OBS_SIZE + NUM_ACTIONS), seed=4)
    hint = np.zeros((len(obs), NUM_ACTIONS))
    hint[np.arange(len(obs)), RuleAgent(seed=4).act_batch(obs, masks)] = 1
    expected = np.where(masks != 0, forward(random_weights(9, inputs=OBS_SIZE + NUM_ACTIONS), np.concatenate([obs, hint], axis=1)), -np.inf)
    assert np.array_equal(other.act_batch(obs, masks), expected.argmax(axis=1))



def test_advice_bonus_departs_from_rule_agent_only_where_the_values_gain_more_than_it():
    obs, masks = positions(150)
    rule = RuleAgent(seed=4).act_batch(obs, masks)
    # values: 1.0 for the first legal action, 0 elsewhere (no hidden layer, the bias alone)
    weights = {"action_net.weight": np.zeros((NUM_ACTIONS, OBS_SIZE + NUM_ACTIONS)), "action_net.bias": np.zeros(NUM_ACTIONS)}
    first = masks.argmax(axis=1)
    for bonus, expected in ((0.0, None), (0.5, None), (1.5, rule)):
        chosen = []
        for o, m, f in zip(obs, masks, first):
            w = dict(weights)
            w["action_net.bias"] = np.where(np.arange(NUM_ACTIONS) == f, 1.0, 0.0)
            agent = PPOAgent(config() | {"hidden": [], "advice": True, "advice_bonus": bonus}, w, seed=4)
            chosen.append(agent.act(o, m))
        chosen = np.array(chosen)
        if expected is None:  # the bonus is below the value's lead: the first legal action, advice or not
            assert np.array_equal(chosen, first)
        else:
            assert np.array_equal(chosen, rule)
    assert (first != rule).any()  # the two choices differ somewhere, so the test tells them apart


def test_an_advice_bonus_by_phase_acts_on_its_own_phases_only():
    obs, masks = positions(400)
    phase = obs[:, SLICES["phase"]].argmax(axis=1)
    weights = random_weights(5, inputs=OBS_SIZE + NUM_ACTIONS)
    plain = PPOAgent(config() | {"advice": True}, weights, seed=4).act_batch(obs, masks)
    rule = RuleAgent(seed=4).act_batch(obs, masks)
    for bid, play in ((1e6, 0.0), (0.0, 1e6)):
        agent = PPOAgent(config() | {"advice": True, "advice_bonus": {"bid": bid, "play": play}}, weights, seed=4)
        chosen = agent.act_batch(obs, masks)
        ruled = (phase == Phase.PLAY) == (play > 0)  # the phases whose huge bonus makes RuleAgent's choice win
        assert np.array_equal(chosen[ruled], rule[ruled]) and np.array_equal(chosen[~ruled], plain[~ruled])
    assert (plain != rule)[phase == Phase.PLAY].any() and (plain != rule)[phase != Phase.PLAY].any()


@pytest.mark.parametrize("bonus", [{"bid": 0.3}, {"bid": 0.3, "play": 0.3, "trump": 1}, {"bid": -1, "play": 0.3}, {"bid": "1", "play": 0}])
def test_a_bad_advice_bonus_by_phase_is_refused(bonus):
    weights = {"action_net.weight": np.zeros((NUM_ACTIONS, OBS_SIZE + NUM_ACTIONS)), "action_net.bias": np.zeros(NUM_ACTIONS)}
    with pytest.raises(ValueError, match="advice_bonus"):
        PPOAgent(config() | {"hidden": [], "advice": True, "advice_bonus": bonus}, weights)


@pytest.mark.parametrize("bonus", [-0.5, float("nan"), "1", True])
def test_a_bad_advice_bonus_is_refused(bonus):
    weights = {"action_net.weight": np.zeros((NUM_ACTIONS, OBS_SIZE + NUM_ACTIONS)), "action_net.bias": np.zeros(NUM_ACTIONS)}
    with pytest.raises(ValueError, match="advice_bonus"):
        PPOAgent(config() | {"hidden": [], "advice": True, "advice_bonus": bonus}, weights)


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


@pytest.mark.parametrize("path", ["a" * 5000, "x/" * 3000 + "c.npz"])
def test_a_path_the_system_cannot_look_up_is_named_not_raised_as_oserror(path):
    # found by benchmarks/fuzz (spec): Path.is_dir raised OSError (file name too long) before the checks named the file
    with pytest.raises(ValueError, match="checkpoint .*: file name too long"):
        PPOAgent.load(path)
    with pytest.raises(ValueError, match="file name too long"):
        make_agent(f"net:{path}")


def test_a_zip_with_a_damaged_member_is_reported(tmp_path: Path):
    path = tmp_path / "c.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.npy", json.dumps({"not": "npy"}))
    with pytest.raises(ValueError, match=str(path)):
        PPOAgent.load(path)


# -- every entry checked against the config (issue 9) -----------------------------------------------


def raw_checkpoint(path: Path, config: dict | str, arrays: dict[str, np.ndarray]) -> Path:
    """A checkpoint written without save_checkpoint's float32 cast (config: a dict, or JSON text as is)."""
    text = config if isinstance(config, str) else json.dumps(config)
    np.savez(path, config=np.frombuffer(text.encode(), dtype=np.uint8), **arrays)
    return path


def critic(seed: int, inputs: int = OBS_SIZE, hidden: list[int] = HIDDEN) -> dict[str, np.ndarray]:
    """Value-net weights in MlpPolicy's layout."""
    actor = random_weights(seed, inputs, hidden)
    weights = {k.replace("policy_net", "value_net"): v for k, v in actor.items() if "policy_net" in k}
    return weights | {"value_net.weight": np.ones((1, hidden[-1]), np.float32), "value_net.bias": np.ones(1, np.float32)}


def with_entry(name: str, value) -> dict[str, np.ndarray]:
    return random_weights(4) | {name: value}


BAD_CHECKPOINTS = {
    "one hidden width for two layers": (config() | {"hidden": [16]}, random_weights(4), r"mlp_extractor.policy_net.2.weight"),
    "hidden as a string": (config() | {"hidden": "ab"}, random_weights(4), r"config entry 'hidden' must be a list"),
    "a negative width": (config() | {"hidden": [16, -8]}, random_weights(4), r"config entry 'hidden'"),
    "a bool width": (config() | {"hidden": [True, 8]}, random_weights(4), r"config entry 'hidden'"),
    "a float width": (config() | {"hidden": [16.0, 8]}, random_weights(4), r"config entry 'hidden'"),
    "a wrong width": (config() | {"hidden": [16, 9]}, random_weights(4), r"'mlp_extractor.policy_net.2.weight' has shape \(8, 16\)"),
    "NaN": (config(), with_entry("action_net.bias", np.full(NUM_ACTIONS, np.nan, np.float32)), r"'action_net.bias' holds values that are not finite"),
    "infinity": (config(), with_entry("mlp_extractor.policy_net.0.bias", np.full(16, np.inf, np.float32)), "not finite"),
    "complex": (config(), with_entry("action_net.bias", np.zeros(NUM_ACTIONS, np.complex64)), r"'action_net.bias' holds complex64, expected (float32|real numbers)"),
    "float64": (config(), with_entry("action_net.bias", np.zeros(NUM_ACTIONS)), r"'action_net.bias' holds float64, expected float32"),
    "an extra member": (config(), with_entry("evil", np.zeros(3, np.float32)), r"unexpected entry 'evil'"),
    "half a value net": (config(), random_weights(4) | {"value_net.bias": np.ones(1, np.float32)}, r"value net is incomplete"),
    "a misshapen value net": (config(), random_weights(4) | critic(4) | {"value_net.weight": np.ones((2, 8), np.float32)}, r"'value_net.weight' has shape \(2, 8\)"),
    "a learn list": (config() | {"learn": ["bid"]}, random_weights(4), r"learn must be one of"),
    "an activation list": (config() | {"activation": ["relu"]}, random_weights(4), r"unknown activation \['relu'\]"),
    "advice as text": (config() | {"advice": "yes"}, random_weights(4), r"config entry 'advice' must be true or false"),
    "other actions": (config() | {"num_actions": 80}, random_weights(4), r"config entry 'num_actions' is 80"),
    "negative steps": (config() | {"num_timesteps": -5}, random_weights(4), r"config entry 'num_timesteps'"),
    "impossible rules": (config() | {"rules": {"num_players": 9}}, random_weights(4), r"config entry 'rules' is not a valid rule set"),
    "rules as a list": (config() | {"rules": [4]}, random_weights(4), r"config entry 'rules'"),
    "train as a list": (config() | {"train": [1]}, random_weights(4), r"config entry 'train' must be an object"),
    "a bad mix": (config() | {"train": {"mix": [2, 4]}}, random_weights(4), r"config entry 'train.mix'"),
    "a mix of text": (config() | {"train": {"mix": "3456"}}, random_weights(4), r"config entry 'train.mix'"),
    "deep nesting": ('{"a":' * 100_000 + "1" + "}" * 100_000, random_weights(4), "nests too deeply"),
}


@pytest.mark.parametrize("what", BAD_CHECKPOINTS)
def test_a_checkpoint_whose_entries_disagree_with_its_config_is_refused_naming_the_entry(tmp_path: Path, what):
    cfg, weights, why = BAD_CHECKPOINTS[what]
    path = raw_checkpoint(tmp_path / "bad.npz", cfg, weights)
    with pytest.raises(ValueError, match=why) as error:
        PPOAgent.load(path)
    assert str(error.value).startswith(f"checkpoint {path}: ") and "\n" not in str(error.value)
    if what not in ("float64", "deep nesting"):  # the same config and weights in memory are refused too
        with pytest.raises(ValueError, match=why):
            PPOAgent(cfg, weights)


def test_a_full_checkpoint_with_its_value_net_loads(tmp_path: Path):
    path = save_checkpoint(tmp_path / "full.npz", config() | {"rules": {"num_players": 4}, "train": {"mix": [3, 4]}},
                           random_weights(4) | critic(4))
    obs, masks = positions(50)
    assert np.array_equal(PPOAgent.load(path).act_batch(obs, masks), PPOAgent(config(), random_weights(4)).act_batch(obs, masks))


def test_a_member_too_large_is_refused_before_it_is_decompressed(tmp_path: Path, monkeypatch):
    import wizard_env.agents.checkpoint as checkpoint

    monkeypatch.setattr(checkpoint, "MAX_MEMBER_BYTES", 2**20)
    path = raw_checkpoint(tmp_path / "bomb.npz", config(), random_weights(4))
    before = path.stat().st_size
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as z:  # 4 MB of zeros in a few kB
        z.writestr("mlp_extractor.value_net.0.weight.npy", b"\0" * 4 * 2**20)
    assert path.stat().st_size - before < 10_000
    opened, open_member = [], zipfile.ZipFile.open
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda self, info, *a, **k: opened.append(info.filename) or open_member(self, info, *a, **k))
    with pytest.raises(ValueError, match=r"entry 'mlp_extractor.value_net.0.weight' would unpack to 4,194,304 bytes"):
        load_checkpoint(path)
    assert "mlp_extractor.value_net.0.weight.npy" not in opened


def test_a_header_claiming_more_data_than_its_member_holds_is_refused(tmp_path: Path):
    path = raw_checkpoint(tmp_path / "liar.npz", config(), random_weights(4))
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, np.float32)) | {"shape": (10**12,)}
    stream = __import__("io").BytesIO()
    np.lib.format.write_array_header_1_0(stream, header)
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("mlp_extractor.value_net.0.weight.npy", stream.getvalue() + b"\0" * 16)
    with pytest.raises(ValueError, match=r"entry 'mlp_extractor.value_net.0.weight' declares 4,000,000,000,000 bytes"):
        load_checkpoint(path)


@pytest.mark.parametrize("players", [3, 5])
def test_a_checkpoint_of_other_player_counts_is_refused_in_a_game(tmp_path: Path, players):
    path = save_checkpoint(tmp_path / "four.npz", config() | {"rules": {"num_players": 4}}, random_weights(4))
    agent = PPOAgent.load(path)
    batch = WizardBatch(Rules.make(players, 2), 4, seed=0)
    with pytest.raises(ValueError, match=rf"{path} was trained for 4 players, not the {players} of this game"):
        agent.act_batch(batch.observe(), batch.legal_masks())


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_the_shipped_agent_plays_every_player_count_and_ppo_bid_only_four(players):
    batch = WizardBatch(Rules.make(players, 3), 8, seed=1)
    obs, masks = batch.observe(), batch.legal_masks()
    assert make_agent("ppo", seed=0).players == (3, 4, 5, 6)
    assert masks[np.arange(8), make_agent("ppo", seed=0).act_batch(obs, masks)].all()
    if players != 4:
        with pytest.raises(ValueError, match="trained for 4 players"):
            make_agent("ppo-bid").act_batch(obs, masks)
