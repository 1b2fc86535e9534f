"""What `pip install` gives a user: one top-level package, the shipped networks and the zoo's manifest inside it (the
lineage stays in the repository's zoo/), no name taken.

agents/ and training/ are folders of the repository that install as wizard_env.agents and
wizard_env.training (pyproject.toml's package-dir), so a user's own folders of those names keep theirs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


def test_a_users_own_agents_and_training_folders_keep_their_names(tmp_path: Path):
    for name in ("agents", "training"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"MINE = {name!r}\n")
    done = python("import agents, training\n"
                  "from wizard_env.agents import Agent, RuleAgent, make_agent\n"
                  "from wizard_env.training.evaluation.evaluate import mean_ci\n"
                  "print(agents.MINE, training.MINE, type(make_agent('rule', seed=0)).__name__)", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["agents", "training", "RuleAgent"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"  # a copy: setuptools builds in the source tree and would leave build/ in the clone
    skip = shutil.ignore_patterns(".git", ".venv", "runs", "build", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache")
    shutil.copytree(ROOT, source, ignore=skip)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    (path,) = out.glob("*.whl")
    return path


def test_the_wheel_installs_one_top_level_package_with_the_shipped_checkpoints(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"wizard_env"}
    for shipped in (ROOT / "agents" / "pretrained").glob("*.npz"):
        assert f"wizard_env/agents/pretrained/{shipped.name}" in names


def test_the_wheel_holds_the_three_networks_users_play_and_the_manifest_in_20_mb(wheel: Path):
    archive = zipfile.ZipFile(wheel)
    networks = {Path(i.filename).name: i.file_size for i in archive.infolist() if i.filename.endswith(".npz")}
    assert sorted(networks) == ["wizard-4p.npz", "wizard-v13.npz", "wizard-v7.npz"]
    assert sum(networks.values()) <= 15_000_000 and wheel.stat().st_size <= 20_000_000
    manifest = json.loads(archive.read("wizard_env/agents/pretrained/zoo.json"))
    assert len(manifest["networks"]) == 14 and {n["file"] for n in manifest["networks"] if n["shipped"]} == set(networks)


def test_the_installed_wheel_plays_the_shipped_agent_outside_the_repository(wheel: Path, tmp_path: Path):
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                                str(wheel)], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    work = tmp_path / "work"
    work.mkdir()
    done = python("import wizard_env, importlib.util\n"
                  "from wizard_env.training.evaluation.evaluate import evaluate\n"
                  "from wizard_env.engine.rules import Rules\n"
                  "result = evaluate(Rules(num_players=4), ['net', 'rule', 'rule', 'rule'], 4, seed=0)\n"
                  "print(wizard_env.__file__)\n"
                  "print(importlib.util.find_spec('agents'), importlib.util.find_spec('training'))", work,
                  PYTHONPATH=str(target))
    assert done.returncode == 0, done.stderr
    where, tops = done.stdout.splitlines()
    assert Path(where).is_relative_to(target)  # the wheel's copy, not the repository's
    assert tops == "None None"


def test_the_wheel_ships_its_type_hints_and_leaves_plotting_and_ratings_to_the_eval_extra(wheel: Path):
    archive = zipfile.ZipFile(wheel)
    assert "wizard_env/py.typed" in archive.namelist()  # PEP 561: type checkers read the package's hints
    (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
    requires = [line.split(":", 1)[1].strip() for line in archive.read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:")]
    core = [r for r in requires if "extra ==" not in r]
    assert {r.split(">")[0].split("<")[0].split("=")[0].strip() for r in core} == {
        "numpy", "gymnasium", "pettingzoo", "tqdm", "threadpoolctl", "numba", "tomli"}  # tomli on Python 3.10 only
    for package in ("openskill", "matplotlib"):
        assert any(r.startswith(package) and 'extra == "eval"' in r for r in requires), requires


def test_the_wheel_in_a_fresh_venv_plays_the_shipped_agents_and_a_users_installed_one_and_says_how_to_get_the_lineage(wheel: Path, tmp_path: Path):
    # A new user's install: a venv of its own (no site packages of this one), the wheel with its eval extra
    # and its dependencies from the package index, then the commands run outside any clone.
    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    installed = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "-c", str(ROOT / "constraints.txt"),
                                f"{wheel}[eval]"], capture_output=True, text=True, timeout=900, env=env)
    assert installed.returncode == 0, installed.stderr
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([str(bin_dir / "wizard"), "eval", "--agents", "net,net-bid,search:samples=2,rule", "--games", "2"],
                          cwd=work, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    table = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert table[0].startswith("| agent | seats | mean score |")
    assert [row.split("|")[1:3] for row in table[2:6]] == [[" net ", " 1 "], [" net-bid ", " 1 "], [" search:samples=2 ", " 1 "],
                                                           [" rule ", " 1 "]]
    lineage = subprocess.run([str(bin_dir / "wizard"), "eval", "--agents", "net-v3,rule,rule,rule", "--games", "2"],
                             cwd=work, capture_output=True, text=True, timeout=600, env={**env, "WIZARD_ZOO": ""})
    assert lineage.returncode == 2 and lineage.stdout == ""
    assert lineage.stderr.splitlines() == ["wizard: error: --agents: agent 'net-v3': its network wizard-v3.npz is not "
                                           "installed with the package: clone the wizard_env repository and use the clone "
                                           "(its zoo/ folder holds it), or set WIZARD_ZOO to a folder holding wizard-v3.npz"]
    # a package of the user's that registers an agent (examples/my_agent): its name plays in the wizard script
    source = tmp_path / "my_agent"  # a copy: building in the source tree would leave build/ and egg-info there
    shutil.copytree(ROOT / "examples" / "my_agent", source)
    mine = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps", str(source)],
                          capture_output=True, text=True, timeout=900, env=env)
    assert mine.returncode == 0, mine.stderr
    played = subprocess.run([str(bin_dir / "wizard"), "eval", "--agents", "myagent,rule,rule,rule", "--games", "2"],
                            cwd=work, capture_output=True, text=True, timeout=600, env=env)
    assert played.returncode == 0, played.stderr
    assert [line.split("|")[1:3] for line in played.stdout.splitlines() if line.startswith("| myagent ")] == [[" myagent ", " 1 "]]
    where = subprocess.run([str(bin_dir / "python"), "-c", "import wizard_env; print(wizard_env.__file__)"],
                           cwd=work, capture_output=True, text=True, timeout=300, env=env)
    assert Path(where.stdout.strip()).is_relative_to(venv)  # the wheel's copy, not the repository's
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
