"""Every notebook under notebooks/ runs top to bottom without an error."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert any(p.name == "quickstart.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_twice_and_leaves_nothing_in_its_folder(path: Path, tmp_path: Path):
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    for _ in range(2):  # a second run meets whatever the first one left behind
        notebook = nbformat.read(path, as_version=4)
        NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
        errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
        assert not errors
        # each notebook ends by checking its own result with an assert and printing "done"
        last = [o for o in notebook.cells[-1].get("outputs", []) if o.output_type == "stream"]
        assert last and "done" in last[-1]["text"]
    assert not list(tmp_path.iterdir())  # runs go to temporary folders, not beside the notebook
