"""Cases of issue 65 that the generated option test does not reach: ranges printed, specs' options, OpenSpiel's
parameters and sampler, a repeated option, and Ctrl-C or SIGTERM wrapped by compiled code."""

from __future__ import annotations

import re

import pytest

from wizard_env.agents.registry import parse_spec
from wizard_env.cli import simulate
from wizard_env.cli.common import Terminated
from wizard_env.cli.main import main
from wizard_env.util import options


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wizard: error: ") and "Traceback" not in err, err
    return lines[0]


def test_a_range_prints_an_integer_bound_in_full_not_rounded():
    with pytest.raises(ValueError, match=r"^--seed must be at least 0 and at most 9223372036854775805, not 9223372036854775808$"):
        options.check_range("--seed", 2**63, 0, 2**63 - 3)
    with pytest.raises(ValueError, match=r"^--rate must be more than 0 and at most 1, not 1.5$"):
        options.check_range("--rate", 1.5, 0, 1, above=True)
    with pytest.raises(ValueError, match=r"at most 0.25, not"):
        options.check_range("--share", 0.5, 0, 0.25)


def test_the_seed_limit_of_eval_suite_is_printed_as_an_integer(tmp_path, capsys):
    assert main(["eval-suite", "rule", "--seed", str(2**63 - 2), "--out", str(tmp_path / "out")]) == 2
    line = error_line(capsys)
    assert "--seed must be at least 0 and at most 9223372036854775805" in line and "e+18" not in line
    assert list(tmp_path.iterdir()) == []


def test_a_number_option_outside_its_declared_range_is_refused_while_parsing(capsys):
    assert main(["simulate", "--games", "1000000000001"]) == 2
    assert "argument --games: must be at least 1 and at most 1000000000000, not 1000000000001" in error_line(capsys)
    assert main(["simulate", "--players", "7"]) == 2
    assert "argument --players: must be at least 3 and at most 6, not 7" in error_line(capsys)


@pytest.mark.parametrize("argv", [["--games", "1", "--games", "2"], ["--games=1", "--games", "2"], ["--gam", "1", "--games", "2"],
                                  ["--with-legal", "--with-legal"]])
def test_an_option_given_twice_is_refused_by_name(argv, capsys):
    assert main(["simulate", *argv]) == 2
    line = error_line(capsys)
    assert re.search(r"argument --(games|with-legal): given twice: give it once", line), line


def test_an_option_meant_to_repeat_may_repeat(tmp_path, capsys):
    assert main(["compare-arrays", str(tmp_path / "a"), str(tmp_path / "b"), "--except", "x", "--except", "y"]) == 2
    assert "given twice" not in error_line(capsys)  # refused for the missing files, not for --except


@pytest.mark.parametrize("spec, needle", [
    ("pimc:samples=²", "agent spec 'pimc:samples=²': samples must be a positive integer (at most 8192), not '²'"),
    ("search:over=٣", "agent spec 'search:over=٣': over must be a positive integer (at most 8192), not '٣'"),
    ("pimc:samples=99999999999999999999", "samples must be a positive integer (at most 8192)"),
    ("pimc:temp=x", "agent spec 'pimc:temp=x': temp must be a positive number, not 'x'"),
    ("net:margin=²", "agent spec 'net:margin=²': margin must be a number of points >= 0, not '²'"),
])
def test_an_agent_specs_option_is_checked_with_its_type_naming_the_agent_and_option(spec, needle, capsys):
    with pytest.raises(ValueError) as err:
        parse_spec(spec)
    assert str(err.value) == needle or needle in str(err.value)
    assert main(["eval", "--agents", f"{spec},rule,rule,rule", "--games", "1"]) == 2
    line = error_line(capsys)
    assert line.startswith("wizard: error: --agents: agent spec") and needle in line


@pytest.mark.parametrize("load_args, needle", [
    (("python_wizard(players=10000000000)",), "players=10000000000: Wizard is played by 3 to 6 players"),
    (("python_wizard", {"players": 10000000000}), "players=10000000000: Wizard is played by 3 to 6 players"),
    (("python_wizard(rounds=99999999999)",), "rounds=99999999999: the standard schedule of 4 players has 15 rounds"),
    (("python_wizard(players=²)",), "players: expected an integer, not '²'"),
])
def test_an_openspiel_parameter_is_checked_in_python_before_openspiel_reads_it(load_args, needle):
    pyspiel = pytest.importorskip("pyspiel")
    import wizard_env.integrations.openspiel_game  # noqa: F401  (registers the game and checks its parameters)

    with pytest.raises(ValueError, match=re.escape(needle)):
        pyspiel.load_game(*load_args)
    assert pyspiel.load_game("python_wizard(players=3,rounds=2,bid_total_rule=true)").num_players() == 3


@pytest.mark.parametrize("draw", [-1.0, "x", float("nan"), 1.0, None])
def test_a_world_sampler_that_returns_no_probability_is_refused_naming_it(draw):
    pyspiel = pytest.importorskip("pyspiel")
    import wizard_env.integrations.openspiel_game  # noqa: F401

    state = pyspiel.load_game("python_wizard(players=3,rounds=2)").new_initial_state()
    with pytest.raises(ValueError, match=r"probability_sampler\(\) must return a number in \[0, 1\), not "):
        state.resample_from_infostate(0, lambda: draw)
    assert state.resample_from_infostate(0, lambda: 0.5).history() == state.history()  # the state still works


@pytest.mark.parametrize("stop, status, said", [(KeyboardInterrupt, 130, "wizard: interrupted"),
                                                (Terminated, 143, "wizard: terminated")])
def test_ctrl_c_or_sigterm_wrapped_by_compiled_code_still_stops_with_its_status(stop, status, said, monkeypatch, capsys):
    def compiled_code_interrupted(args):
        try:
            raise stop
        except BaseException as err:  # as numba's dispatcher reports a callback's exception
            raise SystemError("<numba function> returned a result with an exception set") from err

    monkeypatch.setattr(simulate, "run", compiled_code_interrupted)
    assert main(["simulate"]) == status
    err = capsys.readouterr().err
    assert said in err and "internal error" not in err


def test_a_system_error_of_its_own_is_still_an_internal_error_in_one_line(monkeypatch, capsys):
    def broken(args):
        raise SystemError("something else")

    monkeypatch.setattr(simulate, "run", broken)
    assert main(["simulate"]) == 2
    assert "internal error (SystemError: 'something else')" in error_line(capsys)
