"""Every notebook under notebooks/ runs top to bottom without an error."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import inspect
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli, the package tomllib came from (a dependency there)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert any(p.name == "quickstart.ipynb" for p in NOTEBOOKS)


def skip_if_not_installed(path: Path, error: CellExecutionError) -> None:
    """Skip, naming it, where the notebook failed on importing a package this venv lacks (torch, with the notebooks
    extra, is installed on one Python of the nox runs only)."""
    missing = re.match(r"No module named '([^'.]+)", error.evalue) if error.ename == "ModuleNotFoundError" else None
    if missing and importlib.util.find_spec(missing[1]) is None:
        pytest.skip(f"{path.name} needs {missing[1]} (the notebooks extra), not installed")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_twice_and_leaves_nothing_in_its_folder(path: Path, tmp_path: Path):
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    for _ in range(2):  # a second run meets whatever the first one left behind
        notebook = nbformat.read(path, as_version=4)
        try:
            NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
        except CellExecutionError as error:
            skip_if_not_installed(path, error)
            raise
        errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
        assert not errors
        # each notebook ends by checking its own result with an assert and printing "done"
        # (its stdout, whole: a loaded machine can hand "done" and its newline over as two outputs)
        last = "".join(o["text"] for o in notebook.cells[-1].get("outputs", []) if o.output_type == "stream")
        assert last.rstrip().endswith("done")
    assert not list(tmp_path.iterdir())  # runs go to temporary folders, not beside the notebook


def _extra_closure(extra: str, extras: dict[str, list[str]], seen: set[str] | None = None) -> set[str]:
    """The distributions an extra installs, following ``wizard-env[...]`` references to other extras."""
    seen = set() if seen is None else seen
    found: set[str] = set()
    for requirement in extras[extra]:
        name = re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")
        if name == "wizard-env":
            for inner in re.search(r"\[(.*)\]", requirement)[1].split(","):
                if inner.strip() not in seen:
                    seen.add(inner.strip())
                    found |= _extra_closure(inner.strip(), extras, seen)
        else:
            found.add(name)
    return found


def import_names() -> dict[str, list[str]]:
    """The installed distributions by the top-level names they install, as ``packages_distributions`` gives them from
    Python 3.11 on: 3.10's reads top_level.txt alone, which the wheels of numpy and matplotlib (built by meson) lack,
    so the names are also read from each distribution's files there."""
    found = {name: list(dists) for name, dists in importlib.metadata.packages_distributions().items()}
    for dist in importlib.metadata.distributions():
        dist_name = dist.metadata["Name"]
        for name in {file.parts[0] if len(file.parts) > 1 else inspect.getmodulename(file.name) for file in dist.files or ()}:
            if name and "." not in name and dist_name not in found.setdefault(name, []):
                found[name].append(dist_name)
    return found


def test_the_notebooks_extra_installs_what_the_notebooks_import_and_the_runner_the_readme_names():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    installed = {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in project["dependencies"]}
    installed |= _extra_closure("notebooks", project["optional-dependencies"])
    assert {"jupyterlab", "nbconvert"} <= installed
    assert "pip install -c constraints.txt -e '.[notebooks]'" in (ROOT / "README.md").read_text()
    distributions = import_names()
    imported = set()
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                for node in ast.walk(ast.parse(cell.source)):
                    if isinstance(node, ast.Import):
                        imported |= {alias.name.split(".")[0] for alias in node.names}
                    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                        imported.add(node.module.split(".")[0])
    third_party = {name for name in imported if name not in sys.stdlib_module_names and name != "wizard_env"}
    assert {"matplotlib", "pyspiel"} <= third_party  # what the walk must see
    missing = {name: distributions.get(name) for name in third_party
               if not {d.lower().replace("_", "-") for d in distributions.get(name, [])} & installed}
    assert missing == {}
