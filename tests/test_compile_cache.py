"""numba's on-disk cache of the compiled engine and RuleAgent follows the files their code comes from."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import wizard_env
from wizard_env.engine import compile_cache, kernels
from wizard_env.agents import rule_agent

PACKAGE = Path(wizard_env.__file__).parent
SCORE_OF_TWO_BID_TWO_TAKEN = "from wizard_env.engine.kernels import round_score; print(round_score(2, 2))"


def modules(path: str, module: str) -> set[str]:
    return {name for name, _ in compile_cache.dependencies(path, module)}


def test_the_stamps_cover_the_project_modules_each_compiled_file_reads():
    engine = modules(kernels.__file__, "wizard_env.engine.kernels")
    assert {"wizard_env.engine.constants", "wizard_env.engine.cards", "wizard_env.engine.actions"} <= engine
    assert engine.isdisjoint({"wizard_env.engine.kernels", "wizard_env.cli.main", "wizard_env.envs.aec", "wizard_env"})
    heuristic = modules(rule_agent.__file__, "wizard_env.agents.rule_agent")
    parts = {f"wizard_env.agents.{name}" for name in ("rule_view", "rule_bid", "rule_play")}
    assert parts | {"wizard_env.engine.kernels", "wizard_env.engine.rules", "wizard_env.engine.cards"} <= heuristic
    assert "wizard_env.cli.main" not in heuristic and "wizard_env.agents.ppo_agent" not in heuristic


def test_the_installed_numba_uses_the_project_locator():
    assert compile_cache.STAMPS_INSTALLED
    assert isinstance(kernels.round_score._cache._impl.locator, compile_cache.ProjectSourceLocator)
    assert isinstance(rule_agent.decide._cache._impl.locator, compile_cache.ProjectSourceLocator)


def test_editing_a_constant_in_another_file_recompiles_the_kernels_that_read_it(tmp_path):
    copy = tmp_path / "src" / "wizard_env"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(copy.parent), "NUMBA_CACHE_DIR": str(cache)}

    def score() -> str:
        run = subprocess.run([sys.executable, "-c", SCORE_OF_TWO_BID_TWO_TAKEN], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    assert score() == "40"  # 20 for the bid made, 10 a trick
    assert list(cache.rglob("kernels.round_score-*.nbi")), "the first run wrote no cache"
    rules = copy / "engine" / "constants.py"
    text = rules.read_text()
    assert "POINTS_PER_TRICK = 10\n" in text
    rules.write_text(text.replace("POINTS_PER_TRICK = 10\n", "POINTS_PER_TRICK = 5\n"))
    assert score() == "30"
    rules.write_text(text)
    assert score() == "40"


def test_other_packages_and_unreadable_files_keep_numbas_own_stamps(tmp_path):
    def elsewhere():
        return 1

    elsewhere.__module__ = "someone_elses_package.kernels"
    assert compile_cache.ProjectSourceLocator.from_function(elsewhere, __file__) is None
    assert compile_cache.imported_modules(str(tmp_path / "missing.py"), "wizard_env.missing") == ()


def test_a_numba_without_the_private_names_still_imports_the_package_with_its_own_stamps(tmp_path):
    code = ("import numba.core.caching as caching\n"
            "for name in ('CacheLocator', '_CacheLocator', 'CacheImpl', '_CacheImpl'):\n"
            "    vars(caching).pop(name, None)\n"
            "from wizard_env.engine import compile_cache, kernels\n"
            "print(compile_cache.STAMPS_INSTALLED, type(kernels.round_score._cache._impl.locator).__name__)")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    installed, locator = run.stdout.split()
    assert installed == "False" and locator != "ProjectSourceLocator"


def no_writable_cache_env(tmp_path: Path) -> tuple[Path, dict]:
    """A copy of the package that numba cannot cache beside (each ``__pycache__`` a file), and an environment with
    no NUMBA_CACHE_DIR and a home and user cache that cannot be made: a read-only install, as in some containers."""
    copy = tmp_path / "src" / "wizard_env"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [copy, *(p for p in copy.rglob("*") if p.is_dir())]:
        (folder / "__pycache__").write_text("")
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {name: value for name, value in os.environ.items() if name != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(copy.parent), HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), TMPDIR=str(temp))
    return temp, env


def test_with_no_writable_cache_directory_the_package_caches_in_a_private_temporary_one(tmp_path):
    temp, env = no_writable_cache_env(tmp_path)

    def score() -> subprocess.CompletedProcess:
        run = subprocess.run([sys.executable, "-c", SCORE_OF_TWO_BID_TWO_TAKEN], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr  # numba alone: "cannot cache function ...: no locator available"
        assert run.stdout.strip() == "40"
        return run

    first = score()
    assert "CacheFallbackWarning" in first.stderr and "NUMBA_CACHE_DIR" in first.stderr
    folder = temp / f"wizard_env-numba-cache-{os.getuid()}"
    assert str(folder) in first.stderr and folder.stat().st_mode & 0o777 == 0o700
    written = {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}
    assert any(p.name.startswith("kernels.round_score-") for p in written)
    score()  # the next process loads what the first compiled, and writes nothing
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()} == written


def test_the_private_cache_directory_is_made_for_this_user_only_and_kept(tmp_path):
    path = compile_cache.private_cache_dir(str(tmp_path))
    assert path == str(tmp_path / f"wizard_env-numba-cache-{os.getuid()}")
    assert os.stat(path).st_mode & 0o777 == 0o700
    assert compile_cache.private_cache_dir(str(tmp_path)) == path
    assert compile_cache.private_cache_dir(str(tmp_path / "missing" / "deeper")) is None


def test_a_private_cache_name_holding_anything_else_is_left_alone(tmp_path):
    name = f"wizard_env-numba-cache-{os.getuid()}"
    target = tmp_path / "elsewhere"
    target.mkdir()
    others = tmp_path / "others"
    (others / name).mkdir(parents=True)
    (others / name).chmod(0o777)
    cases = {"link": (tmp_path / "link", lambda at: at.symlink_to(target, target_is_directory=True)),
             "file": (tmp_path / "file", lambda at: at.write_text("mine")),
             "others": (others, lambda at: None)}
    for base, make in cases.values():
        base.mkdir(exist_ok=True)
        make(base / name)
        path = compile_cache.private_cache_dir(str(base))
        assert path is not None and Path(path).parent == base and Path(path).name != name
        assert Path(path).is_dir() and not Path(path).is_symlink()
    assert (tmp_path / "link" / name).is_symlink() and not any(target.iterdir())
    assert (tmp_path / "file" / name).read_text() == "mine"
    assert (others / name).stat().st_mode & 0o777 == 0o777 and not any((others / name).iterdir())


def test_a_cache_directory_of_a_process_s_own_is_removed_when_it_exits(tmp_path):
    (tmp_path / f"wizard_env-numba-cache-{os.getuid()}").symlink_to(tmp_path)
    code = f"from wizard_env.engine import compile_cache; print(compile_cache.private_cache_dir({str(tmp_path)!r}))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    made = Path(run.stdout.strip())
    assert made.parent == tmp_path and not made.exists()


def test_with_numbas_compiler_off_the_engine_refuses_with_an_error_naming_the_setting(monkeypatch, capsys, tmp_path):
    from wizard_env.cli import main as cli
    from wizard_env.engine.batch import WizardBatch
    from wizard_env.engine.rules import Rules

    monkeypatch.chdir(tmp_path)  # eval's default output folder is relative: never the repository's runs/
    monkeypatch.setattr(kernels.config, "DISABLE_JIT", True)  # as NUMBA_DISABLE_JIT=1 sets it
    try:
        WizardBatch(Rules.make(4), 2, seed=0)
    except kernels.CompilerDisabledError as error:
        assert "NUMBA_DISABLE_JIT" in str(error)
    else:
        raise AssertionError("a batch was built with the compiler off")
    assert cli.main(["eval", "--agents", "rule,rule,rule,rule", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: NUMBA_DISABLE_JIT is set") and err.count("\n") == 1
    monkeypatch.undo()
    assert WizardBatch(Rules.make(4), 2, seed=0).legal_masks().any()


def run_with_terminal_stderr(command: list[str], env: dict, cwd: Path) -> tuple[subprocess.CompletedProcess, str]:
    """Run ``command`` in ``cwd`` with stderr on a pseudo-terminal (as in an interactive shell); its result and stderr."""
    reader, writer = os.openpty()
    try:
        run = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=writer, text=True, timeout=300)
        os.close(writer)
        chunks = []
        while True:
            try:
                chunk = os.read(reader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(reader)
    return run, b"".join(chunks).decode(errors="replace")


def test_the_cli_says_once_on_a_terminal_that_a_first_run_compiles_and_nothing_else(tmp_path):
    from wizard_env.cli.main import COMPILE_NOTICE

    command = [sys.executable, "-m", "wizard_env", "eval", "--players", "3", "--agents", "random,random,random", "--games", "1"]
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "terminal")}  # an empty cache: everything compiles
    first, first_err = run_with_terminal_stderr(command, env, tmp_path)  # eval writes runs/eval-0 in its working folder
    cached, cached_err = run_with_terminal_stderr(command, env, tmp_path)
    assert first.returncode == cached.returncode == 0, first_err + cached_err
    assert first_err.count(COMPILE_NOTICE) == 1 and COMPILE_NOTICE not in cached_err
    assert first.stdout == cached.stdout and "random" in first.stdout
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "piped")  # compiling again, with stderr not a terminal: no notice
    # --quiet: in a log, eval prints a progress line every 30 s, which a loaded machine reaches while compiling
    piped = subprocess.run([*command, "--quiet"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0 and piped.stderr == "" and piped.stdout == first.stdout
