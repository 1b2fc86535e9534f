"""Every option of every ``wizard`` subcommand, read from the parser, given values it must refuse.

The cases are generated from ``build_parser()``: a new option is covered without a line here. Each option that
takes a value declares its type (``wizard_env.util.options``: a ``Number`` with its range, ``seed_type``,
``path_type``, ``text_type``, or argparse ``choices``); each gets the values its type refuses (below and above its
range, of the wrong type, huge, odd text), and every option but a repeatable one is given twice; so does every
numeric ``--set`` key of ``wizard baseline``'s algorithms. Each case runs ``main`` in an empty folder (``--out``
inside it, where the command has one) and must exit with status 2 after one ``wizard: error:`` line naming the
option, print no traceback and write nothing. Only refused values are given: a valid one would start real work.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from importlib.util import find_spec
from typing import Iterator

import pytest

from wizard_env.cli import main as cli_main
from wizard_env.cli.common import REPEATABLE
from wizard_env.cli.main import build_parser, main
from wizard_env.util import options

#: One parser for every case (``main`` would build it again each time: most of a case's time).
PARSER = build_parser()


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    return next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)).choices


def _options(sub: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in sub._actions if not isinstance(a, argparse._HelpAction)]


def _name(action: argparse.Action) -> str:
    """How argparse's messages name the option (or the positional argument)."""
    return "/".join(action.option_strings) if action.option_strings else (action.metavar or action.dest)


def _number(value: float, kind: type) -> str:
    return str(int(value)) if kind is int else repr(float(value))


def _refused_values(action: argparse.Action) -> Iterator[tuple[str, str]]:
    """(label, value) pairs that the option's declared type or choices must refuse."""
    kind = getattr(action.type, "kind", None)
    if kind is not None:  # a Number or a seed: its range
        low, high, above = action.type.low, action.type.high, action.type.above
        if low is not None:
            yield "below", _number(low if above else low - 1, kind)
        yield "above", _number(high + 1, kind)
        yield "huge", "1" + "0" * 25
        yield "wrong-type", "x"
        yield "wrong-type-2", "1.5" if kind is int else "nan"
        yield "too-many-digits", "9" * 40 if kind is int else "1e400"
    elif action.choices:
        yield "not-a-choice", "nonexistent"
        yield "control", "a\x00b"
    elif action.type in (options.path_type, options.text_type):
        if action.type is options.path_type:
            yield "empty", ""
        yield "control", "a\x00b"
        yield "too-long", "x" * (options.MAX_TEXT + 1)


def _valid_value(action: argparse.Action) -> str:
    kind = getattr(action.type, "kind", None)
    if kind is not None:
        return _number(action.type.high if action.type.above or action.type.low is None else action.type.low, kind)
    return str(list(action.choices)[0]) if action.choices else "x"


def _cases() -> Iterator:
    for command, sub in _subcommands().items():
        positionals = [a for a in sub._actions if not a.option_strings]
        for action in _options(sub):
            name = _name(action)
            if not action.option_strings:  # a positional: the earlier ones get a placeholder
                before = ["x"] * positionals.index(action)
                for label, value in _refused_values(action):
                    yield pytest.param(command, name, [*before, value], id=f"{command}-{action.dest}-{label}")
                continue
            option = action.option_strings[-1]
            if action.nargs == 0:  # a flag
                yield pytest.param(command, name, [f"{option}=x"], id=f"{command}{option}-with-a-value")
            else:
                for label, value in _refused_values(action):
                    yield pytest.param(command, name, [option, value], id=f"{command}{option}-{label}")
            if not isinstance(action, REPEATABLE):
                given = [option] if action.nargs == 0 else [option, _valid_value(action)]
                yield pytest.param(command, name, given + given, id=f"{command}{option}-twice")


@pytest.mark.parametrize("command, name, argv", list(_cases()))
def test_an_option_given_a_value_it_refuses_exits_2_naming_it_and_writes_nothing(command, name, argv, tmp_path,
                                                                                   monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli_main, "build_parser", lambda: PARSER)
    out = ["--out", str(tmp_path / "out")] if "--out" in _subcommands()[command]._option_string_actions else []
    if name == "--out" or argv[0].startswith("--out"):
        out = []
    assert main([command, *argv, *out]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wizard: error: "), captured.err
    assert name in lines[0] or name.split("/")[0] in lines[0], lines[0]
    assert "Traceback" not in captured.err + captured.out
    assert list(tmp_path.iterdir()) == []


def _set_cases() -> Iterator:
    """``wizard baseline ALGO --set NAME=VALUE``: every numeric field of every algorithm's ``Args`` outside its range
    (the algorithm's ``RANGES`` with the shared ones), of the wrong type, huge and twice."""
    if find_spec("torch") is None or find_spec("stable_baselines3") is None:
        reason = "the baselines' --set keys need torch and stable-baselines3 (the train extra), not installed"
        yield pytest.param(None, None, None, marks=pytest.mark.skip(reason=reason), id="no-train-extra")
        return
    from wizard_env.cli.baseline import ALGORITHMS
    from wizard_env.training.baselines.common import ABOVE_ZERO, OPTIONS, RANGES

    for algo, module_name in ALGORITHMS.items():
        module = importlib.import_module(f"wizard_env.training.baselines.{module_name}")
        ranges = {**RANGES, **module.RANGES}
        unused = getattr(module, "UNUSED", {})
        for field in dataclasses.fields(module.Args):
            name = field.name
            if name in OPTIONS or name in unused or name not in ranges:
                continue
            kind = type(getattr(module.Args(), name))
            low, high = ranges[name]
            above = name in ABOVE_ZERO
            values = {"below": _number(low if above else low - 1, kind), "above": _number(high + 1, kind),
                      "huge": "1" + "0" * 25, "wrong-type": "x"}
            for label, value in values.items():
                yield pytest.param(algo, name, [f"{name}={value}"], id=f"{algo}-{name}-{label}")
            yield pytest.param(algo, name, [f"{name}={_number(high, kind)}"] * 2, id=f"{algo}-{name}-twice")


@pytest.mark.parametrize("algo, name, sets", list(_set_cases()))
def test_a_baseline_set_key_given_a_value_it_refuses_exits_2_naming_it_and_writes_nothing(algo, name, sets, tmp_path,
                                                                                        monkeypatch, capsys):
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli_main, "build_parser", lambda: PARSER)
    argv = ["baseline", algo, "--setting", "wizard-3p-5r", "--out", str(tmp_path / "out")]
    assert main([*argv, *(part for item in sets for part in ("--set", item))]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wizard: error: ") and f"--set {name}" in lines[0], captured.err
    assert "Traceback" not in captured.err + captured.out
    assert list(tmp_path.iterdir()) == []


def test_every_option_that_takes_a_value_declares_its_type_and_range():
    """A number's range is declared on its type (so the cases above reach past it); text has a type too."""
    for command, sub in _subcommands().items():
        for action in _options(sub):
            if action.nargs == 0:
                continue
            declared = (getattr(action.type, "kind", None) is not None or bool(action.choices)
                        or action.type in (options.path_type, options.text_type))
            assert declared, f"wizard {command} {_name(action)}: declare its type (wizard_env.util.options)"
            if getattr(action.type, "kind", None) is not None:
                assert action.type.high is not None and action.type.high <= 2**63 - 1, (command, _name(action))


def test_the_generated_cases_reach_every_subcommand_and_kind():
    """The generator is not empty by mistake: every subcommand has cases, and every kind of value is tried."""
    cases = list(_cases())
    assert {c.values[0] for c in cases} == set(_subcommands())
    labels = {c.id.rsplit("-", 1)[-1] for c in cases}
    assert {"below", "above", "huge", "twice", "choice", "empty", "control", "value"} <= labels, labels
