"""``wizard train-values --backend ray`` where ray is missing, and ``--address`` without it (collection on Ray itself
is tested in tests/rllib/test_ray_collect.py, in the venv that holds ray)."""

from __future__ import annotations

import subprocess
import sys

from helpers import uninstalled
from wizard_env.cli.main import main


def test_without_ray_the_ray_backend_is_one_line_naming_the_extra_and_nothing_is_written(monkeypatch, capsys, tmp_path):
    uninstalled(monkeypatch, "ray")
    assert main(["train-values", "--backend", "ray", "--out", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err == ("wizard: error: wizard train-values --backend ray needs ray[rllib], from the rllib "
                                       "extra: pip install -c constraints.txt -e '.[rllib]'\n")
    assert not (tmp_path / "run").exists()


def test_an_address_without_the_ray_backend_is_refused_before_anything_is_written(capsys, tmp_path):
    assert main(["train-values", "--address", "auto", "--out", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err == "wizard: error: --address applies to --backend ray only\n"
    assert not (tmp_path / "run").exists()


def test_the_train_values_command_does_not_import_ray():
    code = ("import sys, wizard_env.cli.train_values, wizard_env.training.train_values, wizard_env.training.ray_collect; "
            "assert 'ray' not in sys.modules, 'ray was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
