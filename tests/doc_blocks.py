"""The ```python blocks of a Markdown page (README.md, docs/*.md), read from the page itself, and how a test runs one.

A comment on the line before a block changes how it runs:

- ``<!-- requires: torch, sb3_contrib -->``: the block imports these modules (an optional extra); where one is not
  installed the test skips, naming it.
- ``<!-- compile only -->``: the block is a fragment of a larger program (it names objects it does not make); the
  test compiles it, so its syntax is checked, and does not run it.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Every page whose python blocks the tests run: the README and the pages of the docs site (model cards included).
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_BLOCK = re.compile(r"(?:^<!--\s*(?P<marker>[^>]*?)\s*-->\n)?^```python\n(?P<code>.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its code, the modules it requires and whether it only compiles."""

    page: str  # the page's path from the repository root
    number: int  # 1 for the page's first python block
    code: str
    requires: tuple[str, ...]
    compile_only: bool

    @property
    def name(self) -> str:
        """How a test id and a traceback name the block."""
        return f"{self.page} python block {self.number}"


def python_blocks(page: Path) -> list[Block]:
    """The ```python blocks of ``page`` in order, with their markers (ValueError naming an unknown marker)."""
    blocks = []
    relative = page.relative_to(ROOT).as_posix()
    for number, match in enumerate(_BLOCK.finditer(page.read_text(encoding="utf-8")), 1):
        marker, requires, compile_only = match["marker"] or "", (), False
        if marker.startswith("requires:"):
            requires = tuple(name.strip() for name in marker[len("requires:"):].split(",") if name.strip())
        elif marker == "compile only":
            compile_only = True
        elif marker:
            raise ValueError(f"{relative} python block {number}: unknown marker <!-- {marker} -->; "
                             "use <!-- requires: MODULE, ... --> or <!-- compile only -->")
        blocks.append(Block(relative, number, match["code"], requires, compile_only))
    return blocks


def run_block(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ``block`` in a fresh namespace inside ``tmp_path``; skip naming the required modules that are missing."""
    code = compile(block.code, block.name, "exec")
    if block.compile_only:
        return
    missing = [name for name in block.requires if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"{block.name} needs {', '.join(missing)}, which is not installed")
    monkeypatch.chdir(tmp_path)  # whatever a block writes lands in a temporary folder
    namespace = {"__name__": "__doc_block__"}
    exec(code, namespace)
    assert namespace.keys() - {"__name__", "__builtins__"}, f"{block.name} defined nothing"
