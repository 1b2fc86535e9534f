"""The zoo: which networks ship, the manifest that lists them all, how a lineage name finds its file, the agents'
names and old aliases, and that nothing shipped names a path of one machine."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path, PurePosixPath, PureWindowsPath

import numpy as np
import pytest

from test_ppo_agent import config as small_config, positions, random_weights
from wizard_env.agents import zoo
from wizard_env.agents.checkpoint import portable_sources, read_archive
from wizard_env.agents.ppo_agent import NetAgent, PPOAgent, load_checkpoint, save_checkpoint
from wizard_env.agents.registry import ALIASES, AGENT_NAMES, make_agent, parse_spec

ROOT = Path(__file__).resolve().parent.parent
PRETRAINED, ZOO = ROOT / "agents" / "pretrained", ROOT / "zoo"

#: sha256 of each checkpoint's arrays but its config (name, dtype, shape and bytes of each, by name), read from the
#: files as they were before their configs were rewritten to name no machine's paths (commit 5174b2b).
WEIGHTS_BEFORE_REWRITE = {
    "wizard-4p.npz": "1d10bc4434802ff6b0274b17b0d6e396dc510a14ef065b838d945ae6abcb0c81",
    "wizard-v1.npz": "6841d219bcd16e2c2cc69160e7a44a87d6bdd6d15dc874be64d9706d8656e112",
    "wizard-v2.npz": "558b87a881d57b3443d7ba60eb205fc23f5d8f5c04c089f963256009f31eebfb",
    "wizard-v3.npz": "ad04654aa9ec1c93ba9df620198b2182b513dd0f4d6188fa017fb452e624eacb",
    "wizard-v4.npz": "2111505fb0a40ec56076a225fdaa71610358a0aaf8f9f9656b940fbd1793a859",
    "wizard-v5.npz": "a7ca473f3372e309bce9518981da7ac8d44291a859a7cc829995333f7dab6065",
    "wizard-v6.npz": "1f7c45b7f4c0aca0e7bb952495fe2f264da894968d714d32b7391c16668abd09",
    "wizard-v7.npz": "bdf703b145d3c25cb47188799f30bbf84521f99107612f72e0cc4c459c28ca3f",
    "wizard-v8.npz": "f873f64287ccda3fbb128bb2f6a30db57db39434142845d73c0f49cc756e4d6a",
    "wizard-v9.npz": "878636bfe66af35eb5848f79caefb2c2a4ff0152ca824318903bff0cad0b1da9",
    "wizard-v10.npz": "70a7a490fb62dffade34ff1d016b814c28deff4438a0f2a2fc1c34b6316edd21",
    "wizard-v11.npz": "f7cb8964ac76e24336e272fe7ed190905e80d0fb75d5f71810d7e140acbe4390",
    "wizard-v12.npz": "48bbe49b146e6dc8ac62f96709b4f277e35fb74ad86491c65059f9d280426e93",
    "wizard-v13.npz": "d65e3d26e268cbe92ccc0e60ec6b11e8a98474d32b8f6e1e2bb7ae52a2eaa439",
}
CHECKPOINTS = sorted([*PRETRAINED.glob("*.npz"), *ZOO.glob("*.npz")])


def weights_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with np.load(path, allow_pickle=False) as archive:
        for name in sorted(archive.files):
            if name != "config":
                array = archive[name]
                digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
                digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


# -- what ships, and the manifest ------------------------------------------------------------------------------


def test_the_package_ships_three_networks_in_15_mb_and_the_repository_keeps_the_lineage():
    assert sorted(p.name for p in PRETRAINED.glob("*.npz")) == ["wizard-4p.npz", "wizard-v13.npz", "wizard-v7.npz"]
    assert sum(p.stat().st_size for p in PRETRAINED.glob("*.npz")) <= 15_000_000
    assert sorted(p.name for p in ZOO.glob("*.npz")) == sorted(f"wizard-v{v}.npz" for v in (1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12))


def test_the_manifest_lists_every_network_once_with_its_files_sha256_and_recipe():
    raw = json.loads((PRETRAINED / "zoo.json").read_text())["networks"]
    assert sorted(n["file"] for n in raw) == sorted(p.name for p in CHECKPOINTS)
    for entry in raw:
        folder = PRETRAINED if entry["shipped"] else ZOO
        assert hashlib.sha256((folder / entry["file"]).read_bytes()).hexdigest() == entry["sha256"], entry["file"]
        if "recipe" in entry:
            assert (ROOT / entry["recipe"]).is_file()
    assert {n["name"]: n.get("card") for n in raw if "card" in n} == {
        "net-v13": "docs/cards/net.md", "net-v7": "docs/cards/search.md", "net-bid": "docs/cards/net-bid.md"}
    assert {n["name"] for n in raw if n["shipped"]} == {"net-v13", "net-v7", "net-bid"}
    assert zoo.BY_NAME["net"].file == "wizard-v13.npz" and zoo.BY_NAME["net-v7"].shipped


def test_rewriting_the_configs_left_every_weight_array_as_it_was():
    assert {p.name: weights_sha256(p) for p in CHECKPOINTS} == WEIGHTS_BEFORE_REWRITE


# -- names ----------------------------------------------------------------------------------------------------


def test_every_old_ppo_name_plays_the_same_agent_as_its_net_name():
    assert ALIASES["ppo"] == "net" and ALIASES["ppo-v3"] == "net-v3" and ALIASES["ppo-bid"] == "net-bid"
    assert {f"net-v{v}" for v in range(1, 14)} | {"net", "net-bid"} <= set(AGENT_NAMES)
    obs, masks = positions(120, seed=4)
    for old in ("ppo", "ppo-v3", "ppo-v13"):
        new, was = make_agent(ALIASES[old], seed=5), make_agent(old, seed=5)
        assert new.source == was.source and isinstance(new, NetAgent)
        assert np.array_equal(new.act_batch(obs, masks), was.act_batch(obs, masks))
    assert Path(make_agent("net", 0).source).name == "wizard-v13.npz" and Path(make_agent("net-bid", 0).source).name == "wizard-4p.npz"
    assert PPOAgent is NetAgent


def test_net_path_and_ppo_path_load_the_same_checkpoint(tmp_path: Path):
    path = save_checkpoint(tmp_path / "a.npz", small_config(), random_weights(2))
    obs, masks = positions(60)
    played = [make_agent(f"{name}:{path}:play=rule", seed=1).act_batch(obs, masks) for name in ("net", "ppo")]
    assert np.array_equal(*played)


def test_an_unknown_agent_lists_the_names_in_short():
    with pytest.raises(ValueError) as error:
        parse_spec("alphazero")
    message = str(error.value)
    assert message.startswith("unknown agent 'alphazero': known agents are random, rule, net, net-v1..net-v13, net-bid,")
    assert "ppo-v7" not in message and len(message) < 240 and "\n" not in message


# -- lineage names outside a clone ----------------------------------------------------------------------------


@pytest.fixture
def no_clone(tmp_path: Path, monkeypatch) -> Path:
    """As a wheel install sees it: no zoo/ next to the package."""
    monkeypatch.setattr(zoo, "CLONE_ZOO", tmp_path / "no-clone" / "zoo")
    monkeypatch.delenv(zoo.ZOO_VARIABLE, raising=False)
    return tmp_path


def test_a_lineage_name_without_a_zoo_fails_with_one_line_saying_how_to_get_it(no_clone: Path):
    with pytest.raises(ValueError) as error:
        make_agent("net-v3", 0)
    assert str(error.value) == ("agent 'net-v3': its network wizard-v3.npz is not installed with the package: clone the "
                                "wizard_env repository and use the clone (its zoo/ folder holds it), or set WIZARD_ZOO to a "
                                "folder holding wizard-v3.npz")
    assert Path(make_agent("search:samples=2", 0).policy.source).name == "wizard-v7.npz"  # shipped, found without a zoo


def test_a_lineage_name_loads_from_the_folder_wizard_zoo_names(no_clone: Path, monkeypatch):
    mine = no_clone / "mine"
    mine.mkdir()
    (mine / "wizard-v3.npz").write_bytes((ZOO / "wizard-v3.npz").read_bytes())
    monkeypatch.setenv(zoo.ZOO_VARIABLE, str(mine))
    assert make_agent("ppo-v3", 0).source == str(mine / "wizard-v3.npz")
    with pytest.raises(ValueError, match=rf"WIZARD_ZOO={re.escape(str(mine))} does not hold it"):
        make_agent("net-v4", 0)


def test_a_file_that_is_not_the_manifests_network_is_refused_naming_both_hashes(no_clone: Path, monkeypatch):
    mine = no_clone / "mine"
    mine.mkdir()
    (mine / "wizard-v3.npz").write_bytes((ZOO / "wizard-v4.npz").read_bytes())  # another network under its name
    monkeypatch.setenv(zoo.ZOO_VARIABLE, str(mine))
    found = hashlib.sha256((ZOO / "wizard-v4.npz").read_bytes()).hexdigest()
    with pytest.raises(ValueError) as error:
        make_agent("net-v3", 0)
    assert str(mine / "wizard-v3.npz") in str(error.value)
    assert found in str(error.value) and zoo.BY_NAME["net-v3"].sha256 in str(error.value)


# -- sources that name nothing of one machine ------------------------------------------------------------------


def test_portable_sources_name_zoo_networks_by_agent_name_and_other_paths_relative_to_the_run():
    config = {"format": "x", "train": {"start": "/somewhere/clone/agents/pretrained/wizard-v9.npz",
                                       "data_from": ["/data/r10run/steps/v5data", "/data/v7-more"],
                                       "pool": ["previous", "ppo-v6", "/data/r10run/steps/x/checkpoints/iter-1.npz"]}}
    train = portable_sources(config)["train"]
    assert train == {"start": "net-v9", "data_from": ["steps/v5data", "../v7-more"],
                     "pool": ["previous", "ppo-v6", "steps/x/checkpoints/iter-1.npz"]}
    assert portable_sources(config, "/data/r10run/steps/x")["train"]["data_from"] == ["../v5data", "../../../v7-more"]
    assert config["train"]["start"].startswith("/somewhere")  # the caller's config is left as it was
    with pytest.raises(ValueError, match="source /data/elsewhere is an absolute path and no run folder was given"):
        portable_sources({"train": {"start": "", "data_from": ["/data/elsewhere"]}})


def test_a_trainer_that_names_its_run_folder_saves_relative_sources(tmp_path: Path):
    run = tmp_path / "run"
    config = small_config() | {"train": {"start": str(PRETRAINED / "wizard-v13.npz"), "data_from": [str(tmp_path / "earlier")]}}
    path = save_checkpoint(run / "checkpoints" / "iter-0.npz", config, random_weights(3), run=run)
    saved, _ = load_checkpoint(path)
    assert saved["train"] == {"start": "net-v13", "data_from": ["../earlier"]}


ABSOLUTE = re.compile(r"(?<![\w.~/-])(?:/work/|/root/|/home/|/tmp/|/Users/|/var/folders/|[A-Za-z]:\\)")


def absolute_paths(value: object) -> list[str]:
    """The strings in a JSON value that are absolute paths."""
    if isinstance(value, dict):
        return [p for v in value.values() for p in absolute_paths(v)]
    if isinstance(value, list):
        return [p for v in value for p in absolute_paths(v)]
    if isinstance(value, str) and (PurePosixPath(value).is_absolute() or PureWindowsPath(value).drive):
        return [value]
    return []


def test_no_checkpoint_config_names_an_absolute_path():
    found = {p.name: absolute_paths(read_archive(p)[0]) for p in CHECKPOINTS}
    assert {name: paths for name, paths in found.items() if paths} == {}


SHIPPED_TEXT = ["README.md", "CHANGELOG.md", "mkdocs.yml", "pyproject.toml", "docs/**/*.md", "docs/cards/*.json",
                "agents/pretrained/*.json", "agents/pretrained/*.md", "training/recipes/*.toml", "agents/**/*.py",
                "training/**/*.py", "wizard_env/**/*.py", "examples/*.py"]


def test_no_shipped_file_names_a_path_of_one_machine():
    files = sorted({p for pattern in SHIPPED_TEXT for p in ROOT.glob(pattern) if p.is_file()})
    assert len(files) > 50 and ROOT / "README.md" in files
    found = [f"{p.relative_to(ROOT)}:{i}: {m.group(0)}" for p in files
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) for m in ABSOLUTE.finditer(line)]
    assert found == []


def test_the_absolute_path_pattern_finds_what_it_must_and_spares_relative_paths():
    assert [m.group(0) for m in ABSOLUTE.finditer("a /work/x, b /tmp/y, c C:\\Users, d /home/z, /Users/q")] == [
        "/work/", "/tmp/", "C:\\", "/home/", "/Users/"]
    assert ABSOLUTE.search("runs/work/x agents/pretrained/tmp/ ../home/ https://x.org/root/ ~/tmp/") is None


def test_the_tool_rewrites_a_checkpoints_sources_in_place_and_leaves_its_weights(tmp_path: Path, capsys):
    from wizard_env.agents import zoo_tool

    config = small_config() | {"train": {"start": "/elsewhere/agents/pretrained/wizard-v2.npz",
                                         "data_from": ["/elsewhere/run/steps/data"]}}
    path = save_checkpoint(tmp_path / "old.npz", config, random_weights(4))
    before = weights_sha256(path)
    assert zoo_tool.main(["portable", str(path)]) == 0
    assert read_archive(path)[0]["train"] == {"start": "net-v2", "data_from": ["steps/data"]}
    assert weights_sha256(path) == before and [p.name for p in tmp_path.iterdir()] == ["old.npz"]
    assert zoo_tool.main(["portable", str(path)]) == 0 and capsys.readouterr().out.endswith(f"{path}: unchanged\n")
