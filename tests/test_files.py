"""Output files: every writer of the project saves through one atomic helper that never replaces a link,
device or FIFO, names the user's path in its errors, and leaves no temporary file behind on a crash or a kill."""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from wizard_env.agents.ppo_agent import load_checkpoint, save_checkpoint
from wizard_env.tools import bench as speed
from wizard_env.training.evaluation import eval_report
from wizard_env.training import train_report
from wizard_env.training.evaluation.evaluate import evaluate
from wizard_env.cli.main import main
from wizard_env.engine.replay import game_record, read_replays, write_replays
from wizard_env.engine.rules import Rules
from wizard_env.engine.simulate import play_game

ROOT = Path(__file__).resolve().parent.parent


def records(count: int = 2) -> list[dict]:
    rules = Rules.make(3, 2)
    from wizard_env.agents.random_agent import RandomAgent

    agents = [RandomAgent(seed=s) for s in range(3)]
    return [game_record(play_game(rules, agents, seed, record=True).game, ["random"] * 3) for seed in range(count)]


#: Every writer of a file the user keeps, called on a path.
WRITERS = {
    "replay": lambda path: write_replays(path, records()),
    "checkpoint": lambda path: save_checkpoint(path, {"format": "x"}, {"w": np.zeros(3)}),
    "bench json": lambda path: speed.write_json({"rate": 1.0}, path),
    "train json": lambda path: train_report.write_json(path, {"step": 1}),
}


def wizard(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wizard_env", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, **kwargs)


# -- item 1: one helper; links, devices and FIFOs are never replaced --------------------------------


def test_one_atomic_write_helper_for_the_whole_project():
    sources = [p for folder in ("wizard_env", "agents", "training", "benchmarks") for p in (ROOT / folder).rglob("*.py")]
    renaming = sorted(str(p.relative_to(ROOT)) for p in sources if re.search(r"os\.replace\(|os\.rename\(|mkstemp\(", p.read_text()))
    assert renaming == ["wizard_env/util/files.py"]


@pytest.mark.parametrize("writer", WRITERS)
def test_writing_through_a_symlink_replaces_its_target_and_keeps_the_link(writer, tmp_path):
    target = tmp_path / "data" / "target.out"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link.out"
    link.symlink_to(target)
    WRITERS[writer](link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() != b"old"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["data", "link.out", "target.out"]  # no temporary file


@pytest.mark.parametrize("writer", WRITERS)
def test_writing_onto_a_fifo_nobody_reads_is_refused_and_keeps_the_fifo(writer, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="nobody reads") as err:
        WRITERS[writer](fifo)
    assert err.value.filename == str(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == ["pipe"]


def test_writing_onto_a_fifo_writes_through_to_its_reader(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        speed.write_json({"rate": 1.0}, fifo)
        received = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert json.loads(received) == {"rate": 1.0}
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_writing_onto_a_character_device_writes_through(tmp_path):
    null = tmp_path / "null"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
        os.close(os.open(null, os.O_WRONLY))
    except OSError:
        pytest.skip("device nodes cannot be made or opened here (needs root and a dev mount)")
    write_replays(null, records())
    assert stat.S_ISCHR(os.lstat(null).st_mode) and os.listdir(tmp_path) == ["null"]


def test_writing_onto_stdout_redirected_to_a_file_keeps_the_link_and_what_stdout_wrote(tmp_path):
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")  # as /dev/stdout is
    with open(tmp_path / "out.txt", "w") as out:
        run = subprocess.run([sys.executable, "-m", "wizard_env", "simulate", "--players", "3", "--rounds", "1",
                              "--games", "2", "--replay", str(link)], stdout=out, stderr=subprocess.PIPE, text=True,
                             timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert [json.loads(line)["format"] for line in lines[:2]] == ["wizard-replay/1"] * 2
    assert lines[2].startswith("3 players, 1 round") and lines[-1] == f"replays: 2 games written to {link}"
    assert os.readlink(link) == "/proc/self/fd/1"


def test_writing_onto_a_socket_is_refused_naming_it(tmp_path):
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        with pytest.raises(OSError, match="a socket") as err:
            write_replays(path, records())
    finally:
        server.close()
    assert err.value.filename == str(path) and stat.S_ISSOCK(os.lstat(path).st_mode)


def test_a_read_only_file_is_not_replaced(tmp_path):
    path = tmp_path / "kept.json"
    path.write_text("old")
    path.chmod(0o444)
    if os.access(path, os.W_OK):
        pytest.skip("root may write a read-only file")
    with pytest.raises(PermissionError):
        train_report.write_json(path, {"step": 1})
    assert path.read_text() == "old"


# -- item 4: crashes, kills and full disks leave no temporary file and no mismatched pair ------------


def eval_result(seed: int):
    return evaluate(Rules.make(3, 2), ["rule", "random", "random"], deals=1, seed=seed)


def test_eval_json_is_the_commit_point_a_kill_between_the_two_writes_keeps_the_old_json(tmp_path, monkeypatch):
    eval_report.write(eval_result(0), tmp_path)
    old_json = (tmp_path / "eval.json").read_bytes()
    renames = []

    def killed_at_the_second_rename(src, dst):
        renames.append(dst)
        if len(renames) == 2:
            raise KeyboardInterrupt("killed between the two writes")
        return real_replace(src, dst)

    real_replace = os.replace
    monkeypatch.setattr(os, "replace", killed_at_the_second_rename)
    with pytest.raises(KeyboardInterrupt):
        eval_report.write(eval_result(1), tmp_path)
    assert (tmp_path / "eval.json").read_bytes() == old_json
    assert sorted(os.listdir(tmp_path)) == ["eval.json", "eval.png"]


def test_eval_json_names_the_hash_of_the_png_it_goes_with(tmp_path):
    import hashlib

    eval_report.write(eval_result(0), tmp_path)
    png = json.loads((tmp_path / "eval.json").read_text())["png"]
    assert png == {"file": "eval.png", "sha256": hashlib.sha256((tmp_path / "eval.png").read_bytes()).hexdigest()}


def limit_file_size() -> None:
    """In the child: files stop growing at 20 kB, as on a full disk (EFBIG instead of ENOSPC)."""
    import resource
    import signal

    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def test_a_full_disk_leaves_the_old_replay_no_temp_file_and_names_the_file(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("old\n")
    run = wizard("simulate", "--players", "3", "--rounds", "2", "--games", "200", "--replay", str(path),
                 preexec_fn=limit_file_size)
    assert run.returncode == 2
    assert run.stderr == f"wizard: error: File too large: {path}\n"
    assert os.listdir(tmp_path) == ["games.jsonl"] and path.read_text() == "old\n"


TERMINATE_AT_THIRD_GAME = """
import os, signal, sys
import wizard_env.cli.main as cli, wizard_env.cli.simulate as simulate
real, calls = simulate.play_game, []
def play(*args, **kwargs):
    calls.append(1)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGTERM)
    return real(*args, **kwargs)
simulate.play_game = play
sys.exit(cli.main(sys.argv[1:]))
"""


def test_sigterm_cleans_up_like_ctrl_c(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("old\n")
    run = subprocess.run([sys.executable, "-c", TERMINATE_AT_THIRD_GAME, "simulate", "--players", "3", "--rounds", "2",
                          "--games", "10", "--replay", str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 128 + 15
    assert run.stderr.strip() == "wizard: terminated" and run.stdout == ""
    assert os.listdir(tmp_path) == ["games.jsonl"] and path.read_text() == "old\n"


# -- item 12: messages name the user's path; outputs are checked before the work ------------------------


def deny_new_files(monkeypatch, folder: Path) -> None:
    """Creating files in ``folder`` fails as in a folder without write permission (which root would bypass)."""
    real_open = os.open

    def open_(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and Path(path).parent == folder:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


@pytest.mark.parametrize("writer", WRITERS)
def test_a_permission_error_names_the_users_path_not_the_temp_file(writer, tmp_path, monkeypatch):
    path = tmp_path / "out.file"
    deny_new_files(monkeypatch, tmp_path)
    with pytest.raises(PermissionError) as err:
        WRITERS[writer](path)
    assert err.value.filename == str(path)


def test_a_folder_given_as_checkpoint_says_it_is_a_folder(tmp_path, capsys):
    with pytest.raises(ValueError, match="is a folder, not a checkpoint file"):
        load_checkpoint(tmp_path)
    assert main(["simulate", "--players", "3", "--rounds", "1", "--games", "1", "--agents", f"ppo:{tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert "is a folder" in err and str(tmp_path) in err


@pytest.fixture
def no_work(monkeypatch):
    """The games of eval and the measurements of bench fail the test if they start."""
    def work(*args, **kwargs):
        raise AssertionError("the work started before the output was checked")

    monkeypatch.setattr("wizard_env.cli.eval.evaluate", work)
    monkeypatch.setattr(speed, "run_all", work)


def test_eval_checks_its_out_folder_before_playing(tmp_path, capsys, no_work, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    agents = ["eval", "--players", "3", "--rounds", "1", "--games", "1", "--agents", "rule,rule,rule"]
    assert main([*agents, "--out", str(afile / "sub")]) == 2
    assert capsys.readouterr().err == f"wizard: error: is not a folder: {afile}\n"
    locked = tmp_path / "locked"
    locked.mkdir()
    deny_new_files(monkeypatch, locked)
    assert main([*agents, "--out", str(locked)]) == 2
    assert capsys.readouterr().err == f"wizard: error: Permission denied: {locked}\n"
    assert sorted(os.listdir(tmp_path)) == ["afile", "locked"] and os.listdir(locked) == []


def test_bench_checks_its_json_file_before_measuring(tmp_path, capsys, no_work, monkeypatch):
    assert main(["bench", "--seconds", "0.1", "--json", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"wizard: error: is a folder, not a file: {tmp_path}\n"
    deny_new_files(monkeypatch, tmp_path)
    assert main(["bench", "--seconds", "0.1", "--json", str(tmp_path / "bench.json")]) == 2
    assert capsys.readouterr().err == f"wizard: error: Permission denied: {tmp_path / 'bench.json'}\n"
    assert os.listdir(tmp_path) == []
