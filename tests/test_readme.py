"""Every ```python block of README.md runs as written (read from the README itself, never copied here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(), re.S | re.M)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[f"block{i + 1}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(index: int, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # whatever a block writes lands in a temporary folder
    namespace = {"__name__": "__readme__"}
    exec(compile(BLOCKS[index], f"README.md python block {index + 1}", "exec"), namespace)
    assert namespace.keys() - {"__name__", "__builtins__"}  # the block defined what it shows


def test_the_table_the_readme_says_make_demo_prints_is_what_it_prints(tmp_path: Path, capsys):
    from wizard_env.cli.main import main

    makefile = (README.parent / "Makefile").read_text()
    recipe = re.search(r"^demo:.*\n\t\$\(BIN\)/wizard (.*)$", makefile, re.M)[1].split()
    shown = re.search(r"`make demo` ends with this table.*?```text\n(.*?)```", README.read_text(), re.S)[1]
    out = recipe.index("--out")
    assert main([*recipe[:out + 1], str(tmp_path / "demo"), *recipe[out + 2:]]) == 0
    printed = capsys.readouterr().out
    assert [line for line in shown.splitlines() if line not in printed.splitlines()] == []
