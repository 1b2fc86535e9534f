"""``wizard train --backend rllib`` where the rllib extra is missing, and the RLlib options on the sb3 backend
(the RLlib runs themselves are tested in tests/rllib, in the venv that holds ray)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from helpers import uninstalled
from wizard_env.cli.main import main
from wizard_env.util.extras import MissingExtra


def test_without_ray_the_backend_is_one_line_naming_the_extra(monkeypatch, capsys, tmp_path):
    uninstalled(monkeypatch, "ray")
    assert main(["train", "--backend", "rllib", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err == ("wizard: error: wizard train --backend rllib needs ray[rllib], from the rllib extra: "
                   "pip install -c constraints.txt -e '.[rllib]'\n")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("option", [["--num-env-runners", "2"], ["--address", "auto"], ["--iteration-steps", "100"]])
def test_rllib_options_on_the_sb3_backend_are_refused(capsys, tmp_path, option):
    assert main(["train", *option, "--out", str(tmp_path / "run")]) == 2
    assert f"{option[0]} applies to --backend rllib only" in capsys.readouterr().err


def test_the_rllib_env_without_ray_is_one_import_error_naming_the_extra(monkeypatch):
    uninstalled(monkeypatch, "ray")
    monkeypatch.delitem(sys.modules, "wizard_env.integrations.rllib", raising=False)
    with pytest.raises(MissingExtra, match=r"^wizard_env.integrations.rllib needs ray\[rllib\], from the rllib extra: pip install "
                                           r"-c constraints.txt -e '\.\[rllib\]'$"):
        importlib.import_module("wizard_env.integrations.rllib")


def test_importing_the_package_and_the_train_command_does_not_import_ray():
    code = ("import sys, wizard_env, wizard_env.cli.main, wizard_env.cli.train, wizard_env.training.ppo.train, wizard_env.training.rllib.rllib_train; "
            "wizard_env.env(); assert 'ray' not in sys.modules, 'ray was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
