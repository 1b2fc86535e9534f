"""The package's layers: an import-graph walk of wizard_env/, agents/ and training/ (docs/architecture.md).

Every import counts, at the top of a module or inside a function; those under ``if TYPE_CHECKING:`` only for the layers.
The walk finds no cycle, no import of a higher layer, no RL library in the engine, and no file past 450 lines
(past 400 only with a reason in its docstring).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Where each installed package's files are in the repository.
SOURCES = {"wizard_env": ROOT / "wizard_env", "wizard_env.agents": ROOT / "agents", "wizard_env.training": ROOT / "training"}
#: The layers from the bottom up: a module may import its own layer and those before it.
LAYERS = ("util", "engine", "render", "agents", "envs", "integrations", "training", "tools", "web", "cli")
#: The public face of the package, above every layer: ``import wizard_env``, ``wizard_v1``, ``python -m wizard_env``.
TOP = len(LAYERS)
#: The parts of ``training`` from the bottom up (a flat module or a sub-package): a module may import its own part and
#: those before it. Evaluation imports no trainer; a trainer's settings sit below it (``ppo.train_config``,
#: ``rllib.rllib_config``, ``values.values_config``); rllib reuses PPO's checkpoint config, values joins Ray through
#: rllib's helpers, the baselines run the PPO and values trainers, and recipes run everything.
TRAINING_PARTS = ("common", "progress", "evaluation", "train_report", "run_folder", "ppo", "rllib", "values", "baselines", "recipes")
#: What the engine and the helpers below it may import from outside the standard library.
ENGINE_THIRD_PARTY = {"numpy", "numba"}


def modules() -> dict[str, Path]:
    """Every module of the installed package, by its dotted name."""
    found = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = modules()


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported(name: str, path: Path, typing: bool = False) -> set[str]:
    """The modules ``name`` imports: project modules by their dotted name, others by their top-level package
    (``typing``: those under ``if TYPE_CHECKING:`` too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test) and not typing:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:  # `from package import module` imports the module
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return {m if m in MODULES or m.startswith("wizard_env") else m.split(".")[0] for m in found}


GRAPH = {name: {m for m in imported(name, path) if m in MODULES} for name, path in MODULES.items()}
#: The same with the imports under ``if TYPE_CHECKING:``: what the direction of the layers is checked on.
TYPED_GRAPH = {name: {m for m in imported(name, path, typing=True) if m in MODULES} for name, path in MODULES.items()}


def layer(name: str) -> int:
    """The layer of a module: ``LAYERS``' index, or ``TOP`` for the package's own top-level modules."""
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else TOP


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, or of one that imports itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def training_part(name: str) -> int | None:
    """The rank of a module of ``training`` in ``TRAINING_PARTS`` (None for the package itself or a part not listed)."""
    parts = name.split(".")
    if parts[:2] != ["wizard_env", "training"] or len(parts) < 3 or parts[2] not in TRAINING_PARTS:
        return None
    return TRAINING_PARTS.index(parts[2])


def test_the_walk_sees_the_whole_package():
    assert {"wizard_env.engine.batch", "wizard_env.agents.rule_agent", "wizard_env.training.ppo.train",
            "wizard_env.envs.aec", "wizard_env.cli.main"} <= set(MODULES)
    assert "wizard_env.engine.game" in GRAPH["wizard_env.envs.aec"]  # project imports are edges
    # an import under TYPE_CHECKING is an edge of the typed graph only
    assert "wizard_env.envs.vec_env" in TYPED_GRAPH["wizard_env.training.ppo.advice"] - GRAPH["wizard_env.training.ppo.advice"]


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert cycles(GRAPH) == []


def test_no_import_cycles_in_training_even_for_types():
    """A trainer's resume check or Ray helper names the trainer's settings from below it, not from the trainer."""
    training = {name: imports for name, imports in TYPED_GRAPH.items() if name.startswith("wizard_env.training")}
    assert cycles({name: {m for m in imports if m in training} for name, imports in training.items()}) == []


def test_every_import_points_down_the_layers():
    upward = [f"{name} ({LAYERS[layer(name)] if layer(name) < TOP else 'top'}) imports {other} "
              f"({LAYERS[layer(other)] if layer(other) < TOP else 'top'})"
              for name, imports in TYPED_GRAPH.items() for other in sorted(imports) if layer(other) > layer(name)]
    assert upward == []


def test_every_module_of_training_is_in_a_part():
    """A new flat module or sub-package of ``training`` gets its place in ``TRAINING_PARTS``."""
    assert [name for name in MODULES if name.startswith("wizard_env.training.") and training_part(name) is None] == []
    assert {name.split(".")[2] for name in MODULES if name.startswith("wizard_env.training.")} == set(TRAINING_PARTS)


def test_every_import_in_training_points_down_its_parts():
    upward = [f"{name} imports {other}" for name, imports in TYPED_GRAPH.items() for other in sorted(imports)
              if training_part(name) is not None and training_part(other) is not None
              and training_part(other) > training_part(name)]  # type: ignore[operator]
    assert upward == []


def test_the_order_of_the_parts_is_checked():
    assert training_part("wizard_env.training.evaluation.evaluate") < training_part("wizard_env.training.ppo.train")
    assert training_part("wizard_env.training.recipes.recipe") == len(TRAINING_PARTS) - 1
    assert training_part("wizard_env.training") is None and training_part("wizard_env.cli.train") is None


@pytest.mark.parametrize("config, trainer", [("ppo.train_config", "ppo.train"), ("rllib.rllib_config", "rllib.rllib_train"),
                                             ("values.values_config", "values.train_values")])
def test_a_trainers_settings_sit_below_it(config: str, trainer: str):
    """What a trainer's settings import, even for types only, never leads back to the trainer; the trainer imports them."""
    config, trainer = f"wizard_env.training.{config}", f"wizard_env.training.{trainer}"
    seen, todo = set(), [config]
    while todo:
        for other in TYPED_GRAPH[todo.pop()] - seen:
            seen.add(other)
            todo.append(other)
    assert trainer not in seen
    assert config in TYPED_GRAPH[trainer]


def test_every_module_belongs_to_a_layer_or_is_the_public_face():
    top = sorted(name for name in MODULES if layer(name) == TOP)
    assert top == ["wizard_env", "wizard_env.__main__", "wizard_env.wizard_v1"]


@pytest.mark.parametrize("layer_name", ["util", "engine"])
def test_the_engine_imports_no_rl_library(layer_name: str):
    outside = {name: sorted(m for m in imported(name, MODULES[name]) if not m.startswith("wizard_env")
                            and m not in sys.stdlib_module_names and m not in ENGINE_THIRD_PARTY)
               for name in MODULES if name.split(".")[1:2] == [layer_name]}
    assert {name: found for name, found in outside.items() if found} == {}


def test_no_file_past_450_lines_and_past_400_only_with_a_reason():
    lines = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    assert {name: n for name, n in lines.items() if n > 450} == {}
    unexplained = [name for name, n in lines.items()
                   if n > 400 and "400 lines" not in (ast.get_docstring(ast.parse(MODULES[name].read_text())) or "")]
    assert unexplained == []
