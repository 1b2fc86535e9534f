"""The test suite on every supported Python, each in a venv of its own under .nox/ (``make test-pythons``).

    nox -s core-3.10                     # the core suite on Python 3.10
    nox -s core                          # on 3.10, 3.11, 3.12 and 3.13 in turn
    nox -s core-3.13 -- -x -k observation  # what follows -- goes to pytest

The core suite is the whole of tests/ but the browser tests; tests/rllib skips, naming ray (it runs in .venv-rllib).
torch's CPU build lies on our machines' disk for Python 3.11 only (constraints.txt pins it), and torch from the
index is a multi-GB CUDA build, so only 3.11 installs the extras that need torch (train, adapters, notebooks); on
the other versions each test that needs torch, stable-baselines3, tianshou or torchrl skips and names it.

nox looks for ``python3.X`` on PATH; the installed Pythons of pyenv are put first on it, so they are found even
where pyenv has not activated them.
"""

from __future__ import annotations

import glob
import os

import nox

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
#: The Python whose venv gets torch (the version of the CPU wheel that constraints.txt pins).
TORCH_PYTHON = "3.11"
#: The extras every version installs: none of them needs torch (open_spiel and numba have wheels for 3.10 to 3.13).
EXTRAS = ["dev", "eval", "openspiel", "web", "render"]
TORCH_EXTRAS = ["train", "adapters", "notebooks"]

nox.options.sessions = ["core"]
nox.options.error_on_missing_interpreters = True  # a Python that is not installed fails the run, not skips it
nox.options.download_python = "never"


def _pyenv_first_on_path() -> None:
    """Put the bin folder of pyenv's newest install of each of ``PYTHONS`` first on PATH (where pyenv is)."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    folders = []
    for version in PYTHONS:
        installs = sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}")),
                          key=lambda path: [int(part) if part.isdigit() else 0 for part in path.split(os.sep)[-3].split(".")])
        if installs:
            folders.append(os.path.dirname(installs[-1]))
    os.environ["PATH"] = os.pathsep.join(folders + [os.environ.get("PATH", "")])


_pyenv_first_on_path()


@nox.session(python=PYTHONS)
def core(session: nox.Session) -> None:
    """The core suite (all of tests/ but the browser tests) on one Python."""
    extras = EXTRAS + (TORCH_EXTRAS if session.python == TORCH_PYTHON else [])
    session.install("-c", "constraints.txt", "-e", f".[{','.join(extras)}]")
    if session.python != TORCH_PYTHON:
        # torch here would be the index's CUDA build: an extra that pulled it in is a bug of this file
        session.run("python", "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is not None"
                    " and 'torch is installed: only Python ' + sys.argv[1] + ' gets its extras')", TORCH_PYTHON, silent=True)
    session.run("python", "-m", "pytest", "-q", "--ignore=tests/test_web_browser.py", *session.posargs)
