"""Optional extras: the core install has no plotting or ratings packages; what needs them loads them
lazily and, when they are missing, fails with one line naming the package and the install command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import loaded_by_import_and_help, uninstalled
from wizard_env.cli.main import main
from wizard_env.engine.rules import Rules
from wizard_env.training.evaluation import eval_report
from wizard_env.training.evaluation.evaluate import MissingExtra, evaluate, ratings

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli, the package tomllib came from (a dependency there)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
EVAL_INSTALL = "pip install -c constraints.txt -e '.[eval]'"
TINY = ["--players", "4", "--rounds", "2", "--games", "1"]


def test_the_core_dependencies_leave_plotting_and_ratings_to_the_eval_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert "matplotlib" not in core and "openskill" not in core
    extras = project["optional-dependencies"]
    assert {d.split(">")[0] for d in extras["eval"]} == {"openskill", "matplotlib"}
    assert "wizard-env[eval]" in extras["train"]  # training evaluates, rates and plots as it goes


def test_the_fuzzer_is_an_extra_and_no_core_or_dev_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert not any("atheris" in d for d in project["dependencies"] + extras["dev"])
    assert any(d.startswith("atheris") for d in extras["fuzz"]) and "wizard-env[web]" in extras["fuzz"]  # the web target


def test_import_and_help_load_neither_matplotlib_nor_openskill():
    assert loaded_by_import_and_help(["matplotlib", "openskill"]) == []


@pytest.mark.parametrize("package", ["openskill", "matplotlib"])
def test_eval_without_the_eval_extra_is_one_line_naming_the_install_command(package, monkeypatch, capsys, tmp_path):
    uninstalled(monkeypatch, package)
    out = tmp_path / "ev"
    assert main(["eval", *TINY, "--agents", "rule,random,rule,random", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"wizard: error: wizard eval needs {package}, from the eval extra: {EVAL_INSTALL}\n"
    assert not out.exists()  # checked before any game is played


def test_league_without_the_eval_extra_is_one_line_before_any_file(monkeypatch, capsys, tmp_path):
    uninstalled(monkeypatch, "matplotlib")
    assert main(["league", "rule", "random", "--rounds", "2", "--out", str(tmp_path / "league")]) == 2
    assert capsys.readouterr().err == f"wizard: error: wizard league needs matplotlib, from the eval extra: {EVAL_INSTALL}\n"
    assert list(tmp_path.iterdir()) == []


def test_train_without_the_eval_extra_names_the_train_extra(monkeypatch, capsys, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    uninstalled(monkeypatch, "openskill")
    assert main(["train", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err == ("wizard: error: wizard train needs openskill, from the train extras: "
                   "pip install -c constraints.txt -e '.[train]'\n")


def test_the_library_raises_missing_extra_where_the_package_is_first_needed(monkeypatch):
    result = evaluate(Rules.make(3, 1), ["rule", "random", "random"], deals=1, seed=0)
    uninstalled(monkeypatch, "matplotlib")
    with pytest.raises(MissingExtra, match=r"matplotlib, from the eval extra: pip install -c constraints.txt -e '\.\[eval\]'"):
        eval_report.plot(result)
    uninstalled(monkeypatch, "openskill")
    with pytest.raises(MissingExtra, match=r"openskill, from the eval extra"):
        ratings(np.array([[1, 2], [3, 0]]))
    assert issubclass(MissingExtra, ImportError)
