"""``wizard compare-arrays``: whether a rerun wrote the same arrays, file for file and array for array."""

from __future__ import annotations

import os

import numpy as np

from wizard_env.cli.main import main


def chunk(path, **changes) -> None:
    """A data chunk as a search-valued run writes one: values NaN where the search left an action unvalued."""
    arrays = {"legal": np.array([[1, 1, 0], [1, 0, 1]], dtype=np.uint8),
              "legal_values": np.array([0.5, np.nan, -1.0, np.nan], dtype=np.float32),
              "config": np.frombuffer(b'{"start": "a"}', dtype=np.uint8)}
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **{**arrays, **changes})


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["compare-arrays", *(os.fspath(a) for a in args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_equal_folders_with_nan_values_are_the_same_file_for_file(tmp_path, capsys):
    for folder in ("rerun", "run"):
        chunk(tmp_path / folder / "iter-0" / "chunk-00000.npz")
        chunk(tmp_path / folder / "iter-0" / "chunk-00001.npz")
    chunk(tmp_path / "run" / "iter-0" / "chunk-00002.npz")  # the second may hold more: the first's files are compared
    assert run(capsys, tmp_path / "rerun", tmp_path / "run") == (0, "2 of 2 files equal array for array\n", "")


def test_a_changed_value_a_missing_file_and_a_changed_dtype_are_named(tmp_path, capsys):
    chunk(tmp_path / "rerun" / "a.npz", legal_values=np.array([0.5, np.nan, -1.25, np.nan], dtype=np.float32))
    chunk(tmp_path / "rerun" / "b.npz")
    chunk(tmp_path / "rerun" / "c.npz", legal=np.array([[1, 1, 0], [1, 0, 1]], dtype=np.int64))
    chunk(tmp_path / "run" / "a.npz")
    chunk(tmp_path / "run" / "c.npz")
    code, out, _ = run(capsys, tmp_path / "rerun", tmp_path / "run")
    assert code == 1
    assert "DIFFERENT a.npz: legal_values: 1 of 4 values differ, largest difference 0.25" in out
    assert f"DIFFERENT b.npz: {tmp_path / 'run' / 'b.npz'}: no such file" in out
    assert "DIFFERENT c.npz: legal: int64[2, 3] against uint8[2, 3]" in out
    assert out.endswith("0 of 3 files equal array for array\n")


def test_except_leaves_out_the_array_that_records_paths(tmp_path, capsys):
    chunk(tmp_path / "mine.npz", config=np.frombuffer(b'{"start": "b"}', dtype=np.uint8))
    chunk(tmp_path / "theirs.npz")
    code, out, _ = run(capsys, tmp_path / "mine.npz", tmp_path / "theirs.npz")
    assert code == 1 and "config: 1 of 14 values differ" in out
    assert run(capsys, tmp_path / "mine.npz", tmp_path / "theirs.npz", "--except", "config")[0] == 0


def test_bad_input_is_named_without_a_traceback(tmp_path, capsys):
    chunk(tmp_path / "run.npz")
    (tmp_path / "notes.npz").write_text("not a zip")
    (tmp_path / "folder").mkdir()
    assert run(capsys, tmp_path / "nope", tmp_path / "run.npz") == (2, "", f"wizard: error: {tmp_path / 'nope'}: no such file or folder\n")
    assert run(capsys, tmp_path / "notes.npz", tmp_path / "run.npz")[2] == \
        f"wizard: error: {tmp_path / 'notes.npz'}: is not a .npz file (numpy's zip of arrays)\n"
    assert run(capsys, tmp_path / "folder", tmp_path / "run.npz")[2] == \
        f"wizard: error: {tmp_path / 'folder'} is a folder and {tmp_path / 'run.npz'} is not: give two files or two folders\n"
    assert run(capsys, tmp_path / "folder", tmp_path / "folder")[2] == f"wizard: error: {tmp_path / 'folder'}: no .npz file under it\n"


def test_a_damaged_file_is_named_without_a_traceback(tmp_path, capsys):
    np.savez_compressed(tmp_path / "run.npz", values=np.arange(1000.0))
    damaged = bytearray((tmp_path / "run.npz").read_bytes())
    damaged[60:100] = b"\xff" * 40  # inside the deflated member, after its local header
    (tmp_path / "rerun.npz").write_bytes(bytes(damaged))
    code, out, err = run(capsys, tmp_path / "rerun.npz", tmp_path / "run.npz")
    assert (code, out) == (2, "") and err.startswith(f"wizard: error: {tmp_path / 'rerun.npz'}: unreadable, damaged or truncated (")
