"""The package as it was at an earlier commit, laid out as installed, to time old and new code in one run.

``reference_tree("4981a66")`` exports that commit's ``wizard_env/``, ``agents/`` and ``training/`` into a
temporary folder, with ``agents/`` and ``training/`` inside ``wizard_env/`` as the install puts them, and
returns the folder: a process started with it first on ``PYTHONPATH`` (and this file's folder, not the
repository root, as its script folder) imports the old package whole. Each commit is exported once per machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The last commit before the training-throughput work (issue 25): the default reference of its benchmarks.
BEFORE_THROUGHPUT = "4981a66"


def reference_tree(commit: str = BEFORE_THROUGHPUT) -> Path:
    """A folder holding ``commit``'s package as installed (``wizard_env`` with its ``agents`` and ``training``)."""
    sha = short_sha(commit)
    folder = Path(tempfile.gettempdir()) / f"wizard_reference_{sha}"
    if not (folder / "wizard_env" / "training").is_dir():
        partial = Path(tempfile.mkdtemp(prefix=f"wizard_reference_{sha}_"))
        extract(sha, partial, "wizard_env", "agents", "training")
        (partial / "agents").rename(partial / "wizard_env" / "agents")
        (partial / "training").rename(partial / "wizard_env" / "training")
        try:
            partial.rename(folder)
        except OSError:  # another run exported it meanwhile
            pass
    return folder


def short_sha(commit: str) -> str:
    """The short hash of any git revision of this repository."""
    return git("rev-parse", "--short", commit).decode().strip()


def extract(sha: str, folder: Path, *paths: str) -> None:
    """Write ``paths`` (files or folders) as they are at commit ``sha`` into ``folder``."""
    with tarfile.open(fileobj=BytesIO(git("archive", sha, *paths))) as archive:
        archive.extractall(folder, filter="data")


def git(*args: str) -> bytes:
    """The output of a git command run in this repository."""
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True).stdout


def network(path: str | None) -> str:
    """The network file that both versions of the code play, as an absolute path (their processes run elsewhere):
    ``path``, or this checkout's shipped ``ppo`` (the ``--checkpoint`` default of the benchmarks that compare them,
    so a checkout whose ``ppo`` is another file than the reference's still compares like with like)."""
    if path is None:
        from wizard_env.agents.ppo_agent import PRETRAINED

        path = str(PRETRAINED)
    return str(Path(path).resolve())


def run_fresh(script: str, args: list[str], tree: Path | None, what: str) -> dict:
    """Run ``script`` (a benchmark in this folder) with ``args`` in a fresh process, on the reference code (``tree``)
    or this checkout's (None), and return the JSON object its last line prints. That object names the code it ran as
    ``code`` (the folder above the ``wizard_env`` it imported), which is checked; a failure exits naming ``what``."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, script, *args], env=env, capture_output=True, text=True,
                          cwd=Path(script).resolve().parent)
    if done.returncode:
        sys.exit(f"{what} measurement failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    expected = str(tree) if tree is not None else str(ROOT)
    if not result["code"].startswith(expected):
        sys.exit(f"the {what} measurement ran the code in {result['code']}, not {expected}")
    return result


def median(values: list[float]) -> float:
    """The middle value (the upper of the two middle ones for an even count), as the comparison benchmarks report."""
    return sorted(values)[len(values) // 2]
