"""``wizard train-values --backend ray`` where ray is missing, and ``--address`` without it (collection on Ray itself
is tested in tests/rllib/test_ray_collect.py, in the venv that holds ray)."""

from __future__ import annotations

import subprocess
import sys
from importlib.util import find_spec

import pytest

from helpers import uninstalled
from wizard_env.cli.main import main

#: wizard train-values names a missing torch before its other checks: without it these errors are not reached.
needs_torch = pytest.mark.skipif(find_spec("torch") is None, reason="needs torch (the train extra), not installed")


@needs_torch
def test_without_ray_the_ray_backend_is_one_line_naming_the_extra_and_nothing_is_written(monkeypatch, capsys, tmp_path):
    uninstalled(monkeypatch, "ray")
    assert main(["train-values", "--backend", "ray", "--out", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err == ("wizard: error: wizard train-values --backend ray needs ray[rllib], from the rllib "
                                       "extra: pip install -c constraints.txt -e '.[rllib]'\n")
    assert not (tmp_path / "run").exists()


@needs_torch
def test_an_address_without_the_ray_backend_is_refused_before_anything_is_written(capsys, tmp_path):
    assert main(["train-values", "--address", "auto", "--out", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err == "wizard: error: --address applies to --backend ray only\n"
    assert not (tmp_path / "run").exists()


def test_the_train_values_command_does_not_import_ray():
    code = ("import sys, wizard_env.cli.train_values, wizard_env.training.values.train_values, wizard_env.training.values.ray_collect; "
            "assert 'ray' not in sys.modules, 'ray was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
