"""``wizard train-values`` and checkpoints under a hostile user: Ctrl-C and kill -9 during collection, network shapes
a checkpoint cannot hold, damaged chunks, config.json and checkpoint files, and run folders as ``ppo:DIR``."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from wizard_env.agents import checkpoint  # noqa: E402
from wizard_env.agents.checkpoint import check_hidden, weight_names  # noqa: E402
from wizard_env.agents.ppo_agent import FORMAT, PPOAgent, load_checkpoint, save_checkpoint  # noqa: E402
from wizard_env.agents.registry import make_agent  # noqa: E402
from wizard_env.cli.main import main  # noqa: E402
from wizard_env.engine.actions import NUM_ACTIONS  # noqa: E402
from wizard_env.engine.observation import OBS_SIZE, OBS_VERSION  # noqa: E402
from wizard_env.engine.rules import Rules  # noqa: E402
from wizard_env.training.values import rollout_values as rv  # noqa: E402
from wizard_env.training.values.train_values import ValuesConfig, run_training  # noqa: E402

RULES = Rules.make(3, rounds=3)
TINY = ValuesConfig(mix=[3], samples=150, games=4, workers=1, epochs=1, eval_deals=2, hidden=[16], margin=2.0)
#: A run whose first chunk takes minutes (2,000 full games of 3 players): a signal always finds its workers busy.
SLOW = ["--players", "3", "--mix", "3", "--games", "2000", "--samples", "100000", "--eval-deals", "1", "--quiet"]
PROC = Path("/proc")
needs_proc = pytest.mark.skipif(not (PROC / "self" / "stat").is_file(), reason="finds worker processes in /proc")


def run(out: Path, cfg: ValuesConfig = TINY, resume: bool = False):
    return run_training(cfg, RULES, out, resume=resume, quiet=True, log=lambda line: None, rounds=3)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished tiny run (one iteration), for copies to damage."""
    out = tmp_path_factory.mktemp("values") / "run"
    run(out)
    return out


def unfinished(finished: Path, tmp_path: Path) -> Path:
    """A copy of the run as if stopped after collecting its data: a resume reads every chunk."""
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    shutil.rmtree(out / "checkpoints")
    (out / "curve.csv").unlink()
    return out


# -- Ctrl-C and kill -9 during collection ---------------------------------------------------------------------


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie waiting for its reaper has ended)."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    found = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def start_collecting(out: Path, workers: int) -> tuple[subprocess.Popen, list[int]]:
    """``wizard train-values`` started with Ctrl-C at its default (a terminal's), once its workers are collecting;
    the process and its workers' pids."""
    proc = subprocess.Popen([sys.executable, "-m", "wizard_env", "train-values", *SLOW, "--workers", str(workers), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while len(workers_of := children(proc.pid)) < workers and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(workers_of) == workers, proc.communicate(timeout=30)[0] if proc.poll() is not None else "no workers"
    time.sleep(3)  # inside their first chunk
    return proc, workers_of


def data_files(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "data").rglob("*") if p.is_file())


@pytest.fixture
def reap():
    """Kill whatever a test's run left behind (its session: the run and its workers)."""
    started: list[subprocess.Popen] = []
    yield started
    for proc in started:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


@needs_proc
def test_ctrl_c_during_collection_stops_within_seconds_says_what_it_waits_for_and_writes_no_chunk(tmp_path: Path, reap):
    out = tmp_path / "run"
    proc, workers = start_collecting(out, 2)
    reap.append(proc)
    proc.send_signal(signal.SIGINT)
    printed, _ = proc.communicate(timeout=30)  # a chunk takes minutes: waiting for the workers' chunks fails here
    assert proc.returncode == 130, printed
    assert "stopping: waiting for 2 workers" in printed and "interrupted" in printed and "Traceback" not in printed
    assert not any(alive(pid) for pid in workers)
    time.sleep(2)
    assert data_files(out) == []  # neither a chunk nor a temporary file: the stopped workers wrote nothing


@needs_proc
def test_a_run_killed_with_sigkill_takes_its_workers_with_it(tmp_path: Path, reap):
    out = tmp_path / "run"
    proc, workers = start_collecting(out, 2)
    reap.append(proc)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(pid) for pid in workers)  # before: they collected on for minutes, and wrote their chunks
    assert data_files(out) == []


# -- network shapes a checkpoint cannot hold ---------------------------------------------------------------------


@pytest.mark.parametrize("hidden, problem", [([8192, 8192], "a 8192x8192 weight would unpack to 268,435,584 bytes"),
                                             ([9000], "at most 8192, not 9000"), ([8] * 17, "at most 16 layer widths"),
                                             ([6000] * 16, "the network's weights would unpack to")])
def test_a_network_no_checkpoint_can_hold_is_refused_before_any_work(tmp_path: Path, hidden, problem):
    with pytest.raises(ValueError, match="--hidden") as err:
        run(tmp_path / "run", dataclasses.replace(TINY, hidden=hidden))
    assert problem in str(err.value)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("under", [0, 1])
def test_the_trainers_and_the_loader_share_one_size_limit(tmp_path: Path, monkeypatch, under):
    hidden, inputs = [40, 30], OBS_SIZE + NUM_ACTIONS
    largest = 4 * inputs * hidden[0] + checkpoint.NPY_HEADER_BYTES  # the first layer's weight, header included
    monkeypatch.setattr(checkpoint, "MAX_MEMBER_BYTES", largest - under)
    rng = np.random.default_rng(0)
    names, widths = weight_names(hidden)[0], [inputs, *hidden, NUM_ACTIONS]
    weights = {}
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        weights[names[2 * i]], weights[names[2 * i + 1]] = rng.normal(size=(b, a)), rng.normal(size=b)
    path = save_checkpoint(tmp_path / "edge.npz", {"format": FORMAT, "hidden": hidden, "obs_version": OBS_VERSION,
                                                   "activation": "relu", "advice": True}, weights)
    if under:
        with pytest.raises(ValueError, match="more than the"):
            check_hidden(hidden, inputs, name="--hidden")
        with pytest.raises(ValueError, match="more than the"):
            load_checkpoint(path)
    else:
        assert check_hidden(hidden, inputs, name="--hidden") == hidden
        assert load_checkpoint(path)[0]["hidden"] == hidden


# -- damaged chunks and config.json on --resume -----------------------------------------------------------------


def _savez(path: Path, **arrays) -> None:
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _chunk_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {name: data[name] for name in data.files}


def _flip_in_the_data(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside the observations: the zip's CRC no longer matches
    path.write_bytes(bytes(data))


CHUNK_DAMAGE = {
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), "damaged or truncated"),
    "garbage": (lambda p: p.write_bytes(np.random.default_rng(0).bytes(5000)), "damaged or truncated"),
    "empty": (lambda p: p.write_bytes(b""), "damaged or truncated"),
    "flipped byte": (_flip_in_the_data, "damaged or truncated"),
    "pickled objects": (lambda p: _savez(p, **(_chunk_arrays(p) | {"legal_values": np.array([{"a": 1}] * 3, dtype=object)})),
                        "'legal_values' holds object"),
    "no advice": (lambda p: _savez(p, **{k: v for k, v in _chunk_arrays(p).items() if k != "advice"}), "no 'advice' array"),
    "narrow observations": (lambda p: _savez(p, **(_chunk_arrays(p) | {"obs_bits": _chunk_arrays(p)["obs_bits"][:, :10]})),
                            "'obs_bits' array has shape"),
    "illegal advice": (lambda p: _savez(p, **(_chunk_arrays(p) | {"advice": np.full(len(_chunk_arrays(p)["advice"]), 200, np.uint8)})),
                       "not legal"),
    "NaN values": (lambda p: _savez(p, **(_chunk_arrays(p) | {"legal_values": np.full(len(_chunk_arrays(p)["legal_values"]), np.nan, np.float32)})),
                   "RuleAgent's choice has no value"),
    "infinite values": (lambda p: _savez(p, **(_chunk_arrays(p) | {"legal_values": np.full(len(_chunk_arrays(p)["legal_values"]), np.inf, np.float32)})),
                        "infinite"),
    "another format": (lambda p: _savez(p, **(_chunk_arrays(p) | {"format": np.array([9, 1])})), "chunk format 9"),
    "first format, narrow observations": (lambda p: _savez(p, observations=np.zeros((3, 10), np.float16), masks=np.ones((3, 79), bool),
                                                           values=np.zeros((3, 79), np.float32), advice=np.zeros(3, np.int64)),
                                          "'observations' array has shape"),
}


@pytest.mark.parametrize("damage", list(CHUNK_DAMAGE))
def test_a_damaged_chunk_is_named_with_what_is_wrong_and_deleting_it_recovers(finished: Path, tmp_path: Path, damage):
    out = unfinished(finished, tmp_path)
    chunk = out / "data" / "iter-0" / "chunk-00000.npz"
    spoil, problem = CHUNK_DAMAGE[damage]
    spoil(chunk)
    with pytest.raises(ValueError) as err:
        run(out, resume=True)
    message = str(err.value)
    assert str(chunk) in message and problem in message and "delete it" in message and "collected again" in message
    assert not (out / "checkpoints").exists()  # nothing was fitted on it
    chunk.unlink()  # the remedy the message gives
    run(out, resume=True)
    assert chunk.is_file() and (out / "checkpoints" / "latest.npz").is_file()
    assert np.array_equal(rv.read_chunk(chunk).values, rv.read_chunk(finished / "data" / "iter-0" / "chunk-00000.npz").values,
                          equal_nan=True)  # the same chunk, collected again


CONFIG_DAMAGE = {
    "not JSON": ("{'train': ", "not valid JSON"),
    "empty": ("", "not valid JSON"),
    "not UTF-8": (b"\xff\xfe{}", "not valid JSON"),
    "a list": ("[1, 2]", "a JSON list, not an object"),
    "no train": (lambda c: {k: v for k, v in c.items() if k != "train"}, "no 'train' object"),
    "no rules": (lambda c: {k: v for k, v in c.items() if k != "rules"}, "no 'rules' object"),
    "train a string": (lambda c: c | {"train": "fast"}, "'train' is not an object"),
    "margin a string": (lambda c: c | {"train": c["train"] | {"margin": "2"}}, "'train.margin' is '2', not a value of --margin"),
    "hidden of strings": (lambda c: c | {"train": c["train"] | {"hidden": ["16"]}}, "'train.hidden'"),
    "samples a float": (lambda c: c | {"train": c["train"] | {"samples": 150.5}}, "'train.samples'"),
}


@pytest.mark.parametrize("damage", list(CONFIG_DAMAGE))
def test_a_damaged_config_json_is_named_with_what_is_wrong_and_how_to_recover(finished: Path, tmp_path: Path, damage):
    out = unfinished(finished, tmp_path)
    saved = out / "config.json"
    change, problem = CONFIG_DAMAGE[damage]
    if callable(change):
        saved.write_text(json.dumps(change(json.loads(saved.read_text()))))
    else:
        saved.write_bytes(change if isinstance(change, bytes) else change.encode())
    with pytest.raises(ValueError) as err:
        run(out, resume=True)
    message = str(err.value)
    assert str(saved) in message and problem in message and "delete it" in message
    assert not (out / "checkpoints").exists()


def test_a_run_whose_config_json_was_deleted_resumes_with_the_options_given(finished: Path, tmp_path: Path):
    out = unfinished(finished, tmp_path)
    (out / "config.json").unlink()
    chunks = {p: p.stat().st_mtime_ns for p in (out / "data" / "iter-0").iterdir()}
    run(out, resume=True)
    assert {p: p.stat().st_mtime_ns for p in chunks} == chunks  # its data kept, not collected again
    assert json.loads((out / "config.json").read_text())["train"]["margin"] == TINY.margin
    with pytest.raises(ValueError, match="no run"):
        run(tmp_path / "empty", resume=True)


# -- damaged checkpoint files ------------------------------------------------------------------------------------


def _flip_offsets(path: Path) -> list[int]:
    """Offsets spread over the file, and a few inside each entry's compressed data."""
    size = path.stat().st_size
    offsets = {size * k // 10 for k in range(10)} | {size - 30}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
            offsets |= {start + info.compress_size * k // 4 for k in (1, 2, 3)}
    return sorted(offsets)


def test_every_flipped_byte_of_a_saved_checkpoint_gives_a_message_naming_the_file(finished: Path, tmp_path: Path, capsys):
    clean = (finished / "checkpoints" / "iter-0.npz").read_bytes()
    path = tmp_path / "flipped.npz"
    named = 0
    for offset in _flip_offsets(finished / "checkpoints" / "iter-0.npz"):
        data = bytearray(clean)
        data[offset] ^= 0xFF
        path.write_bytes(bytes(data))
        try:
            load_checkpoint(path)
        except ValueError as e:  # before: zlib.error ("Error -3 while decompressing data"), with no file named
            assert str(path) in str(e), (offset, str(e))
            named += 1
    assert named >= 10  # most flips are caught (a flipped timestamp or padding byte may load as before)
    path.write_bytes(clean[:-1000])
    assert main(["eval", "--players", "3", "--rounds", "1", "--games", "1", "--agents", f"ppo:{path},rule,rule",
                 "--out", str(tmp_path / "eval")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "internal error" not in err and len(err.strip().splitlines()) == 1


# -- run folders as ppo:DIR -----------------------------------------------------------------------------------------


def test_ppo_takes_a_run_folder_and_plays_its_latest_checkpoint(finished: Path, tmp_path: Path):
    agent = make_agent(f"ppo:{finished}", seed=0)
    assert agent.source == str(finished / "checkpoints" / "latest.npz")
    assert make_agent(f"ppo:{finished}:play=rule", seed=0).play == "rule"
    legacy = tmp_path / "rllib-run"  # an RLlib run made when it kept latest.npz in the folder itself
    legacy.mkdir()
    shutil.copy(finished / "checkpoints" / "latest.npz", legacy / "latest.npz")
    assert PPOAgent.load(legacy).source == str(legacy / "latest.npz")
    (legacy / "checkpoints").mkdir()
    shutil.copy(finished / "checkpoints" / "latest.npz", legacy / "checkpoints" / "latest.npz")
    assert PPOAgent.load(legacy).source == str(legacy / "checkpoints" / "latest.npz")  # the one place comes first


def test_a_folder_without_a_checkpoint_names_what_was_looked_for(tmp_path: Path, capsys):
    (tmp_path / "checkpoints").mkdir()
    with pytest.raises(ValueError) as err:
        make_agent(f"ppo:{tmp_path}")
    message = str(err.value)
    assert str(tmp_path) in message and "checkpoints/latest.npz or latest.npz" in message
    (tmp_path / "checkpoints" / "latest.npz").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=f"checkpoint {tmp_path / 'checkpoints' / 'latest.npz'}: not a wizard checkpoint"):
        make_agent(f"ppo:{tmp_path}")
    assert main(["simulate", "--players", "3", "--rounds", "1", "--games", "1", "--agents", f"ppo:{tmp_path},rule,rule"]) == 2
    assert "checkpoints/latest.npz" in capsys.readouterr().err
