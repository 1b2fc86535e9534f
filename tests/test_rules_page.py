"""docs/rules.md links every rule to a test that exists, and every rule scenario of test_rules.py to a rule."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES_PAGE = ROOT / "docs" / "rules.md"
TESTS_PAGE = ROOT / "docs" / "rule-tests.md"
#: A table row of the rules page that states a rule: its id (D1, L10, V3, ...) in the first cell.
ROW = re.compile(r"^\| ([A-Z]\d+) \|(.*)\|$", re.M)
#: A link to a test on the rule tests page, whose anchor is the test's dotted path (mkdocstrings).
LINK = re.compile(r"\]\(rule-tests\.md#tests\.(\w+)\.(\w+)\)")


def rows() -> list[tuple[str, str]]:
    """The (id, rest of the row) of every rule row of the rules page."""
    return ROW.findall(RULES_PAGE.read_text())


def defined_tests(module: str) -> set[str]:
    """The names of the test functions defined at the top of ``tests/MODULE.py``."""
    tree = ast.parse((ROOT / "tests" / f"{module}.py").read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def rendered(module: str) -> set[str] | None:
    """The tests of ``module`` the rule tests page shows: None for the whole module, else its members list."""
    page = TESTS_PAGE.read_text()
    block = re.search(rf"^::: tests\.{module}\n((?:    .*\n)*)", page, re.M)
    if block is None:
        return set()
    members = re.search(r"members:\n((?:\s+- \w+\n)+)", block[1])
    return None if members is None else set(re.findall(r"- (\w+)", members[1]))


def test_the_rules_page_has_a_row_for_each_part_of_the_game():
    ids = [rule_id for rule_id, _ in rows()]
    assert len(ids) == len(set(ids)), "a rule id is used twice"
    assert {rule_id[0] for rule_id in ids} >= set("DPTBLWSVC")


@pytest.mark.parametrize("rule_id, rest", rows(), ids=[rule_id for rule_id, _ in rows()])
def test_each_rule_links_to_a_test_that_exists_and_is_shown(rule_id: str, rest: str):
    links = LINK.findall(rest)
    assert links, f"rule {rule_id} links to no test"
    for module, name in links:
        assert name in defined_tests(module), f"rule {rule_id}: tests/{module}.py has no {name}"
        shown = rendered(module)
        assert shown is None or name in shown, f"rule {rule_id}: docs/rule-tests.md does not show {module}.{name}"


def test_every_rule_scenario_is_linked_from_a_rule():
    linked = {name for _, rest in rows() for module, name in LINK.findall(rest) if module == "test_rules"}
    assert sorted(defined_tests("test_rules") - linked) == []
