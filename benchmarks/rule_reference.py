"""RuleAgent as it was at an earlier commit, importable beside today's, to compare decisions and speed.

``reference_rule_agent("HEAD")`` writes that commit's agents/base.py and agents/rule_*.py into a
temporary package (``_rule_reference_<commit>``) and returns its RuleAgent class. The old modules
import ``wizard_env`` as it is now, so both versions read the same observations.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

from wizard_env.agents import Agent

try:
    from benchmarks.reference_tree import git, short_sha
except ImportError:  # run as a script from benchmarks/
    from reference_tree import git, short_sha

MODULES = ("base", "rule_agent", "rule_view", "rule_bid", "rule_play")


def reference_rule_agent(commit: str = "HEAD") -> type[Agent]:
    """The RuleAgent class of ``commit`` (any git revision of this repository)."""
    sha = short_sha(commit)
    package = f"_rule_reference_{sha}"
    if package not in sys.modules:
        folder = Path(tempfile.mkdtemp(prefix="rule_reference_")) / package
        folder.mkdir()
        (folder / "__init__.py").write_text("")
        for name in MODULES:
            (folder / f"{name}.py").write_bytes(git("show", f"{sha}:agents/{name}.py"))
        sys.path.insert(0, str(folder.parent))
    return importlib.import_module(f"{package}.rule_agent").RuleAgent
