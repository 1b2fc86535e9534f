"""A user's own agent by name (agents/user_agent.py): ``py:`` specs of a module or a file, agents installed packages
register in the entry-point group ``wizard_env.agents``, and the clear line each mistake gets.

Each command that names agents seats one: eval, eval-suite, simulate, play, the web table, the learner envs.
"""

from __future__ import annotations

import json
import textwrap
from importlib import metadata

import numpy as np
import pytest

from wizard_env.agents import registry, user_agent
from wizard_env.agents.registry import make_agent, parse_spec, searches_games
from wizard_env.cli.main import main
from wizard_env.engine.rules import Rules
from wizard_env.training.evaluation.evaluate import evaluate

AGENTS = textwrap.dedent('''
    import numpy as np
    from wizard_env.agents import Agent

    MOVES = []  # every batch any agent of this file decided, so a test sees that it played

    class Picky(Agent):
        """A random legal action, from a generator seeded as the registry seeds every agent; ``first`` options
        the lowest legal action instead."""
        name = "picky"

        def __init__(self, seed=None, first=False):
            self.rng, self.first = np.random.default_rng(seed), first

        def act_batch(self, observations, action_masks):
            MOVES.append(len(action_masks))
            legal = np.asarray(action_masks) != 0
            if self.first:
                return legal.argmax(axis=1)
            return np.array([self.rng.choice(np.flatnonzero(row)) for row in legal])

    class Illegal(Agent):
        def act_batch(self, observations, action_masks):
            return np.full(len(action_masks), 78)  # naming trump: never legal while bidding

    class Raises(Agent):
        def act_batch(self, observations, action_masks):
            raise KeyError("no such card")

    class Flaky(Picky):
        """Picky until its ``after``-th batch, which raises: a failure part way through a run."""
        def __init__(self, seed=None, after=50):
            super().__init__(seed)
            self.after = after

        def act_batch(self, observations, action_masks):
            self.after -= 1
            if self.after < 0:
                raise RuntimeError("flaked")
            return super().act_batch(observations, action_masks)

    def duck(seed=None):
        """A factory of an object with act_batch alone (no Agent subclass)."""
        class Duck:
            def act_batch(self, observations, action_masks):
                return np.asarray(action_masks).argmax(axis=1)
        return Duck()

    def needs_depth(depth, seed=None):
        return duck(seed)

    def not_an_agent(seed=None):
        return "rule"

    VALUE = 3
''')


@pytest.fixture()
def agents_file(tmp_path):
    path = tmp_path / "my_agents.py"
    path.write_text(AGENTS)
    return path


@pytest.fixture()
def agents_module(tmp_path, monkeypatch):
    folder = tmp_path / "pkg"
    (folder / "mine").mkdir(parents=True)
    (folder / "mine" / "__init__.py").write_text("")
    (folder / "mine" / "bots.py").write_text(AGENTS)
    monkeypatch.syspath_prepend(str(folder))
    return "mine.bots"


def wizard(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# -- py: specs --------------------------------------------------------------------------------------


def test_a_module_agent_plays_with_its_options_and_the_same_seed_gives_the_same_result(agents_module):
    rules = Rules.make(4, [1, 2, 3])
    spec = f"py:{agents_module}:Picky"
    one, again = (evaluate(rules, [spec, "rule", "rule", "rule"], 6, seed=3) for _ in range(2))
    other = evaluate(rules, [spec, "rule", "rule", "rule"], 6, seed=4)
    assert np.array_equal(one.deal_scores, again.deal_scores)
    assert not np.array_equal(one.deal_scores, other.deal_scores)
    assert make_agent(f"{spec}:first=True", seed=0).first is True
    firsts = [make_agent(f"{spec}:first=True", seed=s) for s in (0, 1)]
    masks = np.zeros((5, 79), np.int8)
    masks[:, 2:9] = 1
    observations = np.zeros((5, 1544), np.float32)
    assert [a.act_batch(observations, masks).tolist() for a in firsts] == [[2] * 5] * 2


def test_a_file_agent_and_a_factory_of_an_object_with_act_batch_alone_play(agents_file):
    rules = Rules.make(3, [1, 2])
    result = evaluate(rules, [f"py:{agents_file}:Picky", f"py:{agents_file}:duck", "rule"], 4, seed=0)
    assert result.records.totals.shape == (12, 3) and result.agent_specs[1] == f"py:{agents_file}:duck"
    agent = make_agent(f"py:{agents_file}:duck", seed=0)
    assert agent.name == f"py:{agents_file}:duck" and not searches_games(f"py:{agents_file}:duck")


@pytest.mark.parametrize("spec, message", [
    ("py:no_such_pkg.mod:A", "no module named 'no_such_pkg'"),
    ("py:FILE:Missing", "has no attribute 'Missing'"),
    ("py:FILE:VALUE", "is not a class or function that makes an agent (it is of type int)"),
    ("py:FILE:Picky:depth=3", "unknown option 'depth' (Picky takes: first)"),
    ("py:FILE:Picky:seed=3", "the seed comes from the command (--seed)"),
    ("py:FILE:needs_depth", "needs_depth: missing a required argument: 'depth' (give it as an option key=value)"),
    ("py:FILE", "give py:MODULE:NAME or py:PATH.py:NAME"),
    ("py:FILE:not_an_agent", "not_an_agent made an object of type str, not an Agent"),
    ("py:FILE:Illegal", "agent 'py:FILE:Illegal' chose action 78 (trump s), which is not legal; legal: 0 (bid 0), 1 (bid 1)"),
    ("py:FILE:Raises", "agent 'py:FILE:Raises' raised KeyError: 'no such card'"),
])
def test_each_mistake_is_one_line_naming_it_and_exit_2(agents_file, capsys, tmp_path, spec, message):
    spec = spec.replace("FILE", str(agents_file))
    out = tmp_path / "out"
    code, _, err = wizard(capsys, "eval", "--agents", f"{spec},rule,rule", "--players", "3", "--rounds", "1",
                          "--games", "2", "--quiet", "--out", str(out))
    assert code == 2 and err.startswith("wizard: error: ") and err.count("\n") == 1
    assert message.replace("FILE", str(agents_file)) in err, err
    assert not (out / "eval.json").exists()  # an evaluation that failed part way writes nothing


def test_a_run_that_fails_part_way_leaves_what_it_would_have_replaced_as_it_was(agents_file, capsys, tmp_path):
    replay, out = tmp_path / "games.jsonl", tmp_path / "out"
    replay.write_text("mine\n")
    out.mkdir()
    (out / "eval.json").write_text("{}\n")
    spec = f"py:{agents_file}:Flaky:after=40"
    code, _, err = wizard(capsys, "simulate", "--agents", f"{spec},rule,rule", "--players", "3", "--rounds", "3",
                          "--games", "20", "--replay", str(replay))
    assert code == 2 and f"agent '{spec}' raised RuntimeError: flaked" in err
    spec = f"py:{agents_file}:Flaky:after=5"  # eval plays every game at once: a decision is one batch of them all
    code, _, err = wizard(capsys, "eval", "--agents", f"{spec},rule,rule", "--players", "3", "--rounds", "3",
                          "--games", "20", "--quiet", "--out", str(out))
    assert code == 2 and f"agent '{spec}' raised RuntimeError: flaked" in err
    assert replay.read_text() == "mine\n" and (out / "eval.json").read_text() == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.jsonl", "my_agents.py", "out"]  # no temporary left


def test_a_file_imports_the_modules_beside_it(tmp_path, capsys):
    (tmp_path / "helper_for_my_agent.py").write_text("import numpy as np\n"
                                                     "def lowest(masks): return np.asarray(masks).argmax(axis=1)\n")
    (tmp_path / "agent_with_helper.py").write_text("from helper_for_my_agent import lowest\n"
                                                   "class Low:\n"
                                                   "    def act_batch(self, observations, masks): return lowest(masks)\n")
    code, out, err = wizard(capsys, "simulate", "--agents", f"py:{tmp_path}/agent_with_helper.py:Low,rule,rule",
                            "--players", "3", "--rounds", "2", "--games", "2")
    assert code == 0, err


def test_a_missing_file_is_named(capsys, tmp_path):
    code, _, err = wizard(capsys, "simulate", "--agents", f"py:{tmp_path}/gone.py:A,rule,rule", "--players", "3")
    assert code == 2 and f"no such Python file '{tmp_path}/gone.py'" in err


def test_a_file_that_raises_on_import_is_named_and_not_kept_half_imported(capsys, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('half written')\n")
    for _ in range(2):  # the same line again: the failed import left nothing behind
        code, _, err = wizard(capsys, "simulate", "--agents", f"py:{broken}:A,rule,rule", "--players", "3")
        assert code == 2 and f"running {broken} raised RuntimeError: half written" in err


# -- entry points -----------------------------------------------------------------------------------


def installed(monkeypatch, **names: str) -> None:
    """Pretend that installed packages register ``names`` (name=module:NAME) in wizard_env.agents."""
    entries: dict[str, tuple[metadata.EntryPoint, ...]] = {}
    for name, value in names.items():
        for one in value.split(" "):
            entries[name] = (*entries.get(name, ()), metadata.EntryPoint(name, one, user_agent.ENTRY_POINT_GROUP))
    monkeypatch.setattr(user_agent, "installed_agents", lambda: entries)


def test_an_installed_name_works_as_a_built_in_name_with_options(monkeypatch, agents_module, capsys):
    installed(monkeypatch, picky=f"{agents_module}:Picky")
    assert parse_spec("picky:first=True") == ("picky", "first=True")
    assert make_agent("picky:first=True", seed=1).first is True
    code, out, err = wizard(capsys, "simulate", "--agents", "picky,rule,rule", "--players", "3", "--rounds", "2",
                            "--games", "2")
    assert code == 0, err
    assert "picky" in out
    code, _, err = wizard(capsys, "simulate", "--agents", "pickyy,rule,rule", "--players", "3")
    assert code == 2 and "unknown agent 'pickyy'" in err and "installed: picky" in err


def test_an_installed_name_that_clashes_with_a_built_in_one_is_refused(monkeypatch, agents_module):
    installed(monkeypatch, rule=f"{agents_module}:Picky")
    with pytest.raises(ValueError, match=r"agent 'rule': the installed package .*Picky registers a built-in name"):
        parse_spec("rule")
    assert parse_spec("random") == ("random", None)  # the other names are untouched


def test_a_name_two_packages_register_is_refused(monkeypatch, agents_module):
    installed(monkeypatch, picky=f"{agents_module}:Picky {agents_module}:duck")
    with pytest.raises(ValueError, match="two installed packages register it"):
        make_agent("picky", seed=0)


# -- every command seats one ------------------------------------------------------------------------


def test_wizard_eval_seats_a_py_agent_and_writes_its_row(agents_file, capsys, tmp_path):
    spec = f"py:{agents_file}:Picky"
    code, out, err = wizard(capsys, "eval", "--agents", f"{spec},rule,rule", "--players", "3", "--rounds", "2",
                            "--games", "3", "--quiet", "--out", str(tmp_path / "e"))
    assert code == 0, err
    report = json.loads((tmp_path / "e" / "eval.json").read_text())
    assert report["agents"][0] == spec and report["specs"][0]["name"] == spec


def test_wizard_eval_suite_seats_a_py_agent(agents_file, capsys, tmp_path):
    spec = f"py:{agents_file}:Picky"
    code, out, err = wizard(capsys, "eval-suite", spec, "--games", "2", "--skip", "reference,play,self-play,players",
                            "--out", str(tmp_path / "s"))
    assert code == 0, err
    assert f"`{spec}` vs three `rule`" in out


def test_wizard_simulate_seats_a_py_agent(agents_file, capsys):
    code, out, err = wizard(capsys, "simulate", "--agents", f"py:{agents_file}:Picky,rule,rule", "--players", "3",
                            "--rounds", "2", "--games", "2")
    assert code == 0, err
    assert any(line.split()[:2] == ["0", f"py:{agents_file}:Picky"] for line in out.splitlines())


def test_wizard_play_seats_a_py_agent(agents_module, capsys, monkeypatch):
    import io
    import sys

    moves = __import__(agents_module, fromlist=["MOVES"]).MOVES
    moves.clear()
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    code, out, err = wizard(capsys, "play", "--players", "3", "--rounds", "2", "--seat", "2", "--seed", "5",
                            "--opponents", f"py:{agents_module}:Picky")
    assert code == 1 and "game abandoned" in err  # quit at the first question: the agents before seat 2 moved
    assert f"py:{agents_module}:Picky (seat 0)" in out
    assert moves  # the agent decided


def test_the_web_table_seats_a_py_agent_the_operator_offers_and_no_other(agents_file, tmp_path):
    from wizard_env.web.limits import RequestError
    from wizard_env.web.tables import Tables

    spec = f"py:{agents_file}:Picky"
    tables = Tables(tmp_path, offered=["rule", spec])
    view = tables.create({"players": 3, "rounds": "2", "opponents": [spec], "seat": 2, "seed": 1})["table"]
    assert view["current"] == 2 or view["over"]
    with pytest.raises(RequestError, match="not an agent this table offers"):
        tables.create({"players": 3, "rounds": "2", "opponents": [f"py:{agents_file}:duck"], "seat": 2})


def test_a_web_table_whose_offered_agent_raises_answers_one_line_naming_it(agents_file, tmp_path):
    from wizard_env.engine.cards import WIZARD
    from wizard_env.engine.game import deal, first_dealer
    from wizard_env.web.limits import RequestError
    from wizard_env.web.tables import Tables

    seed = next(s for s in range(100) if deal(s, 0, 3, 1)[1] != WIZARD)  # no trump to name: seat dealer+1 bids first
    spec = f"py:{agents_file}:Raises"
    tables = Tables(tmp_path, offered=[spec])
    with pytest.raises(RequestError, match=f"seat .: agent '{spec}' raised KeyError: 'no such card'") as refused:
        tables.create({"players": 3, "rounds": "2", "opponents": [spec], "seat": first_dealer(seed, 3), "seed": seed})
    assert refused.value.status == 500


def test_the_learner_envs_take_a_py_agent_as_opponent(agents_module):
    pytest.importorskip("stable_baselines3", reason="WizardVecEnv needs stable-baselines3 (the train extra)")
    from wizard_env.envs.single_agent import WizardSingleAgentEnv
    from wizard_env.envs.vec_env import WizardVecEnv

    moves = __import__(agents_module, fromlist=["MOVES"]).MOVES
    moves.clear()
    env = WizardSingleAgentEnv(num_players=3, rounds=2, opponents=f"py:{agents_module}:Picky")
    env.reset(seed=0)
    for _ in range(3):  # the learner's moves: the opponents answer each
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert sum(moves) >= 2
    moves.clear()
    vec = WizardVecEnv(num_envs=2, num_players=3, opponents=[f"py:{agents_module}:Picky"], seed=0)
    vec.reset()
    vec.step(np.array([np.flatnonzero(mask)[0] for mask in vec.action_masks()]))
    assert moves


def test_a_search_agent_class_is_kept_from_the_envs_opponents(tmp_path):
    path = tmp_path / "searcher.py"
    path.write_text("from wizard_env.agents import Agent\n"
                    "class Searcher(Agent):\n"
                    "    def act_batch(self, o, m): return m.argmax(axis=1)\n"
                    "    def act_games(self, batch, games): return batch.legal_masks(games).argmax(axis=1)\n")
    from wizard_env.envs.single_agent import WizardSingleAgentEnv

    assert searches_games(f"py:{path}:Searcher") and make_agent(f"py:{path}:Searcher").searches
    with pytest.raises(ValueError, match="searches the game itself"):
        WizardSingleAgentEnv(num_players=3, opponents=f"py:{path}:Searcher")
    assert registry.PY == "py"


# -- the example package ----------------------------------------------------------------------------


def test_the_example_package_installs_and_its_registered_agent_plays_wizard_eval(tmp_path):
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    source = tmp_path / "my_agent"  # a copy: building in the source tree would leave build/ and egg-info there
    shutil.copytree(Path(__file__).resolve().parent.parent / "examples" / "my_agent", source)
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(source)],
                          capture_output=True, text=True, timeout=600)  # setuptools from the index, where the venv has none
    assert done.returncode == 0, done.stderr
    env = {**os.environ, "PYTHONPATH": str(site)}
    eval_run = subprocess.run([sys.executable, "-m", "wizard_env", "eval", "--agents", "myagent,rule,rule,rule",
                               "--rounds", "3", "--games", "4", "--quiet", "--out", "out"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert eval_run.returncode == 0, eval_run.stderr
    assert any(line.startswith("| myagent | 1 |") for line in eval_run.stdout.splitlines())
    report = json.loads((tmp_path / "out" / "eval.json").read_text())
    same = subprocess.run([sys.executable, "-c",
                           "import json\n"
                           "from wizard_env.engine.rules import Rules\n"
                           "from wizard_env.training.evaluation.evaluate import evaluate\n"
                           "r = evaluate(Rules.make(4, [1, 2, 3]), ['py:my_agent.agent:HighCards', 'rule', 'rule', 'rule'], 4, 0)\n"
                           "print(json.dumps(r.deal_scores.tolist()))"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert same.returncode == 0, same.stderr
    assert report["deal_scores"] == json.loads(same.stdout)  # the name plays the package's class, on the same deals
    assert report["specs"][0]["name"] == "myagent"
