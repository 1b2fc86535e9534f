"""RuleAgent as it was at an earlier commit, importable beside today's, to compare decisions and speed.

``reference_rule_agent("HEAD")`` writes that commit's agents/base.py and agents/rule_*.py into a
temporary package (``_rule_reference_<commit>``) and returns its RuleAgent class. The old modules
import ``wizard_env`` as it is now, so both versions read the same observations.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

from wizard_env.agents import Agent

MODULES = ("base", "rule_agent", "rule_view", "rule_bid", "rule_play")
_ROOT = Path(__file__).resolve().parent.parent


def reference_rule_agent(commit: str = "HEAD") -> type[Agent]:
    """The RuleAgent class of ``commit`` (any git revision of this repository)."""
    sha = _git("rev-parse", "--short", commit).strip()
    package = f"_rule_reference_{sha}"
    if package not in sys.modules:
        folder = Path(tempfile.mkdtemp(prefix="rule_reference_")) / package
        folder.mkdir()
        (folder / "__init__.py").write_text("")
        for name in MODULES:
            (folder / f"{name}.py").write_text(_git("show", f"{sha}:agents/{name}.py"))
        sys.path.insert(0, str(folder.parent))
    return importlib.import_module(f"{package}.rule_agent").RuleAgent


def _git(*args: str) -> str:
    """The output of a git command run in this repository."""
    return subprocess.run(["git", *args], cwd=_ROOT, check=True, capture_output=True, text=True).stdout
