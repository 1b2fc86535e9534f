"""The docs site builds with no warning (a broken link or anchor, a page left out, an API entry that does not
resolve), every ```python block of the README and the docs pages runs, and the pages' tables that copy the code's
match what the code writes."""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from doc_blocks import PAGES, ROOT, python_blocks, run_block

BLOCKS = [block for page in PAGES for block in python_blocks(page)]


def test_the_site_builds_with_no_warning(tmp_path: Path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
    pytest.importorskip("mkdocstrings_handlers.python", reason="the docs extra is not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                           cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    problems = [line for line in built.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert (built.returncode, problems) == (0, [])
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="wizard_env.envs.aec.raw_env"' in api  # the API reference is generated from the docstrings


def test_every_page_of_the_docs_folder_is_in_the_nav_or_shown_elsewhere():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\s+- [^:\n]+: ([\w/-]+\.md)$", config, re.M))
    pages = {page.relative_to(ROOT / "docs").as_posix() for page in (ROOT / "docs").rglob("*.md")}
    shown_elsewhere = re.search(r"^not_in_nav: \|\n((?:  \S.*\n)+)", config, re.M)[1].split()  # the cards, the zero curve
    assert shown_elsewhere == ["cards/*.md", "zero/*.md"]
    assert {page for page in pages - listed if not any(fnmatch.fnmatch(page, p) for p in shown_elsewhere)} == set()
    assert listed - pages == set()


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name.replace(" python block ", "#") for block in BLOCKS])
def test_python_block_runs(block, tmp_path: Path, monkeypatch):
    run_block(block, tmp_path, monkeypatch)


def test_a_requires_marker_skips_naming_the_missing_module(tmp_path: Path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("<!-- requires: numpy, no_such_module_here -->\n```python\nx = 1\n```\n")
    monkeypatch.setattr("doc_blocks.ROOT", tmp_path)
    [block] = python_blocks(page)
    with pytest.raises(pytest.skip.Exception, match="needs no_such_module_here, which is not installed"):
        run_block(block, tmp_path, monkeypatch)


def test_an_unknown_marker_is_an_error_naming_it(tmp_path: Path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("<!-- skip this -->\n```python\nx = 1\n```\n")
    monkeypatch.setattr("doc_blocks.ROOT", tmp_path)
    with pytest.raises(ValueError, match="unknown marker <!-- skip this -->"):
        python_blocks(page)


def _text_block_after(page: str, heading: str) -> str:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return re.search(rf"^#+ {re.escape(heading)}\n.*?```text\n(.*?)```", text, re.S | re.M)[1].rstrip("\n")


def test_the_observation_table_is_the_layout_specs():
    from wizard_env.engine.observation import layout_table

    assert _text_block_after("environment.md", "Observation") == layout_table().rstrip("\n")


def test_the_web_pages_default_offered_agents_are_the_servers():
    from wizard_env.web.limits import DEFAULT_OPPONENTS

    text = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    default = re.search(r"^\| `--opponents SPECS` \| `([^`]*)` \|", text, re.M)[1]
    assert default.split(",") == list(DEFAULT_OPPONENTS)
    assert "search" in DEFAULT_OPPONENTS
    shown = re.search(r"jq -c \.agents +# (\[.*\])$", text, re.M)[1]
    assert shown == "[" + ",".join(f'"{name}"' for name in DEFAULT_OPPONENTS) + "]"


def test_the_web_pages_status_route_and_settings_tables_are_the_schemas():
    from wizard_env.web.openapi import route_table, settings_table, status_table

    text = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    for table in (status_table(), route_table(), settings_table()):
        header = table.splitlines()[0]
        start = text.index(header + "\n")
        assert text[start:text.index("\n\n", start) + 1] == table
